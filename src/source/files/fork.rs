//! Builds on forks of [`Files`], one per core, whose results are taken
//! back in order as if every build had run here.

use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;

use super::{Event, Files, Input, ReadLayer};
use crate::source::limits::kustomize::RunBudget;
use crate::source::{PathMap, PathSet};
use crate::yaml::FileId;

/// How many jobs [`Files::each_in_order`] runs on forks before it takes
/// their results: enough to keep every core busy, few enough that what
/// the jobs took from the files' parses is dropped as they go.
pub(super) const JOBS_PER_FORK: usize = 256;

/// What a build on a fork leaves behind.
#[derive(Default)]
pub(super) struct Journal {
    /// It read a file not yet registered: registered here, the file's
    /// [`FileId`] would depend on which thread read it first, so the
    /// build is done again in order on the files themselves.
    pub(super) spoiled: bool,
    /// [`Files::note_input`]'s notes, in the order they were made (the
    /// first reader of a file is kept).
    pub(super) inputs: Vec<(PathBuf, Input, PathBuf)>,
    /// Files whose parsed documents it moved out of the cache.
    pub(super) taken: Vec<FileId>,
}

/// A job's result from a fork, with what it left behind and the budget
/// it used; `None` when the fork could not do it (see
/// [`Journal::spoiled`]).
pub(crate) struct Forked<R>(Option<Left<R>>);

/// What a job gave on a fork and left there.
struct Left<R> {
    result: R,
    journal: Journal,
    dirs: PathSet<PathBuf>,
    layer: Option<Box<dyn ReadLayer>>,
    used: RunBudget,
}

impl<R> Forked<R> {
    /// What the job gave on its fork, if the fork could do it.
    pub(crate) fn result(&self) -> Option<&R> {
        self.0.as_ref().map(|left| &left.result)
    }
}

impl Files {
    /// On a fork, marks its build to be done again in order and says so:
    /// what a fetch registers must get the same [`FileId`] on any thread.
    pub(crate) fn spoil_fork(&mut self) -> bool {
        self.note(|| Event::Fetched);
        match &mut self.journal {
            Some(journal) => {
                journal.spoiled = true;
                true
            }
            None => false,
        }
    }

    /// Does `job` for each of `jobs`, leaving these files as doing them
    /// one after another here would, and on every core where it can:
    /// each worker does jobs on its own fork of these files, and what a
    /// job left on its fork (notes, the questions a recorded build asked)
    /// is taken here in the order of `jobs`. A job that would register a
    /// new file is done again here, in its turn. Until `ready` holds (the
    /// jobs' own set-up is registered, such as kustomize's built-in field
    /// specs by the first build that needs them, after any file a build
    /// before it registered), and for a load whose layer keeps jobs in
    /// order (one that reuses builds registers files as it checks them),
    /// jobs are done here.
    pub(crate) fn each_in_order<J: Sync, R: Send>(
        &mut self,
        jobs: &[J],
        ready: impl Fn(&Files) -> bool,
        job: impl Fn(&mut Files, &J) -> R + Sync,
    ) -> Vec<R> {
        let mut out = Vec::with_capacity(jobs.len());
        while out.len() < jobs.len() && !self.forkable(&ready) {
            out.push(job(self, &jobs[out.len()]));
        }
        let start = out.len();
        if crate::cores::count().min(jobs.len() - start) < 2 {
            out.extend(jobs[start..].iter().map(|j| job(self, j)));
            return out;
        }
        // A chunk at a time: the files hold every parse a fork took until
        // its job is adopted, so a build that changes what it took (a
        // target namespace set) held the copy and the parse at once. At
        // 100k objects all 20,000 app builds of a level ran before the
        // first was adopted, every app object twice.
        for chunk in jobs[start..].chunks(JOBS_PER_FORK) {
            let forked = self.fork_each(chunk, &job);
            for (j, forked) in chunk.iter().zip(forked) {
                // A job that did not run out of budget gives what it
                // would give here, in its turn, if it fits in what is
                // left after the jobs before it; otherwise it runs again
                // here, so which build the budget stops never depends on
                // timing.
                let result = self.adopt(forked);
                out.push(result.unwrap_or_else(|| job(self, j)));
            }
        }
        out
    }

    /// Whether jobs may run on forks of these files now ([`Files::each_in_order`]).
    pub(crate) fn forkable(&self, ready: impl Fn(&Files) -> bool) -> bool {
        ready(self) && !self.layer.as_ref().is_some_and(|l| l.in_order()) && self.journal.is_none()
    }

    /// Does `job` for each of `jobs` on forks of these files, on every
    /// core, and gives each result with what the job left on its fork,
    /// in the order of `jobs`, for [`Files::adopt`] to take in that order
    /// (once [`Files::forkable`] holds).
    pub(crate) fn fork_each<J: Sync, R: Send>(
        &self,
        jobs: &[J],
        job: &(impl Fn(&mut Files, &J) -> R + Sync),
    ) -> Vec<Forked<R>> {
        let workers = crate::cores::count().min(jobs.len()).max(1);
        let next = std::sync::atomic::AtomicUsize::new(0);
        // The run's budget, spent by every worker: a job starts with what
        // is left then, so the workers together spend at most the budget
        // plus what the jobs in flight spend.
        let spent = std::sync::Mutex::new(RunBudget::NONE);
        let done: std::sync::Mutex<Vec<(usize, Forked<R>)>> = Default::default();
        rayon::scope(|s| {
            for _ in 0..workers {
                s.spawn(|_| {
                    let mut fork = self.fork();
                    let mine: Vec<_> = std::iter::from_fn(|| {
                        let k = next.fetch_add(1, Relaxed);
                        let j = jobs.get(k)?;
                        let so_far = *spent.lock().unwrap_or_else(|p| p.into_inner());
                        let left = self.left.minus(so_far);
                        (fork.left, fork.budget_refused) = (left, None);
                        let result = job(&mut fork, j);
                        let used = left.minus(fork.left);
                        let mut total = spent.lock().unwrap_or_else(|p| p.into_inner());
                        *total = total.plus(used);
                        drop(total);
                        let journal = fork.journal.replace(Journal::default()).unwrap_or_default();
                        let dirs = std::mem::take(&mut fork.built_dirs);
                        let fresh = fork.layer.as_ref().and_then(|l| l.fork());
                        let layer = std::mem::replace(&mut fork.layer, fresh);
                        let kept = !journal.spoiled && fork.budget_refused.is_none();
                        Some((
                            k,
                            Forked(kept.then_some(Left {
                                result,
                                journal,
                                dirs,
                                layer,
                                used,
                            })),
                        ))
                    })
                    .collect();
                    done.lock().unwrap_or_else(|p| p.into_inner()).extend(mine);
                });
            }
        });
        let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
        done.sort_unstable_by_key(|(k, _)| *k);
        done.into_iter().map(|(_, forked)| forked).collect()
    }

    /// What a job of [`Files::fork_each`] gave, with what it left on its
    /// fork taken here as doing it here would have left it, when it fits
    /// in the run's budget left now; `None` when the job is to be done
    /// again here, in its turn.
    pub(crate) fn adopt<R>(&mut self, forked: Forked<R>) -> Option<R> {
        match forked.0 {
            Some(left) if self.left.covers(&left.used) => {
                self.left = self.left.minus(left.used);
                self.take_journal(left.journal, left.dirs, left.layer);
                Some(left.result)
            }
            _ => None,
        }
    }

    /// A copy of these files for a job on another thread: the texts and
    /// parses so far are shared, what the job leaves is journaled.
    fn fork(&self) -> Files {
        Files {
            root: self.root.clone(),
            backing: self.backing.clone(),
            sources: self.sources.clone(),
            limits: self.limits,
            unreadable: self.unreadable.clone(),
            parsed: self.parsed.fork(),
            made_once: self.made_once.clone(),
            inputs: PathMap::default(),
            built_dirs: PathSet::default(),
            overlay: self.overlay.clone(),
            inline_docs: PathMap::default(),
            spent: None,
            layer: self.layer.as_ref().and_then(|l| l.fork()),
            unchanged: self.unchanged.clone(),
            listed: self.listed.clone(),
            read_ahead: None,
            unchanged_bytes: self.unchanged_bytes.clone(),
            journal: Some(Journal::default()),
            left: self.left,
            total: self.total,
            budget_refused: None,
            remote: self.remote.clone(),
            checkout: self.checkout.clone(),
        }
    }

    /// What a job left on a fork, as it would have left it here.
    fn take_journal(
        &mut self,
        journal: Journal,
        dirs: PathSet<PathBuf>,
        layer: Option<Box<dyn ReadLayer>>,
    ) {
        for (path, role, by) in journal.inputs {
            self.inputs.entry(path).or_insert((role, by));
        }
        self.built_dirs.extend(dirs);
        for &id in &journal.taken {
            self.parsed.retire(id);
        }
        if let (Some(mine), Some(theirs)) = (self.layer.as_mut(), layer) {
            mine.adopt(theirs);
        }
    }
}
