//! The floors the benchmark measures a lint against (scripts/bench):
//! one stage of a run alone, in a process of its own, on a repository.
//!
//!     stage parse  REPO   find the YAML files, read and parse them (on the
//!                         cores a lint of the repository uses)
//!     stage render REPO   the whole load (kustomize and Flux rendering) and
//!                         the model rules read, without rules or a report
//!
//! It calls the same library functions the linter calls, with the same
//! global allocator, so a lint's time divided by these is the share the
//! rules, the rendering and the report add.

use std::path::Path;
use std::process::ExitCode;

use homelab_lint::model::Model;
use homelab_lint::source::Limits;
use homelab_lint::source::{Files, repo};

#[global_allocator]
static GLOBAL: homelab_lint::alloc::Allocator = homelab_lint::alloc::ALLOCATOR;

fn main() -> ExitCode {
    homelab_lint::alloc::start();
    homelab_lint::cores::start();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [stage, root] = args.as_slice() else {
        eprintln!("usage: stage parse|render REPO");
        return ExitCode::from(2);
    };
    let root = Path::new(root);
    match stage.as_str() {
        "parse" => {
            // As the load does it: each file read as the walk lists it,
            // then parsed on the cores the YAML's size gives the run.
            let mut files = Files::new(root, Limits::default());
            let paths = files.load_yaml_files().paths;
            eprintln!("parsed {} files", paths.len());
        }
        "render" => {
            let loaded = repo::load(root, Limits::default());
            let model = Model::new(&loaded);
            eprintln!(
                "rendered {} objects ({} in the model)",
                loaded.objects.len(),
                model.objects.len()
            );
        }
        other => {
            eprintln!("unknown stage {other:?}: parse or render");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}
