//! Regular expressions as Go's `regexp` reads them, for patterns that Go
//! tools evaluate (kustomize patch targets, sops' `encrypted_regex`).
//!
//! Both engines are RE2-like, but Go is lenient where the `regex` crate is
//! strict: in Go's `regexp/syntax` (parse.go, `case '{':`), "If the repeat
//! cannot be parsed, { is a literal". So kustomize matches a patch target
//! `name: postgres-${APP}` literally, where `regex` rejects `{APP}` as a
//! bad repetition and a build kustomize finishes would fail here.

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError};

/// How many compiled patterns [`compile`] keeps, and how long one may be.
const MAX_KEPT: usize = 64;
const MAX_KEPT_LEN: usize = 256;

/// The patterns [`compile`] compiled, by their text.
static KEPT: LazyLock<Kept> = LazyLock::new(Kept::default);

/// Compiles `pattern` with Go's reading of `{`: a `{` that does not start
/// a repeat Go parses (`{n}`, `{n,}`, `{n,m}`) is a literal brace.
///
/// Compiled once per pattern: the same patch target is applied by every
/// cluster of a repository and every app that includes a component, and a
/// compile is some 260,000 instructions, most of a target's selection
/// (3 % of joryirving__home-ops's serial render). Only short patterns
/// without repeats are kept, and a bounded number of them, so that a
/// repository cannot make the cache hold large programs.
pub fn compile(pattern: &str) -> Result<regex::Regex, regex::Error> {
    KEPT.compile(pattern)
}

/// Compiled patterns by their text, at most [`MAX_KEPT`] of them.
#[derive(Default)]
struct Kept(Mutex<HashMap<String, regex::Regex>>);

impl Kept {
    fn compile(&self, pattern: &str) -> Result<regex::Regex, regex::Error> {
        let keep = pattern.len() <= MAX_KEPT_LEN && !pattern.contains('{');
        if keep && let Some(re) = self.held().get(pattern) {
            return Ok(re.clone());
        }
        let re = regex::Regex::new(&literal_braces(pattern))?;
        if keep {
            let mut kept = self.held();
            if kept.len() < MAX_KEPT {
                kept.insert(pattern.to_string(), re.clone());
            }
        }
        Ok(re)
    }

    fn held(&self) -> std::sync::MutexGuard<'_, HashMap<String, regex::Regex>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `pattern` with every `{` that Go reads as a literal escaped; escapes
/// and character classes are copied as they are (a `{` in them is
/// already literal in both dialects).
fn literal_braces(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.char_indices().peekable();
    let mut in_class = false;
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
                continue;
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` right after `[` or `[^` is a member, not the end.
                if let Some(&(_, '^')) = chars.peek() {
                    out.push('^');
                    chars.next();
                }
                if let Some(&(_, ']')) = chars.peek() {
                    out.push(']');
                    chars.next();
                }
                continue;
            }
            ']' if in_class => in_class = false,
            '{' if !in_class && !is_repeat(&pattern[i..]) => {
                out.push_str("\\{");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out
}

/// Whether `s` (starting at a `{`) is a repeat Go's `parseRepeat` accepts:
/// `{` digits [`,` [digits]] `}`.
fn is_repeat(s: &str) -> bool {
    let rest = &s[1..];
    let digits = |t: &str| t.bytes().take_while(u8::is_ascii_digit).count();
    let min = digits(rest);
    if min == 0 {
        return false;
    }
    let rest = &rest[min..];
    let rest = match rest.strip_prefix(',') {
        Some(r) => &r[digits(r)..],
        None => rest,
    };
    rest.starts_with('}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_go_cannot_read_as_a_repeat_are_literal() {
        let re = compile("^(?:postgres-\\${APP})$").unwrap();
        assert!(re.is_match("postgres-${APP}"));
        assert!(!re.is_match("postgres-arr"));
        // Unescaped, `$` is the end of text: it compiles (kustomize builds)
        // and matches nothing, as in Go.
        let re = compile("^(?:x-${APP})$").unwrap();
        assert!(!re.is_match("x-${APP}") && !re.is_match("x-"));
        assert!(compile("a{,3}").unwrap().is_match("a{,3}"));
    }

    #[test]
    fn repeats_classes_and_escapes_keep_their_meaning() {
        let re = compile("^a{2,3}$").unwrap();
        assert!(re.is_match("aaa") && !re.is_match("a"));
        assert!(compile("^a{2}$").unwrap().is_match("aa"));
        assert!(compile("^a{2,}$").unwrap().is_match("aaaa"));
        assert!(compile("^[{]x$").unwrap().is_match("{x"));
        assert!(compile("^[]{]$").unwrap().is_match("]"));
        assert!(compile("^\\{$").unwrap().is_match("{"));
        assert!(compile("(").is_err());
    }

    #[test]
    fn a_pattern_is_compiled_once_and_kept_only_when_short_and_without_repeats() {
        let cache = Kept::default();
        let kept = |p: &str| cache.held().contains_key(p);
        let re = cache.compile("^(?:kept-once|other)$").unwrap();
        assert!(kept("^(?:kept-once|other)$"));
        let again = cache.compile("^(?:kept-once|other)$").unwrap();
        assert!(re.is_match("other") && again.is_match("kept-once") && !again.is_match("x"));
        assert!(
            cache
                .compile("^x{2}-not-kept$")
                .unwrap()
                .is_match("xx-not-kept")
        );
        assert!(!kept("^x{2}-not-kept$"));
        let long = format!("^(?:{})$", "l".repeat(MAX_KEPT_LEN));
        assert!(cache.compile(&long).is_ok() && !kept(&long));
        assert!(cache.compile("(").is_err() && !kept("("));
    }

    #[test]
    fn the_kept_patterns_are_bounded() {
        let cache = Kept::default();
        for i in 0..MAX_KEPT + 8 {
            let pattern = format!("^p{i}$");
            assert!(cache.compile(&pattern).unwrap().is_match(&format!("p{i}")));
        }
        assert_eq!(cache.held().len(), MAX_KEPT);
        assert!(!cache.held().contains_key(&format!("^p{MAX_KEPT}$")));
    }
}
