//! The fix stage (`--fix`, `--unsafe-fixes`, `--diff`): which fixes of a
//! lint's findings are taken, written into the files or shown as diffs.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use super::Log;
use crate::fix::{Applicability, Fix, apply, diff, write};
use crate::report::control;
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
    let out = diff::of_plan(&plan, sources, control::path);
    log(&format!(
        "{} would be applied{}",
        super::plural(plan.applied.len(), "fix"),
        hint(args.unsafe_left(findings))
    ));
    out
}

/// `2 fixable with --fix (1 more with --unsafe-fixes)`, for the report's
/// summary; `None` when nothing can be fixed.
pub(super) fn fixable_line(findings: &[Finding]) -> Option<String> {
    let none = FixRequest::default();
    let (safe, unsafe_only) = (none.selected(findings).len(), none.unsafe_left(findings));
    (safe + unsafe_only > 0).then(|| format!("{safe} fixable with --fix{}", hint(unsafe_only)))
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
) -> Result<bool, super::Error> {
    let mut refused: HashMap<FileId, Option<String>> = HashMap::new();
    let mut selected = Vec::new();
    for (finding, fix) in args.selected(findings) {
        let reason = fix.edits.iter().find_map(|e| {
            refused
                .entry(e.file)
                .or_insert_with(|| {
                    let rel = sources.path(e.file);
                    write::refusal(root, rel, &sources.get(e.file).text)
                        .map(|r| format!("{}: {r}", control::path(rel)))
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
            .map(|e| control::path(&sources.shown(e.file)))
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
        log(&format!("wrote {}", control::path(path)));
    }
    log(&format!(
        "{} applied{}",
        super::plural(plan.applied.len(), "fix"),
        hint(args.unsafe_left(findings))
    ));
    Ok(!written.is_empty())
}

/// Checks every fix that has edits (safe or unsafe, whatever the flags)
/// by rendering the repository again with its edits in memory, so that
/// every output format, the "fixable" count and `--fix` agree on what is
/// applicable. The edited text must render at one place only (not
/// through a YAML alias or a file several objects are built from),
/// nothing that rendered before may be gone, and with `relint` the
/// finding must be gone (`relint` is `None` when cluster state was
/// merged, which a render of the repository lacks). A fix that fails
/// becomes display-only, with what the render showed (logged when the
/// flags ask for fixes; the finding's fix notes say it in every format).
/// One render per such fix, so only runs that apply or show fixes
/// (`--fix`, `--diff`) pay for it: a plain lint stays one load of the
/// repository (a re-render per fix made it quadratic: 10k synthetic
/// objects 1.1 s -> 120 s). Its fixes say they are checked when applied.
pub(super) fn verify(
    args: &FixRequest,
    findings: &mut [Finding],
    repo: &crate::source::repo::Repo,
    relint: Option<(&[crate::rules::Rule], &crate::rules::releases::Baseline)>,
    log: &mut Log,
) {
    let every = FixRequest {
        unsafe_fixes: true,
        ..FixRequest::default()
    };
    let any = findings
        .iter()
        .any(|f| f.fix.as_ref().is_some_and(|x| every.takes(x)));
    if !any {
        return;
    }
    if !(args.fix || args.diff) {
        for fix in findings.iter_mut().filter_map(|f| f.fix.as_mut()) {
            if every.takes(fix) {
                fix.notes.push(
                    "Checked when applied: --diff and --fix render the repository again with \
                     the edit and keep it only if nothing else changes."
                        .into(),
                );
            }
        }
        return;
    }
    let sources = &repo.files.sources;
    // With cluster state merged into the objects, the edits are compared
    // with a render of the repository alone.
    let alone = relint
        .is_none()
        .then(|| crate::source::repo::load(repo.files.root(), *repo.files.limits()));
    let before = alone.as_ref().map_or(&repo.objects, |r| &r.objects);
    for finding in findings.iter_mut() {
        let Some(fix) = finding.fix.as_mut().filter(|f| every.takes(f)) else {
            continue;
        };
        let plan = apply::plan(sources, &[&*fix]);
        let overlay = plan
            .changes
            .iter()
            .map(|c| (sources.path(c.file).to_path_buf(), c.new_text.clone()))
            .collect();
        let after =
            crate::source::repo::load_overlaid(repo.files.root(), *repo.files.limits(), overlay);
        let deleted: Vec<(FileId, Range<u32>)> = fix
            .edits
            .iter()
            .filter(|e| e.replacement.is_empty() && e.start < e.end)
            .map(|e| (e.file, e.start..e.end))
            .collect();
        let why = rerender::unintended(before, &after.objects, &deleted).or_else(|| {
            let (rules, baseline) = relint?;
            let model = crate::model::Model::new(&after);
            let again = crate::rules::lint_with(&model, rules, baseline);
            again
                .findings
                .iter()
                .any(|f| f.fingerprint == finding.fingerprint)
                .then(|| {
                    "rendered again with this fix, the repository still has the finding".to_string()
                })
        });
        if let Some(why) = why {
            if args.fix || args.diff {
                log(&format!("fix made display-only ({}): {why}", finding.rule));
            }
            fix.applicability = Applicability::DisplayOnly;
            fix.edits.clear();
            fix.notes.insert(0, format!("Display-only: {why}."));
        }
    }
}

/// What changes between two renders of a repository.
mod rerender {
    use std::collections::HashMap;
    use std::ops::Range;

    use crate::source::Object;
    use crate::yaml::{FileId, Node, Span, Value};

    /// One difference: a value that is new or changed (with the span of
    /// the text it now renders from), or one that is gone (with the span
    /// of the text it rendered from).
    enum Change {
        Set(Span),
        Gone(Span),
    }

    /// Why the render `after` differs from `before` in a way no fix
    /// means: a value gone that was not written in text the fix deletes
    /// (`deleted`), or edited or deleted text that renders at several
    /// places; `None` when it does not.
    pub fn unintended(
        before: &[Object],
        after: &[Object],
        deleted: &[(FileId, Range<u32>)],
    ) -> Option<String> {
        let meant = |s: &Span| {
            deleted
                .iter()
                .any(|(f, d)| *f == s.file && d.start <= s.start && s.end <= d.end)
        };
        let mut old: HashMap<String, Vec<&Object>> = HashMap::new();
        for o in before {
            old.entry(o.id()).or_default().push(o);
        }
        let mut new: HashMap<String, Vec<&Object>> = HashMap::new();
        for o in after {
            new.entry(o.id()).or_default().push(o);
        }
        let mut ids: Vec<&String> = old.keys().chain(new.keys()).collect();
        ids.sort();
        ids.dedup();
        let mut places: HashMap<Span, Vec<String>> = HashMap::new();
        for id in ids {
            let (a, b) = (
                old.get(id).map_or(&[][..], Vec::as_slice),
                new.get(id).map_or(&[][..], Vec::as_slice),
            );
            if a.len() != b.len() {
                return Some(format!(
                    "rendered again with this fix, {id} is rendered {} times instead of {}",
                    b.len(),
                    a.len()
                ));
            }
            for (x, y) in a.iter().zip(b) {
                let mut changes = Vec::new();
                differences(&x.root, &y.root, &mut String::new(), &mut changes);
                for (path, change) in changes {
                    match change {
                        Change::Gone(span) if !meant(&span) => {
                            return Some(format!(
                                "rendered again with this fix, {id} no longer has {path}"
                            ));
                        }
                        Change::Gone(span) | Change::Set(span) => {
                            places.entry(span).or_default().push(format!("{id} {path}"))
                        }
                    }
                }
            }
        }
        let mut shared: Vec<Vec<String>> = places.into_values().filter(|p| p.len() > 1).collect();
        shared.sort();
        let first = shared.first()?;
        Some(format!(
            "rendered again with this fix, the edited text renders at {} places: {}",
            first.len(),
            first.join(", ")
        ))
    }

    /// The leaves that differ, by path.
    fn differences(a: &Node, b: &Node, path: &mut String, out: &mut Vec<(String, Change)>) {
        let mut at = |path: &mut String, seg: &str, a: Option<&Node>, b: Option<&Node>| {
            let len = path.len();
            path.push_str(seg);
            match (a, b) {
                (Some(v), Some(w)) => differences(v, w, path, out),
                (Some(v), None) => leaves(v, path, &mut |p, s| out.push((p, Change::Gone(s)))),
                (None, Some(w)) => leaves(w, path, &mut |p, s| out.push((p, Change::Set(s)))),
                (None, None) => {}
            }
            path.truncate(len);
        };
        match (&a.value, &b.value) {
            (Value::Map(x), Value::Map(y)) => {
                for (k, v) in x.iter() {
                    let w = y.iter().find(|(k2, _)| k2.value == k.value).map(|(_, w)| w);
                    at(path, &key_seg(k), Some(v), w);
                }
                for (k, w) in y.iter() {
                    if !x.iter().any(|(k1, _)| k1.value == k.value) {
                        at(path, &key_seg(k), None, Some(w));
                    }
                }
            }
            (Value::Seq(x), Value::Seq(y)) => {
                for i in 0..x.len().max(y.len()) {
                    at(path, &format!("[{i}]"), x.get(i), y.get(i));
                }
            }
            _ if a == b => {}
            _ => out.push((path.clone(), Change::Set(b.span()))),
        }
    }

    fn key_seg(k: &Node) -> String {
        format!(".{}", k.scalar_text().unwrap_or_default())
    }

    /// Every leaf under `node`, with the span it is written at.
    fn leaves(node: &Node, path: &mut String, f: &mut dyn FnMut(String, Span)) {
        let mut each = |path: &mut String, seg: String, v: &Node| {
            let len = path.len();
            path.push_str(&seg);
            leaves(v, path, f);
            path.truncate(len);
        };
        match &node.value {
            Value::Map(m) if !m.is_empty() => m.iter().for_each(|(k, v)| each(path, key_seg(k), v)),
            Value::Seq(s) if !s.is_empty() => s
                .iter()
                .enumerate()
                .for_each(|(i, v)| each(path, format!("[{i}]"), v)),
            _ => f(path.clone(), node.span()),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        use crate::source::object::objects_of as objects;

        const HEAD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n";

        #[test]
        fn an_edit_inside_an_anchor_renders_at_every_alias() {
            let before = objects(&format!("{HEAD}data:\n  a: &x {{p: '1'}}\n  b: *x\n"));
            let after = objects(&format!(
                "{HEAD}data:\n  a: &x {{p: '1', q: '2'}}\n  b: *x\n"
            ));
            let why = unintended(&before, &after, &[]).unwrap();
            assert!(why.contains("2 places"), "{why}");
            assert!(
                why.contains(".data.a.q") && why.contains(".data.b.q"),
                "{why}"
            );
        }

        #[test]
        fn an_added_value_passes_and_a_lost_one_does_not() {
            let before = objects(&format!("{HEAD}data:\n  a: '1'\n  b: '2'\n"));
            let added = objects(&format!("{HEAD}data:\n  a: '1'\n  c: '3'\n  b: '2'\n"));
            assert!(unintended(&before, &added, &[]).is_none());
            let changed = objects(&format!("{HEAD}data:\n  a: '9'\n  b: '2'\n"));
            assert!(unintended(&before, &changed, &[]).is_none());
            let broken = objects(&format!("{HEAD}data:\n  a: '1'\nb: '2'\n"));
            let why = unintended(&before, &broken, &[]).unwrap();
            assert!(why.contains("no longer has .data.b"), "{why}");
        }
    }
}
