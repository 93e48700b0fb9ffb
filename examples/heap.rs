//! Heap use of a load, as the allocator is asked for it (live and peak
//! bytes and blocks), beside the process's peak RSS: what separates the
//! bytes the trees need from what the allocator holds for them.
//!
//!     heap parse  REPO   find, read and parse the YAML files
//!     heap render REPO   the whole load and the model, without rules

use std::alloc::{GlobalAlloc, Layout};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use homelab_lint::alloc::ALLOCATOR;
use homelab_lint::model::Model;
use homelab_lint::source::Limits;
use homelab_lint::source::{Files, repo, walk};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static BLOCKS: AtomicUsize = AtomicUsize::new(0);
static PEAK_BLOCKS: AtomicUsize = AtomicUsize::new(0);
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize, blocks: usize) {
    let live = LIVE.fetch_add(bytes, Relaxed) + bytes;
    PEAK.fetch_max(live, Relaxed);
    let b = BLOCKS.fetch_add(blocks, Relaxed) + blocks;
    PEAK_BLOCKS.fetch_max(b, Relaxed);
}

// SAFETY: every call is passed to the linter's allocator unchanged; the counters only
// observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        grew(layout.size(), 1);
        unsafe { ALLOCATOR.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        BLOCKS.fetch_sub(1, Relaxed);
        unsafe { ALLOCATOR.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Relaxed);
        LIVE.fetch_sub(layout.size(), Relaxed);
        grew(new_size, 0);
        unsafe { ALLOCATOR.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [stage, root] = args.as_slice() else {
        eprintln!("usage: heap parse|render REPO");
        return ExitCode::from(2);
    };
    let root = Path::new(root);
    let report = |what: &str| {
        let mb = |b: usize| b as f64 / 1e6;
        eprintln!(
            "{what}: live {:.1} MB in {} blocks; peak {:.1} MB, {} blocks; {} allocations",
            mb(LIVE.load(Relaxed)),
            BLOCKS.load(Relaxed),
            mb(PEAK.load(Relaxed)),
            PEAK_BLOCKS.load(Relaxed),
            ALLOCS.load(Relaxed)
        );
    };
    match stage.as_str() {
        "parse" => {
            let mut files = Files::new(root, Limits::default());
            let paths = walk::yaml_files(root).paths;
            files.preload(&paths);
            report("parsed");
        }
        "render" => {
            let loaded = repo::load(root, Limits::default());
            report("loaded");
            let model = Model::new(&loaded);
            report("model");
            drop(model);
        }
        other => {
            eprintln!("unknown stage {other:?}: parse or render");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
