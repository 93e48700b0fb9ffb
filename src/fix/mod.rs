//! Applying fixes: the edits a finding's fix carries (computed by the
//! rules, `rules::fixes`) shown as a diff (`diff`) or written to the
//! files (`apply`, `write`).

pub mod apply;
pub mod diff;
pub mod write;

pub use crate::rules::fixes::{Applicability, Fix};
pub use crate::yaml::edit::Edit;
