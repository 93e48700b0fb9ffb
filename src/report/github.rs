//! `--format github`: GitHub Actions workflow commands, one per finding,
//! which the runner turns into annotations on the pull request's diff
//! without an upload step. Paths are from the top of the git repository
//! (see [`crate::yaml::Shown`]), as GitHub resolves them against the
//! workspace, whichever subdirectory was linted.

use std::fmt::Write;

use super::control::{Breaks, escape, escape_line};
use crate::rules::{Finding, Severity};
use crate::source::Issue;
use crate::yaml::SourceMap;

/// Annotations the runner shows per step and type (error, warning,
/// notice); more are dropped without a word (actions/toolkit
/// docs/problem-matchers.md, "Limitations": 10 of each per step, 50 per job).
pub const PER_STEP: usize = 10;

/// One workflow command, before it is written.
struct Annotation {
    severity: Severity,
    /// `file`, `line`, `col`, `endLine`, `endColumn`; empty: on the run.
    place: Vec<(&'static str, String)>,
    /// The place as `path:line:col`, for the step log.
    location: String,
    title: String,
    message: String,
}

impl Annotation {
    fn sort_key(&self) -> (std::cmp::Reverse<Severity>, String, u32, u32) {
        let num = |k: &str| {
            self.place
                .iter()
                .find(|(key, _)| *key == k)
                .and_then(|(_, v)| v.parse().ok())
                .unwrap_or(0)
        };
        let file = self.place.first().map_or(String::new(), |(_, v)| v.clone());
        (
            std::cmp::Reverse(self.severity),
            file,
            num("line"),
            num("col"),
        )
    }
}

fn command(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "notice",
    }
}

/// One command per finding and per input problem, errors first, then by
/// file and line; at most [`PER_STEP`] of each type. What the runner
/// would drop is written to the step log as plain lines instead, and a
/// closing notice says how many and where the rest are.
pub fn render(findings: &[Finding], problems: &[Issue], sources: &SourceMap) -> String {
    let mut all: Vec<Annotation> = findings
        .iter()
        .map(|f| finding(f, sources))
        .chain(problems.iter().map(|p| problem(p, sources)))
        .collect();
    all.sort_by_key(Annotation::sort_key);
    let over = |cap: usize| {
        [Severity::Error, Severity::Warning, Severity::Info]
            .iter()
            .any(|s| all.iter().filter(|a| a.severity == *s).count() > cap)
    };
    // The closing notice is itself a notice: it takes one notice's place.
    let truncated = over(PER_STEP);
    let mut shown = [0usize; 3];
    let mut out = String::new();
    let mut rest = Vec::new();
    for a in &all {
        let n = &mut shown[a.severity as usize];
        let cap = if truncated && a.severity == Severity::Info {
            PER_STEP - 1
        } else {
            PER_STEP
        };
        if *n >= cap {
            rest.push(a);
            continue;
        }
        *n += 1;
        let props: Vec<String> = a
            .place
            .iter()
            .chain(std::iter::once(&("title", a.title.clone())))
            .map(|(k, v)| format!("{k}={}", escape_property(v)))
            .collect();
        // Writing into a String cannot fail.
        let _ = writeln!(
            out,
            "::{} {}::{}",
            command(a.severity),
            props.join(","),
            escape_data(&a.message)
        );
    }
    if !rest.is_empty() {
        for a in &rest {
            let first = a.message.lines().next().unwrap_or("");
            // A plain line of the log: its start must not read as a command.
            let line = format!(
                "{}: {} {}: {}",
                escape(&a.location, Breaks::Escape),
                a.severity.as_str(),
                escape(&a.title, Breaks::Escape),
                escape(first, Breaks::Escape)
            );
            let _ = writeln!(out, "{}", escape_line(&line));
        }
        let count = |s: Severity| rest.iter().filter(|a| a.severity == s).count();
        let _ = writeln!(
            out,
            "::notice title=homelab-lint::{}",
            escape_data(&format!(
                "{} more not annotated ({} errors, {} warnings, {} notices): the runner shows \
                 {PER_STEP} annotations of each type per step. They are listed in this step's \
                 log above, and every finding is in the SARIF report (-o sarif; code scanning \
                 with upload-sarif)",
                rest.len(),
                count(Severity::Error),
                count(Severity::Warning),
                count(Severity::Info),
            ))
        );
    }
    out
}

fn finding(f: &Finding, sources: &SourceMap) -> Annotation {
    let mut place = Vec::new();
    let span = f.primary.span;
    // Line 0: a finding with nothing in the repository to point at
    // becomes an annotation on the run rather than on a file; so does
    // one on a page of the live cluster or a file outside the
    // repository, which GitHub cannot show.
    let path = sources.shown(span.file);
    if span.line != 0 && !sources.is_virtual(span.file) && !path.is_absolute() {
        place.push(("file", slashes(&path)));
        place.push(("line", span.line.to_string()));
        place.push(("col", span.col.to_string()));
        if let Some((line, col)) = sources
            .line_col(span.file, span.end)
            .filter(|end| *end >= (span.line, span.col))
        {
            place.push(("endLine", line.to_string()));
            place.push(("endColumn", col.to_string()));
        }
    }
    let mut message = f.message.clone();
    for note in &f.notes {
        message.push_str("\nnote: ");
        message.push_str(note);
    }
    message.push_str("\nhelp: ");
    message.push_str(&f.help);
    Annotation {
        severity: f.severity,
        place,
        location: sources.location(span),
        title: match f.baseline {
            Some(state) => format!("{} ({})", f.rule, state.as_str()),
            None => f.rule.clone(),
        },
        message,
    }
}

/// An input the run could not use, as a warning at its file and line
/// (paths from the repository's top, like the findings').
fn problem(p: &Issue, sources: &SourceMap) -> Annotation {
    let mut place = Vec::new();
    let path = std::path::Path::new(&p.path);
    let shown = sources.shown_root().prefix.join(path);
    if !p.path.is_empty() && !path.is_absolute() {
        place.push(("file", slashes(&shown)));
        if p.line > 0 {
            place.push(("line", p.line.to_string()));
            place.push(("col", p.col.max(1).to_string()));
        }
    }
    let mut location = shown.display().to_string();
    if p.line > 0 {
        let _ = write!(location, ":{}:{}", p.line, p.col.max(1));
    }
    Annotation {
        severity: Severity::Warning,
        place,
        location,
        title: "input not used".into(),
        message: p.message.clone(),
    }
}

fn slashes(path: &std::path::Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The escaping of the runner's command parser (actions/toolkit
/// `escapeData`): without it a newline would end the command early.
/// Control characters are made visible first (`control`).
pub fn escape_data(s: &str) -> String {
    escape(s, Breaks::Keep)
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Properties are also split at `,` and `:` (`escapeProperty`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::rules::Label;
    use crate::yaml::Span;

    #[test]
    fn one_command_per_finding_with_escaped_properties_and_message() {
        let mut sources = SourceMap::default();
        let text = "a: ü, b\n";
        let file = sources.add(PathBuf::from("apps/a,b.yaml"), Arc::from(text));
        let finding = Finding {
            rule: "some-rule".into(),
            severity: Severity::Error,
            message: "50% off".into(),
            primary: Label {
                span: Span {
                    file,
                    start: 3,
                    end: 8,
                    line: 1,
                    col: 4,
                },
                text: String::new(),
            },
            related: Vec::new(),
            evidence: Vec::new(),
            notes: vec!["a note".into()],
            unconfirmed_severity: None,
            chain: Vec::new(),
            baseline: None,
            help: "fix it".into(),
            fingerprint: String::new(),
            fix: None,
            subjects: Default::default(),
        };
        assert_eq!(
            render(&[finding], &[], &sources),
            "::error file=apps/a%2Cb.yaml,line=1,col=4,endLine=1,endColumn=8,\
             title=some-rule::50%25 off%0Anote: a note%0Ahelp: fix it\n"
        );
    }

    #[test]
    fn sorted_by_severity_then_place_and_capped_per_type_with_a_closing_notice() {
        let mut sources = SourceMap::default();
        let text = "a: 1\n".repeat(40);
        let b = sources.add(PathBuf::from("b.yaml"), Arc::from(text.as_str()));
        let a = sources.add(PathBuf::from("a.yaml"), Arc::from(text.as_str()));
        let at = |file, line: u32, severity| Finding {
            rule: format!("r{line}"),
            severity,
            message: "m".into(),
            primary: Label {
                span: Span {
                    file,
                    start: (line - 1) * 5,
                    end: (line - 1) * 5 + 1,
                    line,
                    col: 1,
                },
                text: String::new(),
            },
            related: Vec::new(),
            evidence: Vec::new(),
            notes: Vec::new(),
            help: "h".into(),
            fingerprint: String::new(),
            fix: None,
            subjects: Default::default(),
            unconfirmed_severity: None,
            chain: Vec::new(),
            baseline: None,
        };
        let mut findings = vec![at(b, 3, Severity::Info), at(b, 2, Severity::Error)];
        findings.extend((1..=12).map(|l| at(a, 30 - l, Severity::Warning)));
        findings.extend((1..=10).map(|l| at(b, l + 10, Severity::Info)));
        findings.push(at(a, 1, Severity::Error));
        let problem = Issue::file(std::path::Path::new("c.yaml"), "not valid YAML");
        let out = render(&findings, &[problem], &sources);
        let commands: Vec<&str> = out.lines().filter(|l| l.starts_with("::")).collect();
        let kinds: Vec<&str> = commands
            .iter()
            .map(|l| l[2..].split([' ', ':']).next().unwrap())
            .collect();
        assert_eq!(kinds.iter().filter(|k| **k == "error").count(), 2);
        assert_eq!(kinds.iter().filter(|k| **k == "warning").count(), PER_STEP);
        // Nine notices and the closing one.
        assert_eq!(kinds.iter().filter(|k| **k == "notice").count(), PER_STEP);
        let sorted = {
            let mut k = kinds.clone();
            k.sort_by_key(|k| ["error", "warning", "notice"].iter().position(|x| x == k));
            k
        };
        assert_eq!(kinds, sorted, "errors, then warnings, then notices");
        assert!(commands[0].contains("file=a.yaml,line=1,"), "{out}");
        assert!(commands[1].contains("file=b.yaml,line=2,"), "{out}");
        assert!(commands[2].contains("file=a.yaml,line=18,"), "{out}");
        // 13 warnings (12 findings, the problem last, at c.yaml): 3 over; 11 notices: 2 over.
        let last = commands.last().unwrap();
        assert!(
            last.starts_with("::notice title=homelab-lint::5 more not annotated (0 errors, 3 warnings, 2 notices)"),
            "{last}"
        );
        assert!(last.contains("SARIF"), "{last}");
        let logged: Vec<&str> = out.lines().filter(|l| !l.starts_with("::")).collect();
        assert_eq!(logged.len(), 5, "{out}");
        assert!(
            logged.contains(&"c.yaml: warning input not used: not valid YAML"),
            "{out}"
        );
        assert!(logged.contains(&"b.yaml:20:1: info r20: m"), "{out}");
        // Under the limit nothing is held back and no notice is added.
        let few = render(&findings[..3], &[], &sources);
        assert_eq!(few.lines().count(), 3);
        assert!(!few.contains("more not annotated"));
    }

    #[test]
    fn escaping_matches_the_actions_toolkit() {
        assert_eq!(escape_data("a\u{1b}[2J\r\n"), "a\\x1b[2J%0D%0A");
        assert_eq!(escape_data("100% a\r\nb: c,d"), "100%25 a%0D%0Ab: c,d");
        assert_eq!(
            escape_property("100% a\r\nb: c,d"),
            "100%25 a%0D%0Ab%3A c%2Cd"
        );
        // `%` first, so the escapes themselves are not escaped again.
        assert_eq!(escape_property("%0A:"), "%250A%3A");
    }
}
