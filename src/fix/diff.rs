//! Unified diffs of fixed files, for `--diff` and snapshot tests.

use similar::TextDiff;

/// `git diff`-style unified diff with three lines of context; empty when
/// the texts are equal.
pub fn unified(path: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .missing_newline_hint(true)
        .to_string()
}
