//! Flow collections (`[a, "b"]`, `{kind: X, name: y, bare}`), on one
//! line or broken after a bracket, a comma or a quoted scalar, read as
//! saphyr reads them, with its spans.

use saphyr_parser::ScalarStyle;

use super::{Anchor, MAX_FLOW, Scanner, Sink, is_break, plain_start};

impl<S: Sink> Scanner<'_, '_, S> {
    /// The flow collection at `v` (`[a, "b"]`, `{kind: X, name: y}`,
    /// nested up to [`MAX_FLOW`]) that ends its line, value in the block
    /// collection at column `indent`; returns where it ends. Its lines
    /// after the first must be deeper than `indent` (saphyr refuses a
    /// plain scalar that is not, and the scanner leaves the rest to it).
    pub(super) fn flow(&mut self, v: usize, indent: usize) -> Option<usize> {
        self.flow_indent = indent;
        let end = self.flow_node(v, 0)?;
        // As for quoted scalars, saphyr's span of the closing bracket
        // takes in a comment after it.
        is_break(self.b.get(end)).then_some(end)
    }

    /// The next token from `j`, where a token and the spaces after it end:
    /// `j` itself, or at a line break the first text of the next line
    /// that is not blank, deeper than the block collection. A comment is
    /// left to saphyr, whose spans take it in.
    fn flow_token(&self, j: usize) -> Option<usize> {
        let b = self.b;
        if b.get(j) != Some(&b'\n') {
            return Some(j);
        }
        let mut line = j + 1;
        loop {
            let i = skip_spaces(b, line);
            match *b.get(i)? {
                b'\n' => line = i + 1,
                b'#' => return None,
                _ if i - line <= self.flow_indent => return None,
                _ => return Some(i),
            }
        }
    }

    /// The flow node at `j`; returns where it ends.
    fn flow_node(&mut self, j: usize, depth: usize) -> Option<usize> {
        let b = self.b;
        match *b.get(j)? {
            // saphyr's span of a closing bracket runs to the next token.
            b'[' | b'{' if depth < MAX_FLOW => self.flow_collection(j, depth + 1),
            // What may follow is the caller's to check.
            b'*' => self.alias(j),
            b'"' | b'\'' => {
                let end = self.quoted(j, Anchor::default())?;
                if b.get(end) == Some(&b':') {
                    return Some(end);
                }
                // A key's `:` after spaces is left to saphyr.
                self.next_token(end)
            }
            _ => {
                // A `-` starts one before anything but a flow indicator
                // (`[-c, x]`); saphyr refuses `[-, x]`.
                if !plain_start(b, j)
                    || b[j] == b'-'
                        && matches!(b.get(j + 1), Some(b',' | b'[' | b']' | b'{' | b'}'))
                {
                    return None;
                }
                let (from, mut end, mut k) = (j, j, j);
                loop {
                    match *b.get(k)? {
                        b',' | b']' | b'}' => break,
                        b':' if b.get(k + 1) == Some(&b' ') => break,
                        b'\n' | b'[' | b'{' | b':' | b'#' => return None,
                        // saphyr refuses a word of a flow plain scalar that
                        // starts with `-` and a flow indicator (`[a -]`).
                        b'-' if b[k - 1] == b' '
                            && matches!(b.get(k + 1), Some(b',' | b'[' | b']' | b'{' | b'}')) =>
                        {
                            return None;
                        }
                        b' ' => {}
                        _ => end = k + 1,
                    }
                    k += 1;
                }
                let text = &self.text[from..end];
                self.scalar(text, ScalarStyle::Plain, 0, None, from, end);
                Some(k)
            }
        }
    }

    /// Where the spaces after `end` end, when a `,`, `]`, `}` or the
    /// line's end follows them (else the text is saphyr's).
    fn next_token(&self, end: usize) -> Option<usize> {
        let next = skip_spaces(self.b, end);
        matches!(self.b.get(next), Some(b',' | b']' | b'}' | b'\n')).then_some(next)
    }

    /// The flow sequence or mapping whose bracket is at `v`, at `depth`
    /// (1 for the outermost); returns where it ends.
    fn flow_collection(&mut self, v: usize, depth: usize) -> Option<usize> {
        let b = self.b;
        let seq = b[v] == b'[';
        let close = if seq { b']' } else { b'}' };
        let after = skip_spaces(b, v + 1);
        self.sink.open(seq, 0, v as u32);
        let mut j = self.flow_token(after)?;
        if b.get(j) != Some(&close) {
            loop {
                if seq {
                    let end = self.flow_node(j, depth)?;
                    j = self.flow_token(skip_spaces(b, end))?;
                } else {
                    // A scalar key, then `: ` and a value, or no value.
                    if matches!(b.get(j), Some(b'[' | b'{')) {
                        return None;
                    }
                    // An alias is the one node here that is not a scalar.
                    let scalar = b.get(j) != Some(&b'*');
                    j = self.flow_node(j, depth)?;
                    if matches!(b.get(j), Some(b',' | b'}')) && scalar {
                        // A key alone (`{a, b: c}`): saphyr gives its
                        // empty value the span of the `,` or `}` token
                        // after it, which runs over the spaces that
                        // follow.
                        let after = skip_spaces(b, j + 1);
                        self.scalar("", ScalarStyle::Plain, 0, None, j, after);
                    } else {
                        if b.get(j) != Some(&b':') || b.get(j + 1) != Some(&b' ') {
                            return None;
                        }
                        j = skip_spaces(b, j + 1);
                        if matches!(b.get(j), Some(b',' | b'}' | b']')) {
                            return None;
                        }
                        let end = self.flow_node(j, depth)?;
                        j = self.flow_token(skip_spaces(b, end))?;
                    }
                }
                match *b.get(j)? {
                    b',' => {
                        j = self.flow_token(skip_spaces(b, j + 1))?;
                        match b.get(j) {
                            // A comma after a sequence's last item.
                            Some(b']') if seq => break,
                            Some(b']' | b'}' | b',') => return None,
                            _ => {}
                        }
                    }
                    c if c == close => break,
                    _ => return None,
                }
            }
        }
        // saphyr's span of a nested collection's closing bracket runs to
        // the next token; the outermost one's takes in a comment after
        // it, which is left to saphyr.
        if depth == 1 {
            self.sink.close(j as u32, j as u32 + 1);
            return Some(j + 1);
        }
        let next = self.next_token(j + 1)?;
        self.sink.close(j as u32, next as u32);
        Some(j + 1)
    }
}

fn skip_spaces(b: &[u8], mut j: usize) -> usize {
    while b.get(j) == Some(&b' ') {
        j += 1;
    }
    j
}
