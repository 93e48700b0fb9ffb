//! The base stage, `--base <git ref>`: lint the base commit too, report
//! only findings whose fingerprint the base run did not have, and give
//! the `releaseCrossed` rule step the app versions of the base commit (so
//! that version bumps across a known breaking release are found).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::Log;
use crate::model::Model;
use crate::rules::releases::{self, Baseline};
use crate::rules::{self, Finding, Rule, config::Config};
use crate::source::commit_tree::Tree;
use crate::source::repo::{self, Repo};
use crate::source::reuse::Lent;
use crate::source::{Files, git};
use crate::yaml::Limits;

/// The commit to compare with.
#[derive(Debug, Clone, Default)]
pub struct BaseRequest {
    /// A git commit, branch or tag; `None`: no base run.
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
    /// The base commit's load, when it was loaded: freed with the linted
    /// one's, or left to the exit with it.
    _loaded: Option<(Repo, Option<Lent>)>,
}

impl BaseRun {
    /// Whether a finding of the linted tree is to be reported: always
    /// without --base, else when the base run did not have it. A
    /// fingerprint names the rule and the objects involved, not lines,
    /// so a finding that only moved is not new.
    pub fn is_new(&self, f: &Finding) -> bool {
        self.fingerprints
            .as_ref()
            .is_none_or(|seen| !seen.contains(&f.fingerprint))
    }
}

/// The base commit, found before the working tree is loaded, and the
/// files of the linted directory that are not as it has them (`None`
/// when git cannot tell).
pub struct Located(Result<(git::Commit, Option<HashSet<PathBuf>>, Opening), String>);

/// The base commit's tree, listed by a thread while the working tree
/// loads: most of that load runs on one core (the Flux renders), and
/// listing the tree (`git ls-tree` and the maps made of it) was a tenth
/// of the base's cost on joryirving__home-ops. `None` when the files are
/// as the commit has them, so that the tree is not read at all.
type Opening = Option<std::thread::JoinHandle<Result<Tree, String>>>;

impl Located {
    /// Finds the commit `req` names for a lint of `root`; `None` without --base.
    pub fn of(req: &BaseRequest, root: &Path) -> Option<Located> {
        let reference = req.reference.as_ref()?;
        Some(Located(
            git::resolve(root, reference)
                .map_err(|e| e.to_string())
                .map(|commit| {
                    let changed = git::changed_since(root, &commit.id);
                    let opening = (!changed.as_ref().is_some_and(HashSet::is_empty))
                        .then(|| open_in_background(commit.clone()))
                        .flatten();
                    (commit, changed, opening)
                }),
        ))
    }

    /// Whether the working tree's load is to record what a load of the
    /// base commit can reuse: not when the base load is that load itself
    /// (recording costs a copy of every document the load changes).
    pub fn wants_reuse(&self) -> bool {
        !matches!(&self.0, Ok((_, Some(changed), _)) if changed.is_empty())
    }
}

/// Lists `commit`'s tree on a thread of its own. Should the thread not
/// start, the tree is listed when the base is loaded.
fn open_in_background(commit: git::Commit) -> Opening {
    std::thread::Builder::new()
        .name("base-tree".into())
        .spawn(move || commit.tree().map_err(|e| e.to_string()))
        .ok()
}

/// Lints the base commit with the same rules and configuration. When no
/// file of the linted directory differs from the commit (a pre-commit hook
/// on a change elsewhere, a CI run on a merge commit), the repository
/// already loaded is the base commit's and is not read again. Else the
/// base load reuses what the linted one parsed and built where its inputs
/// are the same (see [`crate::source::reuse`]), and its texts of the
/// files git says are unchanged ([`Files::sharing_unchanged`]).
pub fn prepare(
    req: &BaseRequest,
    located: Option<Located>,
    linted: Option<&mut Repo>,
    rules: &[Rule],
    config: &Config,
    log: &mut Log,
) -> Result<BaseRun, String> {
    let (Some(reference), Some(Located(located)), Some(linted)) = (&req.reference, located, linted)
    else {
        return Ok(BaseRun::default());
    };
    let lent = Lent::of(&mut linted.files);
    let linted: &Repo = linted;
    let root = linted.files.root();
    let (commit, changed, opening) = located?;
    let unchanged = changed.as_ref().is_some_and(HashSet::is_empty);
    let mut read = None;
    let mut returned = None;
    let mut reused = String::new();
    let base_repo = if unchanged {
        linted
    } else {
        let tree = match opening.map(std::thread::JoinHandle::join) {
            Some(Ok(opened)) => opened,
            Some(Err(_)) => {
                Err("listing the base commit's tree failed (its thread panicked)".into())
            }
            None => commit.tree().map_err(|e| e.to_string()),
        }?;
        let mut files = Files::in_commit(root, tree, Limits::default());
        if let Some(lent) = lent {
            files = files.borrowing(lent);
            if let Some(changed) = &changed {
                files = files.sharing_unchanged(changed);
            }
        }
        let loaded = read.insert(repo::load_files(files));
        returned = loaded.files.take_lent();
        if let Some(lent) = &returned {
            reused = format!("; {}", lent.summary());
        }
        loaded
    };
    let model = Model::new(base_repo);
    let outcome = rules::lint(&model, rules);
    let sources = &base_repo.files.sources;
    let fingerprints: HashSet<String> = outcome
        .findings
        .into_iter()
        .filter(|f| !config.ignores(f, sources))
        .map(|f| f.fingerprint)
        .collect();
    log(&format!(
        "base {reference} ({}{}): {} objects, {} findings{reused}",
        &commit.id[..commit.id.len().min(12)],
        if unchanged {
            ", the files as they are"
        } else {
            ""
        },
        base_repo.objects.len(),
        fingerprints.len()
    ));
    let baseline = Baseline::of(
        &model,
        releases::builtin(),
        format!("the base commit {reference}"),
    );
    drop(model);
    Ok(BaseRun {
        baseline,
        fingerprints: (!req.all_findings).then_some(fingerprints),
        _loaded: read.map(|repo| (repo, returned)),
    })
}
