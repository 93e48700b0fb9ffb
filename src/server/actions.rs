//! Code actions on a finding: its fix with the fix's applicability (a
//! safe fix is the preferred quick fix, an unsafe one says so, a
//! display-only one is shown, disabled, with why), and a suppression
//! comment above the line the finding is reported on.

use std::collections::HashMap;
use std::path::Path;

use lsp_types::{
    CodeAction, CodeActionDisabled, CodeActionKind, CodeActionOrCommand, Range, TextEdit,
    WorkspaceEdit,
};

use super::diagnostics::{self, Ranges, shown};
use super::documents::{self, Documents};
use crate::fix::Applicability;
use crate::pipeline::editor::Analysis;
use crate::rules::Finding;
use crate::yaml::FileId;
use crate::yaml::edit::in_line_breaks_of;

/// The actions for the findings that have a label in `rel` within `range`.
pub fn at(
    analysis: &Analysis,
    docs: &Documents,
    rel: &Path,
    range: Range,
) -> Vec<CodeActionOrCommand> {
    let repo = &analysis.loaded.repo;
    let sources = &repo.files.sources;
    let Some(file) = sources.find(rel) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut ranges = Ranges::new(sources);
    for finding in &analysis.findings {
        let here = std::iter::once(&finding.primary)
            .chain(&finding.related)
            .any(|l| l.span.file == file && overlaps(ranges.range(l.span), range));
        if !here {
            continue;
        }
        out.extend(fix(analysis, docs, finding).map(CodeActionOrCommand::CodeAction));
        out.extend(suppression(analysis, docs, file, finding).map(CodeActionOrCommand::CodeAction));
    }
    out
}

fn overlaps(a: Range, b: Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

// The protocol keys a WorkspaceEdit's changes by URI, whose type caches
// its parse behind a cell that clippy takes for a mutable key; no key
// here is changed once made.
#[allow(clippy::mutable_key_type)]
fn fix(analysis: &Analysis, docs: &Documents, finding: &Finding) -> Option<CodeAction> {
    let fix = finding.fix.as_ref()?;
    let repo = &analysis.loaded.repo;
    let sources = &repo.files.sources;
    let mut changes: HashMap<lsp_types::Uri, Vec<TextEdit>> = HashMap::new();
    let mut ranges = Ranges::new(sources);
    for edit in &fix.edits {
        let path = repo.files.root().join(sources.path(edit.file));
        changes.entry(docs.uri(&path)?).or_default().push(TextEdit {
            range: ranges.between(edit.file, edit.start as usize, edit.end as usize),
            new_text: in_line_breaks_of(&sources.get(edit.file).text, &edit.replacement)
                .into_owned(),
        });
    }
    let (title, preferred, disabled) = match fix.applicability {
        Applicability::Safe => (shown(&fix.title), true, None),
        Applicability::Unsafe => (shown(&format!("{} (unsafe fix)", fix.title)), false, None),
        Applicability::DisplayOnly => (
            shown(&format!("{} (display-only)", fix.title)),
            false,
            Some(CodeActionDisabled {
                reason: shown(&fix.notes.join(" ")),
            }),
        ),
    };
    let edit = (!changes.is_empty() && disabled.is_none()).then(|| WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    });
    Some(CodeAction {
        title,
        kind: Some(CodeActionKind::QUICKFIX),
        is_preferred: Some(preferred),
        disabled,
        edit,
        ..CodeAction::default()
    })
}

/// `# homelab-lint: ignore RULE -- <reason>` on the line above the
/// finding's primary label, indented as that line is
/// ([`crate::rules::suppress`] honours a comment on the line or the one
/// above, with a reason).
#[allow(clippy::mutable_key_type)]
fn suppression(
    analysis: &Analysis,
    docs: &Documents,
    asked_in: FileId,
    finding: &Finding,
) -> Option<CodeAction> {
    let repo = &analysis.loaded.repo;
    let sources = &repo.files.sources;
    let span = finding.primary.span;
    let path = diagnostics::file_of(repo.files.root(), sources, span)?;
    let text = &sources.get(span.file).text;
    let line_start = text
        .get(..span.start as usize)?
        .rfind('\n')
        .map_or(0, |n| n + 1);
    let indent: String = text[line_start..]
        .chars()
        .take_while(|c| *c == ' ' || *c == '\t')
        .collect();
    let at = documents::Lines::new(text).position(line_start);
    let edit = TextEdit {
        range: Range::new(at, at),
        new_text: in_line_breaks_of(
            text,
            &format!(
                "{indent}# homelab-lint: ignore {} -- <reason>\n",
                finding.rule
            ),
        )
        .into_owned(),
    };
    Some(CodeAction {
        title: match span.file == asked_in {
            true => format!("Suppress {} here (with a reason)", finding.rule),
            // The comment goes where the finding is reported, which may be
            // a file other builds share (a component): the title says where.
            false => format!(
                "Suppress {} at {} (with a reason)",
                finding.rule,
                sources.location(span)
            ),
        },
        kind: Some(CodeActionKind::QUICKFIX),
        is_preferred: Some(false),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(docs.uri(&path)?, vec![edit])])),
            ..WorkspaceEdit::default()
        }),
        ..CodeAction::default()
    })
}
