//! The patterns of `${V#glob}` and `${V%glob}` trims: fluxcd/pkg
//! envsubst/path match.go, where `*` and `?` also match `/`, as a
//! budgeted linear match.

use super::gostr::decode_rune;
/// One element of a pattern. The fork's `Match` differs from Go's
/// `path.Match`: `*` and `?` also match `/`.
pub(super) enum GlobTok {
    Star,
    /// One rune, decoded as Go decodes it.
    Any,
    /// One byte.
    Lit(u8),
    /// One rune in (or, negated, not in) the ranges.
    Class(bool, Vec<(char, char)>),
}

pub(super) struct Glob(Vec<GlobTok>);

impl Glob {
    /// `None` for a pattern that Go's `matchChunk` reports as bad when it
    /// reaches the bad part: a match needs every element, so such a
    /// pattern never matches and the trim returns the value unchanged.
    pub(super) fn parse(pattern: &[u8]) -> Option<Glob> {
        let mut toks = Vec::new();
        let mut i = 0;
        while i < pattern.len() {
            match pattern[i] {
                b'*' => {
                    // `scanChunk` folds a run of stars into one.
                    if !matches!(toks.last(), Some(GlobTok::Star)) {
                        toks.push(GlobTok::Star);
                    }
                    i += 1;
                }
                b'?' => {
                    toks.push(GlobTok::Any);
                    i += 1;
                }
                b'\\' => {
                    toks.push(GlobTok::Lit(*pattern.get(i + 1)?));
                    i += 2;
                }
                b'[' => {
                    i += 1;
                    let negated = pattern.get(i) == Some(&b'^');
                    if negated {
                        i += 1;
                    }
                    let mut ranges = Vec::new();
                    loop {
                        if pattern.get(i) == Some(&b']') && !ranges.is_empty() {
                            i += 1;
                            break;
                        }
                        let lo = class_char(pattern, &mut i)?;
                        let hi = if pattern.get(i) == Some(&b'-') {
                            i += 1;
                            class_char(pattern, &mut i)?
                        } else {
                            lo
                        };
                        ranges.push((lo, hi));
                    }
                    toks.push(GlobTok::Class(negated, ranges));
                }
                c => {
                    toks.push(GlobTok::Lit(c));
                    i += 1;
                }
            }
        }
        Some(Glob(toks))
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// `ends[e]`: the pattern matches `s[..e]`. One pass of dynamic
    /// programming over (element, byte offset): O(pattern x value), where
    /// trying every prefix would be quadratic in the value on top.
    pub(super) fn matching_prefixes(&self, s: &[u8]) -> Vec<bool> {
        let n = s.len();
        let mut row = vec![false; n + 1];
        row[0] = true;
        for tok in &self.0 {
            let mut next = vec![false; n + 1];
            match tok {
                GlobTok::Star => {
                    let mut reached = false;
                    for i in 0..=n {
                        reached |= row[i];
                        next[i] = reached;
                    }
                }
                GlobTok::Lit(c) => {
                    for i in 0..n {
                        if row[i] && s[i] == *c {
                            next[i + 1] = true;
                        }
                    }
                }
                GlobTok::Any | GlobTok::Class(..) => {
                    for i in 0..n {
                        if !row[i] {
                            continue;
                        }
                        let (r, w) = decode_rune(&s[i..]);
                        let hit = match tok {
                            GlobTok::Class(negated, ranges) => {
                                ranges.iter().any(|(lo, hi)| *lo <= r && r <= *hi) != *negated
                            }
                            _ => true,
                        };
                        if hit {
                            next[i + w] = true;
                        }
                    }
                }
            }
            row = next;
        }
        row
    }
}

/// match.go `getEsc`: one (possibly escaped) rune of a class; `None` where
/// Go returns `ErrBadPattern`, including a class left open at the end.
pub(super) fn class_char(pattern: &[u8], i: &mut usize) -> Option<char> {
    match pattern.get(*i)? {
        b'-' | b']' => return None,
        b'\\' => *i += 1,
        _ => {}
    }
    let (c, w) = decode_rune(pattern.get(*i..)?);
    if w == 0 || (c == char::REPLACEMENT_CHARACTER && w == 1) {
        return None;
    }
    *i += w;
    (*i < pattern.len()).then_some(c)
}
