//! Unified diffs of fixed files, for `--diff` and snapshot tests.

use std::path::Path;

use similar::TextDiff;

use super::apply::Plan;
use crate::yaml::SourceMap;

/// The unified diff of every file a plan changes, named as reports name
/// them, each path written by `shown` (within one line). Context lines
/// may be a Secret's, in the file as it is and as the fix leaves it:
/// both are masked.
pub fn of_plan(plan: &Plan, sources: &SourceMap, shown: impl Fn(&Path) -> String) -> String {
    let mut out = String::new();
    for change in &plan.changes {
        let path = shown(&sources.shown(change.file));
        let new_text = crate::yaml::mask_secrets(&change.new_text);
        out.push_str(&unified(
            &path,
            sources.get(change.file).text_to_show(),
            new_text.as_deref().unwrap_or(&change.new_text),
        ));
    }
    out
}

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
