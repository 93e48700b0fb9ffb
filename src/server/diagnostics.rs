//! A lint as the editor shows it: per open file, each finding on every
//! file it labels (the other places as related information), the inputs
//! that could not be used where they are written, and a hint on a file
//! nothing applies.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, DiagnosticTag, Location,
    NumberOrString, Position, Range,
};

use super::documents::{self, Documents};
use crate::pipeline::editor::Analysis;
use crate::rules::{Label, Severity};
use crate::source::PathMap;
use crate::source::coverage::Fate;
use crate::yaml::{FileId, SourceMap, Span};

pub const SOURCE: &str = "homelab-lint";

/// The diagnostics of every open file under `root`.
pub fn of(
    root: &Path,
    last: &Result<Analysis, String>,
    docs: &Documents,
) -> PathMap<PathBuf, Vec<Diagnostic>> {
    let mut out: PathMap<PathBuf, Vec<Diagnostic>> = docs
        .under(root)
        .map(|(rel, _)| (root.join(rel), Vec::new()))
        .collect();
    // Every file has a fate, and a few are open: each is looked for among
    // these before its absolute path is made.
    let open: Vec<&Path> = docs.under(root).map(|(rel, _)| rel).collect();
    let is_open = |rel: &Path| open.contains(&rel);
    let analysis = match last {
        Ok(a) => a,
        Err(e) => {
            for list in out.values_mut() {
                list.push(whole_file(
                    DiagnosticSeverity::ERROR,
                    shown(&format!("this repository cannot be linted: {e}")),
                ));
            }
            return out;
        }
    };
    let repo = &analysis.loaded.repo;
    let sources = &repo.files.sources;
    let mut ranges = Ranges::new(sources);
    for finding in &analysis.findings {
        let labels: Vec<&Label> = std::iter::once(&finding.primary)
            .chain(&finding.related)
            .collect();
        for (i, label) in labels.iter().enumerate() {
            let Some(list) = file_of(root, sources, label.span).and_then(|p| out.get_mut(&p))
            else {
                continue;
            };
            let message = if i == 0 {
                shown(&finding.message)
            } else {
                shown(&format!("{} ({})", finding.message, label.text))
            };
            let related = labels
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, other)| {
                    Some(DiagnosticRelatedInformation {
                        location: ranges.location(root, other.span, docs)?,
                        message: shown(&other.text),
                    })
                })
                .collect();
            list.push(Diagnostic {
                range: ranges.range(label.span),
                severity: Some(severity(finding.severity)),
                code: Some(NumberOrString::String(finding.rule.clone())),
                source: Some(SOURCE.into()),
                message,
                related_information: Some(related),
                // The code actions find the finding again by it.
                data: Some(serde_json::json!({ "fingerprint": finding.fingerprint })),
                ..Diagnostic::default()
            });
        }
    }
    for issue in &analysis.problems {
        let Some(list) = out.get_mut(&root.join(&issue.path)) else {
            continue;
        };
        let range = match sources.find(Path::new(&issue.path)) {
            Some(id) if issue.line > 0 => {
                let lines = ranges.lines(id);
                let at = lines.offset_of_line_col(issue.line, issue.col);
                let text = &sources.get(id).text;
                let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n);
                lines.range(at, line_end)
            }
            _ => Range::default(),
        };
        list.push(Diagnostic {
            range,
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some(NumberOrString::String("input".into())),
            source: Some(SOURCE.into()),
            message: shown(&issue.message),
            ..Diagnostic::default()
        });
    }
    let flux_repo = !repo.flux.is_empty();
    for fate in repo.fates.iter().filter(|f| is_open(&f.path)) {
        let Some(list) = out.get_mut(&root.join(&fate.path)) else {
            continue;
        };
        let unapplied = match &fate.fate {
            Fate::NotListed { .. }
            | Fate::Unreachable { .. }
            | Fate::UnderUnapplied { .. }
            | Fate::Stray
            | Fate::Moved { .. }
            | Fate::Lost { .. } => true,
            Fate::AsWritten => flux_repo,
            _ => false,
        };
        if unapplied {
            list.push(Diagnostic {
                tags: Some(vec![DiagnosticTag::UNNECESSARY]),
                code: Some(NumberOrString::String(fate.fate.key().into())),
                ..whole_file(
                    DiagnosticSeverity::HINT,
                    shown(&format!(
                        "applied by no Flux Kustomization: {}",
                        fate.fate.reason()
                    )),
                )
            });
        }
    }
    out
}

/// A text the editor shows (a diagnostic, a hover, a code action's
/// title), with every Secret value a name was made from hidden
/// ([`crate::yaml::hidden`]), as every report hides it.
pub(super) fn shown(text: &str) -> String {
    crate::yaml::hidden::mask(text).into_owned()
}

fn whole_file(severity: DiagnosticSeverity, message: String) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
        severity: Some(severity),
        source: Some(SOURCE.into()),
        message,
        ..Diagnostic::default()
    }
}

fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// The absolute path of the repository file `span` is in; `None` for a
/// page of the live cluster.
pub fn file_of(root: &Path, sources: &SourceMap, span: Span) -> Option<PathBuf> {
    if (span.file.0 as usize) >= sources.len() || sources.is_virtual(span.file) {
        return None;
    }
    Some(root.join(sources.path(span.file)))
}

/// Ranges and locations of spans, each file's lines indexed the first
/// time one of its spans is converted.
pub struct Ranges<'s> {
    sources: &'s SourceMap,
    lines: HashMap<FileId, documents::Lines<'s>>,
}

impl<'s> Ranges<'s> {
    pub fn new(sources: &'s SourceMap) -> Ranges<'s> {
        Ranges {
            sources,
            lines: HashMap::new(),
        }
    }

    fn lines(&mut self, file: FileId) -> &documents::Lines<'s> {
        let sources = self.sources;
        self.lines
            .entry(file)
            .or_insert_with(|| documents::Lines::new(&sources.get(file).text))
    }

    /// The range of `span` in the text it was read from.
    pub fn range(&mut self, span: Span) -> Range {
        self.between(span.file, span.start as usize, span.end as usize)
    }

    /// The range of bytes `start..end` of `file`.
    pub fn between(&mut self, file: FileId, start: usize, end: usize) -> Range {
        self.lines(file).range(start, end)
    }

    /// Where `span` is, named as the editor knows its file.
    pub fn location(&mut self, root: &Path, span: Span, docs: &Documents) -> Option<Location> {
        let path = file_of(root, self.sources, span)?;
        Some(Location {
            uri: docs.uri(&path)?,
            range: self.range(span),
        })
    }
}
