//! The YAML round trip around Flux's substitution, which decides the type
//! a substituted string ends up with.
//!
//! kustomize-controller's `SubstituteVariables` (fluxcd/pkg
//! `kustomize/kustomize_varsub.go`) takes `res.AsYAML()` — kustomize's
//! `MarshalJSON` then sigs.k8s.io/yaml `JSONToYAML`, which writes with
//! go-yaml **v2** — runs envsubst over that text, and reads it back with
//! sigs.k8s.io/yaml `YAMLToJSON`, again go-yaml v2. So how a string was
//! quoted in the repository is lost: `fsGroup: "${GID:-568}"` is written
//! as the plain scalar `${GID:-568}`, becomes `568` and is read back as an
//! integer (Flux's docs on "substitution of numbers and booleans" say the
//! same: quote with a `${quote}` variable). What matters is how go-yaml v2
//! *writes* the string (encode.go `stringv`, emitterc.go
//! `yaml_emitter_analyze_scalar` and `yaml_emitter_select_scalar_style`)
//! and how it resolves plain scalars when reading (resolve.go): YAML 1.1,
//! so `yes`, `on` and `n` are booleans.
//!
//! Not reproduced: go-yaml folds plain and quoted scalars longer than 80
//! columns at spaces; that changes the text envsubst sees only inside an
//! expression that contains a space (`${V:=a b}`), and the fold is read
//! back as a space.

use crate::yaml::Value;

/// How go-yaml v2 writes a string in block context.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    Plain,
    Single,
    Double,
    Literal,
}

/// The text go-yaml v2 writes for `s` in the style [`style`] picked for
/// it (for a literal, the header and the content lines indented by two
/// spaces). The caller has the style already, and a plain scalar's text is
/// `s` itself.
pub fn written(s: &str, style: Emit) -> String {
    match style {
        Emit::Plain => s.to_string(),
        Emit::Single => format!("'{}'", s.replace('\'', "''")),
        Emit::Double => double_quoted(s),
        Emit::Literal => literal(s),
    }
}

/// The style go-yaml v2 picks for `s` as a mapping value or sequence item
/// (`key == false`) or as a mapping key.
pub fn style(s: &str, key: bool) -> Emit {
    let can_use_plain = matches!(resolve(s), Resolved::Str) && !is_base60_float(s);
    let mut style = if s.contains('\n') {
        Emit::Literal
    } else if can_use_plain {
        Emit::Plain
    } else {
        Emit::Double
    };
    let a = analyze(s);
    if key && a.multiline {
        style = Emit::Double;
    }
    if style == Emit::Plain && (!a.block_plain_allowed || (s.is_empty() && key)) {
        style = Emit::Single;
    }
    if style == Emit::Single && !a.single_quoted_allowed {
        style = Emit::Double;
    }
    if style == Emit::Literal && (!a.block_allowed || key) {
        style = Emit::Double;
    }
    style
}

/// What `yaml_emitter_analyze_scalar` works out, block context only.
struct Analysis {
    multiline: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

/// yamlprivateh.go `is_printable`: note that it leaves out every
/// character outside the Basic Multilingual Plane (emoji are escaped).
fn is_printable(c: char) -> bool {
    matches!(c, '\n' | '\u{20}'..='\u{7E}' | '\u{A0}'..='\u{D7FF}')
        || (('\u{E000}'..='\u{FFFD}').contains(&c) && c != '\u{FEFF}')
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    // A byte position.
    let mut i = 0;
    while let Some(c) = s[i..].chars().next() {
        // After the first, ASCII chars that none of the tests below picks
        // out leave the state as any one of them does: the char after them
        // follows no space or break. So does a single space between two of
        // them (it follows no break, ends nothing, and what follows it is
        // not a `#`). A run of them is passed over at once (the strings
        // with a `$` are long, and their words are one space apart).
        let bytes = s.as_bytes();
        let plain = |at: usize| {
            bytes
                .get(at)
                .is_some_and(|&b| b.is_ascii_graphic() && b != b':' && b != b'#')
        };
        let mut run = 0;
        let space = |at: usize| bytes.get(at) == Some(&b' ');
        while i > 0 && (plain(i + run) || run > 0 && space(i + run) && plain(i + run + 1)) {
            run += 1;
        }
        if run > 0 {
            i += run;
            previous_space = false;
            previous_break = false;
            preceded_by_whitespace = false;
            continue;
        }
        let next = s[i + c.len_utf8()..].chars().next();
        let followed_by_whitespace = next.is_none_or(|n| n == ' ' || n == '\t');
        let last = next.is_none();
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' | '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !is_printable(c) {
            special = true;
        }
        if c == ' ' {
            leading_space |= i == 0;
            trailing_space |= last;
            break_space |= previous_break;
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= last;
            space_break |= previous_space;
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = c == ' ' || c == '\t' || is_break(c) || c == '\0';
        i += c.len_utf8();
    }
    let mut a = Analysis {
        multiline: line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks || block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// emitterc.go `yaml_emitter_write_double_quoted_scalar`, without folding.
fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        let escaped = match c {
            '\0' => "\\0",
            '\u{7}' => "\\a",
            '\u{8}' => "\\b",
            '\t' => "\\t",
            '\n' => "\\n",
            '\u{B}' => "\\v",
            '\u{C}' => "\\f",
            '\r' => "\\r",
            '\u{1B}' => "\\e",
            '"' => "\\\"",
            '\\' => "\\\\",
            '\u{85}' => "\\N",
            '\u{A0}' => "\\_",
            '\u{2028}' => "\\L",
            '\u{2029}' => "\\P",
            c if is_printable(c) && c != '\u{FEFF}' => {
                out.push(c);
                continue;
            }
            c if (c as u32) <= 0xFF => {
                out.push_str(&format!("\\x{:02X}", c as u32));
                continue;
            }
            c if (c as u32) <= 0xFFFF => {
                out.push_str(&format!("\\u{:04X}", c as u32));
                continue;
            }
            c => {
                out.push_str(&format!("\\U{:08X}", c as u32));
                continue;
            }
        };
        out.push_str(escaped);
    }
    out.push('"');
    out
}

/// emitterc.go `yaml_emitter_write_literal_scalar` with its block scalar
/// hints: an indentation indicator when the text starts with a space or a
/// break, `-` without a final break, `+` with more than one.
fn literal(s: &str) -> String {
    let mut out = String::from("|");
    if s.starts_with(' ') || s.starts_with(is_break) {
        out.push('2');
    }
    let mut rev = s.chars().rev();
    match (rev.next(), rev.next()) {
        (Some(c), _) if !is_break(c) => out.push('-'),
        (Some(_), None) => out.push('+'),
        (Some(_), Some(p)) if is_break(p) => out.push('+'),
        _ => {}
    }
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str("  ");
        }
        out.push_str(line);
    }
    out
}

/// encode.go `isBase60Float`: `1:20` is written quoted.
fn is_base60_float(s: &str) -> bool {
    let Some(first) = s.bytes().next() else {
        return false;
    };
    if !(first == b'+' || first == b'-' || first.is_ascii_digit()) || !s.contains(':') {
        return false;
    }
    // ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$
    let rest = s.strip_prefix(['+', '-']).unwrap_or(s);
    let rest = rest
        .strip_prefix(|c: char| c.is_ascii_digit())
        .unwrap_or("\u{0}");
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit() || c == '_');
    let (groups, frac) = match rest.find('.') {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let groups_ok = groups.starts_with(':')
        && groups[1..].split(':').all(|g| {
            let b = g.as_bytes();
            match b.len() {
                1 => b[0].is_ascii_digit(),
                2 => (b'0'..=b'5').contains(&b[0]) && b[1].is_ascii_digit(),
                _ => false,
            }
        });
    groups_ok && frac.is_none_or(|f| f.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
}

/// A plain scalar as go-yaml v2 resolves it (resolve.go `resolve`).
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    /// Above `i64::MAX`: go-yaml gives a `uint64`.
    Uint(u64),
    Float(f64),
    Str,
}

pub fn resolve(s: &str) -> Resolved {
    match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            return Resolved::Bool(true);
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            return Resolved::Bool(false);
        }
        "" | "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        _ => {}
    }
    match s.as_bytes()[0] {
        b'.' => match go_parse_float(s) {
            Some(f) => Resolved::Float(f),
            None => Resolved::Str,
        },
        b'0'..=b'9' | b'+' | b'-' => {
            // A timestamp resolves, but go-yaml v2 hands it to an
            // `interface{}` as the string it was (decode.go `scalar`).
            let plain = s.replace('_', "");
            if let Some(v) = go_parse_int(&plain) {
                return v;
            }
            if is_yaml_style_float(&plain)
                && let Some(f) = go_parse_float(&plain)
            {
                return Resolved::Float(f);
            }
            if let Some(bits) = plain.strip_prefix("0b")
                && let Ok(v) = u64::from_str_radix(bits, 2)
            {
                return int_or_uint(v as i128);
            }
            if let Some(bits) = plain.strip_prefix("-0b")
                && let Ok(v) = i64::from_str_radix(&format!("-{bits}"), 2)
            {
                return Resolved::Int(v);
            }
            Resolved::Str
        }
        _ => Resolved::Str,
    }
}

fn int_or_uint(v: i128) -> Resolved {
    match i64::try_from(v) {
        Ok(i) => Resolved::Int(i),
        Err(_) => u64::try_from(v).map_or(Resolved::Str, Resolved::Uint),
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)` then `ParseUint(s, 0, 64)`: a sign,
/// then `0x`, `0o`, `0b` or a leading `0` (octal) select the base.
fn go_parse_int(s: &str) -> Option<Resolved> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d, 16)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (d, 8)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = u128::from_str_radix(digits, radix).ok()?;
    let v = if neg { -(v as i128) } else { v as i128 };
    // ParseUint takes no sign.
    match (i64::try_from(v), neg || s.starts_with('+')) {
        (Ok(i), _) => Some(Resolved::Int(i)),
        (Err(_), false) => u64::try_from(v).ok().map(Resolved::Uint),
        (Err(_), true) => None,
    }
}

/// resolve.go `yamlStyleFloat`:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exp) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", frac)) => digits(frac),
        Some((int, frac)) => digits(int) && (frac.is_empty() || digits(frac)),
        None => digits(mantissa),
    };
    mantissa_ok && exp.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e)))
}

/// Go's `strconv.ParseFloat` on what go-yaml hands it: decimal forms (the
/// callers have checked the shape) and Go's spellings of infinity.
fn go_parse_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s).to_ascii_lowercase();
    if matches!(body.as_str(), "inf" | "infinity" | "nan") {
        return s.to_ascii_lowercase().parse::<f64>().ok();
    }
    if !body
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'-' | b'+' | b'_'))
    {
        return None;
    }
    s.parse::<f64>().ok()
}

/// The value a resolved scalar has once sigs.k8s.io/yaml has turned it
/// into JSON and kustomize has decoded that again: Go's `json.Marshal`
/// writes an integral float below 1e21 without a fraction, which decodes
/// as an integer. `Err` where Flux fails (`json: unsupported value`).
pub fn to_value(r: Resolved, text: &str) -> Result<Value, String> {
    Ok(match r {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::Int(i),
        Resolved::Uint(u) => Value::Float(u as f64),
        Resolved::Float(f) if !f.is_finite() => {
            return Err(format!(
                "{text:?} reads as the float {f}, which JSON cannot hold: Flux fails \
                 (json: unsupported value)"
            ));
        }
        Resolved::Float(f) if f.fract() == 0.0 && f.abs() < 1e21 && f.abs() < 9.2e18 => {
            Value::Int(f as i64)
        }
        Resolved::Float(f) => Value::Float(f),
        Resolved::Str => Value::Str(text.into()),
    })
}

/// A mapping key as sigs.k8s.io/yaml `convertToJSONableObject` turns it
/// into a JSON key. `Err` where it refuses the key.
pub fn key_text(r: Resolved, text: &str) -> Result<String, String> {
    Ok(match r {
        Resolved::Str => text.to_string(),
        Resolved::Bool(b) => b.to_string(),
        Resolved::Int(i) => i.to_string(),
        Resolved::Float(f) if f.is_nan() => ".nan".into(),
        Resolved::Float(f) if f.is_infinite() => if f > 0.0 { ".inf" } else { "-.inf" }.into(),
        // strconv.FormatFloat(f, 'g', -1, 32).
        Resolved::Float(f) => (f as f32).to_string(),
        Resolved::Null | Resolved::Uint(_) => {
            return Err(format!(
                "the key {text:?} reads as a {}, which sigs.k8s.io/yaml refuses as a map \
                 key: Flux fails",
                if r == Resolved::Null {
                    "null"
                } else {
                    "uint64"
                }
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn styles_as_go_yaml_v2_writes_them() {
        let cases = [
            ("${N:-568}", Emit::Plain, "${N:-568}"),
            ("568", Emit::Double, "\"568\""),
            ("yes", Emit::Double, "\"yes\""),
            ("a: b", Emit::Single, "'a: b'"),
            ("it's: x", Emit::Single, "'it''s: x'"),
            ("#x", Emit::Single, "'#x'"),
            ("a #b", Emit::Single, "'a #b'"),
            ("a#b", Emit::Plain, "a#b"),
            (" x", Emit::Single, "' x'"),
            ("1:20", Emit::Double, "\"1:20\""),
            ("tab\there", Emit::Double, "\"tab\\there\""),
            ("😀", Emit::Double, "\"\\U0001F600\""),
            ("a\nb", Emit::Literal, "|-\n  a\n  b"),
            ("a\nb\n", Emit::Literal, "|\n  a\n  b"),
            ("a\n\n", Emit::Literal, "|+\n  a\n"),
            (" a\nb", Emit::Literal, "|2-\n   a\n  b"),
            ("a \nb", Emit::Double, "\"a \\nb\""),
            ("", Emit::Double, "\"\""),
        ];
        for (s, want, text) in cases {
            assert_eq!(style(s, false), want, "{s:?}");
            assert_eq!(written(s, want), text, "{s:?}");
        }
        assert_eq!(style("", true), Emit::Double);
        assert_eq!(style("a\nb", true), Emit::Double);
    }

    /// Where a run of ordinary chars is passed over at once, the char
    /// after it is still judged by what precedes and follows it.
    #[test]
    fn styles_around_runs_of_ordinary_chars() {
        let cases = [
            ("ab:cd", Emit::Plain),
            ("abc:", Emit::Single),
            ("abc: d", Emit::Single),
            ("abc ", Emit::Single),
            ("ab #c", Emit::Single),
            ("ab\u{e9}#c", Emit::Plain),
            ("ab\u{7f}c", Emit::Double),
            ("abc\ndef", Emit::Literal),
            ("-abc", Emit::Plain),
            ("- abc", Emit::Single),
            // Single spaces between ordinary chars are passed over too.
            ("a b c", Emit::Plain),
            ("a  b", Emit::Plain),
            ("ab cd #e", Emit::Single),
            ("ab cd: e", Emit::Single),
            ("ab cd:e", Emit::Plain),
            ("ab cd ", Emit::Single),
            ("ab c \nd", Emit::Double),
            ("ab\n c d", Emit::Literal),
            ("ab c\nd e", Emit::Literal),
        ];
        for (s, want) in cases {
            assert_eq!(style(s, false), want, "{s:?}");
        }
    }

    #[test]
    fn plain_scalars_resolve_as_yaml_1_1() {
        let cases = [
            ("568", Resolved::Int(568)),
            ("0x1F", Resolved::Int(31)),
            ("0o17", Resolved::Int(15)),
            ("017", Resolved::Int(15)),
            ("1_000", Resolved::Int(1000)),
            ("0b101", Resolved::Int(5)),
            ("-0b101", Resolved::Int(-5)),
            ("+7", Resolved::Int(7)),
            ("1.5", Resolved::Float(1.5)),
            (".5", Resolved::Float(0.5)),
            ("1e3", Resolved::Float(1000.0)),
            ("089", Resolved::Float(89.0)),
            ("yes", Resolved::Bool(true)),
            ("Off", Resolved::Bool(false)),
            ("n", Resolved::Bool(false)),
            ("~", Resolved::Null),
            ("", Resolved::Null),
            ("2024-01-02", Resolved::Str),
            ("1.2.3", Resolved::Str),
            ("-", Resolved::Str),
            ("0x", Resolved::Str),
            ("<<", Resolved::Str),
            ("18446744073709551615", Resolved::Uint(u64::MAX)),
        ];
        for (s, want) in cases {
            assert_eq!(resolve(s), want, "{s:?}");
        }
    }

    #[test]
    fn json_round_trip_and_keys() {
        assert_eq!(to_value(Resolved::Float(1.0), "1.0"), Ok(Value::Int(1)));
        assert_eq!(to_value(Resolved::Float(1.5), "1.5"), Ok(Value::Float(1.5)));
        assert!(to_value(Resolved::Float(f64::NAN), ".nan").is_err());
        assert_eq!(key_text(Resolved::Bool(true), "yes").unwrap(), "true");
        assert_eq!(key_text(Resolved::Int(8), "010").unwrap(), "8");
        assert!(key_text(Resolved::Null, "").is_err());
    }
}
