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
    ascii: bool,
    /// A byte below a space other than a line feed (a tab, a carriage
    /// return), or DEL.
    controls: bool,
    /// Last answer (offset, column, line), so that columns on one long
    /// line are counted once, and the next offset on the same line, as
    /// the builder's nearly always is, needs no search for its line.
    cursor: std::cell::Cell<(u32, u32, u32)>,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let b = text.as_bytes();
        // Reserved at a line per 16 bytes (manifests average near 30), not
        // grown by doubling through a copy of every start so far.
        let mut starts = Vec::with_capacity(b.len() / 16 + 1);
        starts.push(0);
        // Line feeds, bytes beyond ASCII and control bytes in one pass,
        // 64 bytes at a time: three passes (line feeds a word at a time,
        // the two flags as folds) cost 5.6 M instructions on joryirving's
        // 1.1 MB, one of 16 bytes at a time 3.6 M.
        let (mut high, mut controls) = (0, 0);
        let mut take = |kinds: Kinds, at: usize| {
            let mut feeds = kinds.feeds;
            while feeds != 0 {
                starts.push((at + feeds.trailing_zeros() as usize) as u32 + 1);
                feeds &= feeds - 1;
            }
            high |= kinds.high;
            controls |= kinds.controls;
        };
        let mut chunks = b.chunks_exact(64);
        let mut at = 0;
        for chunk in &mut chunks {
            take(kinds(chunk.try_into().expect("chunks of 64")), at);
            at += 64;
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            // Spaces after the tail: none of the three kinds.
            let mut last = [b' '; 64];
            last[..rest.len()].copy_from_slice(rest);
            take(kinds(&last), at);
        }
        let (ascii, controls) = (high == 0, controls != 0);
        let has_cr = controls && memchr::memchr(b'\r', b).is_some();
        if has_cr {
            starts = starts_with_cr(b);
        }
        Lines {
            text,
            starts,
            bytes_are_columns: !has_cr && ascii,
            ascii,
            controls,
            cursor: std::cell::Cell::new((0, 1, 1)),
        }
    }

    /// Whether every byte of the text is ASCII.
    pub(crate) fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// Whether the text holds a byte below a space other than a line
    /// feed, or DEL.
    pub(crate) fn has_controls(&self) -> bool {
        self.controls
    }

    /// 1-based line and column of `offset`. What the tree builder
    /// nearly always asks, in ASCII text, is inlined: an offset on the
    /// cursor's line (a value after its key) or the next (the next key),
    /// answered by a subtraction.
    #[inline]
    pub(crate) fn at(&self, offset: u32) -> (u32, u32) {
        let (at, col, line) = self.cursor.get();
        if self.bytes_are_columns && at <= offset && offset as usize <= self.text.len() {
            // `starts[line]` is where the line after the cursor's starts.
            let (line, col) = match self.starts.get(line as usize) {
                None => (line, col + (offset - at)),
                Some(&next) if offset < next => (line, col + (offset - at)),
                Some(&next)
                    if self
                        .starts
                        .get(line as usize + 1)
                        .is_none_or(|&n| offset < n) =>
                {
                    (line + 1, offset - next + 1)
                }
                Some(_) => return self.searched(offset),
            };
            self.cursor.set((offset, col, line));
            return (line, col);
        }
        self.searched(offset)
    }

    /// [`Lines::at`] for an offset it does not answer inline.
    #[inline(never)]
    fn searched(&self, offset: u32) -> (u32, u32) {
        let (at, col, at_line) = self.cursor.get();
        // A collection starts where its first key or item does: the same
        // offset asked twice running.
        if offset == at {
            return (at_line, col);
        }
        // `starts[at_line]` is where the line after the cursor's starts.
        let on_cursor_line = at <= offset
            && self
                .starts
                .get(at_line as usize)
                .is_none_or(|&next| offset < next);
        let line = if on_cursor_line {
            at_line as usize
        } else if at <= offset {
            // A later line, nearly always one of the next few: the count of
            // line starts at or before `offset`, looked for from the
            // cursor's line on, and searched for only past the next few.
            let mut next = at_line as usize;
            let near = (next + 4).min(self.starts.len());
            while next < near && self.starts[next] <= offset {
                next += 1;
            }
            if next < near {
                next
            } else {
                next + self.starts[next..].partition_point(|&s| s <= offset)
            }
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

/// One bit per byte of a 64-byte chunk, for each kind of byte
/// [`Lines::new`] looks for.
struct Kinds {
    /// `\n`.
    feeds: u64,
    /// Beyond ASCII.
    high: u64,
    /// Below a space other than `\n`, or DEL.
    controls: u64,
}

/// The kinds of the bytes of `chunk`, by SSE2 (part of every x86_64),
/// sixteen bytes at a time.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
fn kinds(chunk: &[u8; 64]) -> Kinds {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut kinds = Kinds {
        feeds: 0,
        high: 0,
        controls: 0,
    };
    for (i, part) in chunk.chunks_exact(16).enumerate() {
        // SAFETY: the build enables SSE2 (the cfg above), and the load
        // reads the sixteen bytes of `part`, unaligned loads allowed.
        let (feeds, high, below_space, del) = unsafe {
            let v = _mm_loadu_si128(part.as_ptr().cast());
            (
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\n' as i8))),
                _mm_movemask_epi8(v),
                // Compared as signed bytes, those beyond ASCII are below
                // a space too.
                _mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20))),
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))),
            )
        };
        let bits = |m: i32| u64::from(m as u16) << (16 * i);
        kinds.feeds |= bits(feeds);
        kinds.high |= bits(high);
        kinds.controls |= bits(below_space & !high & !feeds | del);
    }
    kinds
}

/// The kinds of the bytes of `chunk`, one byte at a time.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn kinds(chunk: &[u8; 64]) -> Kinds {
    let mut kinds = Kinds {
        feeds: 0,
        high: 0,
        controls: 0,
    };
    for (i, &c) in chunk.iter().enumerate() {
        let bit = 1 << i;
        if c == b'\n' {
            kinds.feeds |= bit;
        }
        if c >= 0x80 {
            kinds.high |= bit;
        }
        if c < 0x20 && c != b'\n' || c == 0x7f {
            kinds.controls |= bit;
        }
    }
    kinds
}

/// Line starts as YAML counts line breaks: `\r\n`, `\n` and a lone
/// `\r`.
fn starts_with_cr(b: &[u8]) -> Vec<u32> {
    let mut starts = vec![0];
    for i in memchr::memchr2_iter(b'\n', b'\r', b) {
        if b[i] == b'\n' || b.get(i + 1) != Some(&b'\n') {
            starts.push(i as u32 + 1);
        }
    }
    starts
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

    /// The word-at-a-time pass against a byte at a time, with each kind of
    /// byte at each place in a word and in the tail after the last word.
    #[test]
    fn line_starts_and_byte_kinds_match_a_byte_at_a_time() {
        let pieces = ["a", "\n", "\t", "\r", "\r\n", "\x7f", "\x1f", " ", "é", "~"];
        for piece in pieces {
            for (before, after) in (0..70).flat_map(|b| [(b, 0), (b, 9)]) {
                let text = format!("{}{piece}{}\nz", "x".repeat(before), "y".repeat(after));
                let lines = Lines::new(&text);
                let b = text.as_bytes();
                assert_eq!(lines.starts, super::starts_with_cr(b), "{text:?}");
                let controls = b.iter().any(|&c| c < 0x20 && c != b'\n' || c == 0x7f);
                assert_eq!(lines.has_controls(), controls, "{text:?}");
                assert_eq!(lines.is_ascii(), text.is_ascii(), "{text:?}");
            }
        }
    }

    #[test]
    fn every_offset_gets_the_counted_line_and_column() {
        let texts = [
            "a: 1\nbb: [x, y]\n\n  - z\n",
            "a: 1\r\nb: 2\rc: 3\r\n",
            "k: é\nl: 日本\n  m: x",
            "no newline at all",
            "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n\n\n\nk: lines past the cursor's next few\n",
            "",
        ];
        for text in texts {
            let bounds: Vec<usize> = (0..=text.len())
                .filter(|&i| text.is_char_boundary(i))
                .collect();
            // In order, as the parser asks; in order by threes, which
            // passes over lines; and then backwards, which leaves the
            // cursor behind every answer; each offset twice running, as
            // a collection and its first key ask.
            let orders = [
                bounds.clone(),
                bounds.iter().step_by(3).copied().collect(),
                bounds.iter().rev().copied().collect(),
            ];
            for order in orders {
                let lines = Lines::new(text);
                for &i in &order {
                    assert_eq!(lines.at(i as u32), counted(text, i), "{text:?} at {i}");
                    assert_eq!(
                        lines.at(i as u32),
                        counted(text, i),
                        "{text:?} at {i} again"
                    );
                }
            }
        }
    }
}
