//! How big a tree is, for the budgets on what patches, replacements and
//! merges build: a JSON 6902 `copy` or a replacement can copy an object
//! into itself, doubling it per operation, so a few hundred bytes of
//! patch would otherwise ask for terabytes.

use super::limits::Limits;
use super::node::{Node, Value};

/// Nodes, scalar bytes (keys included) and nesting depth of a tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Size {
    pub nodes: usize,
    pub bytes: usize,
    pub depth: usize,
}

impl Size {
    /// Counted without recursion (a tree grown by copies may be deeper
    /// than the stack allows); counting stops once past `limits`, so the
    /// cost is bounded by the budget, not by the tree.
    pub fn of(node: &Node, limits: &Limits) -> Size {
        let mut size = Size::default();
        // Room for a manifest's pending branches from the start: grown
        // from one, the stack was reallocated five or six times a tree
        // (0.9 M instructions of joryirving__home-ops' patches).
        let mut stack = Vec::with_capacity(64);
        stack.push((node, 1));
        while let Some((n, depth)) = stack.pop() {
            size.nodes += 1;
            size.depth = size.depth.max(depth);
            match &n.value {
                Value::Str(s) => size.bytes += s.len(),
                Value::Seq(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
                Value::Map(entries) => {
                    for (k, v) in entries.iter() {
                        size.nodes += 1;
                        size.bytes += k.as_str().map_or(0, str::len);
                        stack.push((v, depth + 1));
                    }
                }
                _ => {}
            }
            if size.over(limits).is_some() {
                break;
            }
        }
        size
    }

    /// Adds a tree of size `other` placed `at` levels below the root.
    pub fn grow(&mut self, other: Size, at: usize) {
        self.nodes = self.nodes.saturating_add(other.nodes);
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.depth = self.depth.max(at.saturating_add(other.depth));
    }

    /// Takes off a tree of size `other` that was removed. The depth stays:
    /// an upper bound, as the deepest branch may remain.
    pub fn shrink(&mut self, other: Size) {
        self.nodes = self.nodes.saturating_sub(other.nodes);
        self.bytes = self.bytes.saturating_sub(other.bytes);
    }

    /// What of `limits` this size is past, said for the user.
    pub fn over(&self, limits: &Limits) -> Option<String> {
        if self.nodes > limits.max_object_nodes {
            Some(format!("more than {} nodes", limits.max_object_nodes))
        } else if self.bytes > limits.max_object_bytes {
            Some(format!(
                "more than {} bytes of text",
                limits.max_object_bytes
            ))
        } else if self.depth > limits.max_depth {
            Some(format!("more than {} levels of nesting", limits.max_depth))
        } else {
            None
        }
    }
}
