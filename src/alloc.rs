//! Process-wide memory settings, shared by the binary and the
//! benchmark's floor examples so that both measure the same allocator
//! (each chooses mimalloc itself, with `#[global_allocator]`).

/// mimalloc asks for transparent huge pages on its arenas (MADV_HUGEPAGE,
/// mimalloc src/prim/unix/prim.c), so every first touch zeroes 2 MiB and
/// every purge of a part splits one: on the 100k-object synthetic repo
/// that was a fifth of all CPU samples (`clear_page_erms`). Turning THP
/// off for the process, as MIMALLOC_ALLOW_THP=0 does (prctl(2),
/// PR_SET_THP_DISABLE), took user+sys 6.7-7.7 -> 6.7-6.8 s (sys 1.9-2.9
/// -> 1.4-1.6 s, user a little up) and peak RSS 631-645 -> 613-620 MB
/// there. The kernel checks the setting when it faults a page in, so
/// calling this first thing in `main` covers the arenas mimalloc reserved
/// before it; child processes inherit it.
pub fn no_transparent_huge_pages() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes integer arguments only and changes
    // no memory of this process; a kernel without it returns EINVAL,
    // which leaves THP as it was.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
