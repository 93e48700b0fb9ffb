//! The next of a few bytes, where the scanner looks for the end of a
//! key, a value or a line: nearly always within a few bytes, where a
//! vector search's setup costs more than the whole look (a key's end
//! by `memchr3` took 114 instructions).

/// Bytes read sixteen at a time before the rest is left to `search`:
/// past the values most lines hold (an image reference, a URL), where
/// a `memchr3` call costs more than reading them.
const NEAR: usize = 64;

/// Where the first of `needles` at or after `from` is: sixteen bytes at
/// a time over the next [`NEAR`], then a search of the rest (`search`,
/// which finds the same bytes).
pub(super) fn find<const N: usize>(
    b: &[u8],
    from: usize,
    needles: [u8; N],
    search: impl FnOnce(&[u8]) -> Option<usize>,
) -> Option<usize> {
    let near = (from + NEAR).min(b.len());
    let mut at = from;
    while at + 16 <= near {
        if let Some(n) = first(b[at..at + 16].try_into().expect("sixteen bytes"), needles) {
            return Some(at + n);
        }
        at += 16;
    }
    match b[at..near].iter().position(|c| needles.contains(c)) {
        Some(n) => Some(at + n),
        None => search(&b[near..]).map(|n| near + n),
    }
}

/// The first of `needles` in `chunk`, by SSE2 (part of every x86_64):
/// a compare per needle, where eight bytes at a time by word
/// arithmetic took about four times the instructions.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn first<const N: usize>(chunk: &[u8; 16], needles: [u8; N]) -> Option<usize> {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_setzero_si128,
    };
    // SAFETY: the build enables SSE2 (the cfg above), and the load reads
    // the sixteen bytes of `chunk`, unaligned loads allowed.
    let hits = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let eq = needles.iter().fold(_mm_setzero_si128(), |eq, &n| {
            _mm_or_si128(eq, _mm_cmpeq_epi8(v, _mm_set1_epi8(n as i8)))
        });
        _mm_movemask_epi8(eq) as u32
    };
    (hits != 0).then(|| hits.trailing_zeros() as usize)
}

/// The first of `needles` in `chunk`, one byte at a time.
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
fn first<const N: usize>(chunk: &[u8; 16], needles: [u8; N]) -> Option<usize> {
    chunk.iter().position(|c| needles.contains(c))
}

#[cfg(test)]
mod tests {
    use super::find;

    /// Each needle, and bytes one off from it, at every place in and
    /// past the chunks read.
    #[test]
    fn finds_the_first_needle_as_a_byte_at_a_time() {
        let needles = [b'\n', b':', b'#'];
        let search = |rest: &[u8]| memchr::memchr3(b'\n', b':', b'#', rest);
        for fill in [b'a', b'\n' - 1, b':' + 1, b'#' - 1, 0x80, 0xff, 0] {
            for len in 0..100 {
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
