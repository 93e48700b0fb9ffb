//! Suppressions written where the finding is: a YAML comment on the line
//! (or the line above), or an annotation on an object involved. Each needs
//! a reason; one that suppresses nothing is itself reported, so stale
//! suppressions do not pile up, and so is one naming no rule (a typo
//! would otherwise leave the finding in place with no hint why).
//!
//! ```yaml
//! # homelab-lint: ignore postgres-replicas-on-replicated-storage -- backups only, speed is irrelevant
//! metadata:
//!   annotations:
//!     homelab-lint.io/ignore: "authentik-cache-on-sync-replicated-postgres: measured, 40 ms per login"
//! ```

use std::sync::LazyLock;

use regex::Regex;

use super::redirect::Known;
use super::select::Unknown;
use super::{Finding, Label, Rule};
use crate::model::Model;
use crate::source::Issue;
use crate::yaml::{FileId, Span};

/// The rule id under which unused suppressions are reported.
pub const UNUSED: &str = "unused-suppression";
/// The rule id under which suppressions of no known rule are reported.
pub const UNKNOWN: &str = "unknown-rule-in-suppression";
pub const ANNOTATION: &str = "homelab-lint.io/ignore";

static COMMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\s*homelab-lint:\s*ignore\s+([A-Za-z0-9-]+)\s*(?:(?:--|:)\s*(.*))?$")
        .expect("valid regex")
});

/// What every suppression comment holds, looked for in each file before
/// its lines are read: the searcher built once, not per file as
/// `str::contains` builds it.
static MARKER: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("homelab-lint:"));

#[derive(Debug)]
struct Suppression {
    rule: String,
    /// Where the suppression is written.
    span: Span,
    kind: Kind,
    used: bool,
}

#[derive(Debug)]
enum Kind {
    /// A comment: applies to findings on its line or the next.
    Comment { file: FileId, line: u32 },
    /// An annotation: applies to findings with a label inside the object.
    Annotation { object: Span },
}

pub struct Outcome {
    pub findings: Vec<Finding>,
    /// Suppressions without a reason: not honoured.
    pub issues: Vec<Issue>,
    /// The findings suppressions dropped.
    pub suppressed: Vec<Finding>,
}

/// Drops suppressed findings and adds one `unused-suppression` finding per
/// suppression that matched nothing, and one `unknown-rule-in-suppression`
/// finding per suppression naming none of the `known` rule ids (running
/// or not), when those rules run. A suppression naming a renamed rule's
/// former id suppresses that rule, with a warning that names its id now.
pub fn apply(model: &Model, rules: &[Rule], known: &Known, findings: Vec<Finding>) -> Outcome {
    let mut issues = Vec::new();
    let mut all = comments(model, &mut issues);
    all.extend(annotations(model, &mut issues));
    for s in all.iter_mut().filter(|s| !known.contains(&s.rule)) {
        if let Some(renamed) = known.successor(&s.rule) {
            issues.push(Issue::at(
                model.sources,
                s.span,
                format!("suppression: {renamed}; write {}", renamed.successor),
            ));
            s.rule = renamed.successor.clone();
        }
    }
    let mut kept = Vec::new();
    let mut dropped = Vec::new();
    for f in findings {
        let mut suppressed = false;
        for s in all.iter_mut().filter(|s| s.rule == f.rule) {
            if covers(s, &f) {
                s.used = true;
                suppressed = true;
            }
        }
        if suppressed {
            dropped.push(f);
        } else {
            kept.push(f);
        }
    }
    let running = |id: &str| rules.iter().any(|r| r.id == id);
    // A suppression for a rule that is not running cannot be judged.
    for s in all.iter().filter(|s| !s.used && running(&s.rule)) {
        kept.extend(reported(model, rules, UNUSED, s, || {
            (
                format!("this suppression of {} matches no finding", s.rule),
                "suppresses nothing",
            )
        }));
    }
    for s in all.iter().filter(|s| !known.contains(&s.rule)) {
        kept.extend(reported(model, rules, UNKNOWN, s, || {
            (
                Unknown::of(&s.rule, known.ids()).to_string(),
                "suppresses no rule",
            )
        }));
    }
    Outcome {
        findings: kept,
        issues,
        suppressed: dropped,
    }
}

/// The finding of `id`, one of the rules about suppressions, at `s`, when
/// that rule runs; `said` gives its message and label.
fn reported(
    model: &Model,
    rules: &[Rule],
    id: &str,
    s: &Suppression,
    said: impl FnOnce() -> (String, &'static str),
) -> Option<Finding> {
    let rule = rules.iter().find(|r| r.id == id)?;
    let (message, label) = said();
    Some(Finding {
        rule: id.to_string(),
        severity: rule.severity,
        message,
        primary: Label {
            span: s.span,
            text: label.into(),
        },
        related: Vec::new(),
        evidence: Vec::new(),
        notes: Vec::new(),
        unconfirmed_severity: None,
        chain: Vec::new(),
        baseline: None,
        help: rule.remediation.trim().to_string(),
        fingerprint: format!(
            "{id}:{}:{}",
            model.sources.path(s.span.file).display(),
            s.rule
        ),
        fix: None,
        subjects: Default::default(),
    })
}

fn covers(s: &Suppression, f: &Finding) -> bool {
    match s.kind {
        Kind::Comment { file, line } => {
            f.primary.span.file == file
                && (f.primary.span.line == line || f.primary.span.line == line + 1)
        }
        Kind::Annotation { object } => std::iter::once(&f.primary).chain(&f.related).any(|l| {
            l.span.file == object.file && l.span.start >= object.start && l.span.end <= object.end
        }),
    }
}

/// Suppression comments in every file an object came from.
fn comments(model: &Model, issues: &mut Vec<Issue>) -> Vec<Suppression> {
    let mut files: Vec<FileId> = model.objects.iter().map(|o| o.file).collect();
    files.sort();
    files.dedup();
    let mut out = Vec::new();
    for file in files {
        let text = &model.sources.get(file).text;
        if MARKER.find(text.as_bytes()).is_none() {
            continue;
        }
        let mut offset = 0u32;
        for (i, line) in text.split('\n').enumerate() {
            if let Some(c) = COMMENT.captures(line) {
                let start = offset + c.get(0).map_or(0, |m| m.start() as u32);
                let span = Span {
                    file,
                    start,
                    end: offset + line.len() as u32,
                    line: i as u32 + 1,
                    col: line[..(start - offset) as usize].chars().count() as u32 + 1,
                };
                let rule = c[1].to_string();
                if c.get(2).is_none_or(|r| r.as_str().trim().is_empty()) {
                    issues.push(no_reason(model, span, &rule));
                } else {
                    out.push(Suppression {
                        rule,
                        span,
                        kind: Kind::Comment {
                            file,
                            line: span.line,
                        },
                        used: false,
                    });
                }
            }
            offset += line.len() as u32 + 1;
        }
    }
    out
}

/// `homelab-lint.io/ignore` annotations, one `rule: reason` per line.
fn annotations(model: &Model, issues: &mut Vec<Issue>) -> Vec<Suppression> {
    let mut out: Vec<Suppression> = Vec::new();
    for obj in model.objects {
        let Some(value) = obj.root.path(&["metadata", "annotations", ANNOTATION]) else {
            continue;
        };
        // One object rendered into several clusters carries the same annotation.
        if out.iter().any(|s| s.span == value.span()) {
            continue;
        }
        for line in value
            .as_str()
            .unwrap_or("")
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let (rule, reason) = line.split_once(':').unwrap_or((line, ""));
            let rule = rule.trim().to_string();
            if reason.trim().is_empty() {
                issues.push(no_reason(model, value.span(), &rule));
                continue;
            }
            out.push(Suppression {
                rule,
                span: value.span(),
                kind: Kind::Annotation {
                    object: obj.root.span(),
                },
                used: false,
            });
        }
    }
    out
}

fn no_reason(model: &Model, span: Span, rule: &str) -> Issue {
    Issue::at(
        model.sources,
        span,
        format!("suppression of {rule} has no reason (write `-- why`); it is not applied"),
    )
}
