//! Writing fixes into a repository that may be hostile: only regular
//! files of the repository itself (never an input given by absolute path,
//! as `--snapshot` files are, never through a symlink, whose target could
//! be anywhere), only when the file still holds what the run read, keeping
//! owner, mode and hard links, and for several files all or nothing.

use std::io::{Read, Seek, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use super::apply::FileChange;
use crate::yaml::SourceMap;

/// A repository file found fit to rewrite, opened.
struct Target {
    path: PathBuf,
    meta: std::fs::Metadata,
}

/// Why the file `rel` (as the source map names it) may not be rewritten
/// with fixes computed from `expected`, if it may not.
pub fn refusal(root: &Path, rel: &Path, expected: &str) -> Option<String> {
    open(root, rel, expected).err()
}

fn open(root: &Path, rel: &Path, expected: &str) -> Result<Target, String> {
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(
            "not a file of the repository (a --snapshot input or cluster state); not rewritten"
                .into(),
        );
    }
    let mut at = root.to_path_buf();
    let mut parts = rel.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        if parts.peek().is_none() {
            break;
        }
        let meta = std::fs::symlink_metadata(&at).map_err(|e| e.to_string())?;
        if meta.file_type().is_symlink() {
            let shown = at.strip_prefix(root).unwrap_or(&at).display().to_string();
            return Err(format!(
                "reached through the symlink {shown}; not rewritten, as its target may be outside the repository"
            ));
        }
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(&at)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                "is a symlink; not rewritten (a fix would replace the link, or write its target)"
                    .to_string()
            }
            _ => e.to_string(),
        })?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file; not rewritten".into());
    }
    let mut now = Vec::with_capacity(expected.len());
    (&file)
        .take(expected.len() as u64 + 1)
        .read_to_end(&mut now)
        .map_err(|e| e.to_string())?;
    if now != expected.as_bytes() {
        return Err(
            "changed since this run read it; not rewritten (run again to fix the new text)".into(),
        );
    }
    Ok(Target { path: at, meta })
}

/// How one file gets its new text.
enum Staged {
    /// A temporary file beside it, with its owner and mode, to rename in.
    Rename(tempfile::NamedTempFile),
    /// Written in place: the file has other hard links, or its owner
    /// cannot be given to a new file; both kept that way.
    InPlace,
}

/// Why the fixes were not written. Either way no file is left half
/// changed: a refusal comes before any write, and a failed replacement
/// puts back the files already replaced.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// A file may not be rewritten, or its new text could not be staged;
    /// no file was changed.
    #[error("{}: {reason}", path.display())]
    Refused { path: PathBuf, reason: String },
    /// Replacing a file failed after others were replaced; `undone`
    /// names each of those, and whether it was put back.
    #[error(
        "cannot write {}: {reason}; {}",
        path.display(),
        match undone.is_empty() {
            true => "no file was changed".to_string(),
            false => format!("put back the files already written: {}", undone.join(", ")),
        }
    )]
    Replace {
        path: PathBuf,
        reason: String,
        undone: Vec<String>,
    },
}

/// Writes every change or none: each new text is staged first (a
/// temporary file with the owner and mode of the file it replaces), then
/// each file, checked once more to hold what the run read, is replaced. If
/// one replacement fails, those already made are put back. Returns the
/// paths written, repo-relative.
pub fn write_all(
    root: &Path,
    sources: &SourceMap,
    changes: &[FileChange],
) -> Result<Vec<PathBuf>, WriteError> {
    let mut staged = Vec::new();
    for change in changes {
        let rel = sources.path(change.file);
        let old: &str = &sources.get(change.file).text;
        let refused = |reason: String| WriteError::Refused {
            path: rel.to_path_buf(),
            reason,
        };
        let target = open(root, rel, old).map_err(refused)?;
        let stage = stage(&target, &change.new_text).map_err(|e| refused(e.to_string()))?;
        staged.push(Item {
            rel,
            old,
            new: &change.new_text,
            target,
            stage,
        });
    }
    for i in 0..staged.len() {
        let item = &mut staged[i];
        let result = open(root, item.rel, item.old)
            .and_then(|t| commit(&t, &mut item.stage, item.new).map_err(|e| e.to_string()));
        if let Err(reason) = result {
            let undone: Vec<String> = staged[..i]
                .iter()
                .map(|done| match put_back(&done.target, done.old) {
                    Ok(()) => done.rel.display().to_string(),
                    Err(e) => format!("{} (NOT restored: {e})", done.rel.display()),
                })
                .collect();
            return Err(WriteError::Replace {
                path: staged[i].rel.to_path_buf(),
                reason,
                undone,
            });
        }
    }
    Ok(staged.iter().map(|s| s.rel.to_path_buf()).collect())
}

/// One file on its way to its new text.
struct Item<'a> {
    rel: &'a Path,
    old: &'a str,
    new: &'a str,
    target: Target,
    stage: Staged,
}

fn stage(target: &Target, text: &str) -> std::io::Result<Staged> {
    if target.meta.nlink() > 1 {
        return Ok(Staged::InPlace);
    }
    let dir = target.path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    let file = tmp.as_file();
    file.set_permissions(std::fs::Permissions::from_mode(target.meta.mode() & 0o7777))?;
    let owned = file.metadata()?;
    if (owned.uid(), owned.gid()) != (target.meta.uid(), target.meta.gid())
        && std::os::unix::fs::fchown(file, Some(target.meta.uid()), Some(target.meta.gid()))
            .is_err()
    {
        return Ok(Staged::InPlace);
    }
    file.sync_all()?;
    Ok(Staged::Rename(tmp))
}

fn commit(target: &Target, stage: &mut Staged, text: &str) -> std::io::Result<()> {
    match std::mem::replace(stage, Staged::InPlace) {
        Staged::Rename(tmp) => tmp.persist(&target.path).map(drop).map_err(|e| e.error),
        Staged::InPlace => write_in_place(&target.path, text),
    }
}

fn put_back(target: &Target, old: &str) -> std::io::Result<()> {
    let mut stage = stage(target, old)?;
    commit(target, &mut stage, old)
}

/// Truncates and rewrites the file itself: its inode, owner, mode and
/// every hard link stay.
fn write_in_place(path: &Path, text: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    file.set_len(0)?;
    file.rewind()?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_changed_since_it_was_read_stops_every_write() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.yaml"), "a: 1\n").unwrap();
        std::fs::write(dir.path().join("b.yaml"), "b: 2 # edited meanwhile\n").unwrap();
        let mut sources = SourceMap::default();
        let a = sources.add("a.yaml".into(), "a: 1\n".into());
        let b = sources.add("b.yaml".into(), "b: 2\n".into());
        let changes = [
            FileChange {
                file: a,
                new_text: "a: 10\n".into(),
            },
            FileChange {
                file: b,
                new_text: "b: 20\n".into(),
            },
        ];
        let err = write_all(dir.path(), &sources, &changes)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("b.yaml: changed since this run read it"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.yaml")).unwrap(),
            "a: 1\n"
        );
        std::fs::write(dir.path().join("b.yaml"), "b: 2\n").unwrap();
        let written = write_all(dir.path(), &sources, &changes).unwrap();
        assert_eq!(written, [PathBuf::from("a.yaml"), PathBuf::from("b.yaml")]);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b.yaml")).unwrap(),
            "b: 20\n"
        );
        assert!(refusal(dir.path(), Path::new("/abs/snapshot.yaml"), "").is_some());
    }
}
