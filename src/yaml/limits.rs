//! The budgets that keep a load bounded on hostile input: each names what
//! it bounds, and a broken one is an issue at the file, never a hang.

/// The budgets a load of a repository enforces on what it reads: the YAML
/// reader's, and those of the kustomize builds, Flux substitution and
/// renders made of what it read (the rule engine's and the probes' live
/// with them). Defaults are far above anything seen in real GitOps repos
/// (largest corpus file: about 1 MB, depth < 40, anchors of a few hundred
/// nodes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub max_bytes: usize,
    /// Collections nested in one another, counted on the tree as aliases
    /// expand it.
    pub max_depth: usize,
    /// Nodes that anchors and aliases may copy, per file.
    pub max_alias_nodes: usize,
    /// Bytes one string may have after Flux postBuild substitution.
    pub max_subst_value_bytes: usize,
    /// Bytes that all substitution of a run may add to the strings it
    /// expands (`${V//a/${V//a/…}}` doubles per level).
    pub max_subst_growth_bytes: usize,
    /// Pattern-matching steps (value bytes x pattern elements) that the
    /// `${V#glob}` trims of a run may take.
    pub max_subst_steps: u64,
    /// Bytes of scalar text that anchors and aliases may copy, per file.
    pub max_alias_bytes: usize,
    /// Times one file may be re-read after a repair for text go-yaml
    /// accepts and the spec does not (each repair is one more parse).
    pub max_repairs: usize,
    /// Kustomization and component directories one kustomize build may
    /// go through. A kustomization is built once per directory and reused;
    /// a component is applied every time it is listed, so a chain of
    /// components each listing the next twice doubles per level.
    pub max_kustomize_builds: usize,
    /// Kustomization and component directories all the builds of one
    /// load may go through. Builds are keyed by path, so many Flux
    /// Kustomizations over small directories that each list one costly
    /// component chain would each spend `max_kustomize_builds`.
    pub max_kustomize_run_builds: usize,
    /// Kustomizations and components nested in one another (each level
    /// is a frame of the recursive build; real repositories nest a few).
    pub max_kustomize_depth: usize,
    /// Objects one kustomize build may gather, counted each time a
    /// kustomization's objects are merged into one that lists it: a
    /// directory listed by many overlays is built once, but its objects
    /// are copied into each, so levels of overlays multiply them.
    pub max_kustomize_objects: usize,
    /// Objects the Flux Kustomizations of one load may render in all:
    /// many Flux Kustomizations over one directory each render a copy.
    pub max_rendered_objects: usize,
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
            max_subst_value_bytes: 4 * 1024 * 1024,
            max_subst_growth_bytes: 64 * 1024 * 1024,
            max_subst_steps: 200_000_000,
            max_alias_bytes: 32 * 1024 * 1024,
            max_repairs: 64,
            max_kustomize_builds: 10_000,
            max_kustomize_run_builds: 100_000,
            max_kustomize_depth: 100,
            max_kustomize_objects: 500_000,
            max_rendered_objects: 500_000,
            max_object_nodes: 1_000_000,
            max_object_bytes: 32 * 1024 * 1024,
        }
    }
}
