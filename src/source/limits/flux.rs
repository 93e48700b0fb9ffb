//! The budgets of Flux renders and postBuild substitution, which keep
//! them bounded on hostile input: a render over one is an issue at the
//! Flux Kustomization, never a hang.

/// What Flux renders and postBuild substitution may make.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes one string may have after Flux postBuild substitution.
    pub max_subst_value_bytes: usize,
    /// Bytes that all substitution of a run may add to the strings it
    /// expands (`${V//a/${V//a/…}}` doubles per level).
    pub max_subst_growth_bytes: usize,
    /// Pattern-matching steps (value bytes x pattern elements) that the
    /// `${V#glob}` trims of a run may take.
    pub max_subst_steps: u64,
    /// Objects the Flux Kustomizations of one load may render in all:
    /// many Flux Kustomizations over one directory each render a copy.
    pub max_rendered_objects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_subst_value_bytes: 4 * 1024 * 1024,
            max_subst_growth_bytes: 64 * 1024 * 1024,
            max_subst_steps: 200_000_000,
            max_rendered_objects: 500_000,
        }
    }
}
