//! Human output through miette: a source snippet with a label on every
//! object involved. Labels in other files than the primary one are shown
//! as related snippets of their own.

use std::fmt;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan,
};

use super::control::{self, escape};
use crate::rules::{Finding, Label, Severity};
use crate::yaml::{FileId, SourceMap};

/// `--color`: when human output is coloured.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Color {
    /// On a terminal, unless NO_COLOR is set; FORCE_COLOR turns it on
    /// anywhere (https://no-color.org, https://force-color.org).
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    pub fn enabled(self) -> bool {
        use std::io::IsTerminal;
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto if set("NO_COLOR") => false,
            Color::Auto => set("FORCE_COLOR") || std::io::stdout().is_terminal(),
        }
    }
}

/// Text is wrapped to this width when neither the terminal nor COLUMNS
/// says one.
pub const FALLBACK_WIDTH: usize = 100;

/// The width of the terminal stdout writes to, else `$COLUMNS` (which
/// shells set and tests can), else [`FALLBACK_WIDTH`].
pub fn width() -> usize {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(w, _)| w.0 as usize)
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
        .filter(|w| *w >= 20)
        .unwrap_or(FALLBACK_WIDTH)
}

/// Every finding as a snippet, a blank line after each, wrapped to
/// [`width`]: never inside a word, never at a hyphen (names such as
/// `authentik-secret` stay whole).
pub fn render(findings: &[Finding], sources: &SourceMap, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(width())
        .with_break_words(false)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation);
    let mut out = String::new();
    for f in findings {
        let diag = snippet(f, sources);
        // Rendering into a String cannot fail.
        let _ = handler.render_report(&mut out, &diag);
        out.push('\n');
    }
    out
}

/// One file's share of a finding.
#[derive(Debug)]
struct Snippet {
    message: String,
    severity: miette::Severity,
    code: Option<String>,
    help: Option<String>,
    source: NamedSource<String>,
    labels: Vec<LabeledSpan>,
    related: Vec<Snippet>,
}

fn snippet(f: &Finding, sources: &SourceMap) -> Snippet {
    {
        let file = f.primary.span.file;
        let mut in_primary = vec![&f.primary];
        let mut others: Vec<(FileId, Vec<&Label>)> = Vec::new();
        for l in &f.related {
            if l.span.file == file {
                in_primary.push(l);
            } else if let Some((_, ls)) = others.iter_mut().find(|(id, _)| *id == l.span.file) {
                ls.push(l);
            } else {
                others.push((l.span.file, vec![l]));
            }
        }
        let mut help = f.help.clone();
        for note in &f.notes {
            help.push_str("\nnote: ");
            help.push_str(note);
        }
        if let Some(fix) = &f.fix {
            help.push_str(&format!("\nfix ({}): {}", fix_how(fix), fix.title));
            for note in &fix.notes {
                help.push_str("\n- ");
                help.push_str(note);
            }
        }
        let (source, labels) = named(sources, file, &in_primary, true);
        Snippet {
            message: escape(&f.message).into_owned(),
            severity: severity(f.severity),
            code: Some(f.rule.clone()),
            help: Some(escape(&help).into_owned()),
            source,
            labels,
            related: others
                .into_iter()
                .map(|(id, ls)| {
                    let (source, labels) = named(sources, id, &ls, false);
                    Snippet {
                        message: format!(
                            "related: {}",
                            escape(&sources.shown(id).to_string_lossy())
                        ),
                        severity: miette::Severity::Advice,
                        code: None,
                        help: None,
                        source,
                        labels,
                        related: Vec::new(),
                    }
                })
                .collect(),
        }
    }
}

/// How a fix is applied, in the words of the flags that apply it.
fn fix_how(fix: &crate::fix::Fix) -> &'static str {
    use crate::fix::Applicability;
    match fix.applicability {
        Applicability::Safe => "safe, applied by --fix",
        Applicability::Unsafe => "unsafe, applied by --fix --unsafe-fixes",
        Applicability::DisplayOnly => "display-only, not applied automatically",
    }
}

/// A file's name and text, control characters made visible, with the
/// labels on it. With `first_is_primary`, the first label is marked
/// primary, so that the snippet header's `file:line:column` is the
/// finding's location rather than the first label in file order.
fn named(
    sources: &SourceMap,
    id: FileId,
    ls: &[&Label],
    first_is_primary: bool,
) -> (NamedSource<String>, Vec<LabeledSpan>) {
    let text = control::Source::new(sources.get(id).text_to_show());
    let labels = ls
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let start = text.offset(l.span.start as usize);
            let span = SourceSpan::new(start.into(), text.offset(l.span.end as usize) - start);
            let label = Some(escape(&l.text).into_owned());
            if first_is_primary && i == 0 {
                LabeledSpan::new_primary_with_span(label, span)
            } else {
                LabeledSpan::new_with_span(label, span)
            }
        })
        .collect();
    let name = escape(&sources.shown(id).to_string_lossy()).into_owned();
    (NamedSource::new(name, text.text), labels)
}

fn severity(s: Severity) -> miette::Severity {
    match s {
        Severity::Error => miette::Severity::Error,
        Severity::Warning => miette::Severity::Warning,
        Severity::Info => miette::Severity::Advice,
    }
}

impl fmt::Display for Snippet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Snippet {}

impl Diagnostic for Snippet {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.code
            .as_ref()
            .map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn Diagnostic> + 'a>> {
        if self.related.is_empty() {
            None
        } else {
            Some(Box::new(self.related.iter().map(|r| r as &dyn Diagnostic)))
        }
    }
}
