//! Control characters from the repository, made visible at emission: a
//! file name or value holding terminal escape sequences must not clear
//! the screen, move the cursor or print a fake clean result in human or
//! GitHub output. C0 controls but newline and tab, DEL and C1 controls
//! are written as `\x1b` / `\u{9b}`; so are the bidirectional overrides
//! and isolates that reorder what a reader sees ("Trojan Source",
//! CVE-2021-42574).

use std::borrow::Cow;

fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether the character at `at` of `s` is escaped: a carriage return
/// that ends a CRLF line is not (it moves nothing a reader sees).
fn escaped_at(s: &str, at: usize, c: char) -> bool {
    hidden(c) && !(c == '\r' && s[at + 1..].starts_with('\n'))
}

fn push_escaped(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = if (c as u32) < 0x80 {
        write!(out, "\\x{:02x}", c as u32)
    } else {
        write!(out, "\\u{{{:x}}}", c as u32)
    };
}

/// `s` with every hidden character escaped; borrowed when there is none.
pub fn escape(s: &str) -> Cow<'_, str> {
    if !s.char_indices().any(|(at, c)| escaped_at(s, at, c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for (at, c) in s.char_indices() {
        if escaped_at(s, at, c) {
            push_escaped(&mut out, c);
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// A source text escaped for a snippet, with the way back from offsets
/// in the original text (spans) to offsets in the escaped one.
#[derive(Debug)]
pub struct Source {
    pub text: String,
    /// `(original offset after a hidden character, bytes added so far)`,
    /// ascending.
    shifts: Vec<(usize, usize)>,
}

impl Source {
    pub fn new(original: &str) -> Source {
        if !original
            .char_indices()
            .any(|(at, c)| escaped_at(original, at, c))
        {
            return Source {
                text: original.to_string(),
                shifts: Vec::new(),
            };
        }
        let mut text = String::with_capacity(original.len() + 16);
        let mut shifts = Vec::new();
        for (at, c) in original.char_indices() {
            if escaped_at(original, at, c) {
                push_escaped(&mut text, c);
                let added = text.len() - (at + c.len_utf8());
                shifts.push((at + c.len_utf8(), added));
            } else {
                text.push(c);
            }
        }
        Source { text, shifts }
    }

    /// Where original offset `at` is in the escaped text.
    pub fn offset(&self, at: usize) -> usize {
        let i = self.shifts.partition_point(|(after, _)| *after <= at);
        at + if i == 0 { 0 } else { self.shifts[i - 1].1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_and_bidi_overrides_are_shown_not_obeyed() {
        assert_eq!(escape("plain\tline\r\n"), "plain\tline\r\n");
        assert_eq!(escape("a\u{1b}[2Jb\rc\u{7f}"), "a\\x1b[2Jb\\x0dc\\x7f");
        assert_eq!(escape("x\u{9b}y\u{202e}z"), "x\\u{9b}y\\u{202e}z");
    }

    #[test]
    fn spans_map_onto_the_escaped_source() {
        let original = "k: \u{1b}[2J\nname: v\u{9b}\nend: x\n";
        let src = Source::new(original);
        for word in ["name", "end", "x"] {
            let at = original.find(word).unwrap();
            assert_eq!(&src.text[src.offset(at)..][..word.len()], word);
        }
        assert_eq!(src.offset(0), 0);
        assert_eq!(src.offset(original.len()), src.text.len());
    }
}
