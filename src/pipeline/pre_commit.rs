//! `--pre-commit`: what a hook run compares, from pre-commit's own
//! environment, so that the `language: python` hook and the system hook
//! share one decision. pre-commit (commands/run.py `_all_filenames`)
//! passes the staged files in a commit, every tracked file under
//! `--all-files`, and the files changed between two refs under
//! `--from-ref/--to-ref`, which it also exports as `PRE_COMMIT_FROM_REF`
//! and `PRE_COMMIT_TO_REF`. No variable tells a commit from
//! `--all-files`: a file passed that the index does not change against
//! HEAD does.

use std::path::{Path, PathBuf};

use super::{BaseRequest, Input};
use crate::source::git::{self, Held};

/// What a hook run compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// A commit: the index against HEAD (every finding new before the
    /// first commit).
    Commit,
    /// `pre-commit run --all-files` or `--files`: a plain lint of the
    /// working tree, every finding reported.
    AllFiles,
    /// `--from-ref A --to-ref B`: B's tree against the merge-base of A and B.
    Range { from: String, to: String },
}

impl Mode {
    /// The mode of a hook run in the repository at `top`, from the files
    /// pre-commit passed and its variables.
    pub fn of(top: &Path, passed: &[PathBuf], from: Option<String>, to: Option<String>) -> Mode {
        if let (Some(from), Some(to)) = (from, to) {
            return Mode::Range { from, to };
        }
        if passed.is_empty() || !git::has_head(top) {
            return Mode::Commit;
        }
        let staged = git::changed_between(top, "HEAD", &Held::Index).unwrap_or_default();
        let unchanged = passed.iter().any(|p| {
            let rel = p.strip_prefix("./").unwrap_or(p);
            !staged.contains(rel)
        });
        if unchanged {
            Mode::AllFiles
        } else {
            Mode::Commit
        }
    }

    /// What to read and what to compare with.
    pub fn request(&self) -> (Option<Held>, BaseRequest) {
        let base = |reference: &str| BaseRequest {
            reference: Some(reference.to_string()),
            all_findings: false,
        };
        match self {
            Mode::Commit => (Some(Held::Index), base("HEAD")),
            Mode::AllFiles => (None, BaseRequest::default()),
            Mode::Range { from, to } => (Some(Held::Commit(to.clone())), base(from)),
        }
    }

    /// How the log names it.
    pub fn describe(&self) -> String {
        match self {
            Mode::Commit => "a commit: the index against HEAD".into(),
            Mode::AllFiles => "all files: the working tree, every finding".into(),
            Mode::Range { from, to } => format!("{from}...{to}: {to} against the merge-base"),
        }
    }
}

/// Turns the input of a hook run into the lint its mode asks for: the
/// files pre-commit passed only tell the mode (folders given still scope
/// the report), and the repository is the one pre-commit runs in.
pub fn adapt(
    input: &mut Input,
    base: &mut BaseRequest,
    env: impl Fn(&str) -> Option<String>,
) -> Mode {
    let (folders, passed): (Vec<PathBuf>, Vec<PathBuf>) =
        input.paths.drain(..).partition(|p| p.is_dir());
    let top = git::top_level(Path::new(".")).unwrap_or_else(|| PathBuf::from("."));
    let mode = Mode::of(
        &top,
        &passed,
        env("PRE_COMMIT_FROM_REF").filter(|r| !r.is_empty()),
        env("PRE_COMMIT_TO_REF").filter(|r| !r.is_empty()),
    );
    let (held, request) = mode.request();
    input.paths = folders;
    input.held = held;
    *base = BaseRequest {
        all_findings: base.all_findings,
        ..request
    };
    mode
}
