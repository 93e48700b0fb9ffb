//! Go's string functions as envsubst's funcs.go uses them, on bytes:
//! Go slices strings by byte, so `${V:0:1}` may cut a character in two.

use super::BUDGET;

/// Go's `utf8.DecodeRune`: an invalid byte decodes as U+FFFD of width 1.
pub(super) fn decode_rune(b: &[u8]) -> (char, usize) {
    let width = match b.first() {
        None => return (char::REPLACEMENT_CHARACTER, 0),
        Some(&c) if c < 0x80 => return (c as char, 1),
        Some(&c) if c & 0xE0 == 0xC0 => 2,
        Some(&c) if c & 0xF0 == 0xE0 => 3,
        Some(&c) if c & 0xF8 == 0xF0 => 4,
        Some(_) => 0,
    };
    match b.get(..width).map(std::str::from_utf8) {
        Some(Ok(s)) if width > 0 => (s.chars().next().unwrap_or_default(), width),
        _ => (char::REPLACEMENT_CHARACTER, 1),
    }
}

pub(super) fn runes(b: &[u8]) -> impl Iterator<Item = (char, usize)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= b.len() {
            return None;
        }
        let (c, w) = decode_rune(&b[i..]);
        i += w;
        Some((c, w))
    })
}

/// funcs.go `reverse`: by runes, invalid bytes becoming U+FFFD.
pub(super) fn reverse_runes(b: &[u8]) -> Vec<u8> {
    let rs: Vec<char> = runes(b).map(|(c, _)| c).collect();
    rs.iter().rev().collect::<String>().into_bytes()
}

/// Go's `unicode.ToLower`/`ToUpper` map one rune to one rune; Rust's full
/// case mapping may give several, which Go's simple mapping never does
/// (those runes stay as they are, bar `İ`, whose simple lower case is `i`).
pub(super) fn to_lower(c: char) -> char {
    if c == '\u{130}' {
        return 'i';
    }
    single(c.to_lowercase()).unwrap_or(c)
}

pub(super) fn to_upper(c: char) -> char {
    single(c.to_uppercase()).unwrap_or(c)
}

pub(super) fn single(mut it: impl Iterator<Item = char>) -> Option<char> {
    let c = it.next()?;
    it.next().is_none().then_some(c)
}

pub(super) fn map_all(s: &[u8], f: fn(char) -> char) -> Vec<u8> {
    runes(s).map(|(c, _)| f(c)).collect::<String>().into_bytes()
}

pub(super) fn map_first(s: &[u8], f: fn(char) -> char) -> Vec<u8> {
    if s.is_empty() {
        return Vec::new();
    }
    let (c, w) = decode_rune(s);
    let mut out = f(c).to_string().into_bytes();
    out.extend_from_slice(&s[w..]);
    out
}

/// Go's `strings.Replace`: an empty pattern matches before every rune and
/// at the end. Refuses to build more than `cap` bytes.
pub(super) fn go_replace(
    s: &[u8],
    pat: &[u8],
    with: &[u8],
    limit: Option<usize>,
    cap: usize,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut n = 0usize;
    let mut i = 0usize;
    let too_big = || format!("{BUDGET}: an expanded value passed {cap} bytes");
    while i <= s.len() && limit.is_none_or(|l| n < l) {
        let at = if pat.is_empty() {
            Some(i)
        } else {
            find(&s[i..], pat).map(|k| i + k)
        };
        let Some(at) = at else { break };
        if out.len() + (at - i) + with.len() > cap {
            return Err(too_big());
        }
        out.extend_from_slice(&s[i..at]);
        out.extend_from_slice(with);
        n += 1;
        if pat.is_empty() {
            if at == s.len() {
                i = s.len() + 1;
                break;
            }
            let (_, w) = decode_rune(&s[at..]);
            out.extend_from_slice(&s[at..at + w]);
            i = at + w;
        } else {
            i = at + pat.len();
        }
    }
    if i <= s.len() {
        if out.len() + (s.len() - i) > cap {
            return Err(too_big());
        }
        out.extend_from_slice(&s[i..]);
    }
    Ok(out)
}

pub(super) fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Go's `strconv.Atoi`.
pub(super) fn atoi(b: &[u8]) -> Option<i64> {
    std::str::from_utf8(b).ok()?.parse::<i64>().ok()
}

/// funcs.go `toSubstr`, byte for byte. A negative length (bash counts it
/// from the end) makes Go slice `s[pos:pos+length]` backwards, which
/// panics in the controller: reported as the error it is.
pub(super) fn substr(s: &[u8], args: &[Vec<u8>]) -> Result<Vec<u8>, String> {
    let Some(Some(mut pos)) = args.first().map(|a| atoi(a)) else {
        return Ok(s.to_vec());
    };
    let len = s.len() as i64;
    if pos < 0 {
        pos = (len + pos).max(0);
    }
    let Some(length) = args.get(1) else {
        return Ok(if pos < len {
            s[pos as usize..].to_vec()
        } else {
            Vec::new()
        });
    };
    let Some(length) = atoi(length) else {
        return Ok(s.to_vec());
    };
    let end = pos.saturating_add(length);
    if end >= len {
        return Ok(if pos < len {
            s[pos as usize..].to_vec()
        } else {
            Vec::new()
        });
    }
    if end < pos {
        return Err(format!(
            "the substring length {length} is negative: Flux's envsubst slices \
             backwards and panics (funcs.go toSubstr)"
        ));
    }
    Ok(s[pos as usize..end as usize].to_vec())
}
