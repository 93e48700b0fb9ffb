//! Human output through miette: a source snippet with a label on every
//! object involved. Labels in other files than the primary one are shown
//! as related snippets of their own.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError,
    MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

use super::control::{self, Breaks, escape};
use crate::rules::{Finding, Label, Severity};
use crate::yaml::{FileId, SourceMap, ceil_char, floor_char};

/// When human output is coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Color {
    /// As the environment says, the way clap decides for its help
    /// (anstream): never with NO_COLOR; always with CLICOLOR_FORCE or
    /// FORCE_COLOR; never with CLICOLOR=0; else on a terminal whose TERM
    /// is not `dumb`.
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    pub fn enabled(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => auto(&std::io::stdout()),
        }
    }
}

/// [`Color::Auto`] for output to `stream`: anstream's choice, and
/// FORCE_COLOR (force-color.org), which it does not know, after NO_COLOR.
fn auto(stream: &impl anstream::stream::RawStream) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0");
    if set("NO_COLOR") {
        return false;
    }
    set("FORCE_COLOR") || anstream::AutoStream::choice(stream) == anstream::ColorChoice::Always
}

/// Bytes of a long line a snippet shows each side of what it labels, and
/// the most of a label it underlines.
const SNIPPET_CONTEXT: usize = 160;

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
/// `authentik-secret` stay whole). Every related file is shown.
pub fn render(findings: &[Finding], sources: &SourceMap, color: bool) -> String {
    render_sized(findings, sources, color, true)
}

/// Related files a finding shows before "and N more" (unless `-v`).
pub const MOST_RELATED_FILES: usize = 5;

/// Bytes of human output past which findings are shown without their
/// snippets: a snippet is bounded (see [`SNIPPET_CONTEXT`]), but a run
/// may have hundreds of thousands of findings (each rule's match budget
/// times the rules). Real reports are a few kilobytes.
const SNIPPET_RUN_BYTES: usize = 16 << 20;

/// [`render`] sized for reading a pull request's run: a finding shows
/// at most [`MOST_RELATED_FILES`] related files unless `all`, and a set
/// of related places another finding above already listed (a release
/// bump and the rule of that release both name the same 61 objects) is
/// named, not printed again.
pub fn render_sized(findings: &[Finding], sources: &SourceMap, color: bool, all: bool) -> String {
    render_within(findings, sources, color, all, SNIPPET_RUN_BYTES)
}

/// [`render_sized`], snippets elided once the output passes `budget`
/// bytes: each finding after that is its message and location, and a
/// line says so once.
fn render_within(
    findings: &[Finding],
    sources: &SourceMap,
    color: bool,
    all: bool,
    budget: usize,
) -> String {
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
    let mut files = Files::default();
    let mut listed: HashMap<Vec<&Label>, &str> = HashMap::new();
    let mut elided = false;
    // A chunk of findings at a time: their snippets in order (what one
    // shows depends on those before it), drawn on every core, joined in
    // order. Drawing was a fifth of the serial path of a large run.
    for chunk in findings.chunks(RENDERED_AT_ONCE) {
        let prepared: Vec<(Snippet, Vec<String>)> = chunk
            .iter()
            .map(|f| {
                let (mut diag, elsewhere, above) = snippet(f, sources, &mut files);
                let mut after = Vec::new();
                let places = elsewhere.len();
                if places > 1 {
                    match listed.get(&elsewhere) {
                        Some(rule) => {
                            diag.related.clear();
                            after.push(format!(
                                "related: the same {places} places in other files as the {} finding above",
                                escape(rule, Breaks::Escape)
                            ));
                        }
                        None => {
                            listed.insert(elsewhere, &f.rule);
                        }
                    }
                }
                if !all && diag.related.len() > MOST_RELATED_FILES {
                    let more = diag.related.len() - MOST_RELATED_FILES;
                    diag.related.truncate(MOST_RELATED_FILES);
                    let files = if more == 1 { "file" } else { "files" };
                    after.push(format!("and {more} more related {files} (-v shows all)"));
                }
                diag.related.splice(0..0, above);
                (diag, after)
            })
            .collect();
        // Past the budget, a finding is drawn again without its snippets
        // (cheap); before it, the drawings made in parallel are kept.
        let drawn: Vec<Option<String>> = if elided {
            prepared.iter().map(|_| None).collect()
        } else {
            crate::cores::map(&prepared, |(diag, _)| Some(draw(&handler, diag)))
        };
        for ((f, (mut diag, after)), drawn) in chunk.iter().zip(prepared).zip(drawn) {
            if !elided && out.len() > budget {
                elided = true;
                out.push_str(&format!(
                    "note: snippets elided from here on: the report passed {budget} bytes; each finding below is its message and location\n\n"
                ));
            }
            let report = match drawn {
                Some(report) if !elided => report,
                _ => {
                    let at = sources.location(f.primary.span);
                    let at = escape(&at, Breaks::Escape);
                    diag.help = Some(format!("at {at}\n{}", diag.help.unwrap_or_default()));
                    diag.labels.clear();
                    diag.related.clear();
                    draw(&handler, &diag)
                }
            };
            out.push_str(&report);
            for line in after {
                out.push_str(&format!("  \u{261e} {line}\n"));
            }
            out.push('\n');
        }
    }
    out
}

/// Findings whose snippets are drawn in parallel before they are joined:
/// enough to share among the cores, few enough that little is drawn in
/// vain when the output passes its budget.
const RENDERED_AT_ONCE: usize = 256;

/// One finding's report as miette draws it.
fn draw(handler: &GraphicalReportHandler, diag: &Snippet) -> String {
    // Rendering into a String cannot fail.
    let mut report = String::new();
    let _ = handler.render_report(&mut report, diag);
    // miette writes a severity word before each related report
    // ("Advice: "), alone on its line when that report has no code: a
    // related snippet is this finding's place in another file, not
    // advice of its own, and its first line names the file.
    report.replace("\nAdvice: \n", "\n")
}

/// One file's share of a finding.
#[derive(Debug)]
struct Snippet {
    message: String,
    severity: miette::Severity,
    code: Option<String>,
    help: Option<String>,
    source: Arc<Prepared>,
    labels: Vec<LabeledSpan>,
    related: Vec<Snippet>,
}

/// Lines a label of the primary file may be above the primary one and
/// still share its window. miette draws a file's windows in line order:
/// a label far above either heads the finding with its own
/// `file:line:col` (a window of its own) or pulls every line between it
/// and the primary one into the window. Those are drawn after, as a
/// related snippet of the same file.
const NEAR_ABOVE: u32 = 8;

/// A finding's snippet, its labels in other files than the primary one,
/// in order, and the snippet of its labels far above the primary one in
/// the primary file ([`NEAR_ABOVE`]).
fn snippet<'f>(
    f: &'f Finding,
    sources: &SourceMap,
    files: &mut Files,
) -> (Snippet, Vec<&'f Label>, Option<Snippet>) {
    {
        let file = f.primary.span.file;
        let mut in_primary = vec![&f.primary];
        let mut above = Vec::new();
        let mut others: Vec<(FileId, Vec<&Label>)> = Vec::new();
        for l in &f.related {
            if l.span.file == file && l.span.line + NEAR_ABOVE < f.primary.span.line {
                above.push(l);
            } else if l.span.file == file {
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
        let (source, labels) = named(files.get(sources, file), &in_primary, true);
        let elsewhere = others
            .iter()
            .flat_map(|(_, ls)| ls.iter().copied())
            .collect();
        let mut related_snippet = |id: FileId, ls: &[&Label]| {
            let (source, labels) = named(files.get(sources, id), ls, false);
            Snippet {
                message: format!(
                    "related: {}",
                    escape(&sources.shown(id).to_string_lossy(), Breaks::Escape)
                ),
                severity: miette::Severity::Advice,
                code: None,
                help: None,
                source,
                labels,
                related: Vec::new(),
            }
        };
        let above = (!above.is_empty()).then(|| related_snippet(file, &above));
        let snippet = Snippet {
            message: format!(
                "{}{}",
                super::concise::tag(f),
                escape(&f.message, Breaks::Keep)
            ),
            severity: severity(f.severity),
            code: Some(escape(&f.rule, Breaks::Escape).into_owned()),
            help: Some(escape(&help, Breaks::Keep).into_owned()),
            source,
            labels,
            related: others
                .into_iter()
                .map(|(id, ls)| related_snippet(id, &ls))
                .collect(),
        };
        (snippet, elsewhere, above)
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

/// The files the findings point into, each prepared once: a report of
/// many findings in one large file is then linear in both, where copying
/// and scanning the file from its first byte per finding was quadratic
/// (10,000 findings in one file took 122 s).
#[derive(Default)]
struct Files(HashMap<FileId, Arc<Prepared>>);

impl Files {
    fn get(&mut self, sources: &SourceMap, id: FileId) -> Arc<Prepared> {
        self.0
            .entry(id)
            .or_insert_with(|| Arc::new(Prepared::new(sources, id)))
            .clone()
    }
}

/// A file's name and text, control characters made visible, with the
/// offset of every line start.
#[derive(Debug)]
struct Prepared {
    name: String,
    text: control::Source,
    /// Byte offsets in the escaped text where a line starts (after each
    /// `\n`; a lone `\r` is escaped, so it breaks no line there).
    starts: Vec<usize>,
}

impl Prepared {
    fn new(sources: &SourceMap, id: FileId) -> Prepared {
        let text = control::Source::new(sources.get(id).text_to_show());
        let starts = std::iter::once(0)
            .chain(text.text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Prepared {
            name: escape(&sources.shown(id).to_string_lossy(), Breaks::Escape).into_owned(),
            text,
            starts,
        }
    }

    /// The 0-based line that holds byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|s| *s <= offset)
            .saturating_sub(1)
    }
}

impl SourceCode for Prepared {
    /// miette's own reading of a text (`impl SourceCode for str`), on the
    /// lines around the span only: a window from a line start with a line
    /// more of context each side than asked for, so the scan stops where
    /// it would in the whole text; positions are then made the file's.
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let text = self.text.text.as_str();
        // miette reads a span that ends past the text (by its last byte)
        // too: the window then reaches the end, and its answer is the same.
        let end = (span.offset() + span.len()).min(text.len());
        let first = self.line_of(span.offset()).saturating_sub(before + 1);
        let last = self.line_of(end.saturating_sub(1).max(span.offset()));
        let mut lo = self.starts[first];
        let mut hi = self
            .starts
            .get(last + after + 2)
            .copied()
            .unwrap_or(text.len());
        // Long lines (a minified manifest, a value of a megabyte on one
        // line) are cut to a window around the span: a snippet holds at
        // most about SNIPPET_CONTEXT bytes each side of what it labels,
        // not the whole line once per finding.
        if hi - lo > span.len() + 4 * SNIPPET_CONTEXT {
            lo = lo.max(floor_char(
                text,
                span.offset().saturating_sub(SNIPPET_CONTEXT),
            ));
            hi = hi.min(ceil_char(text, end + SNIPPET_CONTEXT));
        }
        let first = self.line_of(lo);
        let cut = lo - self.starts[first];
        let window = &text[lo..hi];
        let local = SourceSpan::new((span.offset() - lo).into(), span.len());
        let read = window.read_span(&local, before, after)?;
        // A column on the window's first line counts from the line's start.
        let column = read.column() + if read.line() == 0 { cut } else { 0 };
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            read.data(),
            SourceSpan::new((read.span().offset() + lo).into(), read.span().len()),
            read.line() + first,
            column,
            read.line_count() + first,
        )))
    }
}

/// The labels on one prepared file. With `first_is_primary`, the first
/// label is marked primary, so that the snippet header's
/// `file:line:column` is the finding's location rather than the first
/// label in file order.
fn named(
    file: Arc<Prepared>,
    ls: &[&Label],
    first_is_primary: bool,
) -> (Arc<Prepared>, Vec<LabeledSpan>) {
    let labels = ls
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let start = file.text.offset(l.span.start as usize);
            // A label underlines at most SNIPPET_CONTEXT bytes: a value of
            // a megabyte is shown by its start.
            let end = file.text.offset(l.span.end as usize);
            let end = floor_char(&file.text.text, end.min(start + SNIPPET_CONTEXT));
            let span = SourceSpan::new(start.into(), end - start);
            let label = Some(escape(&l.text, Breaks::Escape).into_owned());
            if first_is_primary && i == 0 {
                LabeledSpan::new_primary_with_span(label, span)
            } else {
                LabeledSpan::new_with_span(label, span)
            }
        })
        .collect();
    (file, labels)
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
        Some(&*self.source)
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

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::yaml::Span;

    /// The lines around a span read from the line index are what miette
    /// reads from the whole text, for every span of a text with CRLF and
    /// LF breaks, a lone CR, escaped controls and multi-byte characters.
    #[test]
    fn windows_read_as_miette_reads_the_whole_text() {
        let original = "a: 1\r\nb: \u{1b}[2J\nc: ü\rd\n\ne: |\n  x\n  y\nlast";
        let mut sources = SourceMap::default();
        let id = sources.add(PathBuf::from("f.yaml"), Arc::from(original));
        let file = Prepared::new(&sources, id);
        let text = file.text.text.as_str();
        let mut boundaries: Vec<usize> = (0..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .collect();
        // Spans that end past the text: miette reads some of them.
        boundaries.extend([text.len() + 1, text.len() + 2]);
        let mut compared = 0;
        for &start in &boundaries {
            for &end in boundaries.iter().filter(|e| **e >= start) {
                if start > text.len() {
                    continue;
                }
                let span = SourceSpan::new(start.into(), end - start);
                for (before, after) in [(0, 0), (1, 1), (2, 3)] {
                    let whole = text.read_span(&span, before, after);
                    let window = file.read_span(&span, before, after);
                    match (whole, window) {
                        (Ok(w), Ok(v)) => {
                            assert_eq!(
                                (w.data(), w.span(), w.line(), w.column(), w.line_count()),
                                (v.data(), v.span(), v.line(), v.column(), v.line_count()),
                                "span {start}..{end}, context {before}/{after}"
                            );
                            assert_eq!(v.name(), Some("f.yaml"));
                            compared += 1;
                        }
                        (Err(_), Err(_)) => {}
                        (w, v) => panic!("{start}..{end}: {:?} vs {:?}", w.is_ok(), v.is_ok()),
                    }
                }
            }
        }
        assert!(compared > 1000, "{compared}");
    }

    fn label(file: FileId, text: &str, line: u32, what: &str) -> Label {
        let start = text
            .lines()
            .take(line as usize - 1)
            .map(|l| l.len() + 1)
            .sum::<usize>() as u32;
        Label {
            span: Span {
                file,
                start,
                end: start + 4,
                line,
                col: 1,
            },
            text: what.into(),
        }
    }

    /// Labels far apart in one file are two windows, each under its own
    /// `file:line:col` header (miette's split, kept by the line index);
    /// labels close together share one.
    #[test]
    fn labels_far_apart_are_shown_in_two_windows() {
        let (text, sources, id) = big_file();
        let finding = |lines: [u32; 2]| two_labels(id, &text, lines);
        let far = render(&[finding([2, 250])], &sources, false);
        let headers: Vec<&str> = far.lines().filter(|l| l.contains("╭─[")).collect();
        assert_eq!(headers.len(), 2, "{far}");
        assert!(headers[0].ends_with("[apps/big.yaml:2:1]"), "{far}");
        assert!(headers[1].ends_with("[apps/big.yaml:250:1]"), "{far}");
        assert!(far.contains(" 250 │ k250: v"), "{far}");
        assert!(!far.contains("k100"), "nothing between the windows: {far}");
        let near = render(&[finding([2, 3])], &sources, false);
        assert_eq!(
            near.lines().filter(|l| l.contains("╭─[")).count(),
            1,
            "{near}"
        );
    }

    /// A label far above the primary one in its file is drawn after it,
    /// as a related snippet of that file: the finding's first header is
    /// the line to change. One just above shares its window.
    #[test]
    fn the_primary_window_comes_first_and_a_label_far_above_after_it() {
        let (text, sources, id) = big_file();
        let shown = render(&[two_labels(id, &text, [250, 2])], &sources, false);
        let headers: Vec<&str> = shown.lines().filter(|l| l.contains("╭─[")).collect();
        assert_eq!(headers.len(), 2, "{shown}");
        assert!(headers[0].ends_with("[apps/big.yaml:250:1]"), "{shown}");
        assert!(headers[1].ends_with("[apps/big.yaml:2:1]"), "{shown}");
        assert!(shown.contains("related: apps/big.yaml"), "{shown}");
        let near = render(&[two_labels(id, &text, [250, 248])], &sources, false);
        let headers: Vec<&str> = near.lines().filter(|l| l.contains("╭─[")).collect();
        assert_eq!(headers.len(), 1, "{near}");
        assert!(headers[0].ends_with("[apps/big.yaml:250:1]"), "{near}");
    }

    /// A file of 300 lines `kNNN: v`.
    fn big_file() -> (String, SourceMap, FileId) {
        let text: String = (1..=300).map(|i| format!("k{i:03}: v\n")).collect();
        let mut sources = SourceMap::default();
        let id = sources.add(PathBuf::from("apps/big.yaml"), Arc::from(text.as_str()));
        (text, sources, id)
    }

    /// A finding labelled at two lines of `text`.
    fn two_labels(id: FileId, text: &str, lines: [u32; 2]) -> Finding {
        Finding {
            rule: "r".into(),
            severity: Severity::Warning,
            message: "m".into(),
            primary: label(id, text, lines[0], "here"),
            related: vec![label(id, text, lines[1], "and there")],
            evidence: Vec::new(),
            notes: Vec::new(),
            help: "h".into(),
            fingerprint: String::new(),
            fix: None,
            subjects: Default::default(),
            unconfirmed_severity: None,
            chain: Vec::new(),
            baseline: None,
        }
    }

    /// Past the run's budget, each finding is its message and location,
    /// and one line says the snippets are elided.
    #[test]
    fn snippets_past_the_run_budget_are_elided() {
        let (text, sources, id) = big_file();
        let findings: Vec<Finding> = (1..=200)
            .map(|i| two_labels(id, &text, [i, i + 50]))
            .collect();
        let whole = render_within(&findings, &sources, false, true, usize::MAX);
        let out = render_within(&findings, &sources, false, true, 4000);
        assert!(
            out.len() < whole.len() / 3,
            "{} of {}",
            out.len(),
            whole.len()
        );
        let notes = out
            .matches("note: snippets elided from here on: the report passed 4000 bytes")
            .count();
        assert_eq!(notes, 1, "{out}");
        let (shown, elided) = out.split_once("note: snippets elided").unwrap();
        assert!(shown.contains("╭─[apps/big.yaml:1:1]"), "{shown}");
        assert!(!elided.contains("╭─["), "{elided}");
        assert!(elided.contains("at apps/big.yaml:200:1"), "{elided}");
        // Every finding is still there.
        assert_eq!(
            out.matches("× m").count() + out.matches("⚠ m").count(),
            200,
            "{out}"
        );
    }

    /// Findings are drawn in parallel a chunk at a time, yet the snippets
    /// stop at the first finding past the budget, as drawn one by one:
    /// here in the middle of the second chunk.
    #[test]
    fn the_budget_ends_snippets_at_the_same_finding_across_chunks() {
        let (text, sources, id) = big_file();
        let findings: Vec<Finding> = (0..2 * RENDERED_AT_ONCE as u32 + 40)
            .map(|i| two_labels(id, &text, [i % 240 + 1, i % 240 + 51]))
            .collect();
        let whole = render_within(&findings, &sources, false, true, usize::MAX);
        // Each finding's part of the whole, alone (no two share related
        // places, so none depends on another).
        let lens: Vec<usize> = findings
            .iter()
            .map(|f| {
                render_within(std::slice::from_ref(f), &sources, false, true, usize::MAX).len()
            })
            .collect();
        assert_eq!(lens.iter().sum::<usize>(), whole.len());
        let budget = lens[..RENDERED_AT_ONCE + 30].iter().sum::<usize>() - 1;
        let out = render_within(&findings, &sources, false, true, budget);
        let (shown, _) = out.split_once("note: snippets elided").unwrap();
        // The first finding drawn after the output passed the budget is
        // the first without its snippet.
        let kept = lens[..RENDERED_AT_ONCE + 30].iter().sum::<usize>();
        assert_eq!(shown, &whole[..kept]);
    }
}
