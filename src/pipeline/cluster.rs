//! The live stage: cluster state from a `--snapshot` and/or the live
//! cluster, merged into the repository's objects (or linted alone).

use std::path::PathBuf;

use super::{Log, Subject};
use crate::model::Model;
use crate::rules::releases::{self, Baseline};
use crate::source::{Object, cluster, link, live, snapshot};
use crate::yaml::{Limits, SourceMap};

/// Which cluster state to read.
#[derive(Debug, Clone, Default)]
pub struct ClusterRequest {
    /// Saved `kubectl get … -o yaml|json` output: a file or a directory.
    pub snapshot: Option<PathBuf>,
    /// How to read the live cluster; `None`: it is not read.
    pub live: Option<cluster::Options>,
    /// Only objects of this namespace (and cluster-scoped ones).
    pub namespace: Option<String>,
}

impl ClusterRequest {
    /// Whether any cluster state (live or snapshot) is to be read.
    pub fn wanted(&self) -> bool {
        self.snapshot.is_some() || self.live.is_some()
    }
}

/// Cluster state read for a run.
#[derive(Default)]
struct State {
    objects: Vec<Object>,
    warnings: Vec<String>,
    /// One line: what was read.
    summary: String,
}

/// Reads the cluster state and adds it to what is linted. Without
/// --base, the versions the cluster runs are what the repo's versions
/// are bumps from: the next reconcile crosses the releases in between.
pub(super) fn read_into(
    req: &ClusterRequest,
    subject: &mut Subject,
    baseline: &mut Baseline,
    log: &mut Log,
) -> Result<(), super::Error> {
    let sources = match subject {
        Subject::Repo(l) => &mut l.repo.files.sources,
        Subject::Cluster { sources, .. } => sources,
    };
    let state = collect(req, sources, log)?;
    for w in &state.warnings {
        log(&format!("warning: {w}"));
    }
    log(&state.summary);
    match subject {
        Subject::Repo(l) => {
            if !baseline.is_present() {
                *baseline = Baseline::of(
                    &Model::from_parts(&state.objects, &l.repo.files.sources),
                    releases::builtin(),
                    "running in the cluster",
                );
            }
            merge_into(&mut l.repo.objects, state, log);
            live::drop_rendered_workloads(&mut l.repo.objects);
        }
        Subject::Cluster { objects, .. } => {
            *objects = state.objects;
            live::drop_rendered_workloads(objects);
        }
    }
    Ok(())
}

/// Reads the snapshot and/or the live cluster, registering what was read
/// in `sources`.
fn collect(
    req: &ClusterRequest,
    sources: &mut SourceMap,
    log: &mut Log,
) -> Result<State, super::Error> {
    let mut state = State::default();
    if let Some(path) = &req.snapshot {
        let snap = snapshot::load(path, sources, &Limits::default())?;
        state
            .warnings
            .extend(snap.issues.iter().map(|i| i.to_string()));
        state.summary = format!(
            "snapshot: {} from {}",
            super::plural(snap.objects.len(), "object"),
            super::plural(snap.files, "file")
        );
        state.objects.extend(snap.objects);
    }
    if let Some(options) = &req.live {
        let read = cluster::read(options, sources, log)?;
        state.warnings.extend(read.warnings);
        state.summary = read.summary;
        state.objects.extend(read.objects);
    }
    if let Some(ns) = &req.namespace {
        state
            .objects
            .retain(|o| o.namespace().is_none_or(|n| n == ns));
    }
    state.objects = live::lintable(std::mem::take(&mut state.objects));
    Ok(state)
}

/// Adds live objects to the repo's: see [`link::merge`].
fn merge_into(repo_objects: &mut Vec<Object>, state: State, log: &mut Log) {
    let total = state.objects.len();
    let merged = link::merge(repo_objects, state.objects);
    log(&format!(
        "linked {} of {} live objects to their declarations in the repository",
        merged.linked, total
    ));
}
