//! `--format markdown`: a summary for a pull request comment or
//! `$GITHUB_STEP_SUMMARY` (the GitHub Action writes it there): the
//! counts, then one section per finding with its message, links to the
//! places involved (paths from the repository's top, `#L<line>`), the
//! fix as a `diff` block and the chain it rests on as a Mermaid diagram,
//! which GitHub draws.
//!
//! Every text from the repository is made safe twice: hidden characters
//! escaped (`control::escape`), then every ASCII punctuation character
//! backslash-escaped as CommonMark allows (spec 0.31, "Backslash
//! escapes"), so that no name can open HTML, a link, an emphasis, a
//! heading, a table cell, an @-mention or a `#123` reference. Code blocks
//! are fenced with more backticks than their text holds in a row.

use std::fmt::Write;
use std::path::Path;

use super::control::{self, Breaks, escape};
use super::graph::Graph;
use crate::fix::{Applicability, apply, diff};
use crate::rules::{Finding, Label, Severity};
use crate::source::Issue;
use crate::yaml::SourceMap;

/// Places listed per finding before "and N more": a comment stays
/// readable (and within GitHub's 65,536 characters) when a finding names
/// a hundred objects.
pub const MOST_PLACES: usize = 20;

/// The whole summary: the findings, then the inputs that could not be
/// used. `coverage`: the repository's coverage line, when a repository
/// was linted.
pub fn render(
    findings: &[Finding],
    problems: &[Issue],
    sources: &SourceMap,
    coverage: Option<&str>,
) -> String {
    let mut out = String::from("## homelab-lint\n\n");
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let _ = write!(
        out,
        "**{}**: {}, {}, {} info",
        counted(findings.len(), "finding"),
        counted(count(Severity::Error), "error"),
        counted(count(Severity::Warning), "warning"),
        count(Severity::Info)
    );
    let states: Vec<_> = findings.iter().filter_map(|f| f.baseline).collect();
    if !states.is_empty() {
        let new = states
            .iter()
            .filter(|s| **s == crate::rules::BaselineState::New)
            .count();
        let _ = write!(out, "; {new} new, {} existing", states.len() - new);
    }
    out.push_str("\n\n");
    if let Some(line) = coverage {
        let _ = writeln!(out, "{}\n", text(line));
    }
    for (i, f) in findings.iter().enumerate() {
        section(&mut out, i + 1, f, sources);
    }
    if !problems.is_empty() {
        let _ = writeln!(out, "### Inputs not used ({})\n", problems.len());
        for p in problems {
            let _ = writeln!(out, "- {}", problem(p, sources));
        }
    }
    out
}

/// `1 finding`, `2 findings`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// An input problem, linked to its file and line (paths from the
/// repository's top, like the findings').
fn problem(p: &Issue, sources: &SourceMap) -> String {
    let path = Path::new(&p.path);
    if p.path.is_empty() || path.is_absolute() {
        return text(&p.to_string());
    }
    let shown = sources.shown_root().prefix.join(path);
    let target = link_target(&shown);
    let shown = shown.display().to_string();
    match p.line {
        0 => format!("[`{}`]({target}): {}", code_span(&shown), text(&p.message)),
        line => format!(
            "[`{}:{line}`]({target}#L{line}): {}",
            code_span(&shown),
            text(&p.message)
        ),
    }
}

fn section(out: &mut String, n: usize, f: &Finding, sources: &SourceMap) {
    let _ = write!(
        out,
        "### {n}. {} `{}`",
        f.severity.as_str(),
        code_span(&f.rule)
    );
    if let Some(state) = f.baseline {
        let _ = write!(out, " ({})", state.as_str());
    }
    out.push_str("\n\n");
    let _ = writeln!(out, "{}\n", text(&f.message));
    let places: Vec<&Label> = std::iter::once(&f.primary).chain(&f.related).collect();
    for l in places.iter().take(MOST_PLACES) {
        let _ = writeln!(out, "- {}", place(l, sources));
    }
    if places.len() > MOST_PLACES {
        let _ = writeln!(
            out,
            "- and {} more (the JSON or SARIF report lists every one)",
            places.len() - MOST_PLACES
        );
    }
    out.push('\n');
    for note in &f.notes {
        let _ = writeln!(out, "> {}\n", text(note));
    }
    let mut graph = Graph::default();
    graph.add_chain(&f.chain);
    // One object alone is no chain: its place above says it all.
    if f.chain.iter().filter(|l| l.object.is_some()).count() > 1 {
        out.push_str("```mermaid\n");
        out.push_str(&graph.mermaid());
        out.push_str("```\n\n");
    }
    let _ = writeln!(out, "**Help**: {}\n", text(&f.help));
    if let Some(fix) = &f.fix {
        let _ = writeln!(
            out,
            "**Fix** ({}): {}\n",
            match fix.applicability {
                Applicability::Safe => "safe, applied by `--fix`",
                Applicability::Unsafe => "unsafe, applied by `--fix --unsafe-fixes`",
                Applicability::DisplayOnly => "display-only, not applied automatically",
            },
            text(&fix.title)
        );
        for note in &fix.notes {
            let _ = writeln!(out, "- {}", text(note));
        }
        if !fix.notes.is_empty() {
            out.push('\n');
        }
        let patch = diff::of_plan(&apply::plan(sources, &[fix]), sources, control::path);
        if !patch.is_empty() {
            out.push_str(&code_block("diff", &escape(&patch, Breaks::Keep)));
        }
    }
}

/// `[path:line:col](path#Lline): label`; a place with no file in the
/// repository (a live object's page, a file outside it) is not linked.
fn place(l: &Label, sources: &SourceMap) -> String {
    let span = l.span;
    let path = sources.shown(span.file);
    let shown = format!("`{}`", code_span(&sources.location(span)));
    let at = if span.line != 0 && !sources.is_virtual(span.file) && !path.is_absolute() {
        format!("[{shown}]({}#L{})", link_target(&path), span.line)
    } else {
        shown
    };
    if l.text.is_empty() {
        at
    } else {
        format!("{at}: {}", text(&l.text))
    }
}

/// A relative link's target: each path component percent-encoded, so
/// that a space, a parenthesis or a `#` in a file name stays in the path.
fn link_target(path: &Path) -> String {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    const KEEP: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_');
    path.components()
        .map(|c| utf8_percent_encode(&c.as_os_str().to_string_lossy(), KEEP).to_string())
        .collect::<Vec<_>>()
        .join("/")
}

/// Repository text in running Markdown, on one line: hidden characters
/// made visible, then backslash escapes (CommonMark allows one before
/// any ASCII punctuation) on every character that opens markup anywhere
/// in a line (emphasis, links, HTML, entities, tables, strikethrough,
/// math, @-mentions, `#123` references, emoji `:codes:`), and on the
/// first punctuation character when it could start a list, a quote or a
/// heading (`- `, `+ `, `1. `, `1) `, `> `).
pub fn text(s: &str) -> String {
    const ANYWHERE: &str = "\\`*_[]<>#|~&@:!$";
    let mut out = String::with_capacity(s.len());
    let mut leading = true;
    for c in escape(s, Breaks::Escape).chars() {
        if ANYWHERE.contains(c) || (leading && c.is_ascii_punctuation()) {
            out.push('\\');
        }
        leading &= c.is_ascii_digit();
        out.push(c);
    }
    out
}

/// Text inside a code span: only a backtick could end it; it becomes a
/// quote, so that the span needs no padding rules.
fn code_span(s: &str) -> String {
    escape(s, Breaks::Escape).replace('`', "'")
}

/// A fenced code block whose fence is longer than any run of backticks
/// in `body` (CommonMark: a closing fence is at least as long as the
/// opening one).
fn code_block(info: &str, body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let mut out = format!("{fence}{info}\n{body}");
    if !body.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Markup, HTML, mentions and references in repository text are
    /// written as literal characters.
    #[test]
    fn repository_text_cannot_carry_markup() {
        assert_eq!(
            text("<img src=x> @admin #12 [a](b) *x* |c| $x$ :+1: \u{1b}[2J"),
            r"\<img src=x\> \@admin \#12 \[a\](b) \*x\* \|c\| \$x\$ \:+1\: \\x1b\[2J"
        );
        assert_eq!(text("a\nb"), r"a\\x0ab");
        // What starts a list or a quote only at the start.
        assert_eq!(text("- a"), r"\- a");
        assert_eq!(text("> a"), r"\> a");
        assert_eq!(text("12. a-b.c"), r"12\. a-b.c");
    }

    /// A code block's fence outlasts any backticks in its body.
    #[test]
    fn a_code_block_cannot_be_closed_by_its_body() {
        assert_eq!(code_block("diff", "a\n"), "```diff\na\n```\n\n");
        assert_eq!(
            code_block("diff", "+ ````\n"),
            "`````diff\n+ ````\n`````\n\n"
        );
    }

    #[test]
    fn link_targets_keep_odd_names_in_the_path() {
        assert_eq!(
            link_target(Path::new("apps/my app/(x)#1.yaml")),
            "apps/my%20app/%28x%29%231.yaml"
        );
    }
}
