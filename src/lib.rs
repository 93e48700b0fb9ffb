//! homelab-lint: a Flux-aware configuration linter for self-hosted
//! Kubernetes. Data flows one way: `source` reads the repo into objects
//! that remember where each value was written, `rules` finds what is
//! wrong, `report` renders results. `pipeline` runs a lint's stages in
//! order for any front door; `cli` is the command line's, [`lint_repo`]
//! the library's.

pub mod alloc;
pub mod cli;
pub mod cores;
mod example;
pub mod fix;
#[cfg(test)]
mod layering;
pub mod model;
pub mod pipeline;
pub mod probe;
pub mod report;
pub mod rules;
pub mod server;
pub mod source;
pub mod yaml;

pub use pipeline::{Linted, Options, lint_repo};
