//! Rule documentation, generated from the rule files: the single source
//! for `explain`, `docs/rules/<id>.md` and SARIF rule help.

use super::Rule;

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
            fix.title,
            fix.safety.trim()
        ));
    }
    if let Some(probe) = &rule.probe {
        let test = match probe {
            super::ProbeSpec::PostgresCommit {
                min_p50_ms,
                min_ratio,
            } => format!(
                "the Postgres commit probe: confirmed when a commit's p50 with the server's \
                 synchronous_commit is at least {min_p50_ms} ms and at least {min_ratio} times \
                 the p50 with it off"
            ),
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
        "# Rules\n\nGenerated from `rules/*.yaml` by `cargo test` (see `tests/rule_docs.rs`); do not edit.\n\n| id | severity | category | title |\n|---|---|---|---|\n",
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
