//! Byte-range edits to YAML source text, placed where a value is written.
//!
//! Fixes must leave every other byte alone (comments, quoting, key order),
//! so nothing here re-serialises YAML: an edit replaces one scalar, or
//! inserts new lines after the last entry of a map or sequence, indented
//! like its siblings. Each function returns `None` when the text at a
//! node's span does not look like what the node says it is (a value made
//! by kustomize or Flux rather than written in the file): a fix is then
//! display-only rather than a guess.

use std::borrow::Cow;

use crate::yaml::{Entry, FileId, Node, SourceMap, Span, Style, Value};

/// Replace `start..end` of `file` with `replacement` (an insertion when
/// the range is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
    pub replacement: String,
}

/// A value to write under a new key.
#[derive(Clone, Debug, PartialEq)]
pub enum NewValue {
    /// A scalar, already rendered as YAML (see [`string_scalar`]).
    Scalar(String),
    /// A nested block map.
    Map(Vec<(String, NewValue)>),
    /// The lines of a literal block scalar (`key: |`).
    Block(Vec<String>),
}

/// A new item of a sequence.
#[derive(Clone, Debug, PartialEq)]
pub enum NewItem {
    Scalar(String),
    Map(Vec<(String, NewValue)>),
}

/// Whether `s` written plain is read as a string by Kubernetes' YAML
/// decoder (YAML 1.1 rules: `off`, `yes`, numbers and the like are not).
fn plain_is_string(s: &str) -> bool {
    let special = matches!(
        s.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    );
    !s.is_empty()
        && !special
        && !s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | ':'))
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '=' | '+'))
}

/// `value` as a YAML scalar that reads back as the string `value`: plain
/// when that is unambiguous, else quoted with `quote` (`"` or `'`).
pub fn string_scalar(value: &str, quote: char) -> String {
    if plain_is_string(value) {
        return value.to_string();
    }
    quoted(value, quote)
}

/// `value` quoted with `quote` (`"` or `'`), escaped as YAML wants.
pub fn quoted(value: &str, quote: char) -> String {
    if quote == '\'' {
        format!("'{}'", value.replace('\'', "''"))
    } else {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

fn text(sources: &SourceMap, file: FileId) -> &str {
    &sources.get(file).text
}

/// The byte range of the scalar written at `span`, and its quote
/// character. The parser's span of a quoted scalar may run over a trailing
/// comment, so the end is found here. `None` for block scalars, multi-line
/// plain scalars and spans that do not hold a scalar.
fn scalar_extent(text: &str, span: Span) -> Option<(usize, usize, Option<char>)> {
    let start = span.start as usize;
    let rest = text.get(start..)?;
    let first = rest.chars().next()?;
    match first {
        '"' => {
            let mut escaped = false;
            for (i, c) in rest.char_indices().skip(1) {
                match c {
                    '\\' if !escaped => escaped = true,
                    '"' if !escaped => return Some((start, start + i + 1, Some('"'))),
                    '\n' => return None,
                    _ => escaped = false,
                }
            }
            None
        }
        '\'' => {
            let bytes = rest.as_bytes();
            let mut i = 1;
            while i < bytes.len() {
                match bytes[i] {
                    b'\'' if bytes.get(i + 1) == Some(&b'\'') => i += 2,
                    b'\'' => return Some((start, start + i + 1, Some('\''))),
                    b'\n' => return None,
                    _ => i += 1,
                }
            }
            None
        }
        '|' | '>' | '{' | '[' => None,
        _ => {
            let end = (span.end as usize).min(text.len());
            let raw = text.get(start..end)?;
            if raw.contains('\n') {
                return None;
            }
            let raw = raw.split(" #").next().unwrap_or(raw).trim_end();
            Some((start, start + raw.len(), None))
        }
    }
}

/// Replaces the scalar written at `span` with the string `value`, keeping
/// its quote character; a plain scalar stays plain unless `value` would
/// then read as something other than a string.
pub fn replace_scalar(sources: &SourceMap, span: Span, value: &str) -> Option<Edit> {
    let (start, end, quote) = scalar_extent(text(sources, span.file), span)?;
    let replacement = match quote {
        Some(q) => quoted(value, q),
        None => string_scalar(value, '"'),
    };
    Some(Edit {
        file: span.file,
        start: start as u32,
        end: end as u32,
        replacement,
    })
}

fn line_start(text: &str, pos: usize) -> usize {
    text[..pos].rfind('\n').map_or(0, |i| i + 1)
}

/// Where a line inserted after the line holding `pos` starts, and whether
/// a line break must come first (the file ends without one).
fn after_line(text: &str, pos: usize) -> (usize, bool) {
    match text[pos..].find('\n') {
        Some(i) => (pos + i + 1, false),
        None => (text.len(), true),
    }
}

/// The last non-blank byte before `end`, not before `floor`.
fn back_off_blank(text: &str, end: usize, floor: usize) -> usize {
    let end = end.min(text.len());
    let trimmed = text[floor.min(end)..end].trim_end();
    floor.min(end) + trimmed.len().saturating_sub(1)
}

/// The end of the last value written in `file` inside `node`: the place
/// after which a sibling can be inserted.
fn content_end(node: &Node, file: FileId) -> Option<usize> {
    let mut end: Option<usize> = None;
    node.walk(&mut |_, n| {
        let leaf = match &n.value {
            Value::Map(m) => m.is_empty(),
            Value::Seq(s) => s.is_empty(),
            _ => true,
        };
        // A leaf written before the node itself is an alias's expansion
        // of an anchor defined earlier (`resources: *resources`): its text
        // is the anchor's, and the node's content ends at the alias.
        let expanded = n.span().start < node.span().start;
        if leaf && !expanded && n.span().file == file && n.span().end > n.span().start {
            let e = n.span().end as usize;
            end = Some(end.map_or(e, |x| x.max(e)));
        }
    });
    end
}

/// Whether the key node's text in its file is the key (and not a value
/// kustomize or Flux made and attributed to some other span).
fn key_written_here(text: &str, key: &Node) -> bool {
    let Some(name) = key.as_str() else {
        return false;
    };
    let Some(rest) = text.get(key.span().start as usize..) else {
        return false;
    };
    rest.starts_with(name)
        || rest.starts_with(&format!("\"{name}\""))
        || rest.starts_with(&format!("'{name}'"))
}

/// The indentation step the file uses (the first increase after a line
/// that opens a block), 2 when none is seen.
fn indent_step(text: &str) -> usize {
    let mut previous: Option<(usize, bool)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with("---") {
            continue;
        }
        let indent = line.len() - trimmed.len();
        if let Some((prev, opens)) = previous
            && opens
            && indent > prev
            && !trimmed.starts_with('-')
        {
            return indent - prev;
        }
        let opens = trimmed
            .split(" #")
            .next()
            .unwrap_or("")
            .trim_end()
            .ends_with(':');
        previous = Some((indent, opens));
    }
    2
}

fn render_entries(entries: &[(String, NewValue)], indent: usize, step: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    for (key, value) in entries {
        match value {
            NewValue::Scalar(s) => out.push_str(&format!("{pad}{key}: {s}\n")),
            NewValue::Map(children) => {
                out.push_str(&format!("{pad}{key}:\n"));
                render_entries(children, indent + step, step, out);
            }
            NewValue::Block(lines) => {
                out.push_str(&format!("{pad}{key}: |\n"));
                let inner = " ".repeat(indent + step);
                for l in lines {
                    out.push_str(&format!("{inner}{l}\n"));
                }
            }
        }
    }
}

/// A flow scalar for `{a: b}` / `[a, b]`; nested values cannot be written there.
fn flow_scalar(value: &NewValue) -> Option<&str> {
    match value {
        NewValue::Scalar(s) => Some(s),
        _ => None,
    }
}

/// Inserts `text` just before the closing bracket of the flow collection
/// written at `span`, with a separator when it is not empty.
fn insert_in_flow(
    sources: &SourceMap,
    span: Span,
    close: char,
    empty: bool,
    items: &str,
) -> Option<Edit> {
    let text = text(sources, span.file);
    let body = text.get(span.start as usize..(span.end as usize).min(text.len()))?;
    let close_at = span.start as usize + body.rfind(close)?;
    let before = text[..close_at].trim_end();
    let at = before.len();
    let replacement = if empty {
        items.to_string()
    } else {
        format!(", {items}")
    };
    Some(Edit {
        file: span.file,
        start: at as u32,
        end: at as u32,
        replacement,
    })
}

/// Adds entries to a map, after its last entry and indented like it. In
/// a flow map (`{a: 1}`) they go before the closing brace.
pub fn insert_entries(
    sources: &SourceMap,
    map: &Node,
    entries: &[(String, NewValue)],
) -> Option<Edit> {
    let existing = map.as_map()?;
    let map_text = text(sources, map.span().file);
    if map_text.get(map.span().start as usize..)?.starts_with('{') {
        let items = entries
            .iter()
            .map(|(k, v)| Some(format!("{k}: {}", flow_scalar(v)?)))
            .collect::<Option<Vec<_>>>()?
            .join(", ");
        return insert_in_flow(sources, map.span(), '}', existing.is_empty(), &items);
    }
    // A block map's new entries go into the file its last entry is in.
    let (last_key, _) = existing.last()?;
    let file = last_key.span().file;
    let text = text(sources, file);
    let siblings: Vec<&Node> = existing
        .iter()
        .map(|(k, _)| k)
        .filter(|k| k.span().file == file)
        .collect();
    if !siblings.iter().all(|k| key_written_here(text, k)) {
        return None;
    }
    let key_start = last_key.span().start as usize;
    let indent = key_start - line_start(text, key_start);
    let end = content_end(map, file).max(Some(last_key.span().end as usize))?;
    let last = back_off_blank(text, end, key_start);
    let (at, needs_break) = after_line(text, last);
    let mut out = String::new();
    if needs_break {
        out.push('\n');
    }
    render_entries(entries, indent, indent_step(text), &mut out);
    Some(Edit {
        file,
        start: at as u32,
        end: at as u32,
        replacement: out,
    })
}

/// Deletes the last of `entries` (a path of map entries from a root,
/// [`Node::entries_along`]), its whole lines and nothing else. Where it
/// is its map's only entry, the entry holding that map goes instead, and
/// so on up: a key left with no value would read as null, which a patch
/// or an operator takes for something else than absent. `None` when that
/// cannot be done cleanly: a map written in flow style or across files,
/// the entry sharing a line with something else (`- key: value`, a
/// following key), or no map on the path with another entry.
pub fn remove_entry(sources: &SourceMap, entries: &[Entry<'_>]) -> Option<Edit> {
    let Entry { map, key, value } = *entries
        .iter()
        .rev()
        .find(|e| e.map.as_map().is_some_and(|m| m.len() > 1))?;
    let siblings = map.as_map()?;
    let file = key.span().file;
    let text = text(sources, file);
    if text.get(map.span().start as usize..)?.starts_with('{')
        || siblings
            .iter()
            .any(|(k, _)| k.span().file != file || !key_written_here(text, k))
    {
        return None;
    }
    let key_start = key.span().start as usize;
    let start = line_start(text, key_start);
    if !text[start..key_start].trim().is_empty() {
        return None;
    }
    let end = content_end(value, file)
        .unwrap_or(0)
        .max(key.span().end as usize);
    let last = back_off_blank(text, end, key_start);
    let (after, _) = after_line(text, last);
    // What follows the value on its last line: nothing, or a comment.
    let rest = text[last + 1..after].trim();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return None;
    }
    // No other entry may start inside the lines removed.
    let inside = |n: &Node| (start..after).contains(&(n.span().start as usize));
    if siblings
        .iter()
        .any(|(k, _)| !std::ptr::eq(k, key) && inside(k))
    {
        return None;
    }
    Some(Edit {
        file,
        start: start as u32,
        end: after as u32,
        replacement: String::new(),
    })
}

/// Adds items to a sequence, after its last item and indented like it.
pub fn append_items(sources: &SourceMap, seq: &Node, items: &[NewItem]) -> Option<Edit> {
    let existing = seq.as_seq()?;
    let seq_text = text(sources, seq.span().file);
    if seq_text.get(seq.span().start as usize..)?.starts_with('[') {
        let rendered = items
            .iter()
            .map(|i| match i {
                NewItem::Scalar(s) => Some(s.clone()),
                NewItem::Map(_) => None,
            })
            .collect::<Option<Vec<_>>>()?
            .join(", ");
        return insert_in_flow(sources, seq.span(), ']', existing.is_empty(), &rendered);
    }
    let last_item = existing.last()?;
    let file = last_item.span().file;
    let text = text(sources, file);
    let item_start = last_item.span().start as usize;
    let begin = line_start(text, item_start);
    // `  - name: x`: the dash's column, then where the item's content starts.
    let prefix = text.get(begin..item_start)?;
    let dash = prefix.rfind('-')?;
    if !prefix[..dash].bytes().all(|b| b == b' ') || !prefix[dash + 1..].trim().is_empty() {
        return None;
    }
    if let Value::Map(entries) = &last_item.value
        && !entries.iter().all(|(k, _)| key_written_here(text, k))
    {
        return None;
    }
    let content = prefix.len();
    let end = content_end(seq, file)?;
    let last = back_off_blank(text, end, item_start);
    let (at, needs_break) = after_line(text, last);
    let step = indent_step(text);
    let mut out = String::new();
    if needs_break {
        out.push('\n');
    }
    let dash_pad = " ".repeat(dash);
    let after_dash = &prefix[dash..];
    for item in items {
        match item {
            NewItem::Scalar(s) => out.push_str(&format!("{dash_pad}{after_dash}{s}\n")),
            NewItem::Map(entries) => {
                let mut body = String::new();
                render_entries(entries, content, step, &mut body);
                // The first entry sits on the dash's line.
                out.push_str(&dash_pad);
                out.push_str(after_dash);
                out.push_str(body.get(content..).unwrap_or(""));
            }
        }
    }
    Some(Edit {
        file,
        start: at as u32,
        end: at as u32,
        replacement: out,
    })
}

/// Appends a line at the end of a literal block scalar (`key: |`),
/// indented like its content.
pub fn append_block_line(sources: &SourceMap, block: &Node, line: &str) -> Option<Edit> {
    if block.style() != Style::Block {
        return None;
    }
    let file = block.span().file;
    let text = text(sources, file);
    // The span starts at the first content line, after its indentation;
    // the `|` header is on the line before (blank lines aside).
    let start = block.span().start as usize;
    let content_begin = line_start(text, start);
    let indent = start - content_begin;
    if indent == 0 || !text.get(content_begin..start)?.bytes().all(|b| b == b' ') {
        return None;
    }
    let header = text
        .get(..content_begin)?
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())?;
    let indicator = header.split(" #").next()?.trim_end();
    if !indicator.rsplit(' ').next()?.starts_with('|') {
        return None;
    }
    let end = (block.span().end as usize).min(text.len());
    let last = back_off_blank(text, end, start);
    let (at, needs_break) = after_line(text, last);
    let mut out = String::new();
    if needs_break {
        out.push('\n');
    }
    out.push_str(&" ".repeat(indent));
    out.push_str(line);
    out.push('\n');
    Some(Edit {
        file,
        start: at as u32,
        end: at as u32,
        replacement: out,
    })
}

/// Applies edits to one file's text. Overlapping edits are refused, since
/// their result would depend on order. The new lines of an edit take the
/// file's line break ([`in_line_breaks_of`]).
pub fn apply(text: &str, edits: &[&Edit]) -> Option<String> {
    let mut sorted: Vec<&&Edit> = edits.iter().collect();
    sorted.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(text.len());
    let mut pos = 0usize;
    for e in sorted {
        let (s, t) = (e.start as usize, e.end as usize);
        if s < pos || t < s {
            return None;
        }
        out.push_str(text.get(pos..s)?);
        out.push_str(&in_line_breaks_of(text, &e.replacement));
        pos = t;
    }
    out.push_str(text.get(pos..)?);
    Some(out)
}

/// `replacement` (whose lines end with `\n`) with the line break of
/// `text`, the file it goes into: CRLF when its first line ends so, which
/// a file written on Windows has throughout.
pub fn in_line_breaks_of<'r>(text: &str, replacement: &'r str) -> Cow<'r, str> {
    let crlf = text.find('\n').is_some_and(|i| text[..i].ends_with('\r'));
    if !crlf || !replacement.contains('\n') {
        return Cow::Borrowed(replacement);
    }
    let mut out = String::with_capacity(replacement.len() + replacement.len() / 16);
    let mut lines = replacement.split('\n').peekable();
    while let Some(line) = lines.next() {
        match lines.peek() {
            Some(_) => {
                out.push_str(line.strip_suffix('\r').unwrap_or(line));
                out.push_str("\r\n");
            }
            None => out.push_str(line),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn load(text: &str) -> (SourceMap, Node) {
        let mut sources = SourceMap::default();
        let id = sources.add(PathBuf::from("a.yaml"), Arc::from(text));
        let doc = parse_documents(text, id, &Limits::default())
            .unwrap()
            .remove(0);
        (sources, doc)
    }

    fn edited(sources: &SourceMap, edit: Option<Edit>) -> String {
        let edit = edit.expect("an edit");
        apply(&sources.get(edit.file).text, &[&edit]).unwrap()
    }

    #[test]
    fn replaces_scalars_keeping_quotes_and_comments() {
        let text = "a: \"on\" # keep\nb: 'on'\nc: on\nd: x\n";
        let (s, doc) = load(text);
        let r = |k: &str| edited(&s, replace_scalar(&s, doc.get(k).unwrap().span(), "off"));
        assert_eq!(r("a"), "a: \"off\" # keep\nb: 'on'\nc: on\nd: x\n");
        assert_eq!(r("b"), "a: \"on\" # keep\nb: 'off'\nc: on\nd: x\n");
        assert_eq!(r("c"), "a: \"on\" # keep\nb: 'on'\nc: \"off\"\nd: x\n");
        let d = edited(
            &s,
            replace_scalar(&s, doc.get("d").unwrap().span(), "eyJ9+/="),
        );
        assert_eq!(d, "a: \"on\" # keep\nb: 'on'\nc: on\nd: eyJ9+/=\n");
    }

    #[test]
    fn removes_an_entry_by_its_whole_lines_or_not_at_all() {
        let remove = |text: &str, path: &[&str]| {
            let (s, doc) = load(text);
            let entries = doc.entries_along(path).unwrap();
            remove_entry(&s, &entries).map(|e| edited(&s, Some(e)))
        };
        let text = "spec:\n  p:\n    q:\n      a: \"on\" # c\n    r: 1\n  s:\n    - x\n";
        // The only entry of q: q goes, with what it holds.
        assert_eq!(
            remove(text, &["spec", "p", "q", "a"]).unwrap(),
            "spec:\n  p:\n    r: 1\n  s:\n    - x\n"
        );
        // A nested block goes whole, up to its last line; the blank
        // line after it stays.
        let text = "a:\n  b:\n    - 1\n    - 2\n\n  c: |\n    x\n  d: 2\n";
        assert_eq!(
            remove(text, &["a", "b"]).unwrap(),
            "a:\n\n  c: |\n    x\n  d: 2\n"
        );
        assert_eq!(
            remove(text, &["a", "c"]).unwrap(),
            "a:\n  b:\n    - 1\n    - 2\n\n  d: 2\n"
        );
        // Flow maps, a key after "- ", and a lone entry up to the root
        // are left alone.
        assert_eq!(remove("a: {b: 1, c: 2}\n", &["a", "b"]), None);
        assert_eq!(remove("l:\n  - b: 1\n    c: 2\n", &["l"]), None);
        let (s, doc) = load("l:\n  - b: 1\n    c: 2\n");
        let item = &doc.get("l").unwrap().as_seq().unwrap()[0];
        assert_eq!(remove_entry(&s, &item.entries_along(&["b"]).unwrap()), None);
        assert_eq!(remove("a:\n  b: 1\n", &["a", "b"]), None);
    }

    #[test]
    fn inserts_after_the_last_entry_with_its_indentation() {
        let text = "spec:\n    params:\n        a: \"1\" # c\n        b:\n            x: 1\n    other: 2\n";
        let (s, doc) = load(text);
        let map = doc.path(&["spec", "params"]).unwrap();
        let out = edited(
            &s,
            insert_entries(&s, map, &[("k".into(), NewValue::Scalar("\"off\"".into()))]),
        );
        assert_eq!(
            out,
            "spec:\n    params:\n        a: \"1\" # c\n        b:\n            x: 1\n        k: \"off\"\n    other: 2\n"
        );
    }

    #[test]
    fn creates_missing_maps_with_the_file_indentation() {
        let text = "spec:\n   postgresql:\n      version: \"16\"";
        let (s, doc) = load(text);
        let map = doc.path(&["spec", "postgresql"]).unwrap();
        let value = NewValue::Map(vec![("k".into(), NewValue::Scalar("v".into()))]);
        let out = edited(&s, insert_entries(&s, map, &[("parameters".into(), value)]));
        assert_eq!(
            out,
            "spec:\n   postgresql:\n      version: \"16\"\n      parameters:\n         k: v\n"
        );
    }

    #[test]
    fn flow_collections_get_items_before_the_closing_bracket() {
        let text = "m: {a: 1}\ne: {}\nl: [\"-c\", \"x=1\" ]\n";
        let (s, doc) = load(text);
        let kv = [("k".to_string(), NewValue::Scalar("v".into()))];
        let m = edited(&s, insert_entries(&s, doc.get("m").unwrap(), &kv));
        assert_eq!(m, "m: {a: 1, k: v}\ne: {}\nl: [\"-c\", \"x=1\" ]\n");
        let e = edited(&s, insert_entries(&s, doc.get("e").unwrap(), &kv));
        assert_eq!(e, "m: {a: 1}\ne: {k: v}\nl: [\"-c\", \"x=1\" ]\n");
        let items = [
            NewItem::Scalar("\"-c\"".into()),
            NewItem::Scalar("y".into()),
        ];
        let l = edited(&s, append_items(&s, doc.get("l").unwrap(), &items));
        assert_eq!(l, "m: {a: 1}\ne: {}\nl: [\"-c\", \"x=1\", \"-c\", y ]\n");
    }

    #[test]
    fn block_sequences_get_items_like_their_last() {
        let text = "env:\n  - name: A\n    value: \"1\"\n  # trailing comment\nnext: 1\n";
        let (s, doc) = load(text);
        let item = NewItem::Map(vec![
            ("name".into(), NewValue::Scalar("B".into())),
            ("value".into(), NewValue::Scalar("\"true\"".into())),
        ]);
        let out = edited(&s, append_items(&s, doc.get("env").unwrap(), &[item]));
        assert_eq!(
            out,
            "env:\n  - name: A\n    value: \"1\"\n  - name: B\n    value: \"true\"\n  # trailing comment\nnext: 1\n"
        );
    }

    #[test]
    fn block_scalars_get_a_line_with_their_indentation() {
        let text = "c: |\n    a = 1\n    b = 2\n\nd: 1\n";
        let (s, doc) = load(text);
        let out = edited(&s, append_block_line(&s, doc.get("c").unwrap(), "k = off"));
        assert_eq!(out, "c: |\n    a = 1\n    b = 2\n    k = off\n\nd: 1\n");
    }

    #[test]
    fn plain_strings_are_quoted_only_when_needed() {
        assert_eq!(string_scalar("off", '"'), "\"off\"");
        assert_eq!(string_scalar("600", '"'), "\"600\"");
        assert_eq!(string_scalar("eyJrZX0=", '"'), "eyJrZX0=");
        assert_eq!(string_scalar("a b", '\''), "'a b'");
    }
}
