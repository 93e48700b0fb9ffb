//! Inline YAML written in a kustomization (patch texts, replacements,
//! transformer configurations): parsed once per place and text, with the
//! nodes of a block scalar placed where they are written in the file.

use std::path::Path;
use std::sync::Arc;

use crate::source::Issue;
use crate::source::files::Files;
use crate::yaml::{Node, Origin, Style, Value, parse_documents};

/// The documents of an inline YAML string written in a kustomization. A
/// block scalar's lines map back onto the file, so nodes keep real
/// positions; other styles attribute every node to the string itself.
/// Parsed once per place and text: a Flux Kustomization's `patches`
/// that give every child Kustomization the same inline patch (a common
/// home-ops layout) would otherwise parse it again in every child.
pub(crate) fn inline_docs(
    files: &mut Files,
    node: &Node,
    kfile: &Path,
) -> Result<Vec<Node>, Issue> {
    let text = node.as_str().unwrap_or("");
    let key = (node.span(), node.style() == Style::Block, text.to_string());
    let mut docs = match files.inline_docs.get(&key) {
        Some(docs) => docs.clone(),
        None => {
            let docs = parse_inline(files, node, text, kfile)?;
            files.inline_docs.insert(key, docs.clone());
            docs
        }
    };
    keep_unknown(node, &mut docs);
    Ok(docs)
}

/// A patch text a parent's substitution left waiting for a value the
/// repository does not show (a Flux Kustomization's `spec.patches` with
/// `${VAR}` from its parent's encrypted variables): in the cluster the
/// parent put that value there, so the `${...}` kept in the parsed
/// patch stands for it, and no later substitution reads it as a
/// variable of its own.
fn keep_unknown(node: &Node, docs: &mut [Node]) {
    let Some(origin) = node
        .shared_origin()
        .filter(|o| matches!(**o, Origin::Substituted { unknown: true, .. }))
    else {
        return;
    };
    for doc in docs {
        doc.each_mut(&mut |n| {
            if n.as_str().is_some_and(|t| t.contains("${")) {
                n.set_origin(Some(origin.clone()));
            }
        });
    }
}

fn parse_inline(files: &Files, node: &Node, text: &str, kfile: &Path) -> Result<Vec<Node>, Issue> {
    let file = node.span().file;
    let mut docs = parse_documents(text, file, &files.limits().yaml).map_err(|e| {
        // A block scalar's lines are the file's, from the line after its
        // indicator; a flow scalar's error is placed at the scalar.
        let line = node.span().line
            + if node.style() == Style::Block {
                e.line
            } else {
                0
            };
        Issue::located(
            files.shown(kfile),
            line,
            node.span().col,
            format!("inline patch: {}", e.message),
        )
    })?;
    let source = (file.0 as usize) < files.sources.len();
    let block = match (node.style(), source) {
        (Style::Block, true) => block_start(&files.sources.get(file).text, node.span().start),
        _ => None,
    };
    let file_text = match (block, source) {
        (Some(_), true) => Some(files.sources.get(file).text.clone()),
        _ => None,
    };
    let mut lines = block
        .zip(file_text.as_deref())
        .map(|(b, text)| LineStarts::from(text, b.first_line, b.line_start));
    for d in &mut docs {
        respan(d, node, block, lines.as_mut());
    }
    Ok(docs)
}

/// Where a block scalar's content starts in its file.
#[derive(Clone, Copy)]
struct Block {
    /// The content's first line, 1-based.
    first_line: u32,
    /// The byte offset that line begins at.
    line_start: usize,
    /// The indentation every content line carries.
    indent: u32,
}

fn block_start(text: &str, scalar_start: u32) -> Option<Block> {
    let from = text.get(scalar_start as usize..)?;
    // The scalar's span may begin at the `|`/`>` indicator; content starts
    // on the next line.
    let skip = if from.starts_with(['|', '>']) {
        from.find('\n')? + 1
    } else {
        0
    };
    let content = scalar_start as usize + skip;
    let before = text.get(..content)?;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    // By bytes, which the compiler counts many at a time: a search for
    // each line break was most of placing a patch text.
    let first_line = before.bytes().filter(|b| *b == b'\n').count() as u32 + 1;
    let indent = text
        .get(line_start..)?
        .chars()
        .take_while(|c| *c == ' ')
        .count() as u32;
    Some(Block {
        first_line,
        line_start,
        indent,
    })
}

fn respan(n: &mut Node, host: &Node, block: Option<Block>, mut lines: Option<&mut LineStarts>) {
    let moved = match (block, lines.as_deref_mut()) {
        (
            Some(Block {
                first_line, indent, ..
            }),
            Some(lines),
        ) => {
            let line = first_line.saturating_add(n.span().line).saturating_sub(1);
            lines
                .offset(line, indent + n.span().col)
                .map(|start| crate::yaml::Span {
                    file: host.span().file,
                    start,
                    end: start.saturating_add(n.span().end.saturating_sub(n.span().start)),
                    line,
                    col: indent + n.span().col,
                })
        }
        _ => None,
    };
    n.set_span(moved.unwrap_or(host.span()));
    match &mut n.value {
        Value::Seq(items) => {
            for i in Arc::make_mut(items).iter_mut() {
                respan(i, host, block, lines.as_deref_mut());
            }
        }
        Value::Map(entries) => {
            for (k, v) in Arc::make_mut(entries).iter_mut() {
                respan(k, host, block, lines.as_deref_mut());
                respan(v, host, block, lines.as_deref_mut());
            }
        }
        _ => {}
    }
}

/// Where the lines of a kustomization file start, from a block scalar's
/// first line on and only as far as its nodes ask: counting lines from
/// the top for every node of a block-scalar patch was quadratic (5 % of a
/// joryirving__home-ops run), and finding every line of the file for
/// each patch text was still a third of parsing them.
struct LineStarts<'t> {
    text: &'t str,
    /// The 1-based line that `starts[0]` begins.
    first: u32,
    /// Byte offsets of line `first` and the lines after it found so far.
    starts: Vec<usize>,
}

impl<'t> LineStarts<'t> {
    /// Lines from `line` (1-based), which begins at byte `at`.
    fn from(text: &'t str, line: u32, at: usize) -> LineStarts<'t> {
        LineStarts {
            text,
            first: line,
            starts: vec![at],
        }
    }

    /// Byte offset of 1-based `line`; a line past the last starts at the
    /// end of the text.
    fn line_start(&mut self, line: u32) -> usize {
        let Some(ix) = line.checked_sub(self.first) else {
            // Above the block: no node of it lands there, counted from
            // the top all the same.
            return match line.checked_sub(2) {
                None => 0,
                Some(breaks) => self
                    .text
                    .match_indices('\n')
                    .nth(breaks as usize)
                    .map_or(self.text.len(), |(i, _)| i + 1),
            };
        };
        while self.starts.len() <= ix as usize {
            let last = self.starts[self.starts.len() - 1];
            match self.text.get(last..).and_then(|rest| rest.find('\n')) {
                Some(i) => self.starts.push(last + i + 1),
                None => return self.text.len(),
            }
        }
        self.starts[ix as usize]
    }

    /// Byte offset of 1-based `line`, `col` (in characters); a line past
    /// the last starts at the end of the text.
    fn offset(&mut self, line: u32, col: u32) -> Option<u32> {
        line.checked_sub(1)?;
        let start = self.line_start(line);
        let within: usize = self
            .text
            .get(start..)?
            .chars()
            .take(col.checked_sub(1)? as usize)
            .map(char::len_utf8)
            .sum();
        u32::try_from(start + within).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_starts_from_a_block_agree_with_counting_from_the_top() {
        let text = "a\nbé\n\nccc\nd";
        // Every line counted from the top of the text.
        let from_top = |line: u32, col: u32| -> Option<u32> {
            let starts: Vec<usize> = std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect();
            let start = starts
                .get(line.checked_sub(1)? as usize)
                .copied()
                .unwrap_or(text.len());
            let within: usize = text[start..]
                .chars()
                .take(col.checked_sub(1)? as usize)
                .map(char::len_utf8)
                .sum();
            u32::try_from(start + within).ok()
        };
        for first in 1..=5 {
            let at = from_top(first, 1).unwrap() as usize;
            let mut lines = LineStarts::from(text, first, at);
            // Asked past the end first, then back and forth.
            for line in (0..=7).rev().chain(0..=7) {
                for col in 0..=4 {
                    assert_eq!(
                        lines.offset(line, col),
                        from_top(line, col),
                        "from line {first}, at {line}:{col}"
                    );
                }
            }
        }
    }
}
