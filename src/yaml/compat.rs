//! Where go-yaml v3 (kustomize, Flux, kubectl) departs from the YAML spec
//! that saphyr follows, in ways real repositories rely on.
//!
//! - Indentation inside flow collections and of quoted scalars' continuation
//!   lines: go-yaml's scanner (scannerc.go, a port of libyaml) checks
//!   indentation only in block context, so `args: [` ... `]` with the
//!   closing bracket at the key's column, or a quoted string whose second
//!   line is not indented, load (yaml-test-suite cases 9C9N, VJP3/00 and
//!   QB6E are errors that libyaml and go-yaml accept). We repair a copy of
//!   the text so that saphyr reads what go-yaml reads: line breaks inside a
//!   flow collection become spaces where that cannot change a value, and a
//!   quoted scalar is decoded on its own. Every byte keeps its offset, so
//!   spans still point into the file as written.
//! - Folded scalars with more-indented lines: kustomize writes each object
//!   out and reads it back in the middle of a build, and go-yaml v3's
//!   emitter (`yaml_emitter_write_folded_scalar` in emitterc.go) looks for
//!   the next line's first character at index 0 of the value instead of
//!   after the current line break (`k := 0`; libyaml advances its string
//!   pointer). So it puts an extra line break before every more-indented
//!   line (go-yaml/yaml#827, #804) and, when the value itself starts with a
//!   blank, drops the break that keeps two normal lines apart. [`refold`]
//!   gives the value kustomize hands on, and Flux applies.
//! - Anchor and alias names: go-yaml's scanner (`yaml_parser_scan_anchor`
//!   in scannerc.go, the same in gopkg.in/yaml.v2 and v3 and in
//!   go.yaml.in/yaml/v2 and v3, which sigs.k8s.io/yaml and kustomize use)
//!   takes only `is_alpha` bytes (`0-9 A-Z a-z _ -`) into a name, and the
//!   name must then be followed by a blank, a line break, the end of the
//!   input, `?`, `:`, `,`, `]`, `}`, `%`, `@` or a backquote; anything else
//!   is the error "did not find expected alphabetic or numeric character".
//!   YAML 1.2 (saphyr) takes every character but blanks and `, [ ] { }`,
//!   so `*app:` (an alias used as a key, a home-ops idiom) names the anchor
//!   `app:`, which does not exist. Where saphyr stops at an alias unknown
//!   to it and go-yaml's name is shorter, we insert a space where go-yaml's
//!   name ends (offsets are mapped back with [`Repaired::original`]).
//!   Anchors are read as saphyr reads them: `&app:` and names go-yaml
//!   refuses (`&a.b`) make no error in saphyr to start a repair from, and
//!   none of the home-ops repositories swept writes one.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle};

/// What a repair did.
pub(crate) enum Repair {
    /// Nothing: the error is one go-yaml makes too, or nothing more can
    /// be repaired.
    Refused,
    /// Text changed so that saphyr may read on; an error later may still
    /// be the first one's doing.
    Tentative,
    /// Text changed to what go-yaml reads there: the error was saphyr's
    /// alone.
    AsGoYaml,
}

fn tentative(changed: bool) -> Repair {
    if changed {
        Repair::Tentative
    } else {
        Repair::Refused
    }
}

/// saphyr's message for an alias whose anchor it has not seen.
const UNKNOWN_ANCHOR: &str = "while parsing node, found unknown anchor";

/// The text saphyr reads after repairs, the values of the quoted scalars
/// decoded on their own (by byte offset of the opening quote in the text
/// as written), and where spaces were inserted.
#[derive(Default)]
pub(crate) struct Repaired {
    pub(crate) text: Option<String>,
    pub(crate) quoted: HashMap<u32, String>,
    /// Offsets in the repaired text of the bytes inserted there, sorted.
    inserted: Vec<u32>,
}

impl Repaired {
    /// The offset in the text as written of byte `offset` of the repaired
    /// text; an inserted byte maps to the byte written after it.
    pub(crate) fn original(&self, offset: u32) -> u32 {
        offset - self.inserted.partition_point(|&i| i < offset) as u32
    }

    /// The offset in the repaired text of byte `offset` of the text as
    /// written.
    pub(crate) fn working(&self, offset: u32) -> u32 {
        let mut at = offset;
        for &i in &self.inserted {
            if i > at {
                break;
            }
            at += 1;
        }
        at
    }

    /// Repairs the text for the error saphyr gave at byte `offset` of the
    /// repaired text.
    pub(crate) fn repair(
        &mut self,
        original: &str,
        offset: u32,
        message: &str,
        flow_start: Option<u32>,
    ) -> Repair {
        let mut bytes = self
            .text
            .take()
            .unwrap_or_else(|| original.to_string())
            .into_bytes();
        let repair = if message == "invalid indentation in quoted scalar" {
            tentative(self.decode_quoted(&mut bytes, offset as usize))
        } else if message.starts_with("invalid indentation")
            && let Some(start) = flow_start
        {
            tentative(join_flow_lines(&mut bytes, start as usize))
        } else if message == UNKNOWN_ANCHOR
            && let Some(end) = go_alias_end(&bytes, offset as usize)
        {
            bytes.insert(end, b' ');
            let at = self.inserted.partition_point(|&i| i < end as u32);
            for later in &mut self.inserted[at..] {
                *later += 1;
            }
            self.inserted.insert(at, end as u32);
            Repair::AsGoYaml
        } else {
            Repair::Refused
        };
        // Only ASCII bytes were replaced by, or inserted before, ASCII bytes.
        self.text = Some(String::from_utf8(bytes).expect("repairs keep UTF-8"));
        repair
    }

    /// Decodes the quoted scalar starting at `start` as a document of its
    /// own (no indentation to respect there) and puts it on one line.
    fn decode_quoted(&mut self, bytes: &mut [u8], start: usize) -> bool {
        let Some(end) = quoted_end(bytes, start) else {
            return false;
        };
        let Ok(snippet) = std::str::from_utf8(&bytes[start..end]) else {
            return false;
        };
        let Some(value) = single_scalar(snippet) else {
            return false;
        };
        let mut changed = false;
        for b in &mut bytes[start..end] {
            if matches!(*b, b'\n' | b'\r') {
                *b = b' ';
                changed = true;
            }
        }
        self.quoted.insert(self.original(start as u32), value);
        changed
    }
}

/// Where go-yaml ends the name of the alias whose `*` is at `star`, when
/// that is before where saphyr ends it and go-yaml reads on from there
/// (see the module header); `None` when both read the same name, or when
/// go-yaml refuses the name too.
fn go_alias_end(b: &[u8], star: usize) -> Option<usize> {
    if b.get(star) != Some(&b'*') {
        return None;
    }
    let name = star + 1;
    let go_end = name
        + b[name..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
            .count();
    // At a blank, a line break or `, ] }` saphyr ends the name too: the
    // anchor is really unknown.
    let go_reads_on = matches!(b.get(go_end), Some(b'?' | b':' | b'%' | b'@' | b'`'));
    (go_end > name && go_reads_on).then_some(go_end)
}

/// The byte after the closing quote of the scalar opened at `start`.
fn quoted_end(b: &[u8], start: usize) -> Option<usize> {
    let quote = *b.get(start)?;
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && b.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Turns line breaks (and the comments before them) inside the flow
/// collection opened at `start` into spaces, wherever the break sits next
/// to a flow indicator: there a break and a space read the same. A break
/// between two words of a plain scalar is left alone (folding would read
/// it as one space, a space as itself). Returns whether anything changed.
fn join_flow_lines(b: &mut [u8], start: usize) -> bool {
    let mut blank: Vec<(usize, usize)> = Vec::new();
    let mut gap: Vec<(usize, usize)> = Vec::new();
    let mut gap_has_break = false;
    let mut last = 0u8;
    let mut prev = b' ';
    let mut depth = 0usize;
    let mut i = start;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\n' | b'\r' => {
                gap.push((i, i + 1));
                gap_has_break = true;
                prev = c;
                i += 1;
                continue;
            }
            b' ' | b'\t' => {
                prev = c;
                i += 1;
                continue;
            }
            b'#' if prev.is_ascii_whitespace() => {
                let end = b[i..]
                    .iter()
                    .position(|&x| matches!(x, b'\n' | b'\r'))
                    .map_or(b.len(), |p| i + p);
                gap.push((i, end));
                i = end;
                continue;
            }
            _ => {}
        }
        if gap_has_break
            && (matches!(last, b',' | b'[' | b'{' | b':') || matches!(c, b']' | b'}' | b','))
        {
            blank.append(&mut gap);
        }
        gap.clear();
        gap_has_break = false;
        match c {
            b'"' | b'\''
                if matches!(
                    prev,
                    b' ' | b'\t' | b'\n' | b'\r' | b'[' | b'{' | b',' | b':'
                ) =>
            {
                let Some(end) = quoted_end(b, i) else { break };
                i = end;
                last = c;
                prev = c;
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        last = c;
        prev = c;
        i += 1;
    }
    for &(from, to) in &blank {
        b[from..to].fill(b' ');
    }
    !blank.is_empty()
}

/// The one scalar of a small document, as saphyr reads it.
fn single_scalar(text: &str) -> Option<String> {
    let mut parser = Parser::new_from_str(text);
    while let Some(ev) = parser.next_event() {
        if let (Event::Scalar(value, ..), _) = ev.ok()? {
            return Some(value.into_owned());
        }
    }
    None
}

/// The value of a folded scalar once kustomize has written it out and read
/// it back with go-yaml v3, or `None` when that is the value as read.
///
/// Modelled on `yaml_emitter_write_folded_scalar`; the emitter also wraps
/// lines longer than 80 columns at single spaces, which turns the space
/// into a line break in a more-indented line: that depends on the column
/// kustomize writes the value at and is not modelled.
pub(crate) fn refold(value: &str) -> Option<String> {
    // The emitter only keeps the folded style where a block scalar can hold
    // the value (yaml_emitter_analyze_scalar: no space before a line break
    // or at the end, nothing unprintable); otherwise it writes a
    // double-quoted scalar, which reads back unchanged.
    let block_allowed = !value.is_empty()
        && !value.ends_with(' ')
        && !value.contains(" \n")
        && !value.chars().any(|c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
        });
    if !block_allowed || !value.contains('\n') {
        return None;
    }
    // `k := 0`: the first character after any leading line breaks of the
    // whole value decides, for every line, whether a break is doubled.
    let doubled = !value.trim_start_matches('\n').starts_with([' ', '\t'])
        && !value.trim_start_matches('\n').is_empty();
    let mut body = String::with_capacity(value.len() * 2);
    let (mut breaks, mut leading_spaces) = (true, true);
    for c in value.chars() {
        if c == '\n' {
            if !breaks && !leading_spaces && doubled {
                body.push('\n');
            }
            body.push('\n');
            breaks = true;
        } else {
            if breaks {
                body.push_str("  ");
                leading_spaces = c == ' ' || c == '\t';
            }
            body.push(c);
            breaks = false;
        }
    }
    // yaml_emitter_write_block_scalar_hints.
    let indent = if value.starts_with([' ', '\n']) {
        "2"
    } else {
        ""
    };
    let chomp = if !value.ends_with('\n') {
        "-"
    } else if value.len() == 1 || value[..value.len() - 1].ends_with('\n') {
        "+"
    } else {
        ""
    };
    let mut doc = format!("k: >{indent}{chomp}\n{body}");
    if !doc.ends_with('\n') {
        doc.push('\n');
    }
    let mut parser = Parser::new_from_str(&doc);
    let mut scalars = 0;
    while let Some(ev) = parser.next_event() {
        if let (Event::Scalar(read, style, ..), _) = ev.ok()? {
            scalars += 1;
            if scalars == 2 && style == ScalarStyle::Folded {
                return (read != value).then(|| read.into_owned());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refold_matches_what_kubectl_kustomize_writes() {
        // Each value as saphyr reads the folded scalar, and as `kubectl
        // kustomize` (v5.5) printed it for the same input.
        assert_eq!(
            refold("one(c,\n  two\nthree )").as_deref(),
            Some("one(c,\n\n  two\nthree )")
        );
        assert_eq!(refold("p\n\n  q\nr\n").as_deref(), Some("p\n\n\n  q\nr\n"));
        // Starts with a blank: no break is doubled, and here none is lost.
        assert_eq!(refold(" lead\nx y\n  z\n"), None);
        // Nothing more-indented: the round trip is exact.
        assert_eq!(refold("a b\n\nc\n"), None);
        assert_eq!(refold("single line"), None);
    }

    #[test]
    fn flow_lines_join_only_next_to_indicators() {
        let mut b = b"k: [\n  a, # note\nb\n]\nx: y\n".to_vec();
        assert!(join_flow_lines(&mut b, 3));
        assert_eq!(&b[..], b"k: [   a,        b ]\nx: y\n");
        // A break inside a plain scalar stays: folding reads it as one space.
        let mut b = b"[a\n b]".to_vec();
        assert!(!join_flow_lines(&mut b, 0));
    }
}
