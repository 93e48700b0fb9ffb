//! The repositories the open files belong to, each with its last lint.
//! A repository is found as the command line finds it (the Flux root
//! above the file, [`crate::source::root`]) and linted whole, with the
//! open buffers read instead of the files they edit.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::pipeline::editor::{self, Analysis, Session};
use crate::source::root;

use super::documents::Documents;
use super::watch::Watch;

/// How long a lint waits after a change for the next one: typing does not
/// start a lint per keystroke.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// One repository with files open in it.
pub struct Repository {
    session: Session,
    /// The last lint; `Err` when the repository could not be linted.
    pub last: Option<Result<Analysis, String>>,
    /// When it is to be linted again.
    pub due: Option<Instant>,
    /// Files it published diagnostics for, cleared when they have none.
    pub published: Vec<PathBuf>,
    /// How long the last lint took, for the log.
    pub took: Duration,
}

impl Repository {
    pub fn root(&self) -> &Path {
        &self.session.found().root
    }
}

#[derive(Default)]
pub struct Workspace {
    pub repos: Vec<Repository>,
    /// What the client watches on disk for us.
    pub watch: Watch,
}

impl Workspace {
    /// The repository `path` (absolute) belongs to, found and opened the
    /// first time; `Err` when no repository holds it.
    pub fn repo_of(&mut self, path: &Path) -> Result<&mut Repository, String> {
        let known = self.repos.iter().position(|r| path.starts_with(r.root()));
        let index = match known {
            Some(i) => i,
            None => {
                // The file may exist only in the editor: its folder is
                // what is looked up.
                let existing = path
                    .ancestors()
                    .find(|p| p.exists())
                    .unwrap_or(Path::new("/"));
                let mut found = root::find(&[existing.to_path_buf()]).map_err(|e| e.to_string())?;
                found.root = found
                    .root
                    .canonicalize()
                    .map_err(|e| format!("{}: {e}", found.root.display()))?;
                if let Some(i) = self.repos.iter().position(|r| r.root() == found.root) {
                    i
                } else {
                    let mut session = Session::open(found).map_err(|e| e.to_string())?;
                    session.watched(self.watch.covers(&session.found().root));
                    self.repos.push(Repository {
                        session,
                        last: None,
                        due: None,
                        published: Vec::new(),
                        took: Duration::ZERO,
                    });
                    self.repos.len() - 1
                }
            }
        };
        Ok(&mut self.repos[index])
    }

    /// The client watches the disk from now on.
    pub fn start_watching(&mut self) {
        self.watch.active = true;
        for repo in &mut self.repos {
            let covered = self.watch.covers(repo.root());
            repo.session.watched(covered);
        }
    }

    /// Takes note that `path` (absolute) changed on disk, or was created
    /// or deleted; gives the root of the repository that holds it.
    pub fn changed_on_disk(&mut self, path: &Path, created_or_deleted: bool) -> Option<PathBuf> {
        let repo = self.repos.iter_mut().find(|r| path.starts_with(r.root()))?;
        let root = repo.root().to_path_buf();
        let rel = path.strip_prefix(&root).ok()?;
        repo.session.changed_on_disk(rel, created_or_deleted);
        Some(root)
    }

    /// A file was opened or saved: see [`Session::may_ignore_more`].
    pub fn may_ignore_more(&mut self, path: &Path) {
        if let Some(repo) = self.repos.iter_mut().find(|r| path.starts_with(r.root())) {
            repo.session.may_ignore_more();
        }
    }

    /// The repository that holds `path`, if one is open.
    pub fn holding(&self, path: &Path) -> Option<&Repository> {
        self.repos.iter().find(|r| path.starts_with(r.root()))
    }

    /// The time the next lint is due, if any is.
    pub fn next_due(&self) -> Option<Instant> {
        self.repos.iter().filter_map(|r| r.due).min()
    }

    /// Lints every repository whose time has come (all of them with
    /// `all`), and gives their indexes.
    pub fn lint_due(&mut self, docs: &Documents, all: bool) -> Vec<usize> {
        let now = Instant::now();
        let mut linted = Vec::new();
        for (i, repo) in self.repos.iter_mut().enumerate() {
            if repo.due.is_some_and(|d| all || d <= now) {
                repo.due = None;
                let started = Instant::now();
                let previous = repo.last.replace(lint(&mut repo.session, docs));
                repo.took = started.elapsed();
                editor::retire(previous);
                linted.push(i);
            }
        }
        linted
    }

    /// Forgets the repositories in which no file is open.
    pub fn close_unused(&mut self, docs: &Documents) {
        self.repos
            .retain(|r| docs.under(r.root()).next().is_some() || !r.published.is_empty());
    }
}

/// Lints `session`'s repository as the editor holds it. A bug in the
/// linter costs this lint, never the server: what the user is typing is
/// often broken YAML, which is exactly the input to survive.
fn lint(session: &mut Session, docs: &Documents) -> Result<Analysis, String> {
    let root = session.found().root.clone();
    let overlay = docs
        .under(&root)
        .map(|(rel, doc)| (rel.to_path_buf(), doc.text.clone()))
        .collect::<HashMap<_, _>>();
    // Someone is waiting on this lint: every core, whatever the size
    // (a command-line lint of a small repository keeps to one, see
    // `crate::cores`).
    let analyse = || crate::cores::on_every_core(|| session.analyse(overlay));
    match std::panic::catch_unwind(AssertUnwindSafe(analyse)) {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            Err(format!("the linter failed on this repository: {what}"))
        }
    }
}
