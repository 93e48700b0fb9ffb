//! The budgets of one load together: the YAML reader's, the kustomize
//! builds' and the Flux renders', one file each, and the disk reads'.
//! `Limits::default()` is the run's setting. They sit below the stages
//! they bound: the file reader carries them to every stage, and so uses
//! none of the stages.

pub mod flux;
pub mod kustomize;

/// Every budget a load of a repository enforces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// What one file may hold, and one tree grow to.
    pub yaml: crate::yaml::Limits,
    /// What kustomize builds may go through and gather.
    pub kustomize: kustomize::Limits,
    /// What Flux renders and postBuild substitution may make.
    pub flux: flux::Limits,
    /// Bytes all the reads of one load from the disk may take. Each file
    /// is held to `yaml.max_bytes`, and the walk reads a file once however
    /// many links reach it; this bounds the sum, so that many large files
    /// cannot take the memory their parse needs (the run holds about ten
    /// times the text). Real repositories read a few megabytes (the
    /// largest of the corpus, 5.4 MB).
    pub max_read_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            yaml: Default::default(),
            kustomize: Default::default(),
            flux: Default::default(),
            max_read_bytes: 256 << 20,
        }
    }
}
