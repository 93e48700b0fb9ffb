//! The budgets of one load: the YAML reader's, the kustomize builds' and
//! the Flux renders', each defined beside what it bounds. A load takes
//! them together; `Limits::default()` is the run's setting.

/// Every budget a load of a repository enforces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// What one file may hold, and one tree grow to.
    pub yaml: crate::yaml::Limits,
    /// What kustomize builds may go through and gather.
    pub kustomize: super::kustomize::Limits,
    /// What Flux renders and postBuild substitution may make.
    pub flux: super::flux::Limits,
}
