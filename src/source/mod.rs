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

/// The hasher of the maps keyed by repository paths, and by names in
/// them: std's SipHash over `Path` was 13 % of the main thread at 100k
/// objects. foldhash is as fast as FxHash on short keys and, seeded per
/// process as std's is, no repository can choose paths that collide.
pub type PathHasher = foldhash::fast::RandomState;
/// A map keyed by repository paths (or names in them), with [`PathHasher`].
pub type PathMap<K, V> = std::collections::HashMap<K, V, PathHasher>;
/// A set of repository paths (or names in them), with [`PathHasher`].
pub type PathSet<K> = std::collections::HashSet<K, PathHasher>;

pub use confine::join_within;
pub use files::Files;
pub use issue::{Budget, Gap, Issue, Listed};
pub use limits::Limits;
pub use object::{Concealed, Object, Step, StepKind};
