//! `--output concise`: one line per finding, `path:line:col: severity
//! rule: message`, the form compilers print and editors, terminals and
//! pre-commit's output link.

use crate::rules::Finding;
use crate::yaml::SourceMap;

pub fn render(findings: &[Finding], sources: &SourceMap) -> String {
    findings
        .iter()
        .map(|f| {
            // A message is one line; a stray break would start a false one.
            let message = f.message.replace(['\n', '\r'], " ");
            format!(
                "{}: {} {}: {message}",
                sources.location(f.primary.span),
                f.severity.as_str(),
                f.rule
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
