//! The pipeline for an editor (`server`): one repository linted again
//! and again while the user types. The open buffers are read instead of
//! the files on disk, each load records what the next one can reuse (the
//! `--base` machinery, [`crate::source::reuse`]: an edit builds again only
//! the kustomizations that read the file), and what was loaded is kept
//! for hover and go-to-definition. When the editor reports every change
//! on disk ([`Session::watched`]), the files are not walked and read again
//! either: what nothing changed reads as the last load read it. Offline:
//! no cluster, probe or base.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::base::BaseRun;
use super::fixes::{self, FixRequest};
use super::{Error, Loaded, Request};
use crate::model::Model;
use crate::rules::{self, Finding, Rule, releases::Baseline, select::Selection};
use crate::source::files::Listing;
use crate::source::ignored::Ignored;
use crate::source::repo;
use crate::source::reuse::{self, Lent};
use crate::source::root::Found;
use crate::source::{DiskListings, Issue, PathMap};

/// One repository open in an editor.
pub struct Session {
    found: Found,
    /// What git ignores, listed when the session opens and again when
    /// that may have changed ([`Session::may_ignore_more`]): a `git`
    /// process per keystroke would be most of a re-lint.
    ignored: Ignored,
    /// Whether git is to be asked again before the next load.
    ignored_stale: bool,
    /// The built-in rules, read once; the configuration selects among
    /// them on every lint, as it may be edited too.
    rules: Vec<Rule>,
    /// What the last load lends the next.
    lent: Option<Lent>,
    /// What the disk held at the last load, while the editor reports
    /// every change on disk; `None` otherwise.
    disk: Option<Disk>,
}

/// The work tree as the last load found it.
#[derive(Default)]
struct Disk {
    /// The YAML files its walk found; `None` once one is created or
    /// deleted.
    listed: Option<Arc<Listing>>,
    /// The texts it read, but the editor's buffers and the files reached
    /// through a symlink (the editor reports a change where it is made).
    texts: PathMap<PathBuf, Arc<str>>,
    /// Whether each file read is reached through real directories only,
    /// as looked up once; emptied when a file or folder is created or
    /// deleted.
    plain: PathMap<PathBuf, bool>,
    /// The directories listed, less those a change may have changed.
    dirs: Arc<DiskListings>,
}

/// One lint of the repository as the editor holds it.
pub struct Analysis {
    pub loaded: Loaded,
    /// The findings the command line would report, in its order.
    pub findings: Vec<Finding>,
    /// What could not be used: the load's problems and the rules'.
    pub problems: Vec<Issue>,
    /// What the load reused from the one before, for the log.
    pub reused: Option<String>,
    /// The configuration's warnings, for the log: the server prints
    /// them, escaped as every line of its log is.
    pub warnings: Vec<String>,
    /// How long the load took (files, builds, renders), and the rest
    /// (model, rules, filters).
    pub took: (Duration, Duration),
}

impl Disk {
    /// Keeps the texts a load of `files` read from the disk, not the
    /// editor's buffers `open`; none when they near the budget of what a
    /// load may read, which a load must spend as a fresh one would.
    fn remember(&mut self, files: &crate::source::Files, open: &[PathBuf]) {
        let sources = &files.sources;
        let all = (0..sources.len()).map(|i| sources.get(crate::yaml::FileId(i as u32)));
        if all.clone().map(|f| f.text.len()).sum::<usize>() > files.limits().max_read_bytes / 2 {
            return;
        }
        let root = files.root();
        for f in all.filter(|f| f.path.is_relative() && !open.contains(&f.path)) {
            let plain = *self.plain.entry(f.path.clone()).or_insert_with(|| {
                let path = root.join(&f.path);
                path.canonicalize().is_ok_and(|real| real == path)
            });
            if plain {
                self.texts.insert(f.path.clone(), f.text.clone());
            }
        }
    }
}

impl Session {
    /// A session for the repository `found` (the whole of it is linted,
    /// whatever file was opened first).
    pub fn open(mut found: Found) -> Result<Session, Error> {
        found.scope.clear();
        // The configuration is looked for from the root up, not from the
        // folder of the file opened first.
        found.start = found.root.clone();
        Ok(Session {
            ignored: super::ignored_in(&found)?,
            ignored_stale: false,
            rules: super::load_rules(&[])?,
            found,
            lent: None,
            disk: None,
        })
    }

    /// Whether the editor reports every change on disk under the root
    /// from now on: then a load reads only what changed since the last.
    pub fn watched(&mut self, watched: bool) {
        self.disk = watched.then(Disk::default);
    }

    /// What the editor reported of `rel` (relative to the root): changed,
    /// or `created_or_deleted` (a folder too: what is under it goes).
    pub fn changed_on_disk(&mut self, rel: &Path, created_or_deleted: bool) {
        if created_or_deleted || rel.file_name() == Some(".gitignore".as_ref()) {
            self.ignored_stale = true;
        }
        let Some(disk) = self.disk.as_mut() else {
            return;
        };
        if created_or_deleted {
            disk.listed = None;
            disk.plain.clear();
        }
        disk.texts.retain(|path, _| !path.starts_with(rel));
        disk.dirs.forget(rel);
    }

    /// Files may have been created, or .gitignore changed, without the
    /// editor saying which (a save or an open, from an editor that does
    /// not watch files; one that does says so, [`Session::changed_on_disk`]):
    /// git is asked again what it ignores before the next load. git lists
    /// only ignored files that exist, so a file created since (a decrypted
    /// Secret, a kubeconfig) would otherwise be read though the command
    /// line and Flux never see it.
    pub fn may_ignore_more(&mut self) {
        if self.disk.is_none() {
            self.ignored_stale = true;
        }
    }

    pub fn found(&self) -> &Found {
        &self.found
    }

    /// Lints the repository with `overlay`'s texts (repository-relative
    /// paths) read instead of the files'. An error is one the command
    /// line would stop on: a configuration file that does not read.
    pub fn analyse(&mut self, overlay: HashMap<PathBuf, String>) -> Result<Analysis, Error> {
        let started = Instant::now();
        let open: Vec<PathBuf> = overlay.keys().cloned().collect();
        if std::mem::take(&mut self.ignored_stale) {
            let ignored = super::ignored_in(&self.found)?;
            if ignored.listed() != self.ignored.listed() {
                self.ignored = ignored;
                if let Some(disk) = self.disk.as_mut() {
                    disk.listed = None;
                }
            }
        }
        let mut files = super::work_tree_files(&self.found, self.ignored.clone(), overlay);
        if let Some(disk) = self.disk.as_mut() {
            let listed = disk.listed.get_or_insert_with(|| {
                let root = &self.found.root;
                Arc::new(crate::source::walk::yaml_files_except(root, &self.ignored))
            });
            let texts = std::mem::take(&mut disk.texts);
            files = files.remembering(Some(listed.clone()), texts, disk.dirs.clone());
        }
        let mut files = reuse::recording(files);
        if let Some(lent) = self.lent.take() {
            files = reuse::borrowing(files, lent);
        }
        let mut repo = repo::load_files(files);
        super::show_from_top(&mut repo, &self.found);
        let lent = reuse::take_lent(&mut repo.files);
        let reused = lent.as_ref().map(Lent::summary);
        // What the last load lent and this one did not take back (its
        // records, its files' paths) is freed off the way to the
        // diagnostics.
        retire(lent);
        self.lent = Lent::of(&mut repo.files);
        if let Some(disk) = self.disk.as_mut() {
            disk.remember(&repo.files, &open);
        }
        let loaded_in = started.elapsed();
        let loaded = Loaded {
            repo,
            found: self.found.clone(),
            _example: None,
        };
        let (config, config_path) = super::repo_config(&Request::default(), &loaded)?;
        // Suppressions may name any rule loaded, running or not.
        let known = rules::redirect::Known::of(&self.rules);
        // The configuration's warnings (a renamed rule's former id) go to
        // the server's log, as the command line's go to its.
        let mut warnings = Vec::new();
        let rules = super::select_rules(
            self.rules.clone(),
            &config,
            config_path.as_deref(),
            &Selection::default(),
            &mut |line: &str| warnings.push(line.to_string()),
        )?;
        let repo = &loaded.repo;
        let model = Model::new(repo);
        let baseline = Baseline::default();
        let outcome = rules::lint_known(&model, &rules, &known, &baseline);
        let sources = &repo.files.sources;
        let findings = super::filter(
            outcome.findings,
            &config,
            &BaseRun::default(),
            sources,
            None,
        );
        let mut findings = rules::subsume::drop_subsumed(findings, &rules);
        let mut quiet = |_: &str| {};
        fixes::verify(
            &FixRequest::default(),
            &mut findings,
            repo,
            Some((&rules, &baseline)),
            &mut quiet,
        );
        let problems = repo.issues.iter().chain(&outcome.issues).cloned().collect();
        drop(model);
        Ok(Analysis {
            loaded,
            findings,
            problems,
            reused,
            warnings,
            took: (loaded_in, started.elapsed() - loaded_in),
        })
    }
}

/// Drops `value` on a thread of its own: freeing the trees of a whole
/// repository's last lint (3.6 M instructions on joryirving__home-ops)
/// is no work the user need wait for before the diagnostics go out.
pub fn retire<T: Send + 'static>(value: T) {
    // Without a thread to spare, the spawn fails and drops it here.
    let _ = std::thread::Builder::new()
        .name("retire".into())
        .spawn(move || drop(value));
}
