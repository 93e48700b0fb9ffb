//! Reading the GitOps repo: files, kustomize and Flux rendering, and
//! HelmRelease values, into objects whose every value keeps its origin.

pub mod cluster;
pub mod files;
pub mod flux;
pub mod helm;
pub mod kustomize;
pub mod link;
pub mod live;
pub mod object;
pub mod repo;
pub mod snapshot;
pub mod walk;

pub use files::{Files, Issue, join_within};
pub use object::{Object, Step, StepKind};
