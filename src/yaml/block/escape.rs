//! Double-quoted escapes, decoded as saphyr decodes them.

/// The text of a one-line double-quoted scalar, its escapes (YAML 1.2,
/// 5.7) decoded; `None` for an escape saphyr refuses or one this scanner
/// leaves to it.
pub(super) fn unescape(inner: &str) -> Option<String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next()? {
            '0' => '\0',
            'a' => '\u{7}',
            'b' => '\u{8}',
            't' => '\t',
            'n' => '\n',
            'v' => '\u{b}',
            'f' => '\u{c}',
            'r' => '\r',
            'e' => '\u{1b}',
            ' ' => ' ',
            '"' => '"',
            '/' => '/',
            '\\' => '\\',
            'N' => '\u{85}',
            '_' => '\u{a0}',
            'L' => '\u{2028}',
            'P' => '\u{2029}',
            kind @ ('x' | 'u' | 'U') => {
                let width = match kind {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = chars.by_ref().take(width).collect();
                if digits.len() != width || !digits.bytes().all(|d| d.is_ascii_hexdigit()) {
                    return None;
                }
                char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?
            }
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}
