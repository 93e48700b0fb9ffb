//! `--fix`, `--unsafe-fixes` and `--diff`: the fix flags and what they do
//! after a lint, kept apart from the lint command itself.

use std::io::Write;
use std::path::Path;

use crate::fix::{Applicability, Fix, apply, diff};
use crate::rules::Finding;
use crate::yaml::SourceMap;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct FixArgs {
    /// Apply safe fixes to the repository's files (atomically) and report
    /// what changed; the findings shown are those left afterwards.
    #[arg(long)]
    pub fix: bool,

    /// With --fix or --diff, include unsafe fixes (they change behaviour;
    /// each says what it trades).
    #[arg(long)]
    pub unsafe_fixes: bool,

    /// Print the fixes as unified diffs instead of the report; writes nothing.
    #[arg(long, conflicts_with = "fix")]
    pub diff: bool,
}

impl FixArgs {
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
pub fn diffs(args: &FixArgs, findings: &[Finding], sources: &SourceMap) -> String {
    let selected = args.selected(findings);
    let fixes: Vec<&Fix> = selected.iter().map(|(_, x)| *x).collect();
    let plan = apply::plan(sources, &fixes);
    let mut out = String::new();
    for change in &plan.changes {
        let path = sources.path(change.file).display().to_string();
        out.push_str(&diff::unified(
            &path,
            &sources.get(change.file).text,
            &change.new_text,
        ));
    }
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} fixes would be applied{}",
        plan.applied.len(),
        hint(args.unsafe_left(findings))
    );
    out
}

fn hint(unsafe_left: usize) -> String {
    if unsafe_left == 0 {
        String::new()
    } else {
        format!(" ({unsafe_left} more with --unsafe-fixes)")
    }
}

/// Writes the selected fixes into the files under `root`; reports each
/// on stderr. Returns whether a file changed.
pub fn write(
    args: &FixArgs,
    findings: &[Finding],
    sources: &SourceMap,
    root: &Path,
) -> Result<bool, String> {
    let selected = args.selected(findings);
    let fixes: Vec<&Fix> = selected.iter().map(|(_, x)| *x).collect();
    let plan = apply::plan(sources, &fixes);
    for change in &plan.changes {
        let path = root.join(sources.path(change.file));
        apply::write_atomically(&path, &change.new_text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let mut err = std::io::stderr().lock();
    for &i in &plan.applied {
        let (finding, fix) = selected[i];
        let mut files: Vec<String> = fix
            .edits
            .iter()
            .map(|e| sources.path(e.file).display().to_string())
            .collect();
        files.dedup();
        let _ = writeln!(
            err,
            "fixed {}: {} [{}]",
            files.join(", "),
            fix.title,
            finding.rule
        );
    }
    for &i in &plan.conflicting {
        let (finding, _) = selected[i];
        let _ = writeln!(
            err,
            "not fixed (overlaps another fix; run --fix again): {}",
            finding.rule
        );
    }
    let _ = writeln!(
        err,
        "{} fixes applied{}",
        plan.applied.len(),
        hint(args.unsafe_left(findings))
    );
    Ok(!plan.changes.is_empty())
}
