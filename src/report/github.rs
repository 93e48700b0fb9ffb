//! `--format github`: GitHub Actions workflow commands, one per finding,
//! which the runner turns into annotations on the pull request's diff
//! without an upload step. Paths are from the top of the git repository
//! (see [`crate::yaml::Shown`]), as GitHub resolves them against the
//! workspace, whichever subdirectory was linted.

use std::fmt::Write;

use crate::rules::{Finding, Severity};
use crate::yaml::SourceMap;

pub fn render(findings: &[Finding], sources: &SourceMap) -> String {
    let mut out = String::new();
    for f in findings {
        let command = match f.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut props = Vec::new();
        let span = f.primary.span;
        // Line 0: a finding with nothing in the repository to point at
        // becomes an annotation on the run rather than on a file; so does
        // one on a page of the live cluster or a file outside the
        // repository, which GitHub cannot show.
        let path = sources.shown(span.file);
        if span.line != 0 && !sources.is_virtual(span.file) && !path.is_absolute() {
            let path = path
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            props.push(("file", path));
            props.push(("line", span.line.to_string()));
            props.push(("col", span.col.to_string()));
            if let Some((line, col)) = sources
                .line_col(span.file, span.end)
                .filter(|end| *end >= (span.line, span.col))
            {
                props.push(("endLine", line.to_string()));
                props.push(("endColumn", col.to_string()));
            }
        }
        props.push(("title", f.rule.clone()));
        let mut message = f.message.clone();
        for note in &f.notes {
            message.push_str("\nnote: ");
            message.push_str(note);
        }
        message.push_str("\nhelp: ");
        message.push_str(&f.help);
        let props: Vec<String> = props
            .iter()
            .map(|(k, v)| format!("{k}={}", escape_property(v)))
            .collect();
        // Writing into a String cannot fail.
        let _ = writeln!(
            out,
            "::{command} {}::{}",
            props.join(","),
            escape_data(&message)
        );
    }
    out
}

/// The escaping of the runner's command parser (actions/toolkit
/// `escapeData`): without it a newline would end the command early.
/// Control characters are made visible first (`control`).
pub fn escape_data(s: &str) -> String {
    super::control::escape(s)
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
            help: "fix it".into(),
            fingerprint: String::new(),
            fix: None,
        };
        assert_eq!(
            render(&[finding], &sources),
            "::error file=apps/a%2Cb.yaml,line=1,col=4,endLine=1,endColumn=8,\
             title=some-rule::50%25 off%0Anote: a note%0Ahelp: fix it\n"
        );
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
