//! The tree of another commit of the linted repository, for `--base`: the
//! `git` CLI writes the commit's files (`git archive`) into a temporary
//! directory, which is then loaded like any repository. The working tree
//! and the repository's worktree list are left alone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a commit's tree could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started.
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    /// The directory is not inside a git work tree.
    #[error("{path} is not inside a git repository: {stderr}")]
    NotARepo { path: PathBuf, stderr: String },
    /// The reference names no commit.
    #[error("--base {reference:?} is not a commit of {path}: {stderr}")]
    BadRef {
        path: PathBuf,
        reference: String,
        stderr: String,
    },
    /// `git archive` or unpacking it failed.
    #[error("cannot extract {reference}: {detail}")]
    Extract { reference: String, detail: String },
}

/// A commit's files in a temporary directory, removed on drop.
pub struct Checkout {
    _dir: tempfile::TempDir,
    /// The directory that corresponds to the linted directory (the
    /// linted directory may be a subdirectory of the repository).
    pub root: PathBuf,
    /// The full commit id.
    pub commit: String,
}

fn git(dir: &Path, args: &[&str]) -> Result<(bool, String, String), GitError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(GitError::Spawn)?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    ))
}

/// Writes the tree of `reference` (a commit, branch or tag of the
/// repository that contains `dir`) into a temporary directory.
pub fn checkout(dir: &Path, reference: &str) -> Result<Checkout, GitError> {
    let (ok, top, stderr) = git(dir, &["rev-parse", "--show-toplevel"])?;
    if !ok {
        return Err(GitError::NotARepo {
            path: dir.to_path_buf(),
            stderr,
        });
    }
    let (_, prefix, _) = git(dir, &["rev-parse", "--show-prefix"])?;
    let bad_ref = |stderr: String| GitError::BadRef {
        path: dir.to_path_buf(),
        reference: reference.to_string(),
        stderr,
    };
    // A leading dash would be read as an option.
    if reference.starts_with('-') || reference.is_empty() {
        return Err(bad_ref("not a reference".into()));
    }
    let spec = format!("{reference}^{{commit}}");
    let (ok, commit, stderr) = git(
        dir,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &spec,
        ],
    )?;
    if !ok || commit.is_empty() {
        return Err(bad_ref(if stderr.is_empty() {
            "unknown revision".into()
        } else {
            stderr
        }));
    }
    let tmp = tempfile::Builder::new()
        .prefix("homelab-lint-base-")
        .tempdir()
        .map_err(|e| GitError::Extract {
            reference: reference.to_string(),
            detail: e.to_string(),
        })?;
    let tar = tmp.path().join("base.tar");
    let tree = tmp.path().join("tree");
    let extract = |detail: String| GitError::Extract {
        reference: reference.to_string(),
        detail,
    };
    std::fs::create_dir(&tree).map_err(|e| extract(e.to_string()))?;
    let tar_arg = format!("--output={}", tar.display());
    let (ok, _, stderr) = git(
        Path::new(&top),
        &["archive", "--format=tar", &tar_arg, &commit],
    )?;
    if !ok {
        return Err(extract(stderr));
    }
    let out = Command::new("tar")
        .arg("-xf")
        .arg(&tar)
        .arg("-C")
        .arg(&tree)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| extract(format!("cannot run tar: {e}")))?;
    if !out.status.success() {
        return Err(extract(String::from_utf8_lossy(&out.stderr).trim().into()));
    }
    let _ = std::fs::remove_file(&tar);
    let root = tree.join(prefix.trim_end_matches('/'));
    Ok(Checkout {
        root,
        commit,
        _dir: tmp,
    })
}

/// Where `dir` sits in its git repository, found as git finds the top
/// level: the nearest ancestor with a `.git` directory or file (a
/// worktree or submodule has a `.git` file). Read from the file system,
/// without running git, since every lint asks.
pub fn shown_root(dir: &Path) -> crate::yaml::Shown {
    let Ok(abs) = dir.canonicalize() else {
        return Default::default();
    };
    let top = abs.ancestors().find(|a| a.join(".git").exists());
    match top {
        Some(top) => crate::yaml::Shown {
            prefix: abs.strip_prefix(top).unwrap_or(Path::new("")).to_path_buf(),
            top: Some(top.to_path_buf()),
        },
        None => Default::default(),
    }
}

#[cfg(test)]
mod shown_tests {
    use super::*;

    #[test]
    fn a_subdirectory_is_named_from_the_top_level() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("kubernetes/apps")).unwrap();
        assert_eq!(shown_root(&dir.path().join("kubernetes")).top, None);
        std::fs::write(dir.path().join(".git"), "gitdir: elsewhere\n").unwrap();
        let shown = shown_root(&dir.path().join("kubernetes/apps"));
        assert_eq!(shown.prefix, Path::new("kubernetes/apps"));
        assert_eq!(shown.top, Some(dir.path().canonicalize().unwrap()));
        assert_eq!(shown_root(dir.path()).prefix, Path::new(""));
    }
}
