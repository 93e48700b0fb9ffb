//! What is at a place of a file: the `${VAR}` written there, and the
//! rendered values that were written there (one per render that read
//! the file: a base built by two Flux Kustomizations gives two).

use crate::source::Object;
use crate::source::repo::Repo;
use crate::yaml::{FileId, Node, PathSeg, Value};

/// A `${VAR}` written in `text` around byte `offset`: its name and bytes.
pub struct VariableUse {
    pub name: String,
    pub start: usize,
    pub end: usize,
}

/// The innermost `${NAME...}` around `offset` on its line, as Flux's
/// envsubst reads it (`$$` escaped): with or without an operator and
/// default, which may itself use a variable (`${NAME:-${OTHER}}`,
/// drone/envsubst parses the default as text with substitutions of its
/// own), so the braces are paired rather than cut at the first `}`.
pub fn variable_at(text: &str, offset: usize) -> Option<VariableUse> {
    let line_start = text.get(..offset)?.rfind('\n').map_or(0, |n| n + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |n| offset + n);
    let line = &text.as_bytes()[line_start..line_end];
    let mut open: Vec<usize> = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            // `$$` is envsubst's escape of `$`: `$${A}` is the text `${A}`,
            // `$$${A}` a `$` and a use of A.
            b'$' => {
                let run = line[i..].iter().take_while(|&&b| b == b'$').count();
                if run % 2 == 1 && line.get(i + run) == Some(&b'{') {
                    open.push(line_start + i + run - 1);
                }
                i += run;
                continue;
            }
            b'}' => {
                if let Some(start) = open.pop() {
                    let end = line_start + i + 1;
                    let inner = best.is_none_or(|(s, e)| end - start < e - s);
                    if start <= offset && offset <= end && inner && name_at(text, start).is_some() {
                        best = Some((start, end));
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    let (start, end) = best?;
    Some(VariableUse {
        name: name_at(text, start)?.to_string(),
        start,
        end,
    })
}

/// Whether byte `at` of `text` is in a YAML comment: after a `#` that
/// starts one (at the line's start or after a blank, outside a quoted
/// scalar) on its line.
pub fn in_comment(text: &str, at: usize) -> bool {
    let line_start = text[..at].rfind('\n').map_or(0, |n| n + 1);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut before: Option<char> = None;
    // The last character that is not a blank: a quote opens a scalar
    // only where a value starts, not inside a plain one (`it's`).
    let mut last_mark: Option<char> = None;
    for c in text[line_start..at].chars() {
        match quote {
            Some('"') if escaped => escaped = false,
            Some('"') if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if matches!(c, '"' | '\'')
                && matches!(last_mark, None | Some(':' | '-' | '[' | '{' | ',')) =>
            {
                quote = Some(c)
            }
            None if c == '#' && before.is_none_or(|b| b == ' ' || b == '\t') => return true,
            None => {}
        }
        before = Some(c);
        if c != ' ' && c != '\t' {
            last_mark = Some(c);
        }
    }
    false
}

/// The variable name after the `${` at `start`, if it is one.
fn name_at(text: &str, start: usize) -> Option<&str> {
    let rest = &text[start + 2..];
    let len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let name = &rest[..len];
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        .then_some(name)
}

/// A segment of a value's path, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A rendered scalar written at the place asked about.
pub struct Hit<'r> {
    pub object: &'r Object,
    pub path: Vec<Seg>,
    pub node: &'r Node,
}

impl Hit<'_> {
    /// Whether the path ends with these keys (`None`: any list index).
    pub fn ends_with(&self, keys: &[Option<&str>]) -> bool {
        self.path.len() >= keys.len()
            && self.path[self.path.len() - keys.len()..]
                .iter()
                .zip(keys)
                .all(|(seg, want)| match (seg, want) {
                    (Seg::Key(k), Some(w)) => k == w,
                    (Seg::Index(_), None) => true,
                    _ => false,
                })
    }

    /// The mapping that holds this value.
    pub fn parent(&self) -> Option<&Node> {
        let mut node: &Node = &self.object.root;
        for seg in &self.path[..self.path.len().saturating_sub(1)] {
            node = match seg {
                Seg::Key(k) => node.get(k)?,
                Seg::Index(i) => node.as_seq()?.get(*i)?,
            };
        }
        Some(node)
    }
}

/// The rendered scalars written in `file` at byte `offset`, the most
/// narrowly written first.
pub fn values_at(repo: &Repo, file: FileId, offset: usize) -> Vec<Hit<'_>> {
    let offset = offset as u32;
    let mut hits = Vec::new();
    for object in &repo.objects {
        object.root.walk(&mut |path, node| {
            let span = node.span();
            if span.file != file
                || span.start > offset
                || offset > span.end
                || matches!(node.value, Value::Seq(_) | Value::Map(_))
            {
                return;
            }
            hits.push(Hit {
                object,
                path: path
                    .iter()
                    .map(|s| match s {
                        PathSeg::Key(k) => Seg::Key(k.to_string()),
                        PathSeg::Index(i) => Seg::Index(*i),
                    })
                    .collect(),
                node,
            });
        });
    }
    hits.sort_by_key(|h| h.node.span().end - h.node.span().start);
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_variable_under_the_cursor() {
        let text = "a: 1\nclass: ${STORAGE:=ceph}-${ZONE}\n";
        let at = text.find("ZONE").unwrap();
        let found = variable_at(text, at).unwrap();
        assert_eq!(found.name, "ZONE");
        assert_eq!(&text[found.start..found.end], "${ZONE}");
        let first = variable_at(text, text.find("ceph").unwrap()).unwrap();
        assert_eq!(first.name, "STORAGE");
        assert!(variable_at(text, 1).is_none());
    }

    #[test]
    fn comments_are_told_from_hashes_in_values() {
        let text =
            "a: x # ${C}\n# ${D}\nb: \"\\\"#${E}\" # it's ${F}\nc: it's #${G}\nd: 'a''#' a#${H}\n";
        let at = |s: &str| text.find(s).unwrap();
        assert!(in_comment(text, at("${C}")));
        assert!(in_comment(text, at("${D}")));
        assert!(!in_comment(text, at("${E}")));
        assert!(in_comment(text, at("${F}")));
        assert!(in_comment(text, at("${G}")));
        assert!(!in_comment(text, at("${H}")));
    }

    #[test]
    fn a_variable_in_a_default_is_the_one_under_the_cursor() {
        let text = "size: ${SIZE:-${CLASS}}x ${1}\n";
        let inner = variable_at(text, text.find("CLASS").unwrap()).unwrap();
        assert_eq!(inner.name, "CLASS");
        assert_eq!(&text[inner.start..inner.end], "${CLASS}");
        let outer = variable_at(text, text.find("SIZE").unwrap()).unwrap();
        assert_eq!(outer.name, "SIZE");
        assert_eq!(&text[outer.start..outer.end], "${SIZE:-${CLASS}}");
        assert!(variable_at(text, text.find("1}").unwrap()).is_none());
        assert!(variable_at(text, text.find(" $").unwrap()).is_none());
        let escaped = "a: $${A} $$${B}\n";
        assert!(variable_at(escaped, escaped.find('A').unwrap()).is_none());
        let b = variable_at(escaped, escaped.find('B').unwrap()).unwrap();
        assert_eq!((b.name.as_str(), &escaped[b.start..b.end]), ("B", "${B}"));
    }
}
