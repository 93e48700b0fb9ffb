//! Why a lint stopped before its report: one variant per cause, each
//! with the message the command line prints after `error: `. Problems
//! with one input are not here: they are `Issue`s, and the run goes on.

use std::path::PathBuf;

use crate::fix::write::WriteError;
use crate::report::control::SerializeError;
use crate::source::Issue;
use crate::source::cluster;
use crate::source::confine::Refused;
use crate::source::files::ReadError;
use crate::source::git::GitError;
use crate::source::root::RootError;
use crate::source::snapshot::SnapshotError;

/// Why a lint could not run to its report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--fix` asked of the bundled example.
    #[error("--fix writes files: give a repository path, not --example")]
    FixExample,
    /// `--fix` asked of what git holds.
    #[error("--fix writes the work tree: it cannot fix what git holds (--staged, --ref)")]
    FixHeld,
    /// `--base` with cluster state and no repository.
    #[error("--base compares two commits of a repository: give its path")]
    BaseWithoutRepository,
    /// The bundled example could not be written to a temporary folder.
    #[error("cannot unpack the bundled example repo: {0}")]
    Example(#[source] std::io::Error),
    /// The paths given name no repository.
    #[error(transparent)]
    Root(#[from] RootError),
    /// The root found is not a folder.
    #[error("{} is not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// `--staged` or `--ref` of a root whose path git cannot name.
    #[error("the root's path is not UTF-8")]
    RootNotUtf8,
    /// git's index could not be read.
    #[error("cannot read the index of {}: {source}", top.display())]
    Index {
        top: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// `--staged` or `--ref` outside a git repository.
    #[error(
        "--staged and --ref read what git holds: {} is not in a git repository",
        .0.display()
    )]
    NotInGit(PathBuf),
    /// A git command failed (a reference, the base commit, its tree).
    #[error(transparent)]
    Git(#[from] GitError),
    /// The thread listing the base commit's tree panicked.
    #[error("listing the base commit's tree failed (its thread panicked)")]
    BaseTreePanicked,
    /// A path of the repository does not resolve.
    #[error("{}: {source}", path.display())]
    Path {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The configuration file could not be read, parsed or checked
    /// against the rules.
    #[error("{0}")]
    Config(Issue),
    /// The configuration file as git holds it could not be read.
    #[error(transparent)]
    ConfigRead(#[from] ReadError),
    /// The configuration file as git holds it is not UTF-8.
    #[error("{}: file is not valid UTF-8", .0.display())]
    ConfigNotUtf8(PathBuf),
    /// The configuration file found resolves outside the repository.
    #[error("{}: {refused}", path.display())]
    ConfigOutside { path: PathBuf, refused: Refused },
    /// Rule files that do not load, one line each.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Rules(Vec<Issue>),
    /// `--snapshot` could not be read.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// The live cluster could not be read.
    #[error(transparent)]
    Cluster(#[from] cluster::Error),
    /// `--fix` could not write its changes.
    #[error(transparent)]
    Write(#[from] WriteError),
    /// The report could not be serialized.
    #[error(transparent)]
    Serialize(#[from] SerializeError),
    /// `--metrics-file` could not be written.
    #[error("cannot write metrics to {}: {source}", path.display())]
    Metrics {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The JSON report did not parse as [`crate::report::json::Report`].
    #[error("the JSON report does not read back: {0}")]
    ReadBack(#[source] serde_json::Error),
}
