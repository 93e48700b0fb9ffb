//! What a run on some folders or files of a repository reports: the
//! whole repository is read, but only what is under the paths given is
//! shown and counted.

use std::path::Path;

use crate::model::Model;
use crate::rules::Finding;
use crate::source::repo::Repo;
use crate::source::root::Found;
use crate::source::{Issue, Object};
use crate::yaml::SourceMap;

/// Whether an input problem is about a file under the paths reported
/// (one with no file, about the run, always is).
pub(super) fn issue_in_scope(issue: &Issue, scope: Option<&Found>) -> bool {
    issue.path.is_empty()
        || Path::new(&issue.path).is_absolute()
        || scope.is_none_or(|f| f.in_scope(Path::new(&issue.path)))
}

/// The subjects (object ids) of undecided lines to show: those of objects
/// written under the paths reported.
pub(super) fn undecided_in_scope(
    model: &Model,
    found: &Found,
) -> std::collections::HashSet<String> {
    model
        .objects
        .iter()
        .filter(|o| found.in_scope(model.sources.path(o.file)))
        .map(Object::id)
        .collect()
}

/// Whether a finding is reported for the paths given: when any of its
/// places is under one (a database in one folder and the app that uses
/// it in another).
pub(super) fn finding_in_scope(f: &Finding, sources: &SourceMap, scope: Option<&Found>) -> bool {
    scope.is_none_or(|found| {
        std::iter::once(&f.primary)
            .chain(&f.related)
            .any(|l| found.in_scope(sources.path(l.span.file)))
    })
}

/// A folder read as a repository of its own (no git, no Flux path
/// resolving near it) that holds Flux's objects is most likely part of
/// a repository the run does not see: said, so that a quiet run there
/// is not taken for a clean one.
pub(super) fn warn_if_read_alone(repo: &mut Repo, found: &Found) {
    let flux_shaped = repo
        .objects
        .iter()
        .any(|o| o.group().ends_with(".toolkit.fluxcd.io"));
    if found.known || !flux_shaped {
        return;
    }
    repo.issues.push(Issue::file(
        &found.root,
        "not in a git checkout, and no Flux Kustomization in this folder or just above it \
         has a spec.path that resolves from here: its files are read as written, as a \
         repository of their own, not as Flux renders them. Lint the repository's root \
         (in a git checkout, a subfolder given then only scopes what is reported)",
    ));
}
