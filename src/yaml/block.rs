//! A scanner for the block-style YAML that nearly every GitOps file is:
//! mappings and sequences by indentation (a sequence as an item, `- - a`,
//! too), plain and quoted scalars (keys on one line, values on one or
//! more), literal and folded block scalars, flow sequences and mappings
//! of scalars (`[a, "b"]`, `{k: v, key_alone}`, nested, broken over lines
//! after a bracket, comma or quoted scalar; block/flow.rs), anchors on
//! values and aliases as values, local tags on plain values (`!env_var
//! NAME`), comments and `---` between documents.
//!
//! saphyr's scanner costs about 150 instructions per byte (BENCHMARKS.md,
//! "Parser candidates"), most of it in a character buffer this subset
//! does not need. This one gives the events saphyr gives, with the same
//! spans (in bytes; a quoted scalar's end at its closing quote, where the
//! tree builder puts saphyr's), or nothing at all: a file with anything it does not
//! take (anchors on keys or on flow or block scalars, other tags, multi-line
//! keys, flow collections broken elsewhere, escaped line breaks, tabs, carriage
//! returns, a BOM, directives, a syntax error) is left whole to saphyr,
//! which also reports every error. `tests/it/yaml_fast_path.rs` holds the two to the same trees on
//! every corpus and test file, and the `yaml_fast_path` fuzz target on
//! any input.

use std::borrow::Cow;

use saphyr_parser::{ScalarStyle, Tag};

use super::position::Lines;

mod escape;
mod flow;
mod folded;
mod search;
use escape::unescape;
use folded::trim_end;
use search::find;

/// What the scanner hands each event to, with its byte range in the
/// text, as it scans: the tree is built as the lines are read, where a
/// list of events (96 bytes each) made the tree builder's reading of
/// each event cost more than the event's making. A method per kind of
/// event, its parts by reference: a saphyr `Event` built here only to
/// be matched and dropped by the builder cost more moving than the
/// node it became. The stream's start and end carry nothing a tree
/// needs and are not handed on.
pub(super) trait Sink {
    /// A scalar written at `start..end`: its text as read (unquoted,
    /// folded), its anchor (0 for none) and tag.
    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        start: u32,
        end: u32,
    );
    /// A sequence (`seq`) or mapping opening at `start`, under `anchor`.
    fn open(&mut self, seq: bool, anchor: usize, start: u32);
    /// The innermost open collection's end, at `start..end`.
    fn close(&mut self, start: u32, end: u32);
    /// An alias of anchor `id`, written at `start`.
    fn alias(&mut self, id: usize, start: u32);
    fn document_start(&mut self);
    fn document_end(&mut self);
}

/// Collections nested deeper than this go to saphyr (which enforces the
/// depth budget with its error position).
const MAX_DEPTH: usize = 64;

/// Flow collections nested deeper than this go to saphyr.
const MAX_FLOW: usize = 8;

/// Longest implicit key saphyr takes (the YAML spec's 1024 characters),
/// counted here in bytes and with a margin.
const MAX_KEY: usize = 1000;

/// Hands the events of `text` to `sink` as they are scanned; `None`
/// when its bytes are not all in the subset this scanner takes, which
/// may be found after some events were handed on: the caller then reads
/// the whole text with saphyr. A quoted scalar's event ends at its
/// closing quote (saphyr's run on over the spaces and comment after it).
pub(super) fn scan(text: &str, lines: &Lines, sink: &mut impl Sink) -> Option<()> {
    let plain = !lines.has_controls() && (lines.is_ascii() || plain_unicode(text.as_bytes()));
    if text.len() >= u32::MAX as usize || !plain {
        return None;
    }
    let mut scanner = Scanner {
        text,
        b: text.as_bytes(),
        sink,
        stack: Vec::with_capacity(16),
        pending: None,
        rootless: false,
        anchors: Vec::new(),
        next_anchor: 1,
        flow_indent: 0,
    };
    let mut open_doc = false;
    let mut line = Some(0);
    while let Some(at) = line {
        line = scanner.step(at, &mut open_doc)?;
    }
    Some(())
}

/// Whether the text's characters beyond ASCII hold none YAML treats
/// specially (C1 controls, NEL, the line and paragraph separators, BOMs
/// and noncharacters), which this scanner leaves to saphyr with the
/// control characters [`Lines::has_controls`] finds. Each starts with
/// one of three lead bytes.
fn plain_unicode(b: &[u8]) -> bool {
    memchr::memchr3_iter(0xC2, 0xE2, 0xEF, b).all(|i| {
        let next = b.get(i + 1).copied().unwrap_or(0);
        let third = b.get(i + 2).copied().unwrap_or(0);
        !match b[i] {
            0xC2 => next < 0xA0,
            0xE2 => next == 0x80 && matches!(third, 0xA8 | 0xA9),
            _ => next == 0xBB && third == 0xBF || next == 0xBF && third >= 0xBE,
        }
    })
}

/// What ends a plain scalar on its line, and where (see
/// [`Scanner::plain_end`]).
enum PlainEnd {
    /// A `:` before a blank or the line's end: the scalar was a key.
    Colon(usize),
    /// The space before a ` #` comment.
    Comment(usize),
    /// The line break, or the end of the text.
    Line(usize),
}

#[derive(Clone, Copy)]
struct Open {
    seq: bool,
    /// Column of the keys, or of the dashes.
    indent: usize,
}

/// A `key:` or `-` with nothing after it on its line: its value is the
/// collection on the next lines, or an empty scalar.
#[derive(Clone, Copy)]
struct Pending {
    /// Column of the collection the key or dash belongs to.
    indent: usize,
    /// Where the empty scalar is (the colon), for a key.
    colon: usize,
    key: bool,
    /// An anchor written after the key or dash, for the collection.
    anchor: Anchor,
}

/// An anchor (`&name`) on the node that follows it: its id as saphyr
/// numbers anchors (from 1, in the order written, across documents;
/// 0 for none), and where it is written, where saphyr starts the node's
/// span.
#[derive(Clone, Copy, Default)]
struct Anchor {
    id: usize,
    at: usize,
}

impl Anchor {
    /// Where a node that starts at `node` begins its span.
    fn start(self, node: usize) -> usize {
        if self.id == 0 { node } else { self.at }
    }
}

struct Scanner<'t, 's, S> {
    text: &'t str,
    b: &'t [u8],
    sink: &'s mut S,
    stack: Vec<Open>,
    pending: Option<Pending>,
    /// The document has started and its root collection is not open
    /// yet: a line after the root collection closed is beyond this
    /// scanner.
    rootless: bool,
    /// The anchors of the document so far, by name; a later one of the
    /// same name hides an earlier one, as in saphyr.
    anchors: Vec<(&'t str, usize)>,
    next_anchor: usize,
    /// Column of the block collection holding the flow collection being
    /// read (see [`Scanner::flow`]).
    flow_indent: usize,
}

fn is_break(c: Option<&u8>) -> bool {
    matches!(c, None | Some(b'\n'))
}

impl<'t, S: Sink> Scanner<'t, '_, S> {
    /// Hands on a scalar read at `start..end`.
    fn scalar(
        &mut self,
        text: &str,
        style: ScalarStyle,
        anchor: usize,
        tag: Option<&Tag>,
        start: usize,
        end: usize,
    ) {
        self.sink
            .scalar(text, style, anchor, tag, start as u32, end as u32);
    }

    /// Hands on the end of the innermost collection, at `at`.
    fn close(&mut self, at: usize) {
        self.sink.close(at as u32, at as u32);
    }

    fn at(&self, i: usize) -> Option<u8> {
        self.b.get(i).copied()
    }

    /// Whether the line from `i` on is blank or a comment (after `i`'s
    /// spaces).
    fn rest_is_empty(&self, mut i: usize) -> bool {
        while self.at(i) == Some(b' ') {
            i += 1;
        }
        matches!(self.at(i), None | Some(b'\n' | b'#'))
    }

    /// Where the line holding `i` ends (its `\n`, or the end).
    fn line_end(&self, i: usize) -> usize {
        find(self.b, i, [b'\n'], |rest| memchr::memchr(b'\n', rest)).unwrap_or(self.b.len())
    }

    /// After a value that must end its line: only spaces and a comment
    /// may follow.
    fn end_of_line(&self, i: usize) -> Option<()> {
        let mut j = i;
        while self.at(j) == Some(b' ') {
            j += 1;
        }
        match self.at(j) {
            None | Some(b'\n') => Some(()),
            Some(b'#') if j > i => Some(()),
            _ => None,
        }
    }

    /// Scans from `line` to the end of the next line with content (and
    /// the stream's start or end); returns where the line after it
    /// starts, `None` at the end of the stream.
    fn step(&mut self, mut line: usize, open_doc: &mut bool) -> Option<Option<usize>> {
        // The next line with content.
        let (start, indent) = loop {
            if line >= self.b.len() {
                break (self.b.len(), None);
            }
            let mut i = line;
            while self.at(i) == Some(b' ') {
                i += 1;
            }
            match self.at(i) {
                None => break (self.b.len(), None),
                Some(b'\n') | Some(b'#') => line = self.line_end(i) + 1,
                Some(_) => break (i, Some(i - line)),
            }
        };
        let Some(indent) = indent else {
            self.close_document(start, *open_doc)?;
            return Some(None);
        };
        let b = self.b;
        let marker = indent == 0 && b.len() >= start + 3 && is_break_or_blank(b.get(start + 3));
        if marker && &b[start..start + 3] == b"..." || indent == 0 && b[start] == b'%' {
            return None;
        }
        if marker && &b[start..start + 3] == b"---" {
            self.close_document(start, *open_doc)?;
            self.end_of_line(start + 3)?;
            self.sink.document_start();
            self.anchors.clear();
            self.rootless = true;
            *open_doc = true;
            return Some(Some(self.line_end(start) + 1));
        }
        if !*open_doc {
            self.sink.document_start();
            self.anchors.clear();
            self.rootless = true;
            *open_doc = true;
        }
        self.content_line(start, indent).map(Some)
    }

    /// Ends the open document (if any) at `at`: the empty value of a last
    /// `key:`, the collections still open.
    fn close_document(&mut self, at: usize, open: bool) -> Option<()> {
        self.resolve_empty(at)?;
        while self.stack.pop().is_some() {
            self.close(at);
        }
        if open {
            self.sink.document_end();
        }
        Some(())
    }

    /// The pending value, known at `at` to be empty.
    fn resolve_empty(&mut self, _at: usize) -> Option<()> {
        match self.pending.take() {
            None => Some(()),
            // An anchored empty value: rare, and saphyr spans it otherwise.
            Some(p) if p.anchor.id != 0 => None,
            Some(p) if p.key => {
                self.scalar("", ScalarStyle::Plain, 0, None, p.colon, p.colon);
                Some(())
            }
            // An empty sequence item: rare, and its span is saphyr's
            // business.
            Some(_) => None,
        }
    }

    /// Opens a block sequence or mapping at column `indent`, its start
    /// event at `at` (or at its anchor).
    fn open(&mut self, seq: bool, indent: usize, at: usize, anchor: Anchor) -> Option<()> {
        if self.stack.len() >= MAX_DEPTH {
            return None;
        }
        self.stack.push(Open { seq, indent });
        self.sink.open(seq, anchor.id, anchor.start(at) as u32);
        Some(())
    }

    /// Reads the content line whose first character is at `at`, in
    /// column `indent`; returns where the next line starts.
    fn content_line(&mut self, at: usize, indent: usize) -> Option<usize> {
        let dash = self.b[at] == b'-' && is_break_or_blank(self.b.get(at + 1));
        if let Some(p) = self.pending {
            if indent > p.indent {
                self.pending = None;
                // `key:` and its scalar or flow collection on the next
                // line, deeper.
                if p.key && !dash && p.anchor.id == 0 && self.value_ahead(at) {
                    return self.value(at, p.indent, p.colon, true);
                }
                self.open(dash, indent, at, p.anchor)?;
            } else if indent == p.indent && p.key && dash {
                // A sequence at its key's column (`key:` then `- item`):
                // saphyr starts it at the first item's content.
                self.pending = None;
                let mut c = at + 1;
                while self.at(c) == Some(b' ') {
                    c += 1;
                }
                if is_break(self.b.get(c)) || self.b[c] == b'#' {
                    return None;
                }
                self.open(true, indent, c, p.anchor)?;
            } else {
                self.resolve_empty(at)?;
            }
        }
        while let Some(&top) = self.stack.last() {
            if top.indent > indent || top.seq && top.indent == indent && !dash {
                self.stack.pop();
                self.close(at);
            } else {
                break;
            }
        }
        if self.stack.is_empty() {
            // A document's first line opens its root collection; a line
            // after the root collection closed is beyond this scanner.
            if !self.rootless {
                return None;
            }
            self.rootless = false;
            self.open(dash, indent, at, Anchor::default())?;
        }
        let top = *self.stack.last()?;
        if top.indent != indent || top.seq != dash {
            return None;
        }
        if dash {
            self.item(at + 1, indent)
        } else {
            self.entry(at, indent)
        }
    }

    /// A sequence item after its dash (at `i`); the sequence is at column
    /// `indent`.
    fn item(&mut self, i: usize, indent: usize) -> Option<usize> {
        let mut c = i;
        while self.at(c) == Some(b' ') {
            c += 1;
        }
        if self.rest_is_empty(c) {
            self.pending = Some(Pending {
                indent,
                colon: c,
                key: false,
                anchor: Anchor::default(),
            });
            return Some(self.line_end(c) + 1);
        }
        let line_start = i - 1 - indent;
        if self.b[c] == b'-' && is_break_or_blank(self.b.get(c + 1)) {
            // A sequence as the item (`- - a`, the `anyOf` branches of
            // the rule files): it opens at its dash, at that column.
            let column = c - line_start;
            self.open(true, column, c, Anchor::default())?;
            return self.item(c + 1, column);
        }
        if self.key_ahead(c) {
            let column = c - line_start;
            self.open(false, column, c, Anchor::default())?;
            return self.entry(c, column);
        }
        self.value(c, indent, c, false)
    }

    /// Whether a plain or quoted scalar that is not a key, or a flow
    /// collection, starts at `c`, or an anchor and one of these.
    fn value_ahead(&self, mut c: usize) -> bool {
        if self.b[c] == b'&' {
            let Some(end) = self.name_end(c + 1) else {
                return false;
            };
            c = end;
            while self.at(c) == Some(b' ') {
                c += 1;
            }
            if c == end || matches!(self.at(c), None | Some(b'\n' | b'#')) {
                return false;
            }
        }
        matches!(self.b[c], b'[' | b'{')
            || (matches!(self.b[c], b'"' | b'\'') || plain_start(self.b, c)) && !self.key_ahead(c)
    }

    /// Whether a key (`key:` then a blank or the line's end) starts at
    /// `c`. A quoted scalar over several lines is not one: a `:` after
    /// it is saphyr's error, which the value's end of line leaves to it.
    fn key_ahead(&self, c: usize) -> bool {
        let end = match self.b[c] {
            b'"' | b'\'' => match self.quoted_end(c) {
                Some(end) => end,
                None => return false,
            },
            _ if !plain_start(self.b, c) => return false,
            _ => match self.plain_end(c) {
                PlainEnd::Colon(j) => j,
                PlainEnd::Comment(_) | PlainEnd::Line(_) => return false,
            },
        };
        self.at(end) == Some(b':') && is_break_or_blank(self.b.get(end + 1))
    }

    /// A mapping entry whose key starts at `at`; the mapping is at
    /// column `indent`.
    fn entry(&mut self, at: usize, indent: usize) -> Option<usize> {
        let colon = match self.b[at] {
            b'"' | b'\'' => self.quoted(at, Anchor::default())?,
            _ => {
                if !plain_start(self.b, at) {
                    return None;
                }
                let PlainEnd::Colon(j) = self.plain_end(at) else {
                    return None;
                };
                let mut end = j;
                while self.b[end - 1] == b' ' {
                    end -= 1;
                }
                let key = &self.text[at..end];
                self.scalar(key, ScalarStyle::Plain, 0, None, at, end);
                j
            }
        };
        if colon - at > MAX_KEY
            || self.at(colon) != Some(b':')
            || !is_break_or_blank(self.b.get(colon + 1))
        {
            return None;
        }
        let mut v = colon + 1;
        while self.at(v) == Some(b' ') {
            v += 1;
        }
        self.value(v, indent, colon, true)
    }

    /// The value at `v` of a key (`key`) or item of the collection at
    /// column `indent`; `colon` is where an empty value's scalar goes.
    fn value(&mut self, v: usize, indent: usize, colon: usize, key: bool) -> Option<usize> {
        let b = self.b;
        let (v, anchor) = match b.get(v) {
            Some(b'&') => self.anchor(v)?,
            _ => (v, Anchor::default()),
        };
        match b.get(v) {
            None | Some(b'\n') | Some(b'#') => {
                self.pending = Some(Pending {
                    indent,
                    colon,
                    key,
                    anchor,
                });
                return Some(self.line_end(v) + 1);
            }
            // Anchored block scalars, flow collections and aliases (an
            // error) are left to saphyr.
            Some(b'|' | b'>' | b'[' | b'{' | b'*' | b'&' | b'!') if anchor.id != 0 => return None,
            Some(b'*') => {
                let end = self.alias(v)?;
                self.end_of_line(end)?;
            }
            Some(b'|') | Some(b'>') => return self.block_scalar(v, indent),
            Some(b'"') | Some(b'\'') => {
                let end = match self.quoted(v, anchor) {
                    Some(end) => end,
                    None => self.quoted_lines(v, anchor, indent)?,
                };
                self.end_of_line(end)?;
                return Some(self.line_end(end) + 1);
            }
            Some(b'[') | Some(b'{') => return Some(self.flow(v, indent)? + 1),
            Some(b'!') => {
                // Tags after anchors were left to saphyr above.
                let (tag, c) = self.local_tag(v)?;
                return self.plain(c, indent, 0, Some(tag), v);
            }
            _ => return self.plain(v, indent, anchor.id, None, anchor.start(v)),
        }
        Some(self.line_end(v) + 1)
    }

    /// The plain scalar value at `v` of a key or item of the collection
    /// at column `indent`, under an anchor (`anchor`, 0 for none) or a
    /// tag, its span from `start`; returns where the line after it
    /// starts.
    fn plain(
        &mut self,
        v: usize,
        indent: usize,
        anchor: usize,
        tag: Option<Cow<'t, Tag>>,
        start: usize,
    ) -> Option<usize> {
        let b = self.b;
        if !plain_start(b, v) {
            return None;
        }
        let (stop, comment) = match self.plain_end(v) {
            PlainEnd::Colon(_) => return None,
            PlainEnd::Comment(j) => (j, true),
            PlainEnd::Line(j) => (j, false),
        };
        let end = trim_end(b, stop);
        // A comment ends the scalar; what follows on a deeper
        // line is then saphyr's error.
        let (value, end, next) = match comment {
            true => (Cow::Borrowed(&self.text[v..end]), end, self.line_end(v) + 1),
            false => self.plain_lines(v, end, indent)?,
        };
        self.scalar(
            &value,
            ScalarStyle::Plain,
            anchor,
            tag.as_deref(),
            start,
            end,
        );
        Some(next)
    }

    /// The local tag at `t` (`!env_var`, which recyclarr reads), a word
    /// of letters, digits, `-` and `_` followed by a space, as saphyr
    /// reads it (handle `!`, the word its suffix); returns it and where
    /// the node after it starts. Other tags (`!!str`, `!a!b`, `!<u>`, URI
    /// characters or escapes) are left to saphyr.
    fn local_tag(&self, t: usize) -> Option<(Cow<'t, Tag>, usize)> {
        let b = self.b;
        let mut v = t + 1;
        while b
            .get(v)
            .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_')
        {
            v += 1;
        }
        if v == t + 1 || b.get(v) != Some(&b' ') {
            return None;
        }
        let tag = Tag {
            handle: "!".into(),
            suffix: self.text[t + 1..v].into(),
        };
        while b.get(v) == Some(&b' ') {
            v += 1;
        }
        // A tag at the text's end tags an empty node: saphyr's.
        (v < b.len()).then_some((Cow::Owned(tag), v))
    }

    /// Where the plain scalar from `i` (not a space) stops, on its
    /// line: at the first `:` before a blank or the line's end, the
    /// space before the first ` #`, or the line's end, whichever comes
    /// first. Found by [`find`], as keys and values are read at every
    /// line.
    fn plain_end(&self, i: usize) -> PlainEnd {
        let b = self.b;
        let mut from = i;
        loop {
            let search = |rest: &[u8]| memchr::memchr3(b'\n', b':', b'#', rest);
            let Some(j) = find(b, from, [b'\n', b':', b'#'], search) else {
                return PlainEnd::Line(b.len());
            };
            match b[j] {
                b'\n' => return PlainEnd::Line(j),
                b':' if is_break_or_blank(b.get(j + 1)) => return PlainEnd::Colon(j),
                b'#' if j > i && b[j - 1] == b' ' => return PlainEnd::Comment(j - 1),
                _ => from = j + 1,
            }
        }
    }

    /// The anchor at `a` (`&name` and at least one space, or the line's
    /// end): registered, with where the node after it starts.
    fn anchor(&mut self, a: usize) -> Option<(usize, Anchor)> {
        let end = self.name_end(a + 1)?;
        let id = self.next_anchor;
        self.next_anchor += 1;
        self.anchors.push((&self.text[a + 1..end], id));
        let mut v = end;
        while self.at(v) == Some(b' ') {
            v += 1;
        }
        Some((v, Anchor { id, at: a }))
    }

    /// The alias at `a` (`*name`) of an anchor of this document; returns
    /// where it ends.
    fn alias(&mut self, a: usize) -> Option<usize> {
        let end = self.name_end(a + 1)?;
        let name = &self.text[a + 1..end];
        let (_, id) = *self.anchors.iter().rev().find(|(n, _)| *n == name)?;
        self.sink.alias(id, a as u32);
        Some(end)
    }

    /// The end of the anchor or alias name at `i`, as saphyr's
    /// `is_anchor_char` reads it (up to a blank or a flow indicator),
    /// here in ASCII.
    fn name_end(&self, i: usize) -> Option<usize> {
        let mut j = i;
        while let Some(c) = self.at(j) {
            match c {
                b' ' | b'\n' | b',' | b'[' | b']' | b'{' | b'}' => break,
                c if c >= 0x80 => return None,
                _ => j += 1,
            }
        }
        (j > i).then_some(j)
    }

    /// The end of the one-line quoted scalar at `q` (after its closing
    /// quote), without reading it.
    fn quoted_end(&self, q: usize) -> Option<usize> {
        let quote = self.b[q];
        let mut j = q + 1;
        loop {
            match self.at(j)? {
                b'\n' => return None,
                // An escape: the character after it is never the end.
                b'\\' if quote == b'"' => j += 2,
                c if c == quote => {
                    if quote == b'\'' && self.at(j + 1) == Some(b'\'') {
                        j += 2;
                        continue;
                    }
                    return Some(j + 1);
                }
                _ => j += 1,
            }
        }
    }

    /// Reads the one-line quoted scalar at `q`, under `anchor`; returns
    /// where it ends.
    fn quoted(&mut self, q: usize, anchor: Anchor) -> Option<usize> {
        let end = self.quoted_end(q)?;
        let inner = &self.text[q + 1..end - 1];
        let (value, style) = if self.b[q] == b'"' {
            let value = match inner.contains('\\') {
                true => Cow::Owned(unescape(inner)?),
                false => Cow::Borrowed(inner),
            };
            (value, ScalarStyle::DoubleQuoted)
        } else if inner.contains("''") {
            (
                Cow::Owned(inner.replace("''", "'")),
                ScalarStyle::SingleQuoted,
            )
        } else {
            (Cow::Borrowed(inner), ScalarStyle::SingleQuoted)
        };
        self.scalar(&value, style, anchor.id, None, anchor.start(q), end);
        Some(end)
    }

    /// A literal (`|`) or folded (`>`) scalar whose indicator is at `h`,
    /// value of a key or item of the collection at column `indent`,
    /// read as saphyr's `scan_block_scalar` reads it.
    fn block_scalar(&mut self, h: usize, indent: usize) -> Option<usize> {
        let b = self.b;
        let literal = b[h] == b'|';
        let mut j = h + 1;
        // Clip, strip (`-`) or keep (`+`); indentation indicators are
        // left to saphyr.
        let chomp = match b.get(j) {
            Some(b'-') => {
                j += 1;
                b'-'
            }
            Some(b'+') => {
                j += 1;
                b'+'
            }
            _ => b' ',
        };
        if !is_break_or_blank(b.get(j)) {
            return None;
        }
        self.end_of_line(j)?;
        let mut line = self.line_end(j) + 1;
        if line >= b.len() {
            return None;
        }
        // The first line sets the indentation; leading blank lines and
        // an empty scalar are left to saphyr.
        let mut i = line;
        while self.at(i) == Some(b' ') {
            i += 1;
        }
        let width = i - line;
        if is_break(b.get(i)) || width <= indent {
            return None;
        }
        let start = i;
        let mut string = BLOCK_TEXT.take();
        string.clear();
        let mut leading_break = false;
        let mut trailing_breaks = 0usize;
        let mut leading_blank = false;
        let mut at = i;
        let mut ended_by_eof_mid_line = false;
        loop {
            // `at` is the first content character of a content line.
            let trailing_blank = b[at] == b' ';
            if !literal && leading_break && !leading_blank && !trailing_blank {
                push_breaks(&mut string, trailing_breaks);
                if trailing_breaks == 0 {
                    string.push(' ');
                }
            } else {
                if leading_break {
                    string.push('\n');
                }
                push_breaks(&mut string, trailing_breaks);
            }
            leading_break = false;
            trailing_breaks = 0;
            leading_blank = trailing_blank;
            let end = self.line_end(at);
            string.push_str(&self.text[at..end]);
            if end >= b.len() {
                at = end;
                ended_by_eof_mid_line = true;
                break;
            }
            leading_break = true;
            line = end + 1;
            // Indentation and blank lines up to the next content line.
            loop {
                let mut k = line;
                while k - line < width && self.at(k) == Some(b' ') {
                    k += 1;
                }
                at = k;
                if self.at(k) == Some(b'\n') {
                    trailing_breaks += 1;
                    line = k + 1;
                    continue;
                }
                break;
            }
            if at - line < width || at >= b.len() {
                break;
            }
        }
        if chomp != b'-' {
            if leading_break {
                string.push('\n');
            }
            if at >= b.len() && (ended_by_eof_mid_line || at - line >= width.max(1)) {
                string.push('\n');
            }
        }
        if chomp == b'+' {
            push_breaks(&mut string, trailing_breaks);
        }
        let style = if literal {
            ScalarStyle::Literal
        } else {
            ScalarStyle::Folded
        };
        self.scalar(&string, style, 0, None, start, at);
        if string.capacity() <= MAX_KEPT_BLOCK_TEXT {
            BLOCK_TEXT.set(string);
        }
        // The next line with content starts at or before `at`'s line.
        Some(if at >= b.len() { b.len() } else { line })
    }
}

thread_local! {
    /// The buffer a block scalar's text is put together in, kept for the
    /// thread's next one; the tree's node copies the text out at its size. Grown
    /// line by line from empty, each block scalar's text was reallocated
    /// several times (0.5 M instructions of joryirving__home-ops).
    static BLOCK_TEXT: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
}

/// Largest buffer [`BLOCK_TEXT`] keeps: a rare long text (a dashboard's
/// JSON) is not held for the rest of the run.
const MAX_KEPT_BLOCK_TEXT: usize = 64 << 10;

fn push_breaks(string: &mut String, n: usize) {
    for _ in 0..n {
        string.push('\n');
    }
}

fn is_break_or_blank(c: Option<&u8>) -> bool {
    matches!(c, None | Some(b'\n' | b' '))
}

/// Whether a plain scalar may start at `i` in block context (and this
/// scanner reads it): no indicator, except `-` before a non-blank.
fn plain_start(b: &[u8], i: usize) -> bool {
    match b[i] {
        b'-' => !is_break_or_blank(b.get(i + 1)),
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\n' => false,
        _ => true,
    }
}
