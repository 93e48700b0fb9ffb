//! The forms nearly every postBuild string is written in (text, `$$`,
//! `${NAME}`, and `${NAME:-text}` with the other default operators),
//! parsed straight from the bytes. The full parser ([`super::parse`])
//! first builds a char buffer and then steps through it token by token;
//! on a long configuration file with one `${...}` that was most of an
//! expansion. For these forms both give the same tree, which the test
//! below checks on every short string of a generated alphabet; anything
//! else is left to the full parser.

use super::parse::Ast;

/// The tree of `text` when it is written only in the common forms;
/// `None` otherwise, and for every text the full parser refuses.
pub(super) fn parse(text: &str) -> Option<Vec<Ast>> {
    let b = text.as_bytes();
    let mut chars = Chars::new(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let (ast, end) = if b[i..].starts_with(b"${") {
            func(text, i, &mut chars)?
        } else {
            literal(text, i)
        };
        out.push(ast);
        i = end;
    }
    Some(out)
}

/// Byte positions turned into the full parser's, which are in chars,
/// counted from the last one asked (they are asked in order).
struct Chars {
    ascii: bool,
    byte: usize,
    char: usize,
}

impl Chars {
    fn new(text: &str) -> Chars {
        Chars {
            ascii: text.is_ascii(),
            byte: 0,
            char: 0,
        }
    }

    fn at(&mut self, b: &[u8], byte: usize) -> usize {
        if self.ascii {
            return byte;
        }
        // Every byte but a UTF-8 continuation byte starts a char.
        self.char += b[self.byte..byte]
            .iter()
            .filter(|&&c| c & 0xC0 != 0x80)
            .count();
        self.byte = byte;
        self.char
    }
}

/// The text from `from` up to the next `${`, with `$$` read as `$`
/// (template.go's escape), and where it ends.
fn literal(text: &str, from: usize) -> (Ast, usize) {
    let b = text.as_bytes();
    let mut out = String::new();
    // `copied`: where the part not yet in `out` starts.
    let (mut copied, mut at) = (from, from);
    while let Some(d) = memchr::memchr(b'$', &b[at..]).map(|d| at + d) {
        match b.get(d + 1) {
            Some(b'{') => {
                out.push_str(&text[copied..d]);
                return (Ast::Text(out), d);
            }
            Some(b'$') => {
                out.push_str(&text[copied..=d]);
                copied = d + 2;
                at = d + 2;
            }
            _ => at = d + 1,
        }
    }
    out.push_str(&text[copied..]);
    (Ast::Text(out), b.len())
}

/// The expression at `from` (its `${`) and where it ends: `${NAME}`, or
/// a default operator with text that holds no `${` (the full parser reads
/// it raw: no escapes there). A name is ASCII here: the full parser's
/// takes any letter.
fn func(text: &str, from: usize, chars: &mut Chars) -> Option<(Ast, usize)> {
    let b = text.as_bytes();
    let start = from + 2;
    let end = b[start..]
        .iter()
        .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'))
        .map_or(b.len(), |n| start + n);
    if end == start {
        return None;
    }
    let param = text[start..end].to_string();
    let (name, args_from) = match (b.get(end), b.get(end + 1)) {
        (Some(b'}'), _) => {
            let ast = Ast::Func {
                name: String::new(),
                param,
                args: Vec::new(),
                at: (chars.at(b, from), chars.at(b, end + 1)),
            };
            return Some((ast, end + 1));
        }
        (Some(b':'), Some(b'=' | b'-' | b'?' | b'+')) => (&text[end..end + 2], end + 2),
        (Some(b'='), _) => ("=", end + 1),
        _ => return None,
    };
    let mut at = args_from;
    let close = loop {
        let d = at + memchr::memchr2(b'}', b'$', &b[at..])?;
        match b[d] {
            b'}' => break d,
            _ if b.get(d + 1) == Some(&b'{') => return None,
            _ => at = d + 1,
        }
    };
    let args = if close > args_from {
        vec![Ast::Text(text[args_from..close].to_string())]
    } else {
        Vec::new()
    };
    let ast = Ast::Func {
        name: name.to_string(),
        param,
        args,
        at: (chars.at(b, from), chars.at(b, close + 1)),
    };
    Some((ast, close + 1))
}

#[cfg(test)]
mod tests {
    use super::super::parse::Parser;
    use super::*;

    /// Pieces that make up the common forms, the operators of the others,
    /// escapes, and a character outside ASCII.
    const PIECES: [&str; 20] = [
        "$", "{", "}", "A", "_1", ":", "-", "=", "+", "?", "#", "%", "/", ",", "^", "\\", " ", "é",
        "${A", ":-x",
    ];

    /// Where the fast parser gives a tree, the full parser gives the same.
    fn agrees(text: &str) -> bool {
        match parse(text) {
            Some(fast) => {
                let full = Parser::new(text).parse();
                assert_eq!(full.as_ref(), Ok(&fast), "{text:?}");
                true
            }
            None => false,
        }
    }

    #[test]
    fn common_forms_parse_as_the_full_parser_does() {
        let mut parsed = 0;
        let mut texts = vec![String::new()];
        for _ in 0..4 {
            texts = texts
                .iter()
                .flat_map(|t| PIECES.iter().map(move |p| format!("{t}{p}")))
                .collect();
            parsed += texts.iter().filter(|t| agrees(t)).count();
        }
        // Longer ones, drawn from the same pieces (a fixed LCG).
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..100_000 {
            let mut text = String::new();
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            for _ in 0..(seed >> 60) + 4 {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                text.push_str(PIECES[(seed >> 33) as usize % PIECES.len()]);
            }
            parsed += usize::from(agrees(&text));
        }
        // Not a test of nothing: most short strings are in the common forms.
        assert!(parsed > 50_000, "{parsed}");
    }

    #[test]
    fn the_forms_written_in_repositories_take_the_fast_path() {
        for text in [
            "",
            "plain",
            "${APP}",
            "https://${APP}.${DOMAIN}/x",
            "${GID:-568}",
            "${X:=}",
            "${X=a b}",
            "${X:+y} ${Y:?need}",
            "pa$$word $HOME \\ $",
            "$${NOT}",
            "é${A}ü${B:-ß}",
        ] {
            assert!(agrees(text), "{text:?}");
        }
        for text in ["${#A}", "${A,,}", "${A:-${B}}", "${A:1}", "${A", "${Aé}"] {
            assert!(parse(text).is_none(), "{text:?}");
        }
    }
}
