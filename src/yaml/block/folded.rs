//! Plain and quoted scalars that run over several lines, folded as
//! saphyr folds them, with its spans.

use std::borrow::Cow;

use saphyr_parser::ScalarStyle;

use super::{Anchor, PlainEnd, Scanner, Sink, push_breaks, unescape};

impl<'t, S: Sink> Scanner<'t, '_, S> {
    /// A plain scalar from `v`, its first line ending at `end`, with the
    /// lines after it that continue it: those deeper than the collection
    /// at column `indent`, up to a comment or a shallower line, folded
    /// as saphyr's `scan_plain_scalar` folds them (a line break becomes a
    /// space, each blank line between two a `\n`, spaces around a break
    /// dropped). Returns its value, where it ends, and where the line
    /// after its last starts; `None` when a continuation holds what
    /// would end the scalar mid-line (`: `, ` #`), which is saphyr's to
    /// read or reject.
    pub(super) fn plain_lines(
        &self,
        v: usize,
        mut end: usize,
        indent: usize,
    ) -> Option<(Cow<'t, str>, usize, usize)> {
        let (b, text) = (self.b, self.text);
        let mut value = Cow::Borrowed(&text[v..end]);
        let mut next = self.line_end(end) + 1;
        let mut line = next;
        let mut blank_lines = 0;
        while line < b.len() {
            // A byte at the collection's column other than a space or a
            // break is a line of text no deeper than the collection, or
            // ends an earlier one that is: no continuation, and the
            // next line's scan need not be read twice.
            if !matches!(b.get(line + indent), Some(b' ' | b'\n')) {
                break;
            }
            let mut i = line;
            while b.get(i) == Some(&b' ') {
                i += 1;
            }
            match b.get(i) {
                None => break,
                Some(b'\n') => {
                    blank_lines += 1;
                    line = i + 1;
                    continue;
                }
                Some(b'#') => break,
                Some(_) if i - line <= indent => break,
                Some(_) => {}
            }
            let stop = match self.plain_end(i) {
                PlainEnd::Line(j) => j,
                PlainEnd::Colon(_) | PlainEnd::Comment(_) => return None,
            };
            end = trim_end(b, stop);
            let s = value.to_mut();
            match blank_lines {
                0 => s.push(' '),
                n => push_breaks(s, n),
            }
            s.push_str(&text[i..end]);
            blank_lines = 0;
            next = stop + 1;
            line = next;
        }
        Some((value, end, next))
    }

    /// Reads the quoted scalar at `q` that runs over several lines, value
    /// of a key or item of the collection at column `indent`, folded as
    /// saphyr's `scan_flow_scalar` folds it: each line's spaces around
    /// its break dropped, a break a space, each blank line between two
    /// lines a `\n`. Returns where it ends; `None` for a line no deeper
    /// than `indent`, an escaped line break or a break after an escape,
    /// or no closing quote, which are saphyr's to read or reject.
    pub(super) fn quoted_lines(
        &mut self,
        q: usize,
        anchor: Anchor,
        indent: usize,
    ) -> Option<usize> {
        let (b, text) = (self.b, self.text);
        let quote = b[q];
        let double = quote == b'"';
        let mut value = String::new();
        let mut from = q + 1;
        loop {
            // This line's text, up to the closing quote or the break.
            let mut j = from;
            let close = loop {
                match *b.get(j)? {
                    b'\n' => break false,
                    b'\\' if double => {
                        if b.get(j + 1) == Some(&b'\n') {
                            return None;
                        }
                        j += 2;
                    }
                    b'\'' if !double && b.get(j + 1) == Some(&b'\'') => j += 2,
                    c if c == quote => break true,
                    _ => j += 1,
                }
            };
            let mut to = j;
            if !close {
                while to > from && b[to - 1] == b' ' {
                    to -= 1;
                }
                // An escape's character is text, never a space to drop.
                if double && to > from && b[to - 1] == b'\\' {
                    return None;
                }
            }
            let line = &text[from..to];
            match (double, line.contains(['\\', '\''])) {
                (_, false) => value.push_str(line),
                (true, true) => value.push_str(&unescape(line)?),
                (false, true) => value.push_str(&line.replace("''", "'")),
            }
            if close {
                let style = match double {
                    true => ScalarStyle::DoubleQuoted,
                    false => ScalarStyle::SingleQuoted,
                };
                self.scalar(&value, style, anchor.id, None, anchor.start(q), j + 1);
                return Some(j + 1);
            }
            // The next line with text, deeper than the collection.
            let mut blank_lines = 0;
            let mut line_start = j + 1;
            loop {
                let mut i = line_start;
                while b.get(i) == Some(&b' ') {
                    i += 1;
                }
                match *b.get(i)? {
                    b'\n' => {
                        blank_lines += 1;
                        line_start = i + 1;
                    }
                    _ if i - line_start <= indent => return None,
                    _ => {
                        from = i;
                        break;
                    }
                }
            }
            match blank_lines {
                0 => value.push(' '),
                n => push_breaks(&mut value, n),
            }
        }
    }
}

/// Where text ending at `stop` ends without its trailing spaces; the
/// text holds a non-space before `stop`.
pub(super) fn trim_end(b: &[u8], mut stop: usize) -> usize {
    while b[stop - 1] == b' ' {
        stop -= 1;
    }
    stop
}
