//! `--output concise`: one line per finding, `path:line:col: severity
//! rule: message`, the form compilers print and editors, terminals and
//! pre-commit's output link. Each field is escaped to one line; the
//! report's line starts are defused as a whole (`control::defuse_commands`).

use super::control::{Breaks, escape};
use crate::rules::Finding;
use crate::yaml::SourceMap;

/// `[new] ` or `[existing] ` before a message, with `--base`; the human
/// format tags its messages the same way.
pub fn tag(f: &Finding) -> String {
    f.baseline
        .map_or(String::new(), |state| format!("[{}] ", state.as_str()))
}

pub fn render(findings: &[Finding], sources: &SourceMap) -> String {
    findings
        .iter()
        .map(|f| {
            // A message is one line; a stray break would start a false one.
            let message = f.message.replace(['\n', '\r'], " ");
            format!(
                "{}: {} {}: {}{}",
                escape(&sources.location(f.primary.span), Breaks::Escape),
                f.severity.as_str(),
                escape(&f.rule, Breaks::Escape),
                tag(f),
                escape(&message, Breaks::Escape)
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
