//! Rule documentation, generated from the rule files: the single source
//! for `explain`, `docs/rules/<id>.md` and SARIF rule help.

use super::Rule;

/// A message template as the rule page shows it: each `{binding.field}`
/// placeholder (filled from a finding's evidence) in words, `the
/// database` for `{database.name}`, `the setting value` for
/// `{setting.value}`, since a page is about no one finding.
pub fn neutral(template: &str) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let key = after.split('}').next().filter(|_| after.contains('}'));
        let words = key
            .and_then(placeholder)
            .map(|(binding, field)| match field {
                "name" => format!("the {binding}"),
                _ => format!("the {binding} {}", field.replace('_', " ")),
            });
        match (key, words) {
            (Some(k), Some(words)) => {
                out.push_str(&words);
                rest = &after[k.len() + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `(binding, field)` of a placeholder's key, `database.name`.
fn placeholder(key: &str) -> Option<(&str, &str)> {
    let (binding, field) = key.split_once('.')?;
    let plain = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_lowercase() || c == '_');
    (plain(binding) && plain(field)).then_some((binding, field))
}

/// The rule page, in clippy's what / why / example layout.
pub fn markdown(rule: &Rule) -> String {
    let mut out = format!(
        "# {}\n\n{}\n\n- id: `{}`\n- severity: {}\n- category: {}\n\n",
        rule.id,
        rule.title,
        rule.id,
        rule.severity.as_str(),
        rule.category.as_str()
    );
    out.push_str(&format!("## What it does\n\n{}\n\n", rule.what.trim()));
    out.push_str(&format!("## Why is this bad?\n\n{}\n\n", rule.why.trim()));
    out.push_str(&format!(
        "## Example\n\n```yaml\n{}\n```\n\n",
        rule.example.trim_end()
    ));
    out.push_str(&format!(
        "## Use instead\n\n```yaml\n{}\n```\n\n",
        rule.use_instead.trim_end()
    ));
    out.push_str(&format!("## What to do\n\n{}\n\n", rule.remediation.trim()));
    // ruff's "Fix safety" section: what `--fix` does and what it trades.
    if let Some(fix) = &rule.fix {
        out.push_str(&format!(
            "## Fix safety\n\nAutomatic fix ({}): {}. {}\n\n",
            fix.applicability.as_str(),
            neutral(&fix.title),
            fix.safety.trim()
        ));
    }
    if let Some(probe) = &rule.probe {
        let test = match probe {
            super::ProbeSpec::PostgresCommit {
                min_p50_ms,
                min_ratio,
                cause,
            } => {
                let part = match cause {
                    super::schema::CommitWait::Any => {
                        "a commit's p50 with the server's synchronous_commit"
                    }
                    super::schema::CommitWait::StandbyWait => {
                        "the p50 with synchronous_commit off plus the wait for synchronous \
                         standbys (the p50 with the server's synchronous_commit minus the p50 \
                         with it local)"
                    }
                    super::schema::CommitWait::LocalFlush => {
                        "the p50 with synchronous_commit off plus the local WAL flush (the p50 \
                         with it local minus the p50 with it off)"
                    }
                };
                let dominant = match cause {
                    super::schema::CommitWait::Any => "",
                    super::schema::CommitWait::StandbyWait => {
                        ", and the standby wait is at least the local flush"
                    }
                    super::schema::CommitWait::LocalFlush => {
                        ", and the local flush is larger than the standby wait"
                    }
                };
                format!(
                    "the Postgres commit probe: confirmed when {part} is at least {min_p50_ms} ms \
                     and at least {min_ratio} times the p50 with it off{dominant}"
                )
            }
            super::ProbeSpec::PostgresKeepalive { max_idle_seconds } => format!(
                "the Postgres connection probe: confirmed when the server's first keepalive \
                 comes after more than {max_idle_seconds} s of silence"
            ),
        };
        out.push_str(&format!(
            "## Probe\n\nWith `--live` (through a port-forward to the database pod) or \
             `--probe-dsn`, {test}. A finding it does not confirm is reported as info.\n\n"
        ));
    }
    out.push_str("## References\n\n");
    for r in &rule.references {
        out.push_str(&format!("- <{r}>\n"));
    }
    out
}

/// The index page listing every rule.
pub fn index(rules: &[Rule]) -> String {
    let mut out = String::from(
        "# Rules\n\nGenerated from `rules/*.yaml` by `cargo test` (see `tests/it/rule_docs.rs`); do not edit.\n\n| id | severity | category | title |\n|---|---|---|---|\n",
    );
    for r in rules {
        out.push_str(&format!(
            "| [{}]({}.md) | {} | {} | {} |\n",
            r.id,
            r.id,
            r.severity.as_str(),
            r.category.as_str(),
            r.title
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_put_in_words_and_other_braces_kept() {
        assert_eq!(
            neutral("set it in the parameters of {database.name} ({setting.value})"),
            "set it in the parameters of the database (the setting value)"
        );
        assert_eq!(
            neutral("${CLUSTER_STORAGE_CLASS} {} {a.B} {x"),
            "${CLUSTER_STORAGE_CLASS} {} {a.B} {x"
        );
    }

    /// `explain`, the generated pages and SARIF help are this page: no
    /// rule shows a raw `{binding.field}`.
    #[test]
    fn no_rule_page_shows_a_placeholder() {
        for rule in crate::rules::builtin() {
            let page = markdown(&rule);
            let raw = page.match_indices('{').find_map(|(i, _)| {
                let key = page[i + 1..].split('}').next()?;
                placeholder(key).map(|_| key)
            });
            assert_eq!(raw, None, "{}: a raw placeholder in its page", rule.id);
        }
    }
}
