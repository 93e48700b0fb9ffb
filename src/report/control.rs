//! Every text from the repository, a cluster or a server, made safe at
//! emission, in every output format and on stderr: one decision per
//! character, written in each format's own notation.
//!
//! - Terminal control: a file name or value holding escape sequences
//!   must not clear the screen, move the cursor or print a fake clean
//!   result. C0 controls but newline and tab, DEL and C1 controls are
//!   escaped; so are the bidirectional overrides, isolates and marks that
//!   reorder what a reader sees ("Trojan Source", CVE-2021-42574) and the
//!   Unicode line and paragraph separators.
//! - Line breaks: kept in a message or a file's text, escaped in a path,
//!   a name or a value shown inside one line ([`Breaks`]).
//! - GitHub workflow commands: the Actions runner reads every line of a
//!   step's log as a command when, after leading whitespace, it starts
//!   with `::`, or when it holds `##[` anywhere (the older form); see
//!   actions/runner src/Runner.Common/ActionCommand.cs, `TryParseV2` and
//!   `TryParse`. A `:` that would start such a line and the `[` of `##[`
//!   are escaped, so no text from the input can add a secret mask, stop
//!   command processing or forge an annotation.
//!
//! Text notation is `\x1b` / `\u{9b}`; JSON's and YAML's escapes keep the
//! value the same for a program that reads them ([`to_json`],
//! [`to_yaml`]).

use std::borrow::Cow;

/// How line breaks are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Breaks {
    /// Kept: a message or a file's text, shown over several lines. A line
    /// it starts is still checked for a workflow command.
    Keep,
    /// Escaped: a path, a name or a value shown within one line.
    Escape,
}

fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(
            c,
            '\u{061c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// What the rules are applied to.
#[derive(Clone, Copy, Debug)]
struct Rules {
    breaks: Breaks,
    /// The text's first character starts a line of the output.
    starts_line: bool,
    /// Control and bidi characters are escaped (off only for a whole
    /// rendered report, whose fields were escaped and whose own colour
    /// codes must stay).
    controls: bool,
}

/// Calls `emit(at, c, escaped)` for every character of `s`.
fn decide(s: &str, rules: Rules, mut emit: impl FnMut(usize, char, bool)) {
    let mut line_start = rules.starts_line;
    let mut chars = s.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let next = chars.peek().map(|(_, n)| *n);
        let kept_break = match c {
            '\n' => rules.breaks == Breaks::Keep,
            // A carriage return that ends a CRLF line moves nothing a
            // reader sees; a lone one would overwrite the line.
            '\r' => rules.breaks == Breaks::Keep && next == Some('\n'),
            _ => false,
        };
        let escaped = !kept_break
            && (c == '\n'
                || c == '\r'
                || (rules.controls && hidden(c))
                || (c == ':' && line_start && next == Some(':'))
                || (c == '[' && s[..at].ends_with("##")));
        emit(at, c, escaped);
        line_start = if kept_break {
            c == '\n' || line_start
        } else {
            line_start && !escaped && c.is_whitespace()
        };
    }
}

fn changes(s: &str, rules: Rules) -> bool {
    if plain(s, rules) {
        return false;
    }
    let mut any = false;
    decide(s, rules, |_, _, escaped| any |= escaped);
    any
}

/// Whether [`decide`] surely escapes nothing in `s`: it holds no byte an
/// escaped character can start with, no `::` and no `##[`. A scan of the
/// bytes, where `decide` walks every character: a whole report and every
/// source a snippet shows are asked this, and nearly all are plain.
fn plain(s: &str, rules: Rules) -> bool {
    let maybe = |b: &u8| match *b {
        b'\n' => rules.breaks == Breaks::Escape,
        b'\r' => true,
        b'\t' => false,
        0..=0x1f | 0x7f => rules.controls,
        // The lead bytes of the C1 controls (U+0080-U+009F), U+061C and
        // U+200E-U+2069 (the bidi marks and the line separators).
        0xc2 | 0xd8 | 0xe2 => rules.controls,
        _ => false,
    };
    !s.as_bytes().iter().any(maybe) && !s.contains("::") && !s.contains("##[")
}

fn push_text_escape(out: &mut String, c: char) {
    use std::fmt::Write;
    let _ = if (c as u32) < 0x80 {
        write!(out, "\\x{:02x}", c as u32)
    } else {
        write!(out, "\\u{{{:x}}}", c as u32)
    };
}

/// `s`, a field, with every Secret value a name was made from hidden
/// ([`crate::yaml::hidden`]), then its characters escaped. A whole
/// report is not searched again: its line numbers and counts are the
/// report's own.
fn rewrite_field(s: &str, rules: Rules) -> Cow<'_, str> {
    match crate::yaml::hidden::mask(s) {
        Cow::Borrowed(s) => rewrite(s, rules),
        Cow::Owned(s) => Cow::Owned(rewrite(&s, rules).into_owned()),
    }
}

fn rewrite(s: &str, rules: Rules) -> Cow<'_, str> {
    if !changes(s, rules) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    decide(s, rules, |_, c, escaped| {
        if escaped {
            push_text_escape(&mut out, c);
        } else {
            out.push(c);
        }
    });
    Cow::Owned(out)
}

/// `s`, a field of a report (a message, a path, a name, a value), with
/// every hidden character escaped; borrowed when there is none.
pub fn escape(s: &str, breaks: Breaks) -> Cow<'_, str> {
    rewrite_field(
        s,
        Rules {
            breaks,
            starts_line: false,
            controls: true,
        },
    )
}

/// A path shown within one line (a log line, a diff's header): a line
/// break in a file or directory name would start a line of the
/// repository's making.
pub fn path(p: &std::path::Path) -> String {
    escape(&p.to_string_lossy(), Breaks::Escape).into_owned()
}

/// A text that starts a line of the output, its line breaks kept: a line
/// of stderr (a progress line, an input problem, an error) or a diff.
pub fn escape_line(s: &str) -> Cow<'_, str> {
    rewrite_field(
        s,
        Rules {
            breaks: Breaks::Keep,
            starts_line: true,
            controls: true,
        },
    )
}

/// A whole rendered report for people (human, concise, diffs), its fields
/// escaped already: the lines that wrapping or a field at a line's start
/// would make a workflow command are defused, and the report's own colour
/// codes are left alone.
pub fn defuse_commands(report: &str) -> Cow<'_, str> {
    rewrite(
        report,
        Rules {
            breaks: Breaks::Keep,
            starts_line: true,
            controls: false,
        },
    )
}

/// A source text escaped for a snippet, with the way back from offsets
/// in the original text (spans) to offsets in the escaped one.
#[derive(Debug)]
pub struct Source {
    pub text: String,
    /// `(original offset after an escaped character, bytes added so
    /// far)`, ascending.
    shifts: Vec<(usize, usize)>,
}

const SOURCE: Rules = Rules {
    breaks: Breaks::Keep,
    starts_line: true,
    controls: true,
};

impl Source {
    pub fn new(original: &str) -> Source {
        if !changes(original, SOURCE) {
            return Source {
                text: original.to_string(),
                shifts: Vec::new(),
            };
        }
        let mut text = String::with_capacity(original.len() + 16);
        let mut shifts = Vec::new();
        decide(original, SOURCE, |at, c, escaped| {
            if escaped {
                push_text_escape(&mut text, c);
                let added = text.len() - (at + c.len_utf8());
                shifts.push((at + c.len_utf8(), added));
            } else {
                text.push(c);
            }
        });
        Source { text, shifts }
    }

    /// Where original offset `at` is in the escaped text.
    pub fn offset(&self, at: usize) -> usize {
        let i = self.shifts.partition_point(|(after, _)| *after <= at);
        at + if i == 0 { 0 } else { self.shifts[i - 1].1 }
    }
}

/// The rules for a string of a JSON or YAML document written on one line
/// (its breaks are the format's own escapes).
const QUOTED: Rules = Rules {
    breaks: Breaks::Escape,
    starts_line: false,
    controls: true,
};

/// Why a report could not be written as JSON or YAML: the serializer's
/// own message, as it gives it.
#[derive(Debug, thiserror::Error)]
pub enum SerializeError {
    /// serde_json refused the value.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The escaped JSON was not UTF-8.
    #[error(transparent)]
    Utf8(#[from] std::string::FromUtf8Error),
    /// serde-saphyr refused the value.
    #[error(transparent)]
    Yaml(#[from] serde_saphyr::SerializeError),
}

/// Pretty JSON whose strings hold no hidden character and no `##[`: each
/// is written as a `\uXXXX` escape, which a JSON reader turns back into
/// the same character.
pub fn to_json<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, SerializeError> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Json::default());
    if crate::yaml::hidden::any() {
        // Each string whole: serde_json hands the formatter the pieces
        // between its escapes, which may split a value.
        let mut value = serde_json::to_value(value)?;
        hide_secrets(&mut value);
        serde::Serialize::serialize(&value, &mut ser)?;
    } else {
        value.serialize(&mut ser)?;
    }
    Ok(String::from_utf8(out)?)
}

#[derive(Default)]
struct Json(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for Json {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        // serde_json has escaped `"`, `\` and C0 controls already: a
        // fragment holds none of them, so `\n` never reaches QUOTED.
        let mut result = Ok(());
        let mut from = 0;
        decide(fragment, QUOTED, |at, c, escaped| {
            if escaped && result.is_ok() {
                result = writer
                    .write_all(&fragment.as_bytes()[from..at])
                    .and_then(|_| write!(writer, "\\u{:04x}", c as u32));
                from = at + c.len_utf8();
            }
        });
        result?;
        writer.write_all(&fragment.as_bytes()[from..])
    }

    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// YAML whose strings hold no hidden character, no `##[` and no line
/// that starts with `::`: such a string (or key) is written double-quoted
/// on one line, with YAML's `\x`/`\u` escapes, which a YAML reader turns
/// back into the same text. Others are written as serde-saphyr writes
/// them. Output: the document as serde-saphyr writes it, with each such
/// string first replaced by a plain token and the token then by the
/// quoted string.
pub fn to_yaml<T: serde::Serialize + ?Sized>(value: &T) -> Result<String, SerializeError> {
    let mut value = serde_json::to_value(value)?;
    hide_secrets(&mut value);
    let mut strings = Vec::new();
    collect_strings(&value, &mut strings);
    // A token no string of the document holds, so the swap back is exact.
    let mut prefix = String::from("homelab-lint-quoted-");
    while strings.iter().any(|s| s.contains(prefix.as_str())) {
        prefix.push('x');
    }
    let mut quoted = Vec::new();
    tokenize(&mut value, &prefix, &mut quoted);
    let mut text = serde_saphyr::to_string(&value)?;
    // Last first: token 1 is not a prefix of token 10 (each ends in `z`).
    for (i, q) in quoted.iter().enumerate().rev() {
        text = text.replace(&format!("{prefix}{i}z"), q);
    }
    Ok(text)
}

/// A string YAML would write so that a line of it could be read as a
/// workflow command or hold a hidden character: a line of a block
/// scalar starts a line of the output.
fn yaml_unsafe(s: &str) -> bool {
    changes(
        s,
        Rules {
            breaks: Breaks::Keep,
            starts_line: false,
            controls: true,
        },
    ) || s.contains('\r')
        // A long string is folded at its spaces: any word may start a line.
        || s.split(char::is_whitespace).skip(1).any(|w| w.starts_with("::"))
}

/// Every string and key of `v` with the Secret values it holds hidden
/// ([`crate::yaml::hidden`]): serde-saphyr writes most strings itself.
fn hide_secrets(v: &mut serde_json::Value) {
    use serde_json::Value as J;
    let hide = |s: &str| crate::yaml::hidden::mask(s).into_owned();
    match v {
        J::String(s) => *s = hide(s),
        J::Array(items) => items.iter_mut().for_each(hide_secrets),
        J::Object(map) => {
            let old = std::mem::take(map);
            for (k, mut v) in old {
                hide_secrets(&mut v);
                map.insert(hide(&k), v);
            }
        }
        _ => {}
    }
}

fn collect_strings<'v>(v: &'v serde_json::Value, out: &mut Vec<&'v str>) {
    use serde_json::Value as J;
    match v {
        J::String(s) => out.push(s),
        J::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        J::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k);
            collect_strings(v, out)
        }),
        _ => {}
    }
}

fn tokenize(v: &mut serde_json::Value, prefix: &str, quoted: &mut Vec<String>) {
    use serde_json::Value as J;
    let token = |s: &str, quoted: &mut Vec<String>| {
        quoted.push(yaml_double_quoted(s));
        format!("{prefix}{}z", quoted.len() - 1)
    };
    match v {
        J::String(s) if yaml_unsafe(s) => *s = token(s, quoted),
        J::Array(items) => items.iter_mut().for_each(|i| tokenize(i, prefix, quoted)),
        J::Object(map) if map.keys().any(|k| yaml_unsafe(k)) => {
            let old = std::mem::take(map);
            for (k, mut v) in old {
                tokenize(&mut v, prefix, quoted);
                let k = if yaml_unsafe(&k) {
                    token(&k, quoted)
                } else {
                    k
                };
                map.insert(k, v);
            }
        }
        J::Object(map) => map.values_mut().for_each(|v| tokenize(v, prefix, quoted)),
        _ => {}
    }
}

fn yaml_double_quoted(s: &str) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(s.len() + 8);
    out.push('"');
    decide(s, QUOTED, |_, c, escaped| {
        let _ = match c {
            '"' => out.write_str("\\\""),
            '\\' => out.write_str("\\\\"),
            '\n' => out.write_str("\\n"),
            '\t' => out.write_str("\\t"),
            c if escaped && (c as u32) < 0x100 => write!(out, "\\x{:02x}", c as u32),
            c if escaped => write!(out, "\\u{:04x}", c as u32),
            c => out.write_char(c),
        };
    });
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte scan that answers first says "plain" only where the walk
    /// over the characters escapes nothing: every character an escape
    /// starts from, alone and between others, under every rule set.
    #[test]
    fn the_plain_scan_misses_no_character_that_is_escaped() {
        let specials = [
            "\n", "\r", "\r\n", "\t", "\u{0}", "\u{1b}", "\u{7f}", "\u{80}", "\u{9b}", "\u{9f}",
            "\u{61c}", "\u{200e}", "\u{200f}", "\u{202a}", "\u{202e}", "\u{2028}", "\u{2029}",
            "\u{2066}", "\u{2069}", "::", " ::", "a::", "##[", "#[", "é", "╭─", "→", ":", "[",
        ];
        let mut texts = vec![String::new(), "plain text".to_string()];
        for c in specials {
            texts.extend([
                c.to_string(),
                format!("a{c}b"),
                format!("x\n{c}"),
                format!("{c}{c}"),
            ]);
        }
        for breaks in [Breaks::Keep, Breaks::Escape] {
            for starts_line in [false, true] {
                for controls in [false, true] {
                    let rules = Rules {
                        breaks,
                        starts_line,
                        controls,
                    };
                    for t in &texts {
                        let mut walked = false;
                        decide(t, rules, |_, _, escaped| walked |= escaped);
                        assert_eq!(changes(t, rules), walked, "{t:?} {rules:?}");
                        if walked {
                            assert!(!plain(t, rules), "{t:?} {rules:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn escape_sequences_and_bidi_overrides_are_shown_not_obeyed() {
        let keep = |s| escape(s, Breaks::Keep).into_owned();
        assert_eq!(keep("plain\tline\r\n"), "plain\tline\r\n");
        assert_eq!(keep("a\u{1b}[2Jb\rc\u{7f}"), "a\\x1b[2Jb\\x0dc\\x7f");
        assert_eq!(
            keep("x\u{9b}y\u{202e}z\u{200f}"),
            "x\\u{9b}y\\u{202e}z\\u{200f}"
        );
        assert_eq!(escape("a\nb\r\nc", Breaks::Escape), "a\\x0ab\\x0d\\x0ac");
    }

    #[test]
    fn no_line_can_start_a_workflow_command() {
        // A field's first character is not a line start: an IPv6 value
        // stays as written inside a line.
        assert_eq!(escape("::/0", Breaks::Keep), "::/0");
        assert_eq!(
            escape("m\n  ::add-mask::x", Breaks::Keep),
            "m\n  \\x3a:add-mask::x"
        );
        assert_eq!(escape("a\n::error::x", Breaks::Escape), "a\\x0a::error::x");
        assert_eq!(escape_line("::stop-commands::t"), "\\x3a:stop-commands::t");
        assert_eq!(
            escape_line("\u{a0}\u{2003}::warning::x"),
            "\u{a0}\u{2003}\\x3a:warning::x"
        );
        assert_eq!(
            escape("x ##[add-mask]s", Breaks::Keep),
            "x ##\\x5badd-mask]s"
        );
        // Colour codes of a rendered report stay; its lines are defused.
        assert_eq!(
            defuse_commands("\u{1b}[31mx\u{1b}[0m\n   ::notice::y"),
            "\u{1b}[31mx\u{1b}[0m\n   \\x3a:notice::y"
        );
        // Idempotent: an escaped text is escaped as it is.
        let once = escape_line("::a\n::b ##[c \u{1b}");
        assert_eq!(escape_line(&once), once);
    }

    #[test]
    fn json_and_yaml_escapes_keep_the_value() {
        let value = serde_json::json!({
            "k\u{9b}": "a\u{202e}b ##[add-mask]x",
            "plain": "::/0",
            "lines": "one\n  ::add-mask::x",
            "long": format!("{} ::warning::x", "w ".repeat(60)),
        });
        let json = to_json(&value).unwrap();
        assert!(json.contains("\"k\\u009b\""), "{json}");
        assert!(json.contains("a\\u202eb ##\\u005badd-mask]x"), "{json}");
        assert!(json.contains("\"::/0\""), "{json}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&json).unwrap(),
            value
        );

        let yaml = to_yaml(&value).unwrap();
        for line in yaml.lines() {
            assert!(!line.trim_start().starts_with("::"), "{yaml}");
            assert!(!line.contains("##["), "{yaml}");
            assert!(!line.chars().any(hidden), "{yaml}");
        }
        let back: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
        assert_eq!(back, value, "{yaml}");
    }

    #[test]
    fn spans_map_onto_the_escaped_source() {
        let original = "k: \u{1b}[2J\nname: v\u{9b}\n::end: x ##[y\n";
        let src = Source::new(original);
        for word in ["name", "end", "x", "y"] {
            let at = original.find(word).unwrap();
            assert_eq!(&src.text[src.offset(at)..][..word.len()], word);
        }
        assert_eq!(src.offset(0), 0);
        assert_eq!(src.offset(original.len()), src.text.len());
    }
}
