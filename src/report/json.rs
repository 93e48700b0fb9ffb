//! `--format json`: one object with every finding. The shape is stable
//! (documented in docs/output.md); new fields may be added, none removed.
//! [`Report`] is that shape as types: the renderer fills it, and scripts
//! and tests read the output back into it ([`Report::from_json`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value as J;

use crate::fix::Applicability;
use crate::rules::{self, BaselineState, Label, Severity};
use crate::yaml::SourceMap;

pub const FORMAT_VERSION: u32 = 1;

/// The JSON report. Its keys are written in sorted order (the objects
/// pass through `serde_json::Value`, whose maps are sorted), whatever
/// the order of the fields here.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Report {
    pub version: u32,
    pub findings: Vec<Finding>,
    /// What was loaded and what could not be (the inventory's coverage
    /// section); absent when only cluster state was linted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<J>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    pub location: Location,
    pub related: Vec<Location>,
    /// `binding.field` → value.
    pub evidence: BTreeMap<String, String>,
    pub notes: Vec<String>,
    pub help: String,
    pub fingerprint: String,
    pub fix: Option<Fix>,
    /// With `--base`: `new`, or `existing` when the base commit had it
    /// too (reported with `--all-findings`); absent without `--base`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineState>,
}

/// A labelled place: `path` as shown to the user, 1-based `line` and
/// `column` (characters), and the label's text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Location {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fix {
    pub applicability: Applicability,
    pub title: String,
    pub edits: Vec<Edit>,
    pub notes: Vec<String>,
}

/// An edit as a byte range (what tools apply) plus the line and column of
/// its start (what people read).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    pub path: String,
    pub start: u32,
    pub end: u32,
    pub line: u32,
    pub column: u32,
    pub replacement: String,
}

impl Report {
    pub fn new(findings: &[rules::Finding], sources: &SourceMap) -> Report {
        Report {
            version: FORMAT_VERSION,
            findings: findings.iter().map(|f| Finding::new(f, sources)).collect(),
            coverage: None,
        }
    }

    /// Reads `--format json` output back.
    pub fn from_json(text: &[u8]) -> Result<Report, serde_json::Error> {
        serde_json::from_slice(text)
    }

    /// `(rule, path:line:column)` of each finding, in report order.
    pub fn rule_locations(&self) -> Vec<(String, String)> {
        self.findings
            .iter()
            .map(|f| (f.rule.clone(), f.location.to_string()))
            .collect()
    }

    /// The rule ids, in report order.
    pub fn rules(&self) -> Vec<&str> {
        self.findings.iter().map(|f| f.rule.as_str()).collect()
    }
}

impl Finding {
    fn new(f: &rules::Finding, sources: &SourceMap) -> Finding {
        Finding {
            rule: f.rule.clone(),
            severity: f.severity,
            message: f.message.clone(),
            location: Location::new(&f.primary, sources),
            related: f
                .related
                .iter()
                .map(|l| Location::new(l, sources))
                .collect(),
            evidence: f
                .evidence
                .iter()
                .map(|e| (e.key.clone(), e.value.clone()))
                .collect(),
            notes: f.notes.clone(),
            help: f.help.clone(),
            fingerprint: f.fingerprint.clone(),
            fix: f.fix.as_ref().map(|x| Fix::new(x, sources)),
            baseline: f.baseline,
        }
    }
}

impl Location {
    pub fn new(label: &Label, sources: &SourceMap) -> Location {
        Location {
            path: sources.shown(label.span.file).display().to_string(),
            line: label.span.line,
            column: label.span.col,
            message: label.text.clone(),
        }
    }
}

/// `path:line:column`, as the concise format and compilers print it.
impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.path, self.line, self.column)
    }
}

impl Fix {
    fn new(fix: &crate::fix::Fix, sources: &SourceMap) -> Fix {
        Fix {
            applicability: fix.applicability,
            title: fix.title.clone(),
            edits: fix
                .edits
                .iter()
                .map(|e| {
                    let (line, column) = sources.line_col(e.file, e.start).unwrap_or((0, 0));
                    Edit {
                        path: sources.shown(e.file).display().to_string(),
                        start: e.start,
                        end: e.end,
                        line,
                        column,
                        replacement: e.replacement.clone(),
                    }
                })
                .collect(),
            notes: fix.notes.clone(),
        }
    }
}

/// The report as a JSON value, to which the caller may add `coverage`.
pub fn render(findings: &[rules::Finding], sources: &SourceMap) -> J {
    serde_json::to_value(Report::new(findings, sources))
        .expect("the report's maps have string keys")
}
