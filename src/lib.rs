//! homelab-lint: a Flux-aware configuration linter for self-hosted
//! Kubernetes. Data flows one way: `source` reads the repo into objects
//! that remember where each value was written, `model` derives facts
//! across objects, and `cli` drives it all.

pub mod source;
pub mod yaml;
