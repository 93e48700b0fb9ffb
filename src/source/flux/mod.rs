//! Flux semantics that change what the cluster receives: postBuild
//! variable substitution, and reading ConfigMap/Secret keys as the API
//! server would store them (shared with HelmRelease `valuesFrom`).

pub mod artifact;
pub mod data;
pub mod substitute;

pub use data::DataValue;
pub use substitute::{Var, Vars, collect_vars, substitute};
