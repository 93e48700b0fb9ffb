//! Which Flux sources are this repository, and where each one's root is:
//! a Flux Kustomization's `spec.path` is read from its source's root.

use std::path::{Path, PathBuf};

use super::tree::FluxTree;
use crate::source::{Files, Issue, Object, join_within};

impl FluxTree {
    /// The sources that are this repository: those a Flux Kustomization
    /// builds a directory of the repository from (flux bootstrap names its
    /// own `flux-system`), and artifacts generated from them. A source
    /// used only with `path: ./` (flux's own manifests from an
    /// OCIRepository) proves nothing: every repository has a root.
    pub(super) fn find_local_sources(
        &mut self,
        files: &Files,
        written: &[Object],
        issues: &mut Vec<Issue>,
    ) {
        for ks in written {
            let source = source_of(ks);
            if self.artifacts.knows(&source) || self.foreign.contains(&source) {
                continue;
            }
            let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
            let trivial = join_within(Path::new(""), raw.trim_start_matches('/'))
                .is_none_or(|p| p.as_os_str().is_empty());
            let named_bootstrap = source.ends_with("/flux-system");
            if named_bootstrap
                || (!trivial
                    && !raw.contains("${")
                    && self.ks_path(files, ks).is_some_and(|p| files.is_dir(&p)))
            {
                self.local.insert(source);
            }
        }
        for ks in written {
            let source = source_of(ks);
            let from = self.artifacts.sources_of(&source);
            if !from.is_empty() && from.iter().all(|s| self.local.contains(*s)) {
                self.local.insert(source);
            }
        }
        if self.local.is_empty() && !written.is_empty() {
            issues.push(Issue::file(
                files.sources.path(written[0].file),
                "no Flux Kustomization of the repository builds one of its directories: \
                 every source is taken to be this repository",
            ));
            self.local.extend(written.iter().map(source_of));
        }
    }

    /// `spec.path` of a Flux Kustomization, relative to the repo root.
    /// Flux reads it relative to the source's root, which is the repo root
    /// for a GitRepository but may be a subdirectory for an OCI artifact
    /// (`flux push artifact --path=./kubernetes`): when the path is not a
    /// directory from the repo root, the nearest ancestor of the
    /// Kustomization's own file under which it is becomes the source's
    /// root. `None` when a variable in the path is unresolved.
    pub(super) fn ks_path(&mut self, files: &Files, ks: &Object) -> Option<PathBuf> {
        let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
        if raw.contains("${") {
            return None;
        }
        let raw = raw.trim_start_matches('/');
        let source = source_of(ks);
        if self.artifacts.knows(&source) {
            let in_artifact = join_within(Path::new(""), raw)?;
            let found = self.artifacts.resolve(&source, &in_artifact)?.ok()?;
            let path = found.path.display().to_string();
            return self.in_source(files, &found.source, &path, ks);
        }
        self.in_source(files, &source, raw, ks)
    }

    /// A path of the source `source`, relative to the repo root.
    pub(super) fn in_source(
        &mut self,
        files: &Files,
        source: &str,
        raw: &str,
        ks: &Object,
    ) -> Option<PathBuf> {
        if let Some(base) = self.source_roots.get(source) {
            return path_in_source(files, source, base, raw);
        }
        let source = source.to_string();
        let at_root = join_within(Path::new(""), raw)?;
        if files.is_dir(&at_root) {
            self.source_roots.insert(source, PathBuf::new());
            return Some(at_root);
        }
        let own_dir = files
            .sources
            .path(ks.file)
            .parent()
            .unwrap_or(Path::new(""));
        for base in own_dir.ancestors().filter(|b| !b.as_os_str().is_empty()) {
            if let Some(p) = join_within(base, raw).filter(|p| files.is_dir(p)) {
                // Right for an artifact pushed from a subdirectory (`flux
                // push artifact --path`); a GitRepository is the whole
                // repository, so said: if it is this one, Flux fails the
                // path as not found.
                if source.starts_with("GitRepository/") {
                    let span = ks
                        .root
                        .path(&["spec", "path"])
                        .map_or(ks.root.span(), |n| n.span());
                    self.guessed_roots.push(Issue::at(
                        &files.sources,
                        span,
                        format!(
                            "path '{raw}' is not a directory from the repository root, but is \
                             from {}: {source} is read as a repository whose root is that \
                             directory; if it is this repository, Flux fails with path not found",
                            base.display()
                        ),
                    ));
                }
                self.source_roots.insert(source, base.to_path_buf());
                return Some(p);
            }
        }
        Some(at_root)
    }

    pub(super) fn ks_path_text(&self, files: &Files, ks: &Object) -> Option<PathBuf> {
        let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
        let source = source_of(ks);
        let base = self.source_roots.get(&source)?;
        path_in_source(files, &source, base, raw.trim_start_matches('/'))
    }
}

/// `raw`, a Flux Kustomization's `spec.path` (no leading `/`), in the
/// source `source` whose root was found at `base`. A GitRepository is the
/// whole repository: a root guessed for one Kustomization (an old copy of
/// the cluster under `archive/`, whose paths are from there) does not move
/// a path that is a directory from the repository's root, as the live
/// cluster's are.
pub fn path_in_source(files: &Files, source: &str, base: &Path, raw: &str) -> Option<PathBuf> {
    if source.starts_with("GitRepository/")
        && !base.as_os_str().is_empty()
        && let Some(at_root) = join_within(Path::new(""), raw).filter(|p| files.is_dir(p))
    {
        return Some(at_root);
    }
    join_within(base, raw)
}

/// `kind/name` of the source a Flux Kustomization builds from.
pub fn source_of(ks: &Object) -> String {
    // Asked several times per Flux Kustomization rendered: one walk to
    // `sourceRef` and no formatting machinery.
    let source = ks.root.path(&["spec", "sourceRef"]);
    let field = |key: &str| source.and_then(|s| s.str_at(&[key])).unwrap_or("");
    let (kind, name) = (field("kind"), field("name"));
    let mut out = String::with_capacity(kind.len() + 1 + name.len());
    out.push_str(kind);
    out.push('/');
    out.push_str(name);
    out
}
