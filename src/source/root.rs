//! Which repository a lint reads, wherever it is started: the folders or
//! files the user names only scope what is reported, while the whole
//! repository is always rendered, since a Flux Kustomization's
//! `spec.path` is resolved from the source's root (fluxcd
//! kustomize-controller `SecureJoin(dir, path)`), never from the folder
//! the command runs in.

use std::path::{Path, PathBuf};

use super::confine::read_regular;
use super::git;

/// The repository found for the paths a lint names.
#[derive(Debug, Clone)]
pub struct Found {
    /// The repository root: the git top level, or without git the nearest
    /// ancestor holding a Flux root (else the path itself, as given).
    pub root: PathBuf,
    /// Whether `root` is a git work tree's top level.
    pub in_git: bool,
    /// The paths named, relative to `root`; empty when one of them is the
    /// root itself (nothing is left out).
    pub scope: Vec<PathBuf>,
    /// The directory, relative to `root`, where the search for the
    /// configuration file starts: the deepest folder holding every path.
    pub start: PathBuf,
}

impl Found {
    /// Whether a repository path (relative to the root) is reported.
    pub fn in_scope(&self, rel: &Path) -> bool {
        self.scope.is_empty() || self.scope.iter().any(|s| rel.starts_with(s))
    }
}

/// Finds the repository of `paths` (folders or files; none: the current
/// directory).
pub fn find(paths: &[PathBuf]) -> Result<Found, String> {
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut canonical = Vec::with_capacity(paths.len());
    for p in &paths {
        let c = p
            .canonicalize()
            .map_err(|e| format!("{}: {e}", p.display()))?;
        canonical.push(c);
    }
    let first_dir = dir_of(&canonical[0]);
    let (root, shown_root, in_git) = match git::top_level(&first_dir) {
        Some(top) => (top.clone(), top, true),
        None => {
            let given = if canonical[0].is_dir() {
                paths[0].clone()
            } else {
                paths[0]
                    .parent()
                    .map_or(PathBuf::from("."), Path::to_path_buf)
            };
            match flux_root_above(&first_dir) {
                // The path as given when it is the root, so that reports
                // name it as the user did.
                Some(r) if r != first_dir => (r.clone(), r, false),
                _ => (first_dir.clone(), given, false),
            }
        }
    };
    let mut scope = Vec::new();
    for (given, c) in paths.iter().zip(&canonical) {
        let rel = c.strip_prefix(&root).map_err(|_| {
            format!(
                "{} is not in the repository at {}: give paths of one repository",
                given.display(),
                root.display()
            )
        })?;
        scope.push(rel.to_path_buf());
    }
    let start = common_dir(&scope, &root);
    if scope.iter().any(|s| s.as_os_str().is_empty()) {
        scope.clear();
    }
    Ok(Found {
        root: shown_root,
        in_git,
        scope,
        start,
    })
}

fn dir_of(p: &Path) -> PathBuf {
    if p.is_dir() {
        p.to_path_buf()
    } else {
        p.parent()
            .map_or_else(|| p.to_path_buf(), Path::to_path_buf)
    }
}

/// The deepest folder (relative to `root`) that holds every path.
fn common_dir(scope: &[PathBuf], root: &Path) -> PathBuf {
    let dirs: Vec<PathBuf> = scope
        .iter()
        .map(|s| match root.join(s).is_dir() {
            true => s.clone(),
            false => s.parent().map_or_else(PathBuf::new, Path::to_path_buf),
        })
        .collect();
    let mut common = dirs.first().cloned().unwrap_or_default();
    for d in &dirs[1..] {
        while !d.starts_with(&common) {
            if !common.pop() {
                break;
            }
        }
    }
    common
}

/// Folders above the given one whose own YAML files (not their
/// subfolders') are read for a Flux Kustomization's `spec.path`, when
/// the folder holds none (an app's `app` folder, whose `ks.yaml` is in
/// the folder above): a few, and never a whole tree that may not be the
/// repository's.
const FOLDERS_READ_ABOVE: usize = 3;

/// Without git: the nearest ancestor of `dir` (itself included) from
/// which a `spec.path` of a Flux Kustomization written in the files of
/// `dir` (or, failing those, directly in the few folders above) is a
/// directory, as Flux resolves it from the source's root. Only the
/// existence of those directories is asked of the folders above; `None`
/// when no path resolves anywhere.
fn flux_root_above(dir: &Path) -> Option<PathBuf> {
    let mut paths: Vec<String> = Vec::new();
    let mut found_here = false;
    let (files, _) = super::walk::yaml_files(dir);
    for_each_flux_path(dir, files, &mut |p| {
        paths.push(p.to_string());
        // Nothing is nearer than the folder itself.
        found_here = resolves(dir, p);
        !found_here
    });
    if found_here {
        return Some(dir.to_path_buf());
    }
    for above in dir.ancestors().skip(1).take(FOLDERS_READ_ABOVE) {
        if !paths.is_empty() {
            break;
        }
        let own = std::fs::read_dir(above)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| PathBuf::from(e.file_name()))
            .filter(|p| super::walk::is_yaml(p))
            .collect();
        for_each_flux_path(above, own, &mut |p| {
            paths.push(p.to_string());
            true
        });
    }
    dir.ancestors()
        .find(|a| paths.iter().any(|p| resolves(a, p)))
        .map(Path::to_path_buf)
}

fn resolves(root: &Path, raw: &str) -> bool {
    super::join_within(Path::new(""), raw)
        .filter(|p| !p.as_os_str().is_empty())
        .is_some_and(|p| root.join(p).is_dir())
}

/// Calls `each` with every `path:` of a Flux Kustomization in `files`
/// (relative to `dir`) until it returns false. A text scan, not a parse:
/// it only picks a candidate root, which the render then uses as any other.
fn for_each_flux_path(dir: &Path, files: Vec<PathBuf>, each: &mut dyn FnMut(&str) -> bool) {
    let limit = crate::yaml::Limits::default().max_bytes;
    for rel in files {
        let Ok(bytes) = read_regular(&dir.join(&rel), limit) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        if !text.contains("kustomize.toolkit.fluxcd.io") {
            continue;
        }
        for line in text.lines() {
            let Some(value) = line.trim_start().strip_prefix("path:") else {
                continue;
            };
            let value = value.split(" #").next().unwrap_or("").trim();
            let value = value.trim_matches(|c| c == '"' || c == '\'');
            if !value.is_empty() && !value.contains("${") && !each(value) {
                return;
            }
        }
    }
}

/// The configuration file that applies: the closest `name` from `start`
/// (relative to the root) up to the root, as `exists` finds them.
pub fn closest_config(start: &Path, name: &str, exists: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    start
        .ancestors()
        .map(|d| d.join(name))
        .find(|candidate| exists(candidate))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    const KS: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n\
                      metadata: {name: a}\nspec:\n  path: ./kubernetes/apps/a/app\n";

    #[test]
    fn without_git_the_root_is_where_flux_paths_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        write(&repo, "kubernetes/apps/a/ks.yaml", KS);
        write(&repo, "kubernetes/apps/a/app/hr.yaml", "kind: ConfigMap\n");
        let repo = repo.canonicalize().unwrap();
        for below in [
            "",
            "kubernetes",
            "kubernetes/apps/a",
            "kubernetes/apps/a/app",
        ] {
            let found = find(&[repo.join(below)]).unwrap();
            assert!(!found.in_git);
            assert_eq!(found.root, repo, "{below}");
            assert_eq!(found.start, Path::new(below));
            assert_eq!(found.scope.is_empty(), below.is_empty());
            assert!(found.in_scope(&Path::new(below).join("x.yaml")));
        }
        // A folder with no Flux path anywhere near is its own root.
        write(dir.path(), "plain/cm.yaml", "kind: ConfigMap\n");
        let plain = dir.path().join("plain");
        assert_eq!(find(std::slice::from_ref(&plain)).unwrap().root, plain);
    }

    #[test]
    fn the_closest_configuration_wins() {
        let have = ["kubernetes/.c", ".c"];
        let exists = |p: &Path| have.iter().any(|h| Path::new(h) == p);
        assert_eq!(
            closest_config(Path::new("kubernetes/main"), ".c", exists),
            Some(PathBuf::from("kubernetes/.c"))
        );
        assert_eq!(
            closest_config(Path::new("other"), ".c", exists),
            Some(PathBuf::from(".c"))
        );
    }
}
