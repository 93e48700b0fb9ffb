//! Reading the GitOps repo: files, kustomize and Flux rendering, and
//! HelmRelease values, into objects whose every value keeps its origin.

pub mod cluster;
pub mod commit_tree;
pub mod confine;
pub mod coverage;
pub mod data;
mod disk;
pub mod files;
pub mod flux;
pub mod git;
pub mod go_regexp;
pub mod helm;
pub mod ignored;
pub mod issue;
pub mod kustomize;
pub mod limits;
pub mod link;
pub mod live;
pub mod non_object;
pub mod object;
pub mod remote;
pub mod repo;
pub mod reuse;
pub mod root;
pub mod snapshot;
pub mod talos;
#[cfg(test)]
pub(crate) mod test_repo;
pub mod walk;

pub use crate::yaml::{PathHasher, PathKey, PathKeyMap, PathKeySet, PathMap, PathQuery, PathSet};
pub use confine::{join_within, joined};
pub use disk::DiskListings;
pub use files::Files;
pub use issue::{Budget, Gap, Issue, Listed, quoted};
pub use limits::Limits;
pub use object::{Concealed, Object, Step, StepKind};
