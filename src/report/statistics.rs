//! `--statistics`: how many findings each rule has, most first, as ruff
//! prints them: the count, the rule id, `[*]` when `--fix` can fix some
//! of them, and the rule's title. With `-o json` or `-o yaml`, the same
//! as a list of records.

use serde::Serialize;

use super::Format;
use super::control::{self, Breaks, SerializeError, escape};
use crate::rules::fixes::Applicability;
use crate::rules::{Finding, Rule};

/// One rule's count.
#[derive(Debug, Serialize)]
pub struct Statistic {
    pub rule: String,
    pub count: usize,
    /// How many `--fix` can fix (safe fixes).
    pub fixable: usize,
    pub title: String,
}

/// The count of each rule with findings, most first, then by id.
pub fn collect(findings: &[Finding], rules: &[Rule]) -> Vec<Statistic> {
    let mut out: Vec<Statistic> = Vec::new();
    for f in findings {
        let at = match out.iter().position(|s| s.rule == f.rule) {
            Some(at) => at,
            None => {
                let title = rules
                    .iter()
                    .find(|r| r.id == f.rule)
                    .map_or_else(String::new, |r| r.title.clone());
                out.push(Statistic {
                    rule: f.rule.clone(),
                    count: 0,
                    fixable: 0,
                    title,
                });
                out.len() - 1
            }
        };
        out[at].count += 1;
        let safe = f
            .fix
            .as_ref()
            .is_some_and(|x| x.applicability == Applicability::Safe && !x.edits.is_empty());
        out[at].fixable += usize::from(safe);
    }
    out.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.rule.cmp(&b.rule)));
    out
}

/// The statistics in `format`: a table for people (human, concise), or
/// data (JSON, YAML); `None` for SARIF, GitHub annotations, Markdown
/// summaries and graphs, which have no place for them.
pub fn render(
    format: Format,
    findings: &[Finding],
    rules: &[Rule],
) -> Option<Result<String, SerializeError>> {
    let stats = collect(findings, rules);
    match format {
        Format::Json => Some(control::to_json(&stats)),
        Format::Yaml => Some(control::to_yaml(&stats)),
        Format::Human | Format::Concise => Some(Ok(table(&stats))),
        Format::Sarif | Format::Github | Format::Markdown | Format::Graph(_) => None,
    }
}

fn table(stats: &[Statistic]) -> String {
    let count_width = stats.iter().map(|s| s.count.to_string().len()).max();
    let id_width = stats.iter().map(|s| s.rule.len()).max().unwrap_or(0);
    let lines: Vec<String> = stats
        .iter()
        .map(|s| {
            format!(
                "{:>w$}  {:<id_width$}  {}{}",
                s.count,
                escape(&s.rule, Breaks::Escape),
                if s.fixable > 0 { "[*] " } else { "" },
                escape(&s.title, Breaks::Escape),
                w = count_width.unwrap_or(0),
            )
        })
        .collect();
    control::defuse_commands(&lines.join("\n")).into_owned()
}
