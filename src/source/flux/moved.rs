//! Trees moved away from where their paths start: an old cluster kept
//! under `archive/`, whose Flux Kustomizations still name paths from the
//! repository root (`./cluster/apps` for what is now
//! `archive/cluster/apps`).
//!
//! A GitRepository's artifact is the whole repository (source-controller
//! archives the checkout from its root) and kustomize-controller joins
//! `spec.path` to the artifact's root (`securejoin.SecureJoin(tmpDir,
//! path)`, failing with "kustomization path not found" when it is not
//! there). So when a GitRepository is known to be this repository from
//! its root, a path that is a directory only from a folder above the
//! Kustomization's own file is no directory Flux finds: the Kustomization
//! fails, and nothing under that folder is applied through it. Such a
//! source's root is never guessed to be that folder, and the moved
//! Kustomizations are not taken for a cluster's roots.

use std::path::{Path, PathBuf};

use super::foreign::normalized;
use super::sources::source_of;
use super::tree::{DocId, doc_id};
use crate::source::{Files, Object, PathMap, PathSet, join_within};

/// The GitRepositories (`GitRepository/<name>`) known to be this
/// repository from its root: those some written Flux Kustomization builds
/// a directory of the repository root from, and those whose every
/// written URL is one of theirs (tvories/k8s-gitops: an archived
/// `flux-system` of the same URL as the live `k8s-gitops`).
pub(super) fn rooted_sources(
    files: &Files,
    written: &[Object],
    git_repos: &[Object],
    foreign: &PathSet<String>,
) -> PathSet<String> {
    let git_sources = || {
        written
            .iter()
            .map(|ks| (ks, source_of(ks)))
            .filter(|(_, s)| s.starts_with("GitRepository/") && !foreign.contains(s))
    };
    // Most Flux Kustomizations build from one source: a source found
    // rooted asks nothing of the rest of its own.
    let mut rooted: PathSet<String> = PathSet::default();
    for (ks, s) in git_sources() {
        if !rooted.contains(&s) && at_root(ks).is_some_and(|p| files.is_dir(&p)) {
            rooted.insert(s);
        }
    }
    let mut urls: PathMap<String, PathSet<String>> = PathMap::default();
    for g in git_repos {
        if let Some(url) = g.root.str_at(&["spec", "url"]).and_then(normalized) {
            urls.entry(format!("GitRepository/{}", g.name()))
                .or_default()
                .insert(url);
        }
    }
    let rooted_urls: PathSet<&String> = rooted
        .iter()
        .filter_map(|s| urls.get(s))
        .flatten()
        .collect();
    let same_url = |s: &String| {
        urls.get(s)
            .is_some_and(|u| u.iter().all(|u| rooted_urls.contains(u)))
    };
    let mut out = rooted.clone();
    out.extend(git_sources().map(|(_, s)| s).filter(same_url));
    out
}

/// `spec.path` of a Flux Kustomization from the repository root; `None`
/// for the root itself (every repository has one: it proves nothing),
/// a path a variable still makes, or one leaving the repository.
fn at_root(ks: &Object) -> Option<PathBuf> {
    let raw = ks.root.str_at(&["spec", "path"])?;
    if raw.contains("${") {
        return None;
    }
    join_within(Path::new(""), raw.trim_start_matches('/')).filter(|p| !p.as_os_str().is_empty())
}

/// A Flux Kustomization whose tree was moved.
#[derive(Clone, Debug)]
pub(super) struct Moved {
    /// The directory its path names from the folder it was moved to.
    pub path: PathBuf,
    /// Why Flux applies nothing through it, in words.
    pub why: String,
}

/// The written Flux Kustomizations of the sources `rooted` (this
/// repository, from its root) whose path is no directory from the root
/// but is one from a folder above their own file.
pub(super) fn find(
    files: &Files,
    written: &[Object],
    rooted: &PathSet<String>,
) -> PathMap<DocId, Moved> {
    let mut out = PathMap::default();
    for ks in written {
        let source = source_of(ks);
        if !rooted.contains(&source) {
            continue;
        }
        let Some(from_root) = at_root(ks) else {
            continue;
        };
        if files.is_dir(&from_root) {
            continue;
        }
        let raw = ks.root.str_at(&["spec", "path"]).unwrap_or_default();
        let own_dir = files
            .sources
            .path(ks.file)
            .parent()
            .unwrap_or(Path::new(""));
        let found = own_dir
            .ancestors()
            .filter(|b| !b.as_os_str().is_empty())
            .find_map(|base| {
                let p = join_within(base, raw.trim_start_matches('/'))?;
                files.is_dir(&p).then(|| (base.to_path_buf(), p))
            });
        if let Some((base, path)) = found {
            let why = format!(
                "it builds '{raw}' of {source}, which is this repository (read from its root), \
                 where that is no directory; '{raw}' is one from {}/, a tree moved there that \
                 keeps its old paths, so Flux would fail it (kustomization path not found) and \
                 applies nothing through it",
                base.display()
            );
            out.insert(doc_id(ks), Moved { path, why });
        }
    }
    out
}
