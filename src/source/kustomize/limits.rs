//! The budgets of kustomize builds, which keep a chain of components or
//! overlays bounded on hostile input: a build over one is an issue at the
//! kustomization, never a hang.

/// What kustomize builds may go through and gather.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Kustomization and component directories one kustomize build may
    /// go through. A kustomization is built once per directory and reused;
    /// a component is applied every time it is listed, so a chain of
    /// components each listing the next twice doubles per level.
    pub max_builds: usize,
    /// Kustomization and component directories all the builds of one
    /// load may go through. Builds are keyed by path, so many Flux
    /// Kustomizations over small directories that each list one costly
    /// component chain would each spend `max_builds`.
    pub max_run_builds: usize,
    /// Kustomizations and components nested in one another (each level
    /// is a frame of the recursive build; real repositories nest a few).
    pub max_depth: usize,
    /// Objects one kustomize build may gather, counted each time a
    /// kustomization's objects are merged into one that lists it: a
    /// directory listed by many overlays is built once, but its objects
    /// are copied into each, so levels of overlays multiply them.
    pub max_objects: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_builds: 10_000,
            max_run_builds: 100_000,
            max_depth: 100,
            max_objects: 500_000,
        }
    }
}
