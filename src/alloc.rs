//! Process-wide memory settings, shared by the binary and the
//! benchmark's floor examples so that both measure the same allocator
//! (each declares [`ALLOCATOR`] its `#[global_allocator]`).

use std::sync::atomic::{AtomicUsize, Ordering};

/// The linter allocates many small nodes (every YAML value, every copy a
/// kustomize or Flux step makes); mimalloc halved the time glibc's
/// allocator took on a 1,100-file repo (BENCHMARKS.md). On Linux
/// jemalloc (tikv-jemallocator, what ruff links there) does better
/// again, measured interleaved against mimalloc on a loaded machine
/// (BENCHMARKS.md, memory): joryirving__home-ops CPU
/// 133 / 116 / 134 ms against 150 / 148 / 129 ms (perf stat -r 20), the
/// 100k-object synthetic repo user+sys 7.1 s against 7.2 s median and
/// peak RSS 613 MB against 629 MB (median of 5).
#[cfg(target_os = "linux")]
pub type Allocator = tikv_jemallocator::Jemalloc;
#[cfg(target_os = "linux")]
pub const ALLOCATOR: Allocator = tikv_jemallocator::Jemalloc;
/// jemalloc's options, read once at its start (tikv-jemalloc-sys names
/// the `malloc_conf` symbol `_rjem_malloc_conf`; a C string). One arena
/// instead of one per thread slot (`narenas` 4 per core): the parse on
/// the rayon workers frees its trees into the workers' arenas, where the
/// main thread's render could not reuse them, so the process held both.
/// Freed pages back to the kernel after 0.3 s instead of 10 s (longer
/// than a run, so nothing was given back): what a phase of a large run
/// frees no longer stays resident through the next, while a small run
/// (joryirving__home-ops, 0.1 s) gives back almost nothing and pays no
/// `madvise` for it (0 ms decay made it 486 calls). On the 100k-object
/// synthetic repo peak RSS 585 -> 528 MB (narenas 1 alone: 551 MB);
/// BENCHMARKS.md. Its mappings asked for transparent huge pages
/// (`thp:always`, MADV_HUGEPAGE): see [`read_in`], which takes them back
/// from a large run.
#[cfg(target_os = "linux")]
#[used]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8; 40] = b"narenas:1,dirty_decay_ms:300,thp:always\0";
#[cfg(not(target_os = "linux"))]
pub type Allocator = mimalloc::MiMalloc;
#[cfg(not(target_os = "linux"))]
pub const ALLOCATOR: Allocator = mimalloc::MiMalloc;

/// Puts the heap's mappings on 2 MiB boundaries: call first thing in
/// `main`. jemalloc grows its one arena by mappings of 2, 2.5, 3, 3.5,
/// 4, 5, 6, 7, 8, 10, 12 MiB and on (four sizes a doubling); the kernel
/// places a mapping on a 2 MiB boundary only when its length is a
/// multiple of 2 MiB, and a huge page needs a whole aligned 2 MiB inside
/// the mapping, so the 2.5 to 3.5, 5 and 7 MiB ones (most of a small
/// run's heap) were faulted in 4 KiB pages despite `thp:always`. One
/// block of 6 MiB on a 2 MiB boundary, asked and given back untouched,
/// makes the arena grow by 8 MiB (the block plus room to align it) and
/// then by 10, 12, 14, 16 MiB and on, all multiples of 2 MiB:
/// joryirving__home-ops 2,193 -> 373 page faults, 40.9 -> 37.7 ms CPU;
/// the 100k-object synthetic repo's peak RSS 1.5-3 MB more, with huge
/// pages or without (BENCHMARKS.md, "Heap mappings on huge-page
/// boundaries"). The block is never touched, so it costs no page, and
/// later blocks are cut from it.
pub fn start() {
    #[cfg(target_os = "linux")]
    {
        let flags = tikv_jemalloc_sys::MALLOCX_ALIGN(2 << 20);
        // SAFETY: a non-zero size and a power-of-two alignment; the block
        // is given back at once, with the flags it was asked with.
        unsafe {
            let block = tikv_jemalloc_sys::mallocx(6 << 20, flags);
            if !block.is_null() {
                tikv_jemalloc_sys::dallocx(block, flags);
            }
        }
    }
}

/// Input read so far, for [`read_in`].
static READ: AtomicUsize = AtomicUsize::new(0);

/// Input read past which the heap grows in 4 KiB pages again, and freed
/// pages go back to the kernel sooner.
const HUGE_PAGES_UP_TO: usize = 4 << 20;

/// A large run's decay of freed pages, in ms: none, each freed page
/// given back at once. At the 100k-object synthetic repo 10 s took the
/// peak RSS to 401-404 MB, 30 ms to 395-396 MB; with the faster builds
/// since, what they free in 30 ms is more (397.6-398.3 MB), and 0 ms
/// holds it at 395.4-395.5 MB for the same wall time within the noise
/// (1.91-1.94 against 1.88-1.96 s, three runs interleaved).
const LARGE_RUN_DIRTY_DECAY_MS: isize = 0;

/// Counts `bytes` of input read, and once the input passes
/// [`HUGE_PAGES_UP_TO`] turns transparent huge pages off for the process
/// and shortens jemalloc's decay to [`LARGE_RUN_DIRTY_DECAY_MS`].
///
/// A small run (joryirving__home-ops: 1.1 MB of YAML, 32 MB resident)
/// faults its heap in 2 MiB pages, one fault where 4 KiB pages took 512:
/// 4,970 -> 2,370 page faults, which were a tenth of the run's CPU
/// samples (BENCHMARKS.md, "Page faults and reads"). A large one would pay for the pages it leaves
/// partly used: at the 100k-object synthetic repo (31 MB of YAML) peak
/// RSS 384 -> 404 MB with huge pages throughout. Before jemalloc,
/// mimalloc's huge pages made every first touch zero 2 MiB and every
/// purge split one (a fifth of the CPU samples at 100k).
///
/// PR_SET_THP_DISABLE (prctl(2)) is checked when a page is faulted in, so
/// from here on the heap grows in 4 KiB pages, MADV_HUGEPAGE or not;
/// child processes inherit it.
pub fn read_in(bytes: usize) {
    let before = READ.fetch_add(bytes, Ordering::Relaxed);
    if before < HUGE_PAGES_UP_TO && before + bytes >= HUGE_PAGES_UP_TO {
        #[cfg(target_os = "linux")]
        // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and
        // changes no memory of this process; a kernel without it returns
        // EINVAL, which leaves THP as it was.
        unsafe {
            libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        }
        #[cfg(target_os = "linux")]
        set_dirty_decay(LARGE_RUN_DIRTY_DECAY_MS);
    }
}

/// Sets the dirty-page decay of every arena there is (`arena.<i>`:
/// jemalloc's `mallctl(3)` takes no "all arenas" index for it) and of
/// those made later (`arenas.dirty_decay_ms`: the arena for huge blocks
/// is made at the first). A failure leaves a decay as it was: it only
/// costs memory.
#[cfg(target_os = "linux")]
fn set_dirty_decay(ms: isize) {
    let mut narenas: u32 = 0;
    let mut len = std::mem::size_of::<u32>();
    // SAFETY: reads an `unsigned` into `narenas`, whose size `len` gives.
    unsafe {
        tikv_jemalloc_sys::mallctl(
            c"arenas.narenas".as_ptr(),
            (&raw mut narenas).cast(),
            &mut len,
            std::ptr::null_mut(),
            0,
        );
    }
    let names = (0..narenas)
        .map(|i| format!("arena.{i}.dirty_decay_ms"))
        .chain(["arenas.dirty_decay_ms".to_string()]);
    for name in names {
        let Ok(name) = std::ffi::CString::new(name) else {
            continue;
        };
        let mut ms = ms;
        // SAFETY: the name is a NUL-terminated C string; the new value is
        // an `ssize_t` the control reads, of the size given; no old value
        // is asked.
        unsafe {
            tikv_jemalloc_sys::mallctl(
                name.as_ptr(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                (&raw mut ms).cast(),
                std::mem::size_of::<isize>(),
            );
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// Blocks of 24 MiB in all, asked after [`start`], lie in mappings
    /// that begin and end on 2 MiB boundaries (adjacent ones show as one).
    #[test]
    fn the_heap_grows_by_whole_huge_pages() {
        start();
        let blocks: Vec<_> = (0..24)
            // SAFETY: a non-zero size, no flags.
            .map(|_| unsafe { tikv_jemalloc_sys::mallocx(1 << 20, 0) })
            .collect();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let ranges: Vec<(usize, usize)> = maps
            .lines()
            .filter_map(|line| {
                let (start, end) = line.split_whitespace().next()?.split_once('-')?;
                let hex = |s| usize::from_str_radix(s, 16).ok();
                Some((hex(start)?, hex(end)?))
            })
            .collect();
        for &block in &blocks {
            let at = block as usize;
            let (start, end) = *ranges
                .iter()
                .find(|(start, end)| (*start..*end).contains(&at))
                .unwrap();
            assert_eq!((start % (2 << 20), end % (2 << 20)), (0, 0), "{at:#x}");
        }
        for block in blocks {
            // SAFETY: asked above with no flags, given back once.
            unsafe { tikv_jemalloc_sys::dallocx(block, 0) };
        }
    }

    #[test]
    fn huge_pages_are_off_once_the_input_passes_the_bound() {
        read_in(HUGE_PAGES_UP_TO);
        // SAFETY: PR_GET_THP_DISABLE only reads the process's flag.
        let off = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
        assert_eq!(off, 1);
        let mut ms: isize = -2;
        let mut len = std::mem::size_of::<isize>();
        // SAFETY: reads an `ssize_t` into `ms`, whose size `len` gives.
        let rc = unsafe {
            tikv_jemalloc_sys::mallctl(
                c"arena.0.dirty_decay_ms".as_ptr(),
                (&raw mut ms).cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        assert_eq!((rc, ms), (0, LARGE_RUN_DIRTY_DECAY_MS));
    }
}
