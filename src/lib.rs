//! homelab-lint: a Flux-aware configuration linter for self-hosted
//! Kubernetes. Data flows one way: `source` reads the repo into objects
//! that remember where each value was written, `report` renders results,
//! and `cli` drives it all.

pub mod cli;
mod example;
pub mod fix;
pub mod model;
pub mod probe;
pub mod report;
pub mod rules;
pub mod source;
pub mod yaml;
