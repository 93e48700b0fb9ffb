//! `action.yml` (a composite GitHub Action) and the example workflow:
//! valid YAML with documented inputs, every input used and every used
//! input declared, and the action's lint script run for real with bash on
//! a pull-request-like git fixture (base commit, Renovate bump).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use homelab_lint::yaml::{FileId, Limits, Node, parse_documents};
use serde_json::Value as J;

use crate::common::BIN;

fn load(file: &str) -> (String, Node) {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(file)).unwrap();
    let mut docs = parse_documents(&text, FileId(0), &Limits::default())
        .unwrap_or_else(|e| panic!("{file} is not valid YAML: {e}"));
    assert_eq!(docs.len(), 1, "{file}: one document");
    (text, docs.remove(0))
}

fn steps(action: &Node) -> &Vec<Node> {
    action
        .path(&["runs", "steps"])
        .and_then(Node::as_seq)
        .expect("runs.steps")
}

#[test]
fn action_is_a_composite_action_with_documented_inputs() {
    let (text, action) = load("action.yml");
    for key in ["name", "description"] {
        assert!(
            action.str_at(&[key]).is_some_and(|s| !s.is_empty()),
            "{key}"
        );
    }
    assert_eq!(action.str_at(&["runs", "using"]), Some("composite"));
    let inputs = action.get("inputs").and_then(Node::as_map).expect("inputs");
    let mut declared = Vec::new();
    for (key, input) in inputs {
        let name = key.as_str().unwrap();
        declared.push(name.to_string());
        let description = input.str_at(&["description"]).unwrap_or("");
        assert!(
            description.trim_end().ends_with('.') && description.len() > 20,
            "input {name}: description must be a sentence: {description:?}"
        );
        // Optional inputs need a default, or the scripts see an empty string.
        if input.get("required").and_then(Node::as_bool_lenient) != Some(true) {
            assert!(input.get("default").is_some(), "input {name}: no default");
        }
        assert!(
            text.contains(&format!("inputs.{name} ")) || text.contains(&format!("inputs.{name}}}")),
            "input {name} is declared but never used"
        );
    }
    // Every `inputs.x` the steps use is declared.
    for (i, _) in text.match_indices("inputs.") {
        let used: String = text[i + 7..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        assert!(
            declared.contains(&used),
            "inputs.{used} is used but not declared"
        );
    }
    for expected in [
        "path",
        "base",
        "fail-on",
        "version",
        "sarif-file",
        "upload-sarif",
    ] {
        assert!(
            declared.iter().any(|d| d == expected),
            "no input {expected}"
        );
    }
    // Composite run steps must name their shell; inputs reach scripts
    // through env, never spliced into the script (script injection).
    for step in steps(&action) {
        if let Some(run) = step.str_at(&["run"]) {
            assert_eq!(step.str_at(&["shell"]), Some("bash"));
            assert!(
                !run.contains("${{"),
                "expression inside a run script: {run}"
            );
        }
    }
    let uses: Vec<&str> = steps(&action)
        .iter()
        .filter_map(|s| s.str_at(&["uses"]))
        .collect();
    assert!(
        uses.iter()
            .any(|u| u.starts_with("github/codeql-action/upload-sarif@")),
        "{uses:?}"
    );
}

#[test]
fn example_workflow_uploads_sarif_with_the_permission_it_needs() {
    let (_, workflow) = load(".github/workflows/example.yml");
    assert_eq!(
        workflow.str_at(&["permissions", "security-events"]),
        Some("write")
    );
    assert!(workflow.path(&["on", "pull_request"]).is_some());
    let steps = workflow
        .path(&["jobs", "lint", "steps"])
        .and_then(Node::as_seq)
        .unwrap();
    let checkout = steps
        .iter()
        .find(|s| {
            s.str_at(&["uses"])
                .is_some_and(|u| u.starts_with("actions/checkout@"))
        })
        .expect("a checkout step");
    assert_eq!(
        checkout
            .path(&["with", "fetch-depth"])
            .and_then(Node::scalar_text)
            .as_deref(),
        Some("0")
    );
    let (_, action) = load("action.yml");
    let inputs = action.get("inputs").unwrap();
    let lint = steps
        .iter()
        .find(|s| {
            s.str_at(&["uses"])
                .is_some_and(|u| u.starts_with("homelab-lint/homelab-lint@"))
        })
        .expect("a step that uses the action");
    for (key, _) in lint.get("with").and_then(Node::as_map).unwrap() {
        let key = key.as_str().unwrap();
        assert!(
            inputs.get(key).is_some(),
            "the example passes unknown input {key}"
        );
    }
}

/// The `run` script of the action's step with this id.
fn step_script(id: &str) -> String {
    let (_, action) = load("action.yml");
    steps(&action)
        .iter()
        .find(|s| s.str_at(&["id"]) == Some(id))
        .and_then(|s| s.str_at(&["run"]))
        .unwrap_or_else(|| panic!("no step {id} with a run script"))
        .to_string()
}

fn path_with_plugin(dir: &Path) -> std::ffi::OsString {
    let bin_dir = dir.join("bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    // A link, not a copy: a copy is open for writing while other test
    // threads fork, and a child holding that descriptor until its exec
    // makes running the copy fail with ETXTBSY ("Text file busy").
    // Called again for each step of one run: the link may be there.
    let link = bin_dir.join("kubectl-homelab_lint");
    if !link.exists() {
        std::os::unix::fs::symlink(BIN, &link).unwrap();
    }
    let mut paths: Vec<PathBuf> = vec![bin_dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

fn rev_parse(repo: &Path, rev: &str) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["rev-parse", rev])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn lint_step_annotates_new_findings_and_writes_sarif_with_all_of_them() {
    if !common::git_available() {
        return;
    }
    let (dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |_| {});
    let output = dir.path().join("github-output");
    let sarif = dir.path().join("out.sarif");
    let summary = dir.path().join("step-summary.md");
    let run = Command::new("bash")
        .arg("-c")
        .arg(step_script("lint"))
        .current_dir(&repo)
        .env("PATH", path_with_plugin(dir.path()))
        .env("LINT_PATH", ".")
        .env("BASE", "")
        .env("PR_BASE", rev_parse(&repo, "HEAD~1"))
        .env("FAIL_ON", "warning")
        .env("RULES", "")
        .env("SARIF_FILE", &sarif)
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    // New warnings: the step fails, which fails the check.
    assert_eq!(run.status.code(), Some(1), "{stdout}\n{stderr}");
    let annotations: Vec<&str> = stdout.lines().filter(|l| l.starts_with("::")).collect();
    assert!(
        annotations.iter().any(|l| l
            .contains("title=authentik-upgrade-moves-cache-to-sync-replicated-postgres (new)::")),
        "{stdout}"
    );
    // The step summary: the new finding, its chain drawn, and not the
    // finding the base commit had.
    let summary = std::fs::read_to_string(&summary).unwrap();
    assert!(summary.starts_with("## homelab-lint\n"), "{summary}");
    assert!(
        summary.contains("`authentik-upgrade-moves-cache-to-sync-replicated-postgres` (new)"),
        "{summary}"
    );
    assert!(summary.contains("```mermaid\nflowchart LR\n"), "{summary}");
    assert!(
        !summary.contains("authentik-persistent-connections-without-keepalives"),
        "{summary}"
    );
    // The annotation for the pre-existing keepalive finding is not repeated.
    assert!(
        !stdout.contains("authentik-persistent-connections-without-keepalives"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&output).unwrap().trim(),
        format!("sarif-file={}", sarif.display())
    );
    let log: J = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    let mut rules: Vec<&str> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    rules.sort();
    assert_eq!(
        rules,
        [
            "authentik-persistent-connections-without-keepalives",
            "authentik-upgrade-moves-cache-to-sync-replicated-postgres",
        ],
        "SARIF carries every finding, with the bump finding of --base (which \
         replaces the crossing and the static finding on the same objects)"
    );

    // base: none reports everything, and fail-on never passes.
    let run = Command::new("bash")
        .arg("-c")
        .arg(step_script("lint"))
        .current_dir(&repo)
        .env("PATH", path_with_plugin(dir.path()))
        .env("LINT_PATH", ".")
        .env("BASE", "none")
        .env("PR_BASE", rev_parse(&repo, "HEAD~1"))
        .env("FAIL_ON", "never")
        .env("RULES", "")
        .env("SARIF_FILE", &sarif)
        .env("GITHUB_OUTPUT", &output)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert!(stdout.contains("authentik-persistent-connections-without-keepalives"));
    assert!(!stdout.contains("authentik-upgrade-moves-cache"));
}

/// The lint step on a push event: github.event.before is the base, so
/// only what the push brought is reported; a push that created the branch
/// (before is all zeros) reports every finding. `args` reaches the linter.
#[test]
fn on_push_the_previous_tip_is_the_base_and_args_reach_the_linter() {
    if !common::git_available() {
        return;
    }
    let (dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |_| {});
    let run = |before: &str, args: &str| {
        let out = Command::new("bash")
            .arg("-c")
            .arg(step_script("lint"))
            .current_dir(&repo)
            .env("PATH", path_with_plugin(dir.path()))
            .env("LINT_PATH", ".")
            .env("BASE", "")
            .env("PR_BASE", "")
            .env("EVENT_NAME", "push")
            .env("PUSH_BEFORE", before)
            .env("FAIL_ON", "warning")
            .env("RULES", "")
            .env("ARGS", args)
            .env("SARIF_FILE", dir.path().join("push.sarif"))
            .env("GITHUB_OUTPUT", dir.path().join("push-output"))
            .output()
            .unwrap();
        (
            out.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ),
        )
    };
    let (code, stdout) = run(&rev_parse(&repo, "HEAD~1"), "");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(stdout.contains("authentik-upgrade-moves-cache"), "{stdout}");
    assert!(
        !stdout.contains("authentik-persistent-connections-without-keepalives"),
        "a finding the previous tip had is not reported again: {stdout}"
    );
    let (_, stdout) = run(&"0".repeat(40), "");
    assert!(
        stdout.contains("authentik-persistent-connections-without-keepalives"),
        "a new branch reports every finding: {stdout}"
    );
    // `args`, split on spaces: a rules directory that does not exist.
    let (code, shown) = run(
        &"0".repeat(40),
        "-v --rules /nonexistent-homelab-lint-rules",
    );
    assert_eq!(code, Some(2), "{shown}");
    assert!(shown.contains("/nonexistent-homelab-lint-rules"), "{shown}");
}
