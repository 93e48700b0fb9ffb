//! Process-wide memory settings, shared by the binary and the
//! benchmark's floor examples so that both measure the same allocator
//! (each declares [`ALLOCATOR`] its `#[global_allocator]`).

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
/// BENCHMARKS.md.
#[cfg(target_os = "linux")]
#[used]
#[allow(non_upper_case_globals)]
#[unsafe(export_name = "_rjem_malloc_conf")]
pub static malloc_conf: &[u8; 29] = b"narenas:1,dirty_decay_ms:300\0";
#[cfg(not(target_os = "linux"))]
pub type Allocator = mimalloc::MiMalloc;
#[cfg(not(target_os = "linux"))]
pub const ALLOCATOR: Allocator = mimalloc::MiMalloc;

/// mimalloc (the allocator here before jemalloc, and still off Linux)
/// asks for transparent huge pages on its arenas (MADV_HUGEPAGE,
/// mimalloc src/prim/unix/prim.c), so every first touch zeroes 2 MiB and
/// every purge of a part splits one: on the 100k-object synthetic repo
/// that was a fifth of all CPU samples (`clear_page_erms`). Turning THP
/// off for the process, as MIMALLOC_ALLOW_THP=0 does (prctl(2),
/// PR_SET_THP_DISABLE), took user+sys 6.7-7.7 -> 6.7-6.8 s (sys 1.9-2.9
/// -> 1.4-1.6 s, user a little up) and peak RSS 631-645 -> 613-620 MB
/// there. jemalloc asks for none by default (`thp:default`), but a kernel
/// with THP `always` would give them to it too. The kernel checks the
/// setting when it faults a page in, so calling this first thing in
/// `main` covers the memory the allocator reserved before it; child
/// processes inherit it.
pub fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes
    // no memory of this process; a kernel without it returns EINVAL,
    // which leaves THP as it was.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
