//! Numbers in plain scalars, as go-yaml v3 reads them with Go's parsers.

use super::Value;

/// Go's `strconv.ParseInt(s, 0, 64)`, falling back to `ParseUint` as
/// go-yaml does: an optional sign (ParseInt only), then `0x`, `0o`, `0b`
/// (either case) or a leading `0` for octal, then at least one digit of
/// that base and nothing else, so `0x-5` is no number. Values above
/// `i64::MAX` that fit in a `u64` are integers to go-yaml; they are kept
/// as the nearest float, as a JSON reader would hold them.
pub(super) fn go_parse_int(s: &str) -> Option<Value> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.get(..2).map(str::to_ascii_lowercase);
    let (radix, digits) = match lower.as_deref() {
        Some("0x") => (16, &body[2..]),
        Some("0o") => (8, &body[2..]),
        Some("0b") => (2, &body[2..]),
        _ if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
        _ => (10, body),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        // i64::MIN has no positive counterpart: build it from the magnitude.
        (magnitude <= i64::MIN.unsigned_abs())
            .then(|| Value::Int((magnitude as i64).wrapping_neg()))
    } else if let Ok(v) = i64::try_from(magnitude) {
        Some(Value::Int(v))
    } else {
        // ParseUint takes no sign: `+18446744073709551615` is left to
        // yamlStyleFloat, `+0xFFFFFFFFFFFFFFFF` stays a string.
        (!s.starts_with('+')).then_some(Value::Float(magnitude as f64))
    }
}

/// go-yaml's `yamlStyleFloat`:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub(super) fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - from
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}
