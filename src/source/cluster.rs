//! Reading a live cluster with kube-rs.

use std::path::PathBuf;
use std::time::Duration;

use super::Object;
use crate::yaml::SourceMap;

/// How to reach the cluster and what to read.
#[derive(Clone, Debug)]
pub struct Options {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    pub namespace: Option<String>,
    pub timeout: Duration,
    pub verbose: u8,
    pub progress: bool,
}

/// What was read.
#[derive(Debug, Default)]
pub struct Read {
    pub objects: Vec<Object>,
    pub warnings: Vec<String>,
    pub summary: String,
}

/// Why the cluster could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Not built yet.
    #[error("reading a live cluster is not implemented yet")]
    Unimplemented,
}

pub fn read(_options: &Options, _sources: &mut SourceMap) -> Result<Read, Error> {
    Err(Error::Unimplemented)
}
