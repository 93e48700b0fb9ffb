//! Rendering results for people and machines: one renderer per format.

pub mod github;
pub mod human;
pub mod inventory;
pub mod json;
pub mod metrics;
pub mod pushgateway;
pub mod sarif;
