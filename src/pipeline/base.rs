//! The base stage, `--base <git ref>`: lint the base commit too, report
//! only findings whose fingerprint the base run did not have, and give
//! the `releaseCrossed` rule step the app versions of the base commit (so
//! that version bumps across a known breaking release are found).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{Error, Log};
use crate::model::Model;
use crate::rules::releases::{self, Baseline};
use crate::rules::{self, BaselineState, Finding, Rule, config::Config};
use crate::source::commit_tree::Tree;
use crate::source::git::{GitError, Held};
use crate::source::repo::{self, Repo};
use crate::source::reuse::{self, Lent};
use crate::source::root::Found;
use crate::source::{Files, Issue, git};

/// The commit to compare with.
#[derive(Debug, Clone, Default)]
pub struct BaseRequest {
    /// A git commit, branch or tag; `None`: no base run. The base commit
    /// is the merge-base of it and the commit under test (HEAD, or the
    /// commit read), as `git diff REV...HEAD` compares: a branch is not
    /// blamed for what its target fixed since it was made.
    pub reference: Option<String>,
    /// Report every finding, not only new ones; version bumps are still found.
    pub all_findings: bool,
}

/// What the base commit contributes to a run.
#[derive(Default)]
pub struct BaseRun {
    pub baseline: Baseline,
    /// Fingerprints of the base commit's findings; `None` without --base.
    fingerprints: Option<HashSet<String>>,
    /// Whether findings the base commit had are reported too.
    all_findings: bool,
    /// The files of the linted directory the change touches; `None` when
    /// git cannot tell or there is no base.
    changed: Option<HashSet<PathBuf>>,
    /// `(path, message)` of the base commit's input problems.
    problems: HashSet<(String, String)>,
    /// The base commit's load, when it was loaded: freed with the linted
    /// one's, or left to the exit with it.
    _loaded: Option<(Repo, Option<Lent>)>,
}

impl BaseRun {
    /// Whether the base commit had a finding of the linted tree; `None`
    /// without --base. A fingerprint names the rule and the objects
    /// involved, not lines, so a finding that only moved is not new.
    pub fn state(&self, f: &Finding) -> Option<BaselineState> {
        let seen = self.fingerprints.as_ref()?;
        Some(if seen.contains(&f.fingerprint) {
            BaselineState::Existing
        } else {
            BaselineState::New
        })
    }

    /// Whether a finding in `state` is reported: a finding the base had
    /// only with --all-findings.
    pub fn reports(&self, state: Option<BaselineState>) -> bool {
        self.all_findings || state != Some(BaselineState::Existing)
    }

    /// Whether an input problem is one a review of the change should see:
    /// always without --base; else one about the run, on a file the
    /// change touches, or one the base commit did not have (a file the
    /// change deleted leaves its kustomization, untouched, with a new
    /// problem). A remote base that was never fetched in either commit,
    /// in a file the change leaves alone, is not the change's.
    pub fn shows_problem(&self, issue: &Issue) -> bool {
        if self.fingerprints.is_none() || issue.path.is_empty() {
            return true;
        }
        let path = Path::new(&issue.path);
        path.is_absolute()
            || self.changed.as_ref().is_some_and(|c| c.contains(path))
            || !self
                .problems
                .contains(&(issue.path.clone(), issue.message.clone()))
    }
}

/// The base commit, found before the working tree is loaded, and the
/// files of the linted directory that are not as it has them (`None`
/// when git cannot tell).
pub struct Located(Result<Base, GitError>);

enum Base {
    Commit {
        commit: git::Commit,
        /// How the base commit was found, for the log.
        found: String,
        changed: Option<HashSet<PathBuf>>,
        opening: Opening,
    },
    /// No commit to compare with (none yet, or no shared history): every
    /// finding is new; why.
    Nothing(String),
}

/// The base commit's tree, listed by a thread while the working tree
/// loads: most of that load runs on one core (the Flux renders), and
/// listing the tree (`git ls-tree` and the maps made of it) was a tenth
/// of the base's cost on joryirving__home-ops. `None` when the files are
/// as the commit has them, so that the tree is not read at all.
type Opening = Option<std::thread::JoinHandle<Result<Tree, GitError>>>;

impl Located {
    /// Finds the commit to compare with for a lint of `found`'s
    /// repository as `held` (the work tree when `None`); `None` without
    /// --base. `Err` when git did not answer within its budget: every
    /// later git process in the repository would wait as long, so the run
    /// ends here rather than after the load.
    pub fn of(
        req: &BaseRequest,
        found: &Found,
        held: Option<&Held>,
    ) -> Result<Option<Located>, GitError> {
        let Some(reference) = req.reference.as_ref() else {
            return Ok(None);
        };
        match locate(reference, &found.root, held) {
            Err(e @ GitError::TimedOut { .. }) => Err(e),
            located => Ok(Some(Located(located))),
        }
    }

    /// Whether the working tree's load is to record what a load of the
    /// base commit can reuse: not when the base load is that load itself
    /// (recording costs a copy of every document the load changes), nor
    /// when there is no base to load.
    pub fn wants_reuse(&self) -> bool {
        match &self.0 {
            Ok(Base::Commit { changed, .. }) => !changed.as_ref().is_some_and(HashSet::is_empty),
            _ => false,
        }
    }
}

/// The merge-base of `reference` and the commit under test, and what
/// differs from it.
fn locate(reference: &str, root: &Path, held: Option<&Held>) -> Result<Base, GitError> {
    let tip = match git::resolve(root, reference) {
        Ok(tip) => tip,
        // Before the first commit, no reference names one: nothing to
        // compare with, which is no error.
        Err(git::GitError::BadRef { .. }) if !git::has_head(root) => {
            return Ok(Base::Nothing("the repository has no commit yet".into()));
        }
        Err(e) => return Err(e),
    };
    let under = match held {
        Some(Held::Commit(c)) => git::resolve(root, c)?.id,
        _ if !git::has_head(root) => {
            return Ok(Base::Nothing(format!(
                "no commit is checked out (a new repository or an orphan branch), so none \
                 shares history with {reference}"
            )));
        }
        _ => "HEAD".to_string(),
    };
    let (id, shallow) = match git::merge_base(root, &tip.id, &under)? {
        Some(id) => (id, false),
        // A shallow clone (a CI checkout) may hold too little history to
        // find the merge-base: the commit named is the best base it has.
        None if git::is_shallow(root) => (tip.id.clone(), true),
        None => {
            return Ok(Base::Nothing(format!(
                "{reference} shares no history with {}",
                short(&under)
            )));
        }
    };
    let found = if shallow {
        format!(
            "{}: the clone is shallow and holds no merge-base of {reference} and {}, so {reference} \
             itself",
            short(&id),
            short(&under)
        )
    } else if id == tip.id {
        short(&id).to_string()
    } else {
        format!(
            "merge-base {} of {reference} and {}; {reference} is at {}",
            short(&id),
            short(&under),
            short(&tip.id)
        )
    };
    let commit = tip.at(id);
    let changed = match held {
        None => git::changed_since(root, &commit.id),
        Some(h) => git::changed_between(root, &commit.id, h),
    };
    let opening = (!changed.as_ref().is_some_and(HashSet::is_empty))
        .then(|| open_in_background(commit.clone()))
        .flatten();
    Ok(Base::Commit {
        commit,
        found,
        changed,
        opening,
    })
}

fn short(id: &str) -> &str {
    &id[..id.len().min(12)]
}

/// Lists `commit`'s tree on a thread of its own. Should the thread not
/// start, the tree is listed when the base is loaded.
fn open_in_background(commit: git::Commit) -> Opening {
    std::thread::Builder::new()
        .name("base-tree".into())
        .spawn(move || commit.tree())
        .ok()
}

/// Lints the base commit with the same rules and configuration. When no
/// file of the linted directory differs from the commit (a pre-commit hook
/// on a change elsewhere, a CI run on a merge commit), the repository
/// already loaded is the base commit's and is not read again. Else the
/// base load reuses what the linted one parsed and built where its inputs
/// are the same (see [`crate::source::reuse`]), and its texts of the
/// files git says are unchanged ([`reuse::sharing_unchanged`]).
pub fn prepare(
    req: &BaseRequest,
    located: Option<Located>,
    linted: Option<&mut Repo>,
    rules: &[Rule],
    config: &Config,
    verbose: u8,
    log: &mut Log,
) -> Result<BaseRun, Error> {
    let (Some(reference), Some(Located(located)), Some(linted)) = (&req.reference, located, linted)
    else {
        return Ok(BaseRun::default());
    };
    let (commit, found, changed, opening) = match located? {
        Base::Commit {
            commit,
            found,
            changed,
            opening,
        } => (commit, found, changed, opening),
        Base::Nothing(why) => {
            log(&format!("base {reference}: {why}: every finding is new"));
            return Ok(BaseRun {
                fingerprints: Some(HashSet::new()),
                all_findings: req.all_findings,
                ..BaseRun::default()
            });
        }
    };
    let lent = Lent::of(&mut linted.files);
    let linted: &Repo = linted;
    let root = linted.files.root();
    let unchanged = changed.as_ref().is_some_and(HashSet::is_empty);
    let mut read = None;
    let mut returned = None;
    let mut reused = String::new();
    let base_repo = if unchanged {
        linted
    } else {
        let tree = match opening.map(std::thread::JoinHandle::join) {
            Some(Ok(opened)) => opened?,
            Some(Err(_)) => return Err(Error::BaseTreePanicked),
            None => commit.tree()?,
        };
        // The base reads the remote entries the work tree's load read:
        // the same fetcher, its cache and what is left of its budgets.
        let fetcher = linted.files.remote().cloned();
        let mut files = Files::in_commit(root, tree, *linted.files.limits()).fetching(fetcher);
        if let Some(lent) = lent {
            files = reuse::borrowing(files, lent);
            if let Some(changed) = &changed {
                files = reuse::sharing_unchanged(files, changed);
            }
        }
        let loaded = read.insert(repo::load_files(files));
        returned = reuse::take_lent(&mut loaded.files);
        // What the cache saved is for who measures it: -v.
        if let Some(lent) = returned.as_ref().filter(|_| verbose > 0) {
            reused = format!("; {}", lent.summary());
        }
        loaded
    };
    let model = Model::new(base_repo);
    let outcome = rules::lint(&model, rules);
    let sources = &base_repo.files.sources;
    let problems = base_repo
        .issues
        .iter()
        .chain(&outcome.issues)
        .map(|i| (i.path.clone(), i.message.clone()))
        .collect();
    let kept: Vec<_> = outcome
        .findings
        .into_iter()
        .filter(|f| !config.ignores(f, sources))
        .collect();
    // Counted as the run's own summary counts them: the same rule on one
    // object at three lines is three findings of fewer fingerprints, and a
    // count of fingerprints reads as findings gone.
    let found_count = kept.len();
    let fingerprints: HashSet<String> = kept.into_iter().map(|f| f.fingerprint).collect();
    log(&format!(
        "base {reference} ({found}{}): {}, {}{reused}",
        if unchanged {
            ", the files as they are"
        } else {
            ""
        },
        super::plural(base_repo.objects.len(), "object"),
        super::plural(found_count, "finding")
    ));
    let baseline = Baseline::of(
        &model,
        releases::builtin(),
        format!("the base commit {reference}"),
    );
    drop(model);
    Ok(BaseRun {
        baseline,
        fingerprints: Some(fingerprints),
        all_findings: req.all_findings,
        changed,
        problems,
        _loaded: read.map(|repo| (repo, returned)),
    })
}
