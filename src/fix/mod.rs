//! Automatic fixes: byte-range edits at the place a value is written,
//! with ruff's applicability levels. The rule engine computes a fix from
//! a finding's bindings (`templates`); the CLI shows it as a diff
//! (`diff`) or writes it (`apply`). This module sits between `model` and
//! `rules`: it knows where values are written, not which rule fired.

pub mod edits;

pub use edits::Edit;
