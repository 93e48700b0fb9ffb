//! The next of a few bytes, where the scanner looks for the end of a
//! key, a value or a line: nearly always within a few bytes, where a
//! vector search's setup costs more than the whole look (a key's end
//! by `memchr3` took 114 instructions).

use crate::yaml::position::{HIGH, splat};

/// Bytes read eight at a time before the rest is left to `search`.
const NEAR: usize = 32;

/// Where the first of `needles` at or after `from` is: eight bytes at a
/// time over the next [`NEAR`], then a search of the rest (`search`,
/// which finds the same bytes).
pub(super) fn find<const N: usize>(
    b: &[u8],
    from: usize,
    needles: [u8; N],
    search: impl FnOnce(&[u8]) -> Option<usize>,
) -> Option<usize> {
    let near = (from + NEAR).min(b.len());
    let mut at = from;
    while at + 8 <= near {
        let w = u64::from_le_bytes(b[at..at + 8].try_into().expect("eight bytes"));
        // A byte of `x` that is zero sets its high bit here; a false one
        // comes only above a true one, so the lowest is exact.
        let hits = needles.iter().fold(0, |hits, &n| {
            let x = w ^ splat(n);
            hits | (x.wrapping_sub(splat(1)) & !x)
        }) & HIGH;
        if hits != 0 {
            return Some(at + hits.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    match b[at..near].iter().position(|c| needles.contains(c)) {
        Some(n) => Some(at + n),
        None => search(&b[near..]).map(|n| near + n),
    }
}

#[cfg(test)]
mod tests {
    use super::find;

    /// Each needle, and bytes one off from it (whose borrows could make
    /// a false hit), at every place in and past the words read.
    #[test]
    fn finds_the_first_needle_as_a_byte_at_a_time() {
        let needles = [b'\n', b':', b'#'];
        let search = |rest: &[u8]| memchr::memchr3(b'\n', b':', b'#', rest);
        for fill in [b'a', b'\n' - 1, b':' + 1, b'#' - 1, 0x80, 0xff, 0] {
            for len in 0..80 {
                for place in 0..=len {
                    for &needle in &needles {
                        let mut b = vec![fill; len];
                        if place < len {
                            b[place] = needle;
                        }
                        for from in [0, 1, 7, 9].into_iter().filter(|&f| f <= len) {
                            let want = b[from..]
                                .iter()
                                .position(|c| needles.contains(c))
                                .map(|n| from + n);
                            assert_eq!(find(&b, from, needles, search), want, "{b:?} from {from}");
                        }
                    }
                }
            }
        }
    }
}
