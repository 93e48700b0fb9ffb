//! Where the `$`s of an object are: only a string that holds one can
//! change in substitution, and an object without one stays shared.

use crate::yaml::{Node, Value};

/// Whether any string in `node`, key or value, holds a `$` (the only
/// text [`super::Cx::scalar`] expands), and if so the way to the first one into
/// `way` (empty before): its place in each collection, innermost first; in
/// a mapping `2 * entry` for a key, one more for a value.
pub(super) fn first_dollar(node: &Node, way: &mut Vec<usize>) -> bool {
    let at = match &node.value {
        Value::Str(s) => return holds_dollar(s),
        Value::Seq(items) => items.iter().position(|n| first_dollar(n, way)),
        Value::Map(entries) => entries.iter().enumerate().find_map(|(i, (k, v))| {
            if first_dollar(k, way) {
                Some(2 * i)
            } else {
                first_dollar(v, way).then_some(2 * i + 1)
            }
        }),
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => None,
    };
    at.map(|at| way.push(at)).is_some()
}

/// [`first_dollar`] on a way of its own.
pub(super) fn anew(node: &Node, way: &mut Vec<usize>) -> bool {
    way.clear();
    first_dollar(node, way)
}

/// Whether `s` holds a `$`, eight bytes at a time: every string of an
/// object with one is looked at, and most are shorter than where
/// `str::contains` stops going a byte at a time.
pub(super) fn holds_dollar(s: &str) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const DOLLARS: u64 = u64::from_ne_bytes([b'$'; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut words = s.as_bytes().chunks_exact(8);
    // A byte of `x` is zero where `s` has a `$`; the test for a zero byte
    // is exact (only which byte it flags may be wrong).
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    words.by_ref().any(|w| {
        let w = u64::from_ne_bytes(w.try_into().expect("8 bytes"));
        zero_byte(w ^ DOLLARS)
    }) || words.remainder().contains(&b'$')
}
