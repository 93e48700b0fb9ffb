//! A renamed rule keeps its former ids (`formerIds`), as ruff redirects
//! old rule codes: each works wherever an id is accepted (`--select`,
//! `--ignore`, `--extend-select`, `.homelab-lint.yaml`, suppressions,
//! `explain`) with a warning that names the rule's id now, and `rules
//! list` marks it. No built-in rule has been renamed, so the renamed rule
//! here is a user rule in a temporary directory: a copy of the Authentik
//! cache rule under a new id, with a former one.

use std::path::Path;
use std::process::Output;

use crate::common::{self, edit};

const NOW: &str = "authentik-cache-renamed";
const FORMER: &str = "authentik-cache-before-rename";

/// A rules directory holding the renamed rule.
fn renamed_rule() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(
        root.join("rules/authentik-cache-on-sync-replicated-postgres.yaml"),
    )
    .unwrap();
    let from = "id: authentik-cache-on-sync-replicated-postgres\n";
    assert!(
        text.starts_with(from),
        "the rule file no longer starts with its id"
    );
    let text = text.replacen(from, &format!("id: {NOW}\nformerIds: [{FORMER}]\n"), 1);
    std::fs::write(dir.path().join("renamed.yaml"), text).unwrap();
    dir
}

fn run(args: &[&str]) -> Output {
    common::lint(Path::new("."), args)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The JSON lint of `repo` with the rules of `rules` too.
fn lint_json(repo: &Path, rules: &Path) -> Output {
    run(&[
        repo.to_str().unwrap(),
        "--no-probe",
        "--rules",
        rules.to_str().unwrap(),
        "-o",
        "json",
    ])
}

/// The warning every use of the former id gives.
fn warning() -> String {
    format!("rule id {FORMER:?} is deprecated: the rule is now {NOW:?}")
}

/// The rules of a JSON report's findings.
fn rules_of(out: &Output) -> Vec<String> {
    common::report(out)
        .findings
        .into_iter()
        .map(|f| f.rule)
        .collect()
}

#[test]
fn select_ignore_and_extend_select_take_a_former_id_with_a_warning() {
    let rules = renamed_rule();
    let dir = rules.path().to_str().unwrap();
    let lint = |selection: &[&str]| {
        let args = [
            &["--example", "--no-probe", "--rules", dir, "-o", "json"][..],
            selection,
        ]
        .concat();
        let out = run(&args);
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(&warning()),
            "{selection:?}: {}",
            stderr(&out)
        );
        rules_of(&out)
    };
    assert_eq!(lint(&["--select", FORMER]), [NOW]);
    let ignored = lint(&["--ignore", FORMER]);
    assert!(
        !ignored.is_empty() && !ignored.iter().any(|r| r == NOW),
        "{ignored:?}"
    );
    let extended = lint(&[
        "--select",
        "postgres-durability-off",
        "--extend-select",
        FORMER,
    ]);
    assert!(extended.iter().any(|r| r == NOW), "{extended:?}");
    // A misspelt former id is an unknown id, as any other.
    let out = run(&[
        "--example",
        "--rules",
        dir,
        "--select",
        "authentik-cache-before-renam",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown rule id"), "{}", stderr(&out));
}

#[test]
fn the_configuration_takes_a_former_id_with_a_warning_at_its_line() {
    let rules = renamed_rule();
    let repo = tempfile::tempdir().unwrap();
    common::copy_dir(&common::example_repo(), repo.path());
    std::fs::write(
        repo.path().join(".homelab-lint.yaml"),
        format!("rules:\n  select: [{FORMER}]\n  severity:\n    {FORMER}: error\n"),
    )
    .unwrap();
    let out = lint_json(repo.path(), rules.path());
    let said = stderr(&out);
    assert!(
        said.contains(&format!(".homelab-lint.yaml:2:12: {}", warning())),
        "{said}"
    );
    assert!(
        said.contains(&format!(".homelab-lint.yaml:4:36: {}", warning())),
        "{said}"
    );
    let report = common::report(&out);
    let found: Vec<(String, String)> = report
        .findings
        .iter()
        .map(|f| (f.rule.clone(), f.severity.as_str().to_string()))
        .collect();
    assert_eq!(found, [(NOW.to_string(), "error".to_string())]);
}

#[test]
fn a_suppression_of_a_former_id_suppresses_the_rule_with_a_warning() {
    let rules = renamed_rule();
    let repo = tempfile::tempdir().unwrap();
    common::copy_dir(&common::example_repo(), repo.path());
    edit(
        repo.path(),
        "apps/authentik/database.yaml",
        "    parameters:\n",
        &format!("    parameters: # homelab-lint: ignore {FORMER} -- measured: 40 ms logins\n"),
    );
    let out = lint_json(repo.path(), rules.path());
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "apps/authentik/database.yaml:20:17: suppression: {}; write {NOW}",
            warning()
        )),
        "{said}"
    );
    let found = rules_of(&out);
    // The renamed rule is suppressed, and the suppression is neither
    // unknown nor unused; the built-in rule it was copied from still fires.
    assert!(!found.iter().any(|r| r == NOW), "{found:?}");
    assert!(
        !found
            .iter()
            .any(|r| r == "unknown-rule-in-suppression" || r == "unused-suppression"),
        "{found:?}"
    );
    assert!(
        found
            .iter()
            .any(|r| r == "authentik-cache-on-sync-replicated-postgres"),
        "{found:?}"
    );
}

#[test]
fn explain_takes_a_former_id_with_a_warning() {
    let rules = renamed_rule();
    let out = run(&["explain", FORMER, "--rules", rules.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains(&warning()), "{}", stderr(&out));
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains(NOW), "{page}");
}

#[test]
fn rules_list_marks_a_former_id_with_its_successor() {
    let rules = renamed_rule();
    let dir = rules.path().to_str().unwrap();
    let out = run(&["rules", "list", "--rules", dir]);
    let table = String::from_utf8_lossy(&out.stdout);
    let former = table
        .lines()
        .find(|l| l.starts_with(&format!("{FORMER} ")))
        .unwrap_or_else(|| panic!("{FORMER} is not listed:\n{table}"));
    assert!(
        former.contains(&format!("(deprecated: now {NOW})")),
        "{former}"
    );
    let now = table
        .lines()
        .find(|l| l.starts_with(&format!("{NOW} ")))
        .unwrap();
    assert!(!now.contains("deprecated"), "{now}");

    let out = run(&["rules", "list", "--rules", dir, "-o", "json"]);
    let list: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let entry = |id: &str| list.iter().find(|e| e["id"] == id).unwrap().clone();
    assert_eq!(entry(FORMER)["deprecated"]["successor"], NOW);
    assert!(entry(NOW).get("deprecated").is_none());
    // No built-in rule was ever renamed: none is listed deprecated.
    let builtin: Vec<serde_json::Value> =
        serde_json::from_slice(&run(&["rules", "list", "-o", "json"]).stdout).unwrap();
    assert!(builtin.iter().all(|e| e.get("deprecated").is_none()));
}

#[test]
fn a_former_id_must_be_kebab_case_and_not_the_rule_id() {
    let dir = tempfile::tempdir().unwrap();
    let rules = renamed_rule();
    let text = std::fs::read_to_string(rules.path().join("renamed.yaml"))
        .unwrap()
        .replace(
            &format!("formerIds: [{FORMER}]"),
            &format!("formerIds: [{NOW}]"),
        );
    std::fs::write(dir.path().join("renamed.yaml"), text).unwrap();
    let out = run(&["rules", "list", "--rules", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains(&format!(
            "former id {NOW:?} must be kebab-case and not the rule's id"
        )),
        "{}",
        stderr(&out)
    );
}
