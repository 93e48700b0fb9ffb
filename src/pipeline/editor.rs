//! The pipeline for an editor (`server`): one repository linted again
//! and again while the user types. The open buffers are read instead of
//! the files on disk, each load records what the next one can reuse (the
//! `--base` machinery, [`crate::source::reuse`]: an edit builds again only
//! the kustomizations that read the file), and what was loaded is kept
//! for hover and go-to-definition. Offline: no cluster, probe or base.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::base::BaseRun;
use super::fixes::{self, FixRequest};
use super::{Error, Loaded, Request};
use crate::model::Model;
use crate::rules::{self, Finding, Rule, releases::Baseline, select::Selection};
use crate::source::Issue;
use crate::source::ignored::Ignored;
use crate::source::repo;
use crate::source::reuse::{self, Lent};
use crate::source::root::Found;

/// One repository open in an editor.
pub struct Session {
    found: Found,
    /// What git ignores, listed once: a `git` process per keystroke
    /// would be most of a re-lint.
    ignored: Ignored,
    /// The built-in rules, read once; the configuration selects among
    /// them on every lint, as it may be edited too.
    rules: Vec<Rule>,
    /// What the last load lends the next.
    lent: Option<Lent>,
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
    /// How long the load took (files, builds, renders), and the rest
    /// (model, rules, filters).
    pub took: (Duration, Duration),
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
            ignored: super::ignored_in(&found),
            rules: super::load_rules(&[])?,
            found,
            lent: None,
        })
    }

    pub fn found(&self) -> &Found {
        &self.found
    }

    /// Lints the repository with `overlay`'s texts (repository-relative
    /// paths) read instead of the files'. An error is one the command
    /// line would stop on: a configuration file that does not read.
    pub fn analyse(&mut self, overlay: HashMap<PathBuf, String>) -> Result<Analysis, Error> {
        let started = Instant::now();
        let mut files = reuse::recording(super::work_tree_files(
            &self.found,
            self.ignored.clone(),
            overlay,
        ));
        if let Some(lent) = self.lent.take() {
            files = reuse::borrowing(files, lent);
        }
        let mut repo = repo::load_files(files);
        super::show_from_top(&mut repo, &self.found);
        let reused = reuse::take_lent(&mut repo.files).map(|l| l.summary());
        self.lent = Lent::of(&mut repo.files);
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
        let rules = super::select_rules(
            self.rules.clone(),
            &config,
            config_path.as_deref(),
            &Selection::default(),
            &mut |line: &str| eprintln!("{line}"),
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
            took: (loaded_in, started.elapsed() - loaded_in),
        })
    }
}
