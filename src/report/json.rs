//! `--format json`: one object with every finding. The shape is stable
//! (documented in docs/output.md); new fields may be added, none removed.

use serde_json::{Value as J, json};

use crate::rules::{Finding, Label};
use crate::yaml::SourceMap;

pub const FORMAT_VERSION: u32 = 1;

pub fn render(findings: &[Finding], sources: &SourceMap) -> J {
    json!({
        "version": FORMAT_VERSION,
        "findings": findings.iter().map(|f| finding(f, sources)).collect::<Vec<_>>(),
    })
}

pub fn location(label: &Label, sources: &SourceMap) -> J {
    json!({
        "path": sources.shown(label.span.file).display().to_string(),
        "line": label.span.line,
        "column": label.span.col,
        "message": label.text,
    })
}

fn finding(f: &Finding, sources: &SourceMap) -> J {
    json!({
        "rule": f.rule,
        "severity": f.severity.as_str(),
        "message": f.message,
        "location": location(&f.primary, sources),
        "related": f.related.iter().map(|l| location(l, sources)).collect::<Vec<_>>(),
        "evidence": f.evidence.iter().map(|e| (e.key.clone(), J::String(e.value.clone()))).collect::<serde_json::Map<_, _>>(),
        "notes": f.notes,
        "help": f.help,
        "fingerprint": f.fingerprint,
        "fix": f.fix.as_ref().map(|x| fix(x, sources)),
    })
}

/// Edits as byte ranges (what tools apply) plus the line and column of
/// their start (what people read).
fn fix(fix: &crate::fix::Fix, sources: &SourceMap) -> J {
    json!({
        "applicability": fix.applicability.as_str(),
        "title": fix.title,
        "edits": fix.edits.iter().map(|e| {
            let (line, column) = sources.line_col(e.file, e.start).unwrap_or((0, 0));
            json!({
                "path": sources.shown(e.file).display().to_string(),
                "start": e.start,
                "end": e.end,
                "line": line,
                "column": column,
                "replacement": e.replacement,
            })
        }).collect::<Vec<_>>(),
        "notes": fix.notes,
    })
}
