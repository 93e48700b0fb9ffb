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
    /// Last answer (offset, column, line), so that columns on one long
    /// line are counted once, and the next offset on the same line, as
    /// the builder's nearly always is, needs no search for its line.
    cursor: std::cell::Cell<(u32, u32, u32)>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let b = text.as_bytes();
        let mut starts = vec![0];
        for (i, &c) in b.iter().enumerate() {
            let ends_line = c == b'\n' || (c == b'\r' && b.get(i + 1) != Some(&b'\n'));
            if ends_line {
                starts.push(i as u32 + 1);
            }
        }
        Lines {
            text,
            starts,
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
        let piece = self.text.get(from as usize..offset as usize).unwrap_or("");
        // Characters are the bytes that do not continue one.
        let chars = piece
            .bytes()
            .filter(|&b| b & 0xC0 != 0x80 && b != b'\r')
            .count();
        let col = base + chars as u32;
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
