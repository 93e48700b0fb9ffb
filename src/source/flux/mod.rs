//! Flux semantics that change what the cluster receives: postBuild
//! variable substitution, and reading ConfigMap/Secret keys as the API
//! server would store them (shared with HelmRelease `valuesFrom`).

pub mod artifact;
pub mod bootstrap;
pub mod data;
mod envsubst;
pub mod foreign;
mod goyaml_v2;
pub mod substitute;

pub use data::DataValue;
pub use envsubst::Budget;
pub use substitute::{Var, Vars, budget, collect_vars, substitute};
