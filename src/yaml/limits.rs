//! The YAML reader's budgets, which keep a parse and the trees made of it
//! bounded on hostile input: each names what it bounds, and a broken one
//! is an issue at the file, never a hang.

/// The budgets the YAML reader enforces on what it reads, and those on
/// the size of one tree (which [`super::Size`] counts). The budgets of
/// the builds made of what was read live with those builds (see
/// `source::Limits`). Defaults are far above anything seen in real
/// GitOps repos (largest corpus file: about 1 MB, depth < 40, anchors of
/// a few hundred nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: usize,
    /// Collections nested in one another, counted on the tree as aliases
    /// expand it.
    pub max_depth: usize,
    /// Nodes that anchors and aliases may copy, per file.
    pub max_alias_nodes: usize,
    /// Bytes of scalar text that anchors and aliases may copy, per file.
    pub max_alias_bytes: usize,
    /// Times one file may be re-read after a repair for text go-yaml
    /// accepts and the spec does not (each repair is one more parse).
    pub max_repairs: usize,
    /// Nodes one object may reach through JSON 6902 `copy` operations and
    /// `replacements` (each can copy an object into itself); depth is
    /// held to `max_depth` there too.
    pub max_object_nodes: usize,
    /// Bytes of scalar text one object may reach the same way.
    pub max_object_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 16 * 1024 * 1024,
            max_depth: 256,
            max_alias_nodes: 1_000_000,
            max_alias_bytes: 32 * 1024 * 1024,
            max_repairs: 64,
            max_object_nodes: 1_000_000,
            max_object_bytes: 32 * 1024 * 1024,
        }
    }
}
