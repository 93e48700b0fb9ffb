//! Flux Kustomizations whose build holds no Flux Kustomization (an app's,
//! most of a large tree), rendered on every core: each one's build is
//! taken from the queue in turn ([`FluxTree::take`]), their Flux-level
//! steps run on forks of the files at once, and what each gave is taken
//! in queue order, as rendering them one after another would have left
//! it. A result that would not be the same in its turn (the steps spent
//! substitution budget that is no longer left, hit a cap of the run, or
//! spent more of the run's kustomize budget than is left) is thrown away
//! and the steps run again in their turn, so the budgets stop the same
//! Kustomization however the threads ran.
//!
//! Their steps may still make a Flux Kustomization (a patch that sets
//! `kind`, a variable in `apiVersion`): such a render applies it, so
//! what came after it in the queue waits for its children. When one is
//! taken, the batch's later ones go back on the queue under its children,
//! their results thrown away; nothing of theirs was recorded, and their
//! builds were copies whose uses are counted only in their turn
//! ([`FluxTree::take_build`]).
//!
//! A render's children whose builds are not made yet are built at once on
//! forks ([`FluxTree::prebuild`]), each build taken in its turn: the
//! batch can only take a Kustomization whose build is there.

use std::sync::{Mutex, PoisonError};

use super::Budget;
use super::render::{Taken, Walk, run_steps};
use super::sources::source_of;
use super::tree::{BuildKey, FluxTree, Inherited, LookupPool, doc_id, is_flux_ks};
use crate::source::{Files, Issue, Object, PathSet, kustomize};
use crate::yaml::{FileId, Node};

/// How many Flux Kustomizations wait at most: each holds its build's
/// objects twice while its steps run (as given, to run again).
const MAX_WAITING: usize = 512;

/// Taken Flux Kustomizations whose build holds none, their steps not run.
#[derive(Default)]
pub(super) struct Batch {
    taken: Vec<(Taken, Waiting)>,
    /// The files their objects add to the tree's.
    added: PathSet<FileId>,
    /// How many objects their builds hold: their steps add none.
    objects: usize,
}

/// How a taken Flux Kustomization was queued, to put it back.
pub(super) struct Waiting {
    /// Where the output holds it (`None`: the tree's root).
    pub at: Option<usize>,
    pub inherited: Inherited,
    /// Whether taking it marked its document rendered first.
    pub fresh: bool,
    /// The build whose use is counted in its turn, for one taken after
    /// the batch's first ([`FluxTree::take_build`]'s `peek`).
    pub peeked: Option<BuildKey>,
}

impl Batch {
    /// Whether steps may run on forks of `files` now: on more than one
    /// core, the kustomize defaults the namespace step reads registered,
    /// no layer that keeps jobs in order, and none that records each
    /// render's inputs for a later load (a fork's steps are given the
    /// substitution budget left before the batch, not the one left in
    /// their turn).
    pub fn may_run(files: &Files) -> bool {
        crate::cores::count() > 1
            && files.forkable(kustomize::defaults_registered)
            && !files.records()
    }

    pub fn is_empty(&self) -> bool {
        self.taken.is_empty()
    }

    /// Adds `taken`; `tree_files` are the files of the tree before it.
    pub fn push(&mut self, taken: Taken, waiting: Waiting, tree_files: &PathSet<FileId>) {
        if let Some((_, given)) = &taken.steps {
            let files = given.objects.iter().map(|o| o.file);
            self.added
                .extend(files.filter(|file| !tree_files.contains(file)));
            self.objects += given.objects.len();
        }
        self.taken.push((taken, waiting));
    }

    /// Whether a `substituteFrom` source of `ks` may be in a file a
    /// waiting one adds to the tree: which source it reads depends on the
    /// tree's files ([`super::steps::substitute_from`]), so its steps must
    /// wait until those are added.
    fn would_see(&self, ks: &Object, lookup_pool: &LookupPool) -> bool {
        if self.added.is_empty() {
            return false;
        }
        let from = ks.root.path(&["spec", "postBuild", "substituteFrom"]);
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
    /// Whether `ks` may be taken into `batch` before the waiting ones are:
    /// its take reads nothing they change and changes nothing before its
    /// turn. Its build is made, holds no Flux Kustomization and fits in
    /// the render budget after all of theirs; its path's source root is
    /// known (finding it would record a guess); its substitution sources
    /// are in no file they add. `Some` with its build's key, if any.
    pub(super) fn joins(
        &mut self,
        files: &mut Files,
        batch: &Batch,
        (ks, at): (&Object, Option<usize>),
        lookup_pool: &LookupPool,
    ) -> Option<Option<BuildKey>> {
        if batch.taken.len() >= MAX_WAITING {
            return None;
        }
        let found =
            at.and_then(|at| Some(self.keys.get(&at)?.as_ref().map(|(key, _)| key.clone())));
        let key = match found {
            Some(key) => key,
            None if self.root_known(ks) => self.build_key(files, ks).map(|(key, _)| key),
            None => return None,
        };
        let Some(key) = key else {
            return Some(None);
        };
        let room = files.limits().flux.max_rendered_objects;
        let fits = |n: usize| self.output.len() + batch.objects + n <= room;
        let prebuilt = || Some(&self.prebuilt.get(&key)?.result()?.0);
        let joins = match self.builds.get(&key).or_else(prebuilt)? {
            Ok(built) => {
                !built.objects.iter().any(is_flux_ks)
                    && fits(built.objects.len())
                    && !batch.would_see(ks, lookup_pool)
            }
            Err(_) => true,
        };
        joins.then_some(Some(key))
    }

    /// Whether finding the path of `ks` changes nothing: its source's
    /// root is known already (or it is another repository's), so no root
    /// is guessed from it.
    fn root_known(&self, ks: &Object) -> bool {
        let source = source_of(ks);
        !self.artifacts.knows(&source)
            && (!self.local.contains(&source) || self.source_roots.contains_key(&source))
    }

    /// Makes the builds of the Flux Kustomizations `queued` (a render's
    /// children, to be taken in turn) on forks of the files at once, where
    /// steps may run on forks ([`Batch::may_run`]): a build that is not
    /// made yet is otherwise made when its Kustomization is taken, one
    /// after another (a kustomization's replacement that sets their
    /// `targetNamespace` makes every app's build differ from the one made
    /// for it as written). Each is taken in its turn ([`Files::adopt`]),
    /// or made again then, as if made then. `queued` are the children
    /// with their index in the output; their build keys are kept for their
    /// turn ([`FluxTree::keys`]).
    pub(super) fn prebuild(&mut self, files: &mut Files, queued: &[(usize, &Object)]) {
        if queued.len() < 2 || !Batch::may_run(files) {
            return;
        }
        let mut jobs = Vec::new();
        for &(at, ks) in queued {
            if !self.root_known(ks) {
                continue;
            }
            let found = self.build_key(files, ks);
            if let Some((key, flux)) = &found {
                let made = self.builds.contains_key(key) || self.prebuilt.contains_key(key);
                if !made && !jobs.iter().any(|(k, _)| k == key) {
                    jobs.push((key.clone(), flux.clone()));
                }
            }
            self.keys.insert(at, found);
        }
        if jobs.len() < 2 {
            return;
        }
        let (layer, cuts) = (self.layer, &self.cuts);
        let built = files.fork_each(&jobs, &|files, (key, flux)| {
            let cutting = super::render::cutting(cuts, key);
            super::render::build_noting_dirs(layer, files, &key.0, flux, cutting)
        });
        for ((key, _), forked) in jobs.into_iter().zip(built) {
            self.prebuilt.insert(key, forked);
        }
    }

    /// Runs the steps of the waiting Flux Kustomizations and adds what
    /// each gives to `tree`, in the order they were taken. One whose
    /// steps made a Flux Kustomization puts the later ones back on the
    /// queue, under its children.
    pub(super) fn flush(
        &mut self,
        files: &mut Files,
        batch: &mut Batch,
        lookup_pool: &LookupPool,
        walk: &mut Walk<'_>,
        issues: &mut Vec<Issue>,
    ) {
        let mut taken = std::mem::take(&mut batch.taken);
        batch.added.clear();
        batch.objects = 0;
        let steps: Vec<_> = taken.iter_mut().map(|(t, _)| t.steps.take()).collect();
        let as_given = steps.clone();
        let mut forked = Vec::new();
        if taken.len() > 1 {
            let jobs: Vec<_> = taken
                .iter()
                .zip(steps)
                .map(|((t, _), s)| (t, Mutex::new(s)))
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
        let mut taken = taken.into_iter().zip(as_given);
        // The inputs as given, kept for steps to run again here, are freed
        // on a worker once a fork's result is taken: the workers wait for
        // these takes, and freeing the copies' trees was 3.5 % of
        // joryirving__home-ops's main thread.
        let mut unused = Vec::new();
        while let Some(((t, waiting), given)) = taken.next() {
            if let Some(key) = &waiting.peeked
                && !self.used(files, key)
            {
                let later = taken.by_ref().map(|(later, _)| later);
                put_back(std::iter::once((t, waiting)).chain(later).collect(), walk);
                break;
            }
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
                        unused.push(given);
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
            let ks = t.ks.clone();
            let (objs, passed) = self.finish(files, t, gave, issues);
            if objs.iter().any(is_flux_ks) {
                // Under its children, which come first.
                put_back(taken.by_ref().map(|(later, _)| later).collect(), walk);
            }
            self.settle(files, &ks, objs, passed, walk, issues);
        }
        if !unused.is_empty() {
            crate::cores::drop_later(unused);
        }
    }
}

/// Puts taken Flux Kustomizations back on the queue as they were, the
/// next one last; nothing of theirs was recorded.
fn put_back(taken: Vec<(Taken, Waiting)>, walk: &mut Walk<'_>) {
    for (t, waiting) in taken.into_iter().rev() {
        walk.done.remove(&t.id);
        if waiting.fresh {
            walk.rendered.remove(&doc_id(&t.ks));
        }
        walk.queue.push((t.id, waiting.at, waiting.inherited));
    }
}

/// The run's substitution budget after steps that ran from `before` and
/// left `after`, taken when `now` is left: `None` when the same steps from
/// `now` might have given something else ([`Budget::replay`]).
pub(super) fn replayed(
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
