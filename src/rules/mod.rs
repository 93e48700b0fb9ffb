//! Rules as data: the built-in pack embedded from `rules/`, user rules
//! from `--rules DIR`, one schema for both, and the engine that runs them.

pub mod chains;
pub mod config;
pub mod docs;
pub mod engine;
pub mod finding;
pub mod fixes;
pub mod redirect;
pub mod releases;
pub mod schema;
pub mod select;
pub mod steps;
pub mod subsume;
pub mod suppress;

use std::path::Path;

use include_dir::{Dir, include_dir};

pub use finding::{BaselineState, Evidence, Finding, Label, Link, Subjects};
pub use schema::{ProbeSpec, Rule, Severity};

use crate::source::Issue;

/// Candidates, objects and JSONPath matches one rule's evaluation may
/// examine (a user rule's steps multiply).
pub const MAX_RULE_WORK: usize = 2_000_000;

/// Matches (findings before deduplication) one rule may have.
pub const MAX_RULE_MATCHES: usize = 10_000;

static BUILTIN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/rules");

/// What linting a model produced.
pub struct Lint {
    pub findings: Vec<Finding>,
    pub undecided: Vec<engine::Undecided>,
    /// Suppressions that are not honoured (no reason).
    pub issues: Vec<Issue>,
    /// The findings suppressions dropped.
    pub suppressed: Vec<Finding>,
}

/// Runs the rules, then applies suppressions: the whole offline lint.
pub fn lint(model: &crate::model::Model, rules: &[Rule]) -> Lint {
    lint_with(model, rules, &releases::Baseline::none())
}

/// [`lint`] with the app versions of a `--base` run's base commit.
pub fn lint_with(
    model: &crate::model::Model,
    rules: &[Rule],
    baseline: &releases::Baseline,
) -> Lint {
    let mut known = redirect::Known::of(rules);
    known.extend(builtin_rules());
    lint_known(model, rules, &known, baseline)
}

/// [`lint_with`], where suppressions may name the `known` rule ids (the
/// rules loaded, the ones not running too, and their former ids) and no
/// others.
pub fn lint_known(
    model: &crate::model::Model,
    rules: &[Rule],
    known: &redirect::Known,
    baseline: &releases::Baseline,
) -> Lint {
    let outcome = engine::evaluate_with(model, rules, baseline);
    let suppressed = suppress::apply(model, rules, known, outcome.findings);
    let mut issues = outcome.issues;
    issues.extend(suppressed.issues);
    Lint {
        findings: suppressed.findings,
        undecided: outcome.undecided,
        issues,
        suppressed: suppressed.suppressed,
    }
}

/// The built-in rules, read once.
fn builtin_rules() -> &'static [Rule] {
    static RULES: std::sync::LazyLock<Vec<Rule>> = std::sync::LazyLock::new(builtin);
    &RULES
}

/// Typed loading of the project's own YAML files (rules, release facts,
/// configuration): an error is one line at the file's line and column.
pub(crate) fn from_yaml<T: serde::de::DeserializeOwned>(
    path: &str,
    text: &str,
    what: &str,
) -> Result<T, Issue> {
    serde_saphyr::from_str(text).map_err(|e| {
        let (line, col) = e
            .location()
            .map_or((0, 0), |l| (l.line() as u32, l.column() as u32));
        Issue::located(
            path,
            line,
            col,
            format!("{what}: {}", e.to_string().lines().next().unwrap_or("")),
        )
    })
}

/// Typed loading of a file the binary embeds, through the repository's
/// own YAML parser ([`crate::yaml::de`]): serde-saphyr spent about 230
/// instructions a byte on them, in every run, this about 110. A test
/// reads each one both ways and compares.
pub(crate) fn from_builtin<T: serde::de::DeserializeOwned>(
    path: &str,
    text: &str,
    what: &str,
) -> Result<T, Issue> {
    let limits = crate::yaml::Limits::default();
    let docs = crate::yaml::parse_values(text, crate::yaml::FileId(0), &limits)
        .map_err(|e| Issue::located(path, e.line, e.col, format!("{what}: {}", e.message)))?;
    let doc = docs
        .first()
        .ok_or_else(|| Issue::located(path, 1, 1, format!("{what}: no document")))?;
    steps::deferring(|| crate::yaml::de::from_node(doc, text)).map_err(|e| {
        let (line, col) = e.span.map_or((0, 0), |s| (s.line, s.col));
        Issue::located(path, line, col, format!("{what}: {e}"))
    })
}

/// Parses one rule file. Errors carry the file's line and column.
pub fn parse(path: &str, text: &str) -> Result<Rule, Issue> {
    checked(path, from_yaml(path, text, "invalid rule")?)
}

/// A rule as read, refused when its metadata has [`check_metadata`]'s
/// problems.
fn checked(path: &str, rule: Rule) -> Result<Rule, Issue> {
    let problems = check_metadata(&rule);
    if problems.is_empty() {
        Ok(rule)
    } else {
        Err(Issue::located(
            path,
            1,
            1,
            format!("rule {}: {}", rule.id, problems.join("; ")),
        ))
    }
}

/// The built-in rules, sorted by id.
pub fn builtin() -> Vec<Rule> {
    let mut rules: Vec<Rule> = BUILTIN
        .files()
        .filter(|f| f.path().extension().is_some_and(|e| e == "yaml"))
        .filter_map(|f| {
            let text = f.contents_utf8()?;
            let path = f.path().display().to_string();
            // A broken built-in rule is a bug caught by the test suite;
            // at run time it is left out rather than failing every run.
            let rule = from_builtin(&path, text, "invalid rule").ok()?;
            let mut rule = checked(&path, rule).ok()?;
            rule.builtin = true;
            Some(rule)
        })
        .collect();
    rules.sort_by(|a, b| a.id.cmp(&b.id));
    rules
}

/// Built-in rules plus the `*.yaml` rule files of each user directory.
/// A user rule with a built-in's id replaces it.
pub fn load(user_dirs: &[impl AsRef<Path>]) -> (Vec<Rule>, Vec<Issue>) {
    let mut rules = builtin();
    let mut issues = Vec::new();
    for dir in user_dirs {
        let dir = dir.as_ref();
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                issues.push(Issue::file(
                    dir,
                    format!("cannot read rules directory: {e}"),
                ));
                continue;
            }
        };
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| crate::source::walk::is_yaml(p))
            .collect();
        paths.sort();
        for path in paths {
            let shown = path.display().to_string();
            let limit = crate::yaml::Limits::default().max_bytes;
            let parsed = crate::source::confine::read_regular(&path, limit)
                .map_err(|e| Issue::file(&path, e.to_string()))
                .and_then(|b| {
                    String::from_utf8(b).map_err(|_| Issue::file(&path, "file is not valid UTF-8"))
                })
                .and_then(|text| parse(&shown, &text));
            match parsed {
                Ok(rule) => {
                    rules.retain(|r| r.id != rule.id);
                    rules.push(rule);
                }
                Err(issue) => issues.push(issue),
            }
        }
    }
    (rules, issues)
}

fn is_kebab(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !id.starts_with('-')
        && !id.ends_with('-')
}

/// Problems with a rule's metadata, in the style clippy checks its own
/// lints: messages start lower-case without a final period; prose
/// sections are complete sentences.
pub fn check_metadata(rule: &Rule) -> Vec<String> {
    let mut problems = Vec::new();
    let id_ok = is_kebab(&rule.id);
    if !id_ok {
        problems.push(format!("id {:?} is not kebab-case", rule.id));
    }
    for former in &rule.former_ids {
        if former == &rule.id || !is_kebab(former) {
            problems.push(format!(
                "former id {former:?} must be kebab-case and not the rule's id"
            ));
        }
    }
    if rule.message.starts_with(|c: char| c.is_uppercase())
        || rule.message.trim_end().ends_with('.')
    {
        problems.push("message must start lower-case and not end with a period".into());
    }
    for (name, text) in [
        ("title", &rule.title),
        ("what", &rule.what),
        ("why", &rule.why),
        ("example", &rule.example),
        ("useInstead", &rule.use_instead),
        ("remediation", &rule.remediation),
    ] {
        if text.trim().is_empty() {
            problems.push(format!("{name} is empty"));
        }
    }
    for (name, text) in [
        ("what", &rule.what),
        ("why", &rule.why),
        ("remediation", &rule.remediation),
    ] {
        if !text.trim_end().ends_with('.') {
            problems.push(format!("{name} must end with a period"));
        }
    }
    if rule.references.is_empty() {
        problems.push("references are empty".into());
    }
    if rule.steps.is_empty() {
        problems.push("match has no steps".into());
    }
    if let Some(fix) = &rule.fix {
        let templates = usize::from(fix.set_postgres_parameter.is_some())
            + usize::from(!fix.set_app_env.is_empty());
        if templates != 1 {
            problems.push("fix must name exactly one template".into());
        }
        if fix.title.starts_with(|c: char| c.is_uppercase()) || fix.title.trim_end().ends_with('.')
        {
            problems.push("fix title must start lower-case and not end with a period".into());
        }
        if !fix.safety.trim_end().ends_with('.') {
            problems.push("fix safety must end with a period".into());
        }
        // Connection options are how the app's sessions set a value, not
        // where a per-database setting is written.
        if fix
            .set_postgres_parameter
            .as_ref()
            .and_then(|p| p.per_database.as_ref())
            .is_some_and(|p| !p.options_env.is_empty())
        {
            problems.push("fix perDatabase takes no optionsEnv".into());
        }
        for e in &fix.set_app_env {
            if e.value.is_some() == e.base64_json.is_some() {
                problems.push(format!(
                    "fix variable {} needs one of value, base64Json",
                    e.name
                ));
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each built-in rule reads through the repository's parser as
    /// serde-saphyr reads it (as a user's copy of it would be read).
    #[test]
    fn builtin_rules_read_as_serde_saphyr_reads_them() {
        let mut count = 0;
        for f in BUILTIN.files() {
            if f.path().extension().is_none_or(|e| e != "yaml") {
                continue;
            }
            let path = f.path().display().to_string();
            let text = f.contents_utf8().unwrap();
            let ours: Rule = from_builtin(&path, text, "invalid rule").unwrap();
            let saphyr: Rule = from_yaml(&path, text, "invalid rule").unwrap();
            assert_eq!(format!("{ours:?}"), format!("{saphyr:?}"), "{path}");
            count += 1;
        }
        assert_eq!(builtin().len(), count);
    }

    /// A fix's per-database alternative takes the names an app's session
    /// does, but connection options would go unused there: refused at
    /// load, not ignored.
    #[test]
    fn per_database_options_are_refused() {
        let path = "rules/authentik-cache-on-sync-replicated-postgres.yaml";
        let text = std::fs::read_to_string(path).unwrap();
        assert!(parse(path, &text).is_ok());
        let with_options = text.replace(
            "      defaultUser: authentik\nreferences:",
            "      defaultUser: authentik\n      optionsEnv: [PGOPTIONS]\nreferences:",
        );
        assert_ne!(with_options, text, "the fixture's perDatabase block moved");
        let err = parse(path, &with_options).unwrap_err();
        assert!(
            err.message.contains("fix perDatabase takes no optionsEnv"),
            "{err}"
        );
    }
}
