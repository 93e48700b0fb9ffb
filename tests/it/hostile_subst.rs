//! Hostile postBuild substitution: each case runs the real
//! binary as a subprocess under the memory, CPU and wall-clock limits of
//! tests/support/limited.rs, on a repository of at most 1 MB, and must end
//! with a clear issue at the file:line:column of the expression while the
//! rest of the repository is still substituted and listed.

use crate::support;

use std::path::Path;

use support::limited;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A Flux Kustomization over `./app` with the variables given, and a
/// ConfigMap `survivor` beside the hostile one, so that every case can
/// check the rest of the repository was still rendered.
fn repo(vars: &[(&str, &str)], hostile: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let substitute: String = vars
        .iter()
        .map(|(k, v)| format!("      {k}: \"{v}\"\n"))
        .collect();
    write(
        root,
        "flux/ks.yaml",
        &format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: apps, namespace: flux-system}}\nspec:\n  path: ./app\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n  postBuild:\n    substitute:\n      GOOD: \"fine\"\n{substitute}"
        ),
    );
    write(
        root,
        "app/survivor.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: survivor, namespace: default}\ndata:\n  v: ${GOOD}\n",
    );
    write(root, "app/hostile.yaml", hostile);
    let size: u64 = walk_size(root);
    assert!(size <= 1 << 20, "hostile repo is {size} bytes");
    dir
}

fn walk_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                walk_size(&e.path())
            } else {
                e.metadata().unwrap().len()
            }
        })
        .sum()
}

/// `inventory` under the harness's limits (RLIMIT_AS, RLIMIT_CPU, wall
/// clock): an unbounded expansion or a super-linear match hits one of
/// them and fails the run. Returns the JSON and every issue as
/// `path:line:col: message`.
fn inventory(root: &Path) -> (serde_json::Value, Vec<String>) {
    let inv = limited::inventory(root);
    let issues = inv.issues();
    (inv.json, issues)
}

fn object<'a>(json: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no object {name}"))
}

fn hostile_cm(value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: hostile, namespace: default}}\ndata:\n  ok: ${{GOOD}}\n  bad: '{value}'\n"
    )
}

/// The issue at the hostile scalar (line 6, column 8), and the rest of the
/// repository rendered.
fn assert_budget_issue(json: &serde_json::Value, issues: &[String]) {
    assert!(
        issues
            .iter()
            .any(|i| i.starts_with("app/hostile.yaml:6:8: substitution budget exceeded")),
        "{issues:#?}"
    );
    assert_eq!(object(json, "survivor")["object"]["data"]["v"], "fine");
    assert_eq!(object(json, "hostile")["object"]["data"]["ok"], "fine");
}

#[test]
fn nested_replacements_that_double_per_level_hit_the_value_cap() {
    let mut text = "aa".to_string();
    for _ in 0..32 {
        text = format!("${{V//a/{text}}}");
    }
    let dir = repo(&[("V", "aa")], &hostile_cm(&text));
    let (json, issues) = inventory(dir.path());
    assert_budget_issue(&json, &issues);
    // Left as written, not half expanded.
    assert_eq!(object(&json, "hostile")["object"]["data"]["bad"], text);
}

#[test]
fn glob_trims_over_long_values_are_linear_or_capped() {
    let long = "a".repeat(100_000);
    // A thousand stars fold into one: fast, and nothing to report.
    let stars = format!("${{V#{}b}}", "*".repeat(1000));
    // Ten thousand `*a` elements over 100 kB: past the step budget.
    let chunks = format!("${{V#{}b}}", "*a".repeat(10_000));
    let dir = repo(
        &[("V", &long)],
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: hostile, namespace: default}}\ndata:\n  ok: ${{GOOD}}\n  bad: '{chunks}'\n  stars: '{stars}'\n"
        ),
    );
    let (json, issues) = inventory(dir.path());
    assert_budget_issue(&json, &issues);
    assert_eq!(
        object(&json, "hostile")["object"]["data"]["stars"]
            .as_str()
            .map(str::len),
        Some(long.len())
    );
}

#[test]
fn total_substitution_output_is_capped_across_objects() {
    // Each value grows to about 1 MiB, under the per-value cap; a hundred
    // of them pass what the run may add in all.
    let mut text = "aa".to_string();
    for _ in 0..19 {
        text = format!("${{V//a/{text}}}");
    }
    let docs: String = (0..100)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: grow-{i}, namespace: default}}\ndata:\n  bad: '{text}'\n"
            )
        })
        .collect();
    let dir = repo(&[("V", "aa")], &(hostile_cm("x") + &docs));
    let (json, issues) = inventory(dir.path());
    assert!(
        issues
            .iter()
            .any(|i| i.contains("substitution budget exceeded") && i.contains("of the run")),
        "{issues:#?}"
    );
    assert_eq!(object(&json, "survivor")["object"]["data"]["v"], "fine");
}

#[test]
fn deep_nesting_and_long_escape_runs_are_bounded() {
    let deep = format!("{}x{}", "${A:=".repeat(5_000), "}".repeat(5_000));
    let dir = repo(&[], &hostile_cm(&deep));
    let (json, issues) = inventory(dir.path());
    assert_budget_issue(&json, &issues);

    // 400 kB of `$$`: linear, and Flux unescapes each pair.
    let escapes = "$$".repeat(200_000);
    let dir = repo(&[], &hostile_cm(&escapes));
    let (json, _) = inventory(dir.path());
    assert_eq!(
        object(&json, "hostile")["object"]["data"]["bad"]
            .as_str()
            .map(str::len),
        Some(200_000)
    );
}

/// A Flux Kustomization whose postBuild substitution stops at a budget
/// is counted as stopped by it in the summary, as one whose build a
/// budget stops is (it was counted as rendered, its value left as
/// written).
#[test]
fn a_substitution_stopped_by_its_budget_is_summarised_as_stopped() {
    let mut text = "aa".to_string();
    for _ in 0..32 {
        text = format!("${{V//a/{text}}}");
    }
    let dir = repo(&[("V", "aa")], &hostile_cm(&text));
    let root = dir.path().to_str().unwrap();
    let stopped = "1 stopped: substitution budget reached";
    for format in ["human", "json", "sarif"] {
        let run = limited::run_linter(&["-o", format, "--color", "never", root]);
        let out = run.stdout_text();
        assert!(out.contains(stopped), "{format}:\n{out}\n{}", run.stderr);
    }
    let (json, issues) = inventory(dir.path());
    assert_budget_issue(&json, &issues);
    let incomplete = &json["coverage"]["fluxKustomizationsIncomplete"];
    assert_eq!(
        incomplete[0]["outcome"], "stopped: substitution budget reached",
        "{incomplete:#}"
    );
    assert!(
        incomplete[0]["why"]
            .as_str()
            .unwrap()
            .starts_with("app/hostile.yaml:6:8: substitution budget exceeded"),
        "{incomplete:#}"
    );
}
