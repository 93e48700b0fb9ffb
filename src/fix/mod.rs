//! Automatic fixes: byte-range edits at the place a value is written,
//! with ruff's applicability levels. The rule engine computes a fix from
//! a finding's bindings (`templates`); the CLI shows it as a diff
//! (`diff`) or writes it (`apply`). This module sits between `model` and
//! `rules`: it knows where values are written, not which rule fired.

pub mod apply;
pub mod diff;
pub mod edits;
pub mod shared;
pub mod templates;
pub mod write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use edits::Edit;

/// How sure a fix is to keep the configuration's meaning, as in ruff.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown as advice only: the tool cannot write it (a value it cannot
    /// see, a choice only the user can make).
    DisplayOnly,
    /// Changes behaviour in a way the user must accept: applied only
    /// with `--unsafe-fixes`.
    Unsafe,
    /// Keeps the intent of the configuration: applied by `--fix`.
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// A finding's fix: edits to source files, or (display-only) advice.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub applicability: Applicability,
    /// What the fix does, one line.
    pub title: String,
    /// Empty for a display-only fix.
    pub edits: Vec<Edit>,
    /// What applying it can change or lose, why it is display-only, and
    /// narrower alternatives the user may prefer.
    pub notes: Vec<String>,
}
