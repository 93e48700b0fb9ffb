//! Finding the YAML files of a repository.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Issue;
use super::confine::{Refused, Root};
use super::ignored::Ignored;

/// Every `.yaml`/`.yml` file below `root`, repo-relative and sorted, plus
/// an issue per entry that could not be read (a symlink loop, a directory
/// without permission, a symlink that leaves the repository: reported
/// where it is and not entered). Hidden directories (`.git`, `.github`)
/// hold no manifests Flux applies, so they are not entered.
///
/// Each directory and file is visited once, by its identity (device and
/// inode): a second path to it through a symlink is an issue naming the
/// first, and is not entered or listed. Symlinks that stay in the
/// repository can otherwise form a DAG whose paths double per level (two
/// links in each of 20 directories: a million paths to one file) or make
/// one large file count a hundred times.
pub fn yaml_files(root: &Path) -> (Vec<PathBuf>, Vec<Issue>) {
    yaml_files_except(root, &Ignored::default())
}

/// [`yaml_files`] without what git ignores (not entered either).
pub fn yaml_files_except(root: &Path, ignored: &Ignored) -> (Vec<PathBuf>, Vec<Issue>) {
    let mut files = Vec::new();
    let mut issues = Vec::new();
    let mut seen: HashMap<(u64, u64), PathBuf> = HashMap::new();
    let confined = Root::new(root);
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_name().to_string_lossy().starts_with('.')
                    || ignored.covers(e.path().strip_prefix(root).unwrap_or(e.path())))
        });
    while let Some(entry) = walker.next() {
        if let Ok(e) = &entry
            && e.path_is_symlink()
            && let Err(refused @ Refused::Outside { .. }) = confined.resolve(e.path())
        {
            let rel = e.path().strip_prefix(root).unwrap_or(e.path());
            issues.push(Issue::file(rel, refused.to_string()));
            if e.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if let Ok(e) = &entry
            && (e.file_type().is_dir() || is_yaml(e.path()))
            && let Ok(meta) = e.metadata()
        {
            let rel = e.path().strip_prefix(root).unwrap_or(e.path());
            if let Some(first) = seen.get(&(meta.dev(), meta.ino())) {
                let what = if e.file_type().is_dir() {
                    walker.skip_current_dir();
                    "directory"
                } else {
                    "file"
                };
                issues.push(Issue::file(
                    rel,
                    format!(
                        "the same {what} as {} (through a symlink): read once, there",
                        first.display()
                    ),
                ));
                continue;
            }
            seen.insert((meta.dev(), meta.ino()), rel.to_path_buf());
        }
        match entry {
            // Not only regular files: a FIFO or device named `*.yaml` is
            // refused by type when read, with the reason, not skipped.
            Ok(e) if !e.file_type().is_dir() && is_yaml(e.path()) => {
                if let Ok(rel) = e.path().strip_prefix(root) {
                    files.push(rel.to_path_buf());
                }
            }
            Ok(_) => {}
            Err(err) => {
                let path = err
                    .path()
                    .and_then(|p| p.strip_prefix(root).ok())
                    .unwrap_or(Path::new(""))
                    .to_path_buf();
                let message = if err.loop_ancestor().is_some() {
                    "symlink loop: this directory links back to one of its parents".to_string()
                } else {
                    err.io_error()
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| err.to_string())
                };
                issues.push(Issue::file(&path, message));
            }
        }
    }
    (files, issues)
}

pub fn is_yaml(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml")
    )
}
