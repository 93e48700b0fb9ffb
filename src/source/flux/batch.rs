//! Flux Kustomizations that apply no other one (an app's, most of a
//! large tree), rendered on every core: each one's build is taken from the
//! queue in turn ([`FluxTree::take`]), their Flux-level steps run on forks
//! of the files at once, and what each gave is taken in queue order, as
//! rendering them one after another would have left it. A result that
//! would not be the same in its turn (the steps spent substitution budget
//! that is no longer left, hit a cap of the run, or spent more of the
//! run's kustomize budget than is left) is thrown away and the steps run
//! again in their turn, so the budgets stop the same Kustomization however
//! the threads ran.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};

use super::Budget;
use super::render::{Taken, run_steps};
use super::tree::{FluxTree, LookupPool};
use crate::source::{Files, Issue, kustomize};
use crate::yaml::{FileId, Node};

/// How many Flux Kustomizations wait at most: each holds its build's
/// objects twice while its steps run (as given, to run again).
const MAX_WAITING: usize = 512;

/// Taken Flux Kustomizations that apply no other one, their steps not run.
#[derive(Default)]
pub(super) struct Batch {
    taken: Vec<Taken>,
    /// The files their objects add to the tree's.
    added: HashSet<FileId>,
}

impl Batch {
    /// Whether steps may run on forks of `files` now: on more than one
    /// core, the kustomize defaults the namespace step reads registered,
    /// no layer that keeps jobs in order, and none that records each
    /// render's inputs for a later load (a fork's steps are given the
    /// substitution budget left before the batch, not the one left in
    /// their turn).
    pub fn may_run(files: &Files) -> bool {
        rayon::current_num_threads() > 1
            && files.forkable(kustomize::defaults_registered)
            && !files.records()
    }

    pub fn is_empty(&self) -> bool {
        self.taken.is_empty()
    }

    pub fn is_full(&self) -> bool {
        self.taken.len() >= MAX_WAITING
    }

    /// Adds `taken`; `tree_files` are the files of the tree before it.
    pub fn push(&mut self, taken: Taken, tree_files: &HashSet<FileId>) {
        if let Some((_, given)) = &taken.steps {
            let files = given.objects.iter().map(|o| o.file);
            self.added
                .extend(files.filter(|file| !tree_files.contains(file)));
        }
        self.taken.push(taken);
    }

    /// Whether a `substituteFrom` source of `taken` may be in a file a
    /// waiting one adds to the tree: which source it reads depends on the
    /// tree's files ([`super::steps::substitute_from`]), so its steps must
    /// wait until those are added.
    pub fn would_see(&self, taken: &Taken, lookup_pool: &LookupPool) -> bool {
        if self.added.is_empty() || taken.steps.is_none() {
            return false;
        }
        let from = taken.ks.root.path(&["spec", "postBuild", "substituteFrom"]);
        from.and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .any(|entry| {
                let text = |field: &str| entry.str_at(&[field]).unwrap_or("").to_string();
                lookup_pool
                    .get(&(text("kind"), text("name")))
                    .is_some_and(|found| found.iter().any(|o| self.added.contains(&o.file)))
            })
    }
}

impl FluxTree {
    /// Runs the steps of the waiting Flux Kustomizations and adds what
    /// each gives to `tree`, in the order they were taken.
    pub(super) fn flush(
        &mut self,
        files: &mut Files,
        batch: &mut Batch,
        lookup_pool: &LookupPool,
        tree: u32,
        issues: &mut Vec<Issue>,
    ) {
        let mut taken = std::mem::take(&mut batch.taken);
        batch.added.clear();
        let steps: Vec<_> = taken.iter_mut().map(|t| t.steps.take()).collect();
        let as_given = steps.clone();
        let mut forked = Vec::new();
        if taken.len() > 1 {
            let jobs: Vec<_> = taken
                .iter()
                .zip(steps)
                .map(|(t, s)| (t, Mutex::new(s)))
                .collect();
            let (layer, tree_files) = (self.layer, &self.tree_files);
            forked = files.fork_each(&jobs, &|files, (t, steps)| {
                let steps = steps
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take()?;
                Some(run_steps(
                    layer,
                    files,
                    &t.id,
                    &t.ks,
                    steps,
                    lookup_pool,
                    tree_files,
                ))
            });
        }
        let mut forked = forked.into_iter();
        for (t, given) in taken.into_iter().zip(as_given) {
            let forked = forked.next();
            let gave = given.map(|(key, mut given)| {
                let kept = forked.as_ref().and_then(|f| {
                    let gave = f.result()?.as_ref()?;
                    replayed(files, &self.subst_budget, &given.budget, &gave.budget)
                });
                let adopted = kept.and_then(|budget| Some((budget, files.adopt(forked?)??)));
                match adopted {
                    Some((budget, mut gave)) => {
                        gave.budget = budget;
                        gave
                    }
                    None => {
                        given.budget = self.subst_budget.clone();
                        let (layer, tree_files) = (self.layer, &self.tree_files);
                        run_steps(
                            layer,
                            files,
                            &t.id,
                            &t.ks,
                            (key, given),
                            lookup_pool,
                            tree_files,
                        )
                    }
                }
            });
            let (objs, _) = self.finish(files, t, gave, issues);
            self.append(objs, tree);
        }
    }
}

/// The run's substitution budget after steps that ran from `before` and
/// left `after`, taken when `now` is left: `None` when the same steps from
/// `now` might have given something else ([`Budget::replay`]).
fn replayed(
    files: &Files,
    now: &Option<Budget>,
    before: &Option<Budget>,
    after: &Option<Budget>,
) -> Option<Option<Budget>> {
    if before == now {
        return Some(after.clone());
    }
    // Steps without postBuild leave the budget as they found it (unset).
    let Some(after) = after else {
        return Some(now.clone());
    };
    let fresh = || super::budget(&files.limits().flux);
    let before = before.clone().unwrap_or_else(fresh);
    let now = now.clone().unwrap_or_else(fresh);
    now.replay(&before, after).map(Some)
}
