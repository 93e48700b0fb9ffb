//! What a lint reads its objects from: a repository, or cluster state.

use std::path::Path;

use super::Loaded;
use crate::model::Model;
use crate::source::Object;
use crate::source::repo::Repo;
use crate::source::root::Found;
use crate::yaml::SourceMap;

/// What is linted: a repository (cluster state merged into it), or
/// cluster state alone.
pub(super) enum Subject {
    Repo(Box<Loaded>),
    Cluster {
        objects: Vec<Object>,
        sources: SourceMap,
    },
}

impl Subject {
    pub(super) fn root(&self) -> Option<&Path> {
        match self {
            Subject::Repo(l) => Some(l.repo.files.root()),
            Subject::Cluster { .. } => None,
        }
    }

    /// The repository found and what of it is reported.
    pub(super) fn found(&self) -> Option<&Found> {
        match self {
            Subject::Repo(l) => Some(&l.found),
            Subject::Cluster { .. } => None,
        }
    }

    pub(super) fn repo_mut(&mut self) -> Option<&mut Repo> {
        match self {
            Subject::Repo(l) => Some(&mut l.repo),
            Subject::Cluster { .. } => None,
        }
    }

    /// Forgets the objects and texts without freeing them; the bundled
    /// example's temporary directory is still removed.
    pub(super) fn leave_to_exit(self) {
        match self {
            Subject::Repo(loaded) => {
                let Loaded { repo, _example, .. } = *loaded;
                std::mem::forget(repo);
                drop(_example);
            }
            Subject::Cluster { objects, sources } => {
                std::mem::forget(objects);
                std::mem::forget(sources);
            }
        }
    }

    pub(super) fn model(&self) -> Model<'_> {
        match self {
            Subject::Repo(l) => Model::new(&l.repo),
            Subject::Cluster { objects, sources } => Model::from_parts(objects, sources),
        }
    }
}
