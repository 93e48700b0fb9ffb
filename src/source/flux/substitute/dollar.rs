//! Where the `$`s of an object are: only a string that holds one can
//! change in substitution, and an object without one stays shared.

use std::sync::Arc;

use crate::yaml::{Node, Value};

/// Whether any string in `node`, key or value, holds a `$` (the only
/// text [`super::Cx::scalar`] expands), and if so the way to the first one into
/// `way` (empty before): its place in each collection, innermost first; in
/// a mapping `2 * entry` for a key, one more for a value. `parsed`: the
/// node at the same place of a parse no string of which holds a `$`
/// ([`crate::source::Parsed::dollar_free`]); a collection still that
/// parse's own (the same `Arc`, which the parse cache keeps alive and
/// unchanged) is passed over without a look at its strings.
pub(super) fn first_dollar(node: &Node, parsed: Option<&Node>, way: &mut Vec<usize>) -> bool {
    let at = match &node.value {
        Value::Str(s) => return holds_dollar(s),
        Value::Seq(items) => {
            let parsed = parsed.and_then(Node::as_seq);
            items
                .iter()
                .enumerate()
                .position(|(i, n)| within(n, item(parsed, i), way))
        }
        Value::Map(entries) => {
            let parsed = parsed.and_then(Node::as_map);
            entries.iter().enumerate().find_map(|(i, (k, v))| {
                if within(k, None, way) {
                    Some(2 * i)
                } else {
                    within(v, value(parsed, i), way).then_some(2 * i + 1)
                }
            })
        }
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => None,
    };
    at.map(|at| way.push(at)).is_some()
}

/// Item `i` of a parse's sequence: where a change left the item that was
/// there, [`first_dollar`] finds the same `Arc` in it.
#[inline]
pub(super) fn item(parsed: Option<&Vec<Node>>, i: usize) -> Option<&Node> {
    parsed?.get(i)
}

/// The value of entry `i` of a parse's mapping, as [`item`].
#[inline]
pub(super) fn value(parsed: Option<&[(Node, Node)]>, i: usize) -> Option<&Node> {
    parsed?.get(i).map(|(_, v)| v)
}

/// [`first_dollar`] for a child: a scalar (most of a tree's nodes, and
/// every key) is looked at here, without a call per node.
#[inline(always)]
fn within(node: &Node, parsed: Option<&Node>, way: &mut Vec<usize>) -> bool {
    match &node.value {
        Value::Str(s) => holds_dollar(s),
        Value::Seq(_) | Value::Map(_) => {
            !parsed.is_some_and(|p| same_collection(node, p)) && first_dollar(node, parsed, way)
        }
        Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => false,
    }
}

/// Whether `a` and `b` hold the one collection (not an equal copy).
fn same_collection(a: &Node, b: &Node) -> bool {
    match (&a.value, &b.value) {
        (Value::Seq(a), Value::Seq(b)) => Arc::ptr_eq(a, b),
        (Value::Map(a), Value::Map(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// [`first_dollar`] on a way of its own.
#[inline]
pub(super) fn anew(node: &Node, parsed: Option<&Node>, way: &mut Vec<usize>) -> bool {
    way.clear();
    within(node, parsed, way)
}

/// Whether `s` holds a `$`, eight bytes at a time: every string of an
/// object with one is looked at, and most are shorter than where
/// `str::contains` stops going a byte at a time. The bytes past the last
/// whole word are read as one more word, overlapping the one before (or,
/// below eight bytes, as two overlapping halves) instead of a byte at a
/// time; only a string of three bytes or fewer is.
#[inline]
pub(super) fn holds_dollar(s: &str) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const DOLLARS: u64 = u64::from_ne_bytes([b'$'; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // A byte of `x` is zero where `s` has a `$`; the test for a zero byte
    // is exact (only which byte it flags may be wrong).
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH != 0;
    let b = s.as_bytes();
    let word = |at: usize| u64::from_ne_bytes(b[at..at + 8].try_into().expect("8 bytes"));
    let half = |at: usize| u32::from_ne_bytes(b[at..at + 4].try_into().expect("4 bytes"));
    match b.len() {
        0..4 => b.contains(&b'$'),
        4..8 => {
            let halves = u64::from(half(0)) | u64::from(half(b.len() - 4)) << 32;
            zero_byte(halves ^ DOLLARS)
        }
        len => {
            (0..len / 8).any(|w| zero_byte(word(8 * w) ^ DOLLARS))
                || len % 8 != 0 && zero_byte(word(len - 8) ^ DOLLARS)
        }
    }
}
