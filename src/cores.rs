//! How many cores a run's stages use, chosen by the repository's size.
//!
//! A second core makes a run shorter but not cheaper: what one thread
//! made and another reads or frees moves between the cores' caches, where
//! one core would have found it in its own. On the 2-core machine of
//! BENCHMARKS.md ("One core for a small repository") a line another core
//! wrote costs 2.6 times as much to read and 10 times as much to write,
//! and a lint on both cores took 16 to 30 % more CPU than on one at every
//! size measured (joryirving__home-ops 35.8 against 29.0 ms, for 22.8
//! against 28.4 ms of wall; the 10k-object synthetic repo 212 against
//! 171 ms, for 127 against 170 ms). Below [`SMALL_RUN_BYTES`] of YAML the
//! second core saves a few milliseconds nobody waits for and costs a
//! fifth more CPU (a hook on every commit, a CI check on every push), so
//! a small run keeps its stages on the thread that runs it; a larger one
//! spreads them over every core.
//!
//! The choice is the load's thread's ([`fit`], called once the load has
//! read the repository's YAML); each stage asks it through [`count`],
//! [`map`], [`join`] and [`drop_later`]. Threads asked for by name
//! (`RAYON_NUM_THREADS`) are used whatever the size, and so are every
//! core under [`on_every_core`]. What a run finds never depends on it:
//! the stages on many cores give what they give on one.

use std::cell::Cell;

/// YAML read past which a run uses every core: 4 MiB, the size where a
/// run stops being small for the heap too (`alloc::read_in`).
/// joryirving__home-ops (1.1 MB, 28 ms on one core) stays on one; the
/// 10k-object synthetic repo (20 MB) uses both.
pub const SMALL_RUN_BYTES: usize = 4 << 20;

thread_local! {
    /// Whether this thread's run keeps its stages on this thread.
    static ONE_CORE: Cell<bool> = const { Cell::new(false) };
    /// Whether [`fit`] leaves this thread's run on every core.
    static EVERY_CORE: Cell<bool> = const { Cell::new(false) };
}

/// Makes the calling thread one of rayon's workers, with every core's
/// worth of threads in all: a stage it starts runs its first part here
/// instead of waking a worker and sleeping until the workers are done
/// (joryirving__home-ops took 33 instead of 150 to 390 context switches).
/// Call first thing in `main`. With a single thread it does nothing, so
/// that a thread of ours that uses rayon never waits on `main`.
pub fn start() {
    // rayon's own default: the threads asked for, else one per core.
    let threads = asked_threads()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    if threads > 1 {
        // Fails only if the pool is already made, which keeps it as it is.
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .use_current_thread()
            .build_global();
    }
}

/// The threads `RAYON_NUM_THREADS` asks for, when it is a number above
/// zero (what rayon takes from it).
fn asked_threads() -> Option<usize> {
    let asked = std::env::var("RAYON_NUM_THREADS")
        .ok()?
        .parse::<usize>()
        .ok();
    asked.filter(|&n| n > 0)
}

/// Keeps this thread's run on one core when it read less than
/// [`SMALL_RUN_BYTES`] of YAML, and on every core otherwise, unless the
/// threads were asked for (`RAYON_NUM_THREADS`, [`on_every_core`]).
pub fn fit(yaml_bytes: usize) {
    let asked = EVERY_CORE.with(Cell::get) || asked_threads().is_some();
    ONE_CORE.with(|one| one.set(!asked && yaml_bytes < SMALL_RUN_BYTES));
}

/// `f` with this thread's runs on every core whatever their size: for a
/// caller that compares the stages on many cores with them on one.
pub fn on_every_core<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            EVERY_CORE.with(|every| every.set(self.0));
            ONE_CORE.with(|one| one.set(false));
        }
    }
    let _restore = Restore(EVERY_CORE.with(|every| every.replace(true)));
    ONE_CORE.with(|one| one.set(false));
    f()
}

/// How many cores this thread's stages may use now.
pub fn count() -> usize {
    match ONE_CORE.with(Cell::get) {
        true => 1,
        false => rayon::current_num_threads(),
    }
}

/// `f` of each of `items`, in order, on [`count`] cores.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync + Send) -> Vec<R> {
    use rayon::prelude::*;
    match count() {
        1 => items.iter().map(f).collect(),
        _ => items.par_iter().map(f).collect(),
    }
}

/// `a()` and `b()`, on two cores when this thread's run may use them.
pub fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    match count() {
        1 => (a(), b()),
        _ => rayon::join(a, b),
    }
}

/// Frees `value` on a worker when this thread's run uses every core (the
/// thread goes on at once); here otherwise, where its memory is in this
/// core's cache.
pub fn drop_later<T: Send + 'static>(value: T) {
    match count() {
        1 => drop(value),
        _ => rayon::spawn(move || drop(value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_run_keeps_to_its_thread_and_a_large_one_does_not() {
        std::thread::spawn(|| {
            let cores = rayon::current_num_threads();
            assert_eq!(count(), cores, "every core before the load decides");
            fit(SMALL_RUN_BYTES - 1);
            assert_eq!(count(), 1);
            let here = std::thread::current().id();
            let ran_on = map(&[1, 2, 3], |_| std::thread::current().id());
            assert!(ran_on.iter().all(|&id| id == here), "{ran_on:?}");
            let (a, b) = join(
                || std::thread::current().id(),
                || std::thread::current().id(),
            );
            assert_eq!((a, b), (here, here));
            fit(SMALL_RUN_BYTES);
            assert_eq!(count(), cores);
            assert_eq!(map(&[1, 2, 3], |x| x * 2), [2, 4, 6]);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_run_asked_for_every_core_keeps_them() {
        std::thread::spawn(|| {
            let every = on_every_core(|| {
                fit(0);
                count()
            });
            assert_eq!(every, rayon::current_num_threads());
            fit(0);
            assert_eq!(count(), 1, "the size decides again after");
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_choice_is_the_deciding_thread_s_alone() {
        fit(0);
        let elsewhere = std::thread::spawn(count).join().unwrap();
        assert_eq!(elsewhere, rayon::current_num_threads());
        assert_eq!(count(), 1);
    }
}
