//! The fix stage (`--fix`, `--unsafe-fixes`, `--diff`): which fixes of a
//! lint's findings are taken, written into the files or shown as diffs.

use std::collections::HashMap;
use std::path::Path;

use super::Log;
use crate::fix::{Applicability, Fix, apply, diff, write};
use crate::rules::Finding;
use crate::yaml::{FileId, SourceMap};

/// Which fixes to take and what to do with them.
#[derive(Debug, Clone, Default)]
pub struct FixRequest {
    /// Write the safe fixes into the repository's files.
    pub fix: bool,
    /// Take unsafe fixes too.
    pub unsafe_fixes: bool,
    /// Render the fixes as unified diffs instead of the report.
    pub diff: bool,
}

impl FixRequest {
    fn takes(&self, fix: &Fix) -> bool {
        !fix.edits.is_empty()
            && match fix.applicability {
                Applicability::Safe => true,
                Applicability::Unsafe => self.unsafe_fixes,
                Applicability::DisplayOnly => false,
            }
    }

    /// The findings whose fixes these flags select, in report order.
    fn selected<'f>(&self, findings: &'f [Finding]) -> Vec<(&'f Finding, &'f Fix)> {
        findings
            .iter()
            .filter_map(|f| Some((f, f.fix.as_ref().filter(|x| self.takes(x))?)))
            .collect()
    }

    /// How many fixes only `--unsafe-fixes` would add.
    fn unsafe_left(&self, findings: &[Finding]) -> usize {
        if self.unsafe_fixes {
            return 0;
        }
        findings
            .iter()
            .filter_map(|f| f.fix.as_ref())
            .filter(|x| x.applicability == Applicability::Unsafe && !x.edits.is_empty())
            .count()
    }
}

/// The unified diff of every selected fix that fits with the others.
pub(super) fn diffs(
    args: &FixRequest,
    findings: &[Finding],
    sources: &SourceMap,
    log: &mut Log,
) -> String {
    let selected = args.selected(findings);
    let fixes: Vec<&Fix> = selected.iter().map(|(_, x)| *x).collect();
    let plan = apply::plan(sources, &fixes);
    let mut out = String::new();
    for change in &plan.changes {
        let path = sources.shown(change.file).display().to_string();
        out.push_str(&diff::unified(
            &path,
            &sources.get(change.file).text,
            &change.new_text,
        ));
    }
    log(&format!(
        "{} fixes would be applied{}",
        plan.applied.len(),
        hint(args.unsafe_left(findings))
    ));
    out
}

fn hint(unsafe_left: usize) -> String {
    if unsafe_left == 0 {
        String::new()
    } else {
        format!(" ({unsafe_left} more with --unsafe-fixes)")
    }
}

/// Writes the selected fixes into the files under `root`; logs each fix
/// and each file written. A fix that touches a file which may not be
/// rewritten (see [`write::refusal`]) is left out with the reason; the
/// rest are written all or nothing.
/// Returns whether a file changed.
pub(super) fn write(
    args: &FixRequest,
    findings: &[Finding],
    sources: &SourceMap,
    root: &Path,
    log: &mut Log,
) -> Result<bool, String> {
    let mut refused: HashMap<FileId, Option<String>> = HashMap::new();
    let mut selected = Vec::new();
    for (finding, fix) in args.selected(findings) {
        let reason = fix.edits.iter().find_map(|e| {
            refused
                .entry(e.file)
                .or_insert_with(|| {
                    let rel = sources.path(e.file);
                    write::refusal(root, rel, &sources.get(e.file).text)
                        .map(|r| format!("{}: {r}", rel.display()))
                })
                .clone()
        });
        match reason {
            Some(reason) => log(&format!("not fixed: {reason} [{}]", finding.rule)),
            None => selected.push((finding, fix)),
        }
    }
    let fixes: Vec<&Fix> = selected.iter().map(|(_, x)| *x).collect();
    let plan = apply::plan(sources, &fixes);
    let written = write::write_all(root, sources, &plan.changes)?;
    for &i in &plan.applied {
        let (finding, fix) = selected[i];
        let mut files: Vec<String> = fix
            .edits
            .iter()
            .map(|e| sources.shown(e.file).display().to_string())
            .collect();
        files.dedup();
        log(&format!(
            "fixed {}: {} [{}]",
            files.join(", "),
            fix.title,
            finding.rule
        ));
    }
    for &i in &plan.conflicting {
        let (finding, _) = selected[i];
        log(&format!(
            "not fixed (overlaps another fix; run --fix again): {}",
            finding.rule
        ));
    }
    for path in &written {
        log(&format!("wrote {}", path.display()));
    }
    log(&format!(
        "{} fixes applied{}",
        plan.applied.len(),
        hint(args.unsafe_left(findings))
    ));
    Ok(!written.is_empty())
}
