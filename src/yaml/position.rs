//! Positions in a file's text: saphyr counts characters, spans hold byte
//! offsets, and messages give lines and character columns.

use super::node::{FileId, Span};
use super::parse::YamlError;

/// Converts saphyr's character indices to byte offsets.
pub struct OffsetMap<'a> {
    text: &'a str,
    /// Byte offset of every character; empty when the text is ASCII and
    /// the two coincide.
    bytes: Vec<u32>,
}

impl<'a> OffsetMap<'a> {
    pub fn new(text: &'a str) -> Self {
        let bytes = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(b, _)| b as u32).collect()
        };
        OffsetMap { text, bytes }
    }

    pub fn byte(&self, char_index: usize) -> u32 {
        if self.bytes.is_empty() {
            char_index.min(self.text.len()) as u32
        } else {
            self.bytes
                .get(char_index)
                .copied()
                .unwrap_or(self.text.len() as u32)
        }
    }
}

/// Lines and character columns of byte offsets in the text as written.
/// The parser may read a repaired copy of the text (same bytes at the same
/// offsets, some line breaks turned into spaces), so positions come from
/// the original, counted as YAML counts line breaks.
pub(crate) struct Lines<'a> {
    text: &'a str,
    starts: Vec<u32>,
    /// ASCII without carriage returns: a column is the byte distance from
    /// the line's start, with no characters to count.
    bytes_are_columns: bool,
    /// Last answer (offset, column, line), so that columns on one long
    /// line are counted once, and the next offset on the same line, as
    /// the builder's nearly always is, needs no search for its line.
    cursor: std::cell::Cell<(u32, u32, u32)>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let b = text.as_bytes();
        let mut starts = vec![0];
        let mut has_cr = false;
        for i in memchr::memchr2_iter(b'\n', b'\r', b) {
            let ends_line = b[i] == b'\n' || b.get(i + 1) != Some(&b'\n');
            has_cr |= b[i] == b'\r';
            if ends_line {
                starts.push(i as u32 + 1);
            }
        }
        Lines {
            text,
            starts,
            bytes_are_columns: !has_cr && text.is_ascii(),
            cursor: std::cell::Cell::new((0, 1, 1)),
        }
    }

    /// 1-based line and column of `offset`.
    pub(crate) fn at(&self, offset: u32) -> (u32, u32) {
        let (at, col, at_line) = self.cursor.get();
        // `starts[at_line]` is where the line after the cursor's starts.
        let on_cursor_line = at <= offset
            && self
                .starts
                .get(at_line as usize)
                .is_none_or(|&next| offset < next);
        let line = if on_cursor_line {
            at_line as usize
        } else {
            self.starts.partition_point(|&s| s <= offset).max(1)
        };
        let start = self.starts[line - 1];
        let (from, base) = if at >= start && at <= offset {
            (at, col)
        } else {
            (start, 1)
        };
        let chars = if self.bytes_are_columns {
            if offset as usize <= self.text.len() {
                offset.saturating_sub(from)
            } else {
                0
            }
        } else {
            let piece = self.text.get(from as usize..offset as usize).unwrap_or("");
            // Characters are the bytes that do not continue one.
            piece
                .bytes()
                .filter(|&b| b & 0xC0 != 0x80 && b != b'\r')
                .count() as u32
        };
        let col = base + chars;
        self.cursor.set((offset, col, line as u32));
        (line as u32, col)
    }

    pub(super) fn span(&self, file: FileId, start: u32, end: u32) -> Span {
        let (line, col) = self.at(start);
        Span {
            file,
            start,
            end: end.max(start),
            line,
            col,
        }
    }

    pub(super) fn error(&self, offset: u32, message: String) -> YamlError {
        let (line, col) = self.at(offset);
        YamlError {
            message,
            line,
            col,
            offset,
        }
    }
}

/// The char boundary at or before `at` (`str::floor_char_boundary`,
/// newer than this crate's MSRV).
pub fn floor_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The char boundary at or after `at`.
pub fn ceil_char(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::Lines;

    /// Line and column counted from the start, one character at a time:
    /// `\r\n`, `\n` and a lone `\r` end a line; a `\r` takes no column.
    fn counted(text: &str, offset: usize) -> (u32, u32) {
        let (mut line, mut col) = (1, 1);
        let b = text.as_bytes();
        for (i, c) in text.char_indices().take_while(|&(i, _)| i < offset) {
            if c == '\n' || (c == '\r' && b.get(i + 1) != Some(&b'\n')) {
                (line, col) = (line + 1, 1);
            } else if c != '\r' {
                col += 1;
            }
        }
        (line, col)
    }

    #[test]
    fn every_offset_gets_the_counted_line_and_column() {
        let texts = [
            "a: 1\nbb: [x, y]\n\n  - z\n",
            "a: 1\r\nb: 2\rc: 3\r\n",
            "k: é\nl: 日本\n  m: x",
            "no newline at all",
            "",
        ];
        for text in texts {
            let bounds: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            // In order, as the parser asks, and then backwards, which
            // leaves the cursor behind every answer.
            for order in [bounds.clone(), bounds.iter().rev().copied().collect()] {
                let lines = Lines::new(text);
                for &i in &order {
                    assert_eq!(lines.at(i as u32), counted(text, i), "{text:?} at {i}");
                }
            }
        }
    }
}
