//! Rendering results for people and machines.

pub mod inventory;
