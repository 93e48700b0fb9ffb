//! Flux's renderer: the tree of Flux Kustomizations ([`tree`]), each one's
//! render ([`render`]) and Flux-level steps ([`steps`]), and the Flux
//! semantics that change what the cluster receives: postBuild variable
//! substitution, and reading ConfigMap/Secret keys as the API server would
//! store them (shared with HelmRelease `valuesFrom`).

pub mod artifact;
mod batch;
pub mod bootstrap;
mod envsubst;
pub mod foreign;
mod goyaml_v2;
mod joined;
pub(crate) mod layer;
mod moved;
mod patches;
mod render;
mod sources;
mod steps;
pub mod substitute;
pub(crate) mod tree;
pub mod webhook;

pub use crate::source::limits::flux::Limits;
pub use envsubst::Budget;
pub use sources::{path_in_source, source_of};
pub use substitute::{Origins, Var, Vars, budget, collect_vars, substitute};
