//! Which repository a lint reads, wherever it is started: the folders or
//! files the user names only scope what is reported, while the whole
//! repository is always rendered, since a Flux Kustomization's
//! `spec.path` is resolved from the source's root (fluxcd
//! kustomize-controller `SecureJoin(dir, path)`), never from the folder
//! the command runs in.
//!
//! The root is the git top level when the Flux Kustomizations' paths
//! resolve from it (or no Flux Kustomization is near the paths given but
//! the repository holds some that do). Otherwise it is the nearest folder
//! from which they resolve: a GitOps tree pushed as an OCI artifact from
//! a subfolder (`flux push artifact --path`), whose paths start there, or
//! a repository kept inside another one. Without any, the path given.

use std::path::{Path, PathBuf};

use super::confine::read_regular;
use super::files::ReadAhead;
use super::{Limits, git};

/// The repository found for the paths a lint names.
#[derive(Debug, Clone)]
pub struct Found {
    /// The repository root, as the user gave it when it is the folder
    /// given, else absolute.
    pub root: PathBuf,
    /// The git top level, absolute; `None` outside git.
    pub top: Option<PathBuf>,
    /// `root` relative to `top` (empty at the top or outside git): reports
    /// name files from the top, as GitHub and editors resolve them.
    pub prefix: PathBuf,
    /// The paths named, relative to `root`; empty when one of them is the
    /// root itself (nothing is left out).
    pub scope: Vec<PathBuf>,
    /// Whether the root is known to be a repository's: a git top level,
    /// or a folder Flux Kustomizations' paths resolve from. Else it is
    /// only the path given, whose files are read as written.
    pub known: bool,
    /// The folder where the search for the configuration file starts,
    /// absolute: the deepest one holding every path.
    pub start: PathBuf,
}

impl Found {
    /// The bundled example, or any folder read as it is: nothing above it.
    pub fn alone(root: PathBuf) -> Found {
        Found {
            start: root.clone(),
            root,
            top: None,
            prefix: PathBuf::new(),
            scope: Vec::new(),
            known: true,
        }
    }

    /// Whether a repository path (relative to the root) is reported.
    pub fn in_scope(&self, rel: &Path) -> bool {
        self.scope.is_empty() || self.scope.iter().any(|s| rel.starts_with(s))
    }

    pub fn in_git(&self) -> bool {
        self.top.is_some()
    }
}

/// Why the repository of the paths given could not be found.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
    /// A path given does not resolve.
    #[error("{}: {source}", path.display())]
    Path {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A path given is outside the repository the first one is in.
    #[error(
        "{} is not in the repository at {}: give paths of one repository",
        given.display(),
        root.display()
    )]
    Outside { given: PathBuf, root: PathBuf },
}

/// Finds the repository of `paths` (folders or files; none: the current
/// directory).
pub fn find(paths: &[PathBuf]) -> Result<Found, RootError> {
    find_then(paths, false).map(|(found, _)| found)
}

/// [`find`], and what it read of the root when its load can take it
/// ([`crate::source::Files::reading_ahead`]): outside git, every YAML
/// file of the folder given is read to find the root, which is most often
/// that folder.
pub fn find_reading(paths: &[PathBuf]) -> Result<(Found, Option<ReadAhead>), RootError> {
    find_then(paths, true)
}

/// [`find`], reading the folder whole when `read` (see [`find_reading`]).
fn find_then(paths: &[PathBuf], read: bool) -> Result<(Found, Option<ReadAhead>), RootError> {
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut canonical = Vec::with_capacity(paths.len());
    for p in &paths {
        let c = p.canonicalize().map_err(|source| RootError::Path {
            path: p.clone(),
            source,
        })?;
        canonical.push(c);
    }
    let first_dir = dir_of(&canonical[0]);
    let top = git::top_level(&first_dir);
    // No Flux tree rooted anywhere near: the folder itself (plain
    // manifests, or a fixture kept in another repository).
    let (flux, ahead) = flux_root(&first_dir, top.as_deref(), read);
    let known = flux.is_some() || top.is_some();
    let root = flux.unwrap_or_else(|| first_dir.clone());
    // What was read of another folder than the root is of no use.
    let ahead = ahead.filter(|a| a.root() == root);
    let mut scope = Vec::new();
    for (given, c) in paths.iter().zip(&canonical) {
        let rel = c.strip_prefix(&root).map_err(|_| RootError::Outside {
            given: given.clone(),
            root: root.clone(),
        })?;
        scope.push(rel.to_path_buf());
    }
    let start = root.join(common_dir(&scope, &root));
    if scope.iter().any(|s| s.as_os_str().is_empty()) {
        scope.clear();
    }
    let prefix = top
        .as_deref()
        .and_then(|t| root.strip_prefix(t).ok())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    // The folder as given when it is the root, so that reports name it
    // as the user did.
    let shown = if root == first_dir {
        match canonical[0].is_dir() {
            true => paths[0].clone(),
            false => paths[0]
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or(PathBuf::from("."), Path::to_path_buf),
        }
    } else {
        root
    };
    let found = Found {
        root: shown,
        top,
        prefix,
        scope,
        known,
        start,
    };
    Ok((found, ahead))
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

/// The root the Flux Kustomizations' paths resolve from, for a lint of
/// `dir` in the git work tree `top` (see the module's header); `None`
/// when no Flux path near `dir` resolves. Only the existence of those
/// directories is asked of the folders above. Outside git, when `read`,
/// also what was read of `dir`: every file of it, for its load to take.
fn flux_root(dir: &Path, top: Option<&Path>, read: bool) -> (Option<PathBuf>, Option<ReadAhead>) {
    if top == Some(dir) {
        return (top.map(Path::to_path_buf), None);
    }
    // Outside git the root is `dir` whenever a path in it resolves from
    // there, and the load then lists and reads all of it: read it all
    // now, on every core, and stop only the search at the first path.
    // An editor finding the root of a file it opened loads later.
    let ahead = (read && top.is_none()).then(|| ReadAhead::of(dir, Limits::default()));
    (flux_root_of(dir, top, ahead.as_ref()), ahead)
}

/// [`flux_root`], with the files of `dir` read ahead, if they were.
fn flux_root_of(dir: &Path, top: Option<&Path>, ahead: Option<&ReadAhead>) -> Option<PathBuf> {
    // The folders a root may be: `dir` and those above it, up to the top.
    let candidates: Vec<&Path> = dir
        .ancestors()
        .take_while(|a| top.is_none_or(|t| a.starts_with(t)))
        .collect();
    // With git the top level is preferred, else the nearest folder.
    let preferred = top.unwrap_or(dir);
    let decide = |paths: &[String]| {
        if paths.iter().any(|p| resolves(preferred, p)) {
            return Some(preferred.to_path_buf());
        }
        candidates
            .iter()
            .find(|a| paths.iter().any(|p| resolves(a, p)))
            .map(|a| a.to_path_buf())
    };
    let mut paths: Vec<String> = Vec::new();
    let collect = |paths: &mut Vec<String>, p: &str| {
        paths.push(p.to_string());
        !resolves(preferred, p)
    };
    // The search stops at the first path that resolves from `preferred`,
    // as `decide` then does; so does the walk in git, whose load lists
    // the top level instead: at 100k objects, listing the rest of the
    // tree was a tenth of the run.
    match ahead {
        Some(ahead) => {
            for (rel, text) in ahead.texts() {
                let each = &mut |p: &str| collect(&mut paths, p);
                let more = match text {
                    Ok(text) => flux_paths_of(text, each),
                    // Not UTF-8 or over a budget, still searched as text.
                    Err(_) => flux_paths_in(dir, rel, each),
                };
                if !more {
                    break;
                }
            }
        }
        None => super::walk::each_yaml_file(dir, |rel| {
            flux_paths_in(dir, rel, &mut |p| collect(&mut paths, p))
        }),
    }
    if let Some(root) = decide(&paths) {
        return Some(root);
    }
    for above in candidates.iter().skip(1).take(FOLDERS_READ_ABOVE) {
        let own = std::fs::read_dir(above)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .map(|e| PathBuf::from(e.file_name()))
            .filter(|p| super::walk::is_yaml(p))
            .collect();
        for_each_flux_path(above, own, &mut |p| collect(&mut paths, p));
        if let Some(root) = decide(&paths) {
            return Some(root);
        }
    }
    // A folder with no Flux Kustomization near it (a component, plain
    // manifests): the top level, if the repository holds a Flux tree
    // rooted there.
    let top = top?;
    let mut from_top = false;
    super::walk::each_yaml_file(top, |rel| {
        flux_paths_in(top, rel, &mut |p| {
            from_top = resolves(top, p);
            !from_top
        })
    });
    from_top.then(|| top.to_path_buf())
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
    for rel in files {
        if !flux_paths_in(dir, &rel, each) {
            return;
        }
    }
}

/// [`for_each_flux_path`] of one file; false once `each` returned false.
fn flux_paths_in(dir: &Path, rel: &Path, each: &mut dyn FnMut(&str) -> bool) -> bool {
    let limit = crate::yaml::Limits::default().max_bytes;
    let Ok(bytes) = read_regular(&dir.join(rel), limit) else {
        return true;
    };
    flux_paths_of(&String::from_utf8_lossy(&bytes), each)
}

/// [`flux_paths_in`] of a file's text.
fn flux_paths_of(text: &str, each: &mut dyn FnMut(&str) -> bool) -> bool {
    if !text.contains("kustomize.toolkit.fluxcd.io") {
        return true;
    }
    for line in text.lines() {
        for value in path_values(line) {
            if !value.is_empty() && !value.contains("${") && !each(value) {
                return false;
            }
        }
    }
    true
}

/// The values of `path:` keys on one line: in block style (`path: ./a`)
/// or inside a flow mapping (`spec: {interval: 1h, path: ./a}`).
fn path_values(line: &str) -> impl Iterator<Item = &str> {
    line.match_indices("path:").filter_map(move |(at, key)| {
        let before = line[..at].trim_end();
        if !(before.is_empty() || before.ends_with(['{', ','])) {
            return None;
        }
        let rest = &line[at + key.len()..];
        let end = rest.find([',', '}']).unwrap_or(rest.len());
        let value = rest[..end].split(" #").next().unwrap_or("").trim();
        Some(value.trim_matches(|c| c == '"' || c == '\''))
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::source::Files;
    use crate::source::disk::tests::every_kind_of_entry;
    use crate::source::repo::{Repo, load_files};
    use crate::yaml::FileId;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    const KS: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n\
                      metadata: {name: a}\nspec:\n  path: ./kubernetes/apps/a/app\n";

    #[test]
    fn path_keys_are_read_in_block_and_flow_style() {
        let values = |line| path_values(line).collect::<Vec<_>>();
        assert_eq!(values("  path: ./a # the app"), ["./a"]);
        assert_eq!(
            values("spec: {interval: 1h, path: './b', prune: true}"),
            ["./b"]
        );
        assert_eq!(values("{path: ./c}"), ["./c"]);
        assert!(values("  subpath: ./d").is_empty());
        assert!(values("  fieldpath: x, mountPath: /e").is_empty());
    }

    #[test]
    fn without_git_the_root_is_where_flux_paths_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        write(&repo, "kubernetes/apps/a/ks.yaml", KS);
        write(&repo, "kubernetes/apps/a/app/hr.yaml", "kind: ConfigMap\n");
        write(
            &repo,
            "kubernetes/components/c/cm.yaml",
            "kind: ConfigMap\n",
        );
        let repo = repo.canonicalize().unwrap();
        for below in [
            "",
            "kubernetes",
            "kubernetes/apps/a",
            "kubernetes/apps/a/app",
        ] {
            let found = find(&[repo.join(below)]).unwrap();
            assert!(!found.in_git());
            assert_eq!(found.root, repo, "{below}");
            assert_eq!(found.start, repo.join(below));
            assert_eq!(found.scope.is_empty(), below.is_empty());
            assert!(found.in_scope(&Path::new(below).join("x.yaml")));
        }
        // Without git, a folder with no Flux path near it is its own root,
        // and the run says so.
        let c = repo.join("kubernetes/components/c");
        let (found, ahead) = find_reading(std::slice::from_ref(&c)).unwrap();
        assert_eq!((found.root, found.known), (c.clone(), false));
        // Its files were read ahead for its load, which reads that folder.
        assert_eq!(ahead.map(|a| a.root().to_path_buf()), Some(c));
        assert!(find(&[repo.join("kubernetes")]).unwrap().known);
        // What was read of a folder below the root is not the root's.
        let (found, ahead) = find_reading(&[repo.join("kubernetes")]).unwrap();
        assert_eq!((found.root, ahead.is_none()), (repo.clone(), true));
        assert!(find_reading(&[repo]).unwrap().1.is_some());
    }

    #[test]
    fn in_git_the_top_level_unless_the_flux_paths_start_below_it() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path().canonicalize().unwrap();
        std::fs::create_dir(top.join(".git")).unwrap();
        write(&top, "kubernetes/apps/a/ks.yaml", KS);
        write(&top, "kubernetes/apps/a/app/hr.yaml", "kind: ConfigMap\n");
        write(&top, "kubernetes/components/c/cm.yaml", "kind: ConfigMap\n");
        for below in [
            "kubernetes",
            "kubernetes/apps/a/app",
            "kubernetes/components/c",
        ] {
            let found = find(&[top.join(below)]).unwrap();
            assert_eq!(found.root, top, "{below}");
            assert_eq!(found.prefix, Path::new(""));
            assert_eq!(found.scope, [PathBuf::from(below)]);
        }
        // A tree whose paths start in its own folder (pushed as an OCI
        // artifact from there, or a repository inside this one).
        let nested = "fixtures/cluster";
        write(
            &top,
            &format!("{nested}/flux/apps.yaml"),
            &KS.replace("./kubernetes/apps/a/app", "./apps"),
        );
        write(&top, &format!("{nested}/apps/cm.yaml"), "kind: ConfigMap\n");
        let (found, ahead) = find_reading(&[top.join(nested)]).unwrap();
        assert_eq!(found.root, top.join(nested));
        // Its load leaves out what git ignores, which the search read.
        assert!(ahead.is_none());
        assert_eq!(found.prefix, Path::new(nested));
        assert!(found.scope.is_empty());
    }

    /// What a load ends with, as far as the files read can change it.
    fn outcome(repo: &Repo) -> String {
        let sources = &repo.files.sources;
        let texts: Vec<_> = (0..sources.len() as u32)
            .map(|i| (sources.path(FileId(i)), &sources.get(FileId(i)).text))
            .collect();
        format!(
            "{texts:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            repo.issues, repo.skipped, repo.fates, repo.coverage
        )
    }

    /// A load that takes what finding the root read loads what it loads
    /// reading the repository itself: the same texts, and the same
    /// refusals (a symlink or a folder link out of the repository, which
    /// neither reads, a FIFO, a file that is not UTF-8, the budget).
    #[test]
    fn a_load_taking_what_was_read_ahead_is_a_load_reading_itself() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path()).canonicalize().unwrap();
        std::fs::write(
            root.join("ks.yaml"),
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n\
             metadata: {name: db, namespace: flux-system}\nspec: {path: ./apps/db}\n",
        )
        .unwrap();
        std::fs::write(root.join("apps/latin1.yaml"), b"a: caf\xe9\n").unwrap();
        symlink("../../elsewhere/secret.yaml", root.join("apps/leak.yaml")).unwrap();
        let (found, ahead) = find_reading(std::slice::from_ref(&root)).unwrap();
        assert_eq!(found.root, root);
        let ahead = ahead.expect("outside git, the folder given is read ahead");
        let read: Vec<&Path> = ahead.texts().map(|(rel, _)| rel).collect();
        assert!(read.contains(&Path::new("apps/latin1.yaml")));
        assert!(!read.iter().any(|rel| rel.starts_with("apps/out")));
        assert!(!read.contains(&Path::new("apps/leak.yaml")));
        let itself = outcome(&load_files(Files::new(&root, Limits::default())));
        let taken = load_files(Files::new(&root, Limits::default()).reading_ahead(Some(ahead)));
        assert_eq!(outcome(&taken), itself);
        assert!(itself.contains("not valid UTF-8") && itself.contains("links outside"));
        // Nothing left to read: every file was over the budget already.
        let none = Limits {
            max_read_bytes: 0,
            ..Limits::default()
        };
        let itself = outcome(&load_files(Files::new(&root, none)));
        let ahead = ReadAhead::of(&root, none);
        let taken = load_files(Files::new(&root, none).reading_ahead(Some(ahead)));
        assert_eq!(outcome(&taken), itself);
        assert!(itself.contains("budget"));
    }
}
