//! The SARIF log checked by Microsoft's SARIF Multitool, the reference
//! validator (schema plus authoring rules): zero errors and zero warnings.
//! `scripts/install-sarif-multitool` puts it into `target/tools/sarif`.

use crate::common;
use crate::fake_api;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value as J;

use crate::common::BIN;

fn multitool() -> Option<PathBuf> {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tools/sarif/node_modules/@microsoft/sarif-multitool/bin.js");
    let node = Command::new("node").arg("--version").output();
    if !bin.is_file() || !node.is_ok_and(|o| o.status.success()) {
        common::skip_or_fail(
            "the SARIF Multitool or node is missing (run scripts/install-sarif-multitool)",
        );
        return None;
    }
    Some(bin)
}

/// Runs the linter and returns its stdout, which must be SARIF.
fn lint_sarif(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .args(["--format", "sarif"])
        .output()
        .unwrap();
    // The example repo has findings at warning level: exit 1, not 2.
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn example_log_passes_the_sarif_multitool_without_errors_or_warnings() {
    let Some(tool) = multitool() else {
        return;
    };
    let log = lint_sarif(&["--example"]);
    let parsed: J = serde_json::from_str(&log).unwrap();
    let run = &parsed["runs"][0];
    assert_eq!(
        run["tool"]["driver"]["rules"].as_array().unwrap().len(),
        homelab_lint::rules::builtin().len(),
        "every loaded rule is described, not only those that fired"
    );
    assert_eq!(run["results"].as_array().unwrap().len(), 2);

    let problems = validate(&tool, &log);
    assert!(
        problems.is_empty(),
        "the SARIF Multitool found {} problems:\n{}\n\nlog:\n{log}",
        problems.len(),
        problems.join("\n")
    );
}

/// A `--base --all-findings` log, whose results carry `baselineState`
/// (`new` and `unchanged`), passes the validator too.
#[test]
fn log_with_baseline_states_passes_the_sarif_multitool() {
    if !common::git_available() {
        return;
    }
    let Some(tool) = multitool() else {
        return;
    };
    let (_dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |_| {});
    let repo = repo.to_str().unwrap();
    let log = lint_sarif(&[repo, "--no-probe", "--base", "HEAD~1", "--all-findings"]);
    let parsed: J = serde_json::from_str(&log).unwrap();
    let mut states: Vec<&str> = parsed["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["baselineState"].as_str().unwrap())
        .collect();
    states.sort();
    assert_eq!(states, ["new", "unchanged"]);
    let problems = validate(&tool, &log);
    assert!(problems.is_empty(), "{problems:?}\n{log}");
}

/// What the SARIF Multitool finds wrong with `log`: errors, warnings and
/// its own notifications.
fn validate(tool: &Path, log: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("log.sarif");
    let output = dir.path().join("validation.sarif");
    std::fs::write(&input, log).unwrap();
    let status = Command::new("node")
        .arg(tool)
        .arg("validate")
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "the validator failed to run: {}{}",
        String::from_utf8_lossy(&status.stdout),
        String::from_utf8_lossy(&status.stderr)
    );
    let report: J = serde_json::from_str(&std::fs::read_to_string(&output).unwrap()).unwrap();
    let mut problems = Vec::new();
    for vrun in report["runs"].as_array().unwrap() {
        for r in vrun["results"].as_array().into_iter().flatten() {
            // SARIF's default level is warning; the validator leaves it out.
            let level = r["level"].as_str().unwrap_or("warning");
            if level == "error" || level == "warning" {
                problems.push(format!(
                    "{level} {}: {} at {}",
                    r["ruleId"].as_str().unwrap_or("?"),
                    r["message"],
                    r["locations"][0]["physicalLocation"]["region"]
                ));
            }
        }
        for inv in vrun["invocations"].as_array().into_iter().flatten() {
            if inv["executionSuccessful"] != J::Bool(true) {
                problems.push(format!("validation did not complete: {inv}"));
            }
            for n in inv["toolExecutionNotifications"]
                .as_array()
                .into_iter()
                .flatten()
            {
                problems.push(format!("tool notification: {n}"));
            }
        }
    }
    problems
}

/// A lint of the `kubernetes` directory of a git repository names files
/// from the repository's top level; a lint of cluster state alone points
/// each result at the snapshot file it was read from. Both logs pass the
/// validator, and no result lacks a location (GitHub rejects the upload).
#[test]
fn subfolder_and_snapshot_only_logs_pass_the_sarif_multitool() {
    let Some(tool) = multitool() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    copy_example(&dir.path().join("kubernetes"));
    common::git(dir.path(), &["init", "-q"]);
    let sub = dir.path().join("kubernetes");
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster");
    for args in [
        vec![sub.to_str().unwrap()],
        vec!["--snapshot", snapshot.to_str().unwrap()],
    ] {
        let log = lint_sarif(&args);
        let parsed: J = serde_json::from_str(&log).unwrap();
        let results = parsed["runs"][0]["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{args:?}: {log}");
        for r in results {
            let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap_or_else(|| panic!("{args:?}: a result without a location: {r}"));
            assert!(
                uri.starts_with("kubernetes/") || uri.starts_with("testdata/cluster/"),
                "{args:?}: {uri}"
            );
        }
        let problems = validate(&tool, &log);
        assert!(problems.is_empty(), "{args:?}: {problems:?}\n{log}");
    }
}

/// Copies the example repo into `dest`.
fn copy_example(dest: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/example-repo");
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        let to = dest.join(entry.path().strip_prefix(&src).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

fn fingerprints(log: &str) -> Vec<J> {
    let parsed: J = serde_json::from_str(log).unwrap();
    parsed["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["partialFingerprints"].clone())
        .collect()
}

#[test]
fn fingerprints_do_not_depend_on_where_the_repo_is_checked_out() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let a_root = a.path().join("home-ops");
    let b_root = b.path().join("elsewhere/deeper/checkout");
    copy_example(&a_root);
    copy_example(&b_root);
    let log_a = lint_sarif(&[a_root.to_str().unwrap()]);
    let log_b = lint_sarif(&[b_root.to_str().unwrap()]);
    let (fa, fb) = (fingerprints(&log_a), fingerprints(&log_b));
    assert!(!fa.is_empty());
    assert!(
        fa.iter()
            .all(|f| f.as_object().is_some_and(|o| !o.is_empty()))
    );
    assert_eq!(fa, fb);
    for (log, root) in [(&log_a, &a_root), (&log_b, &b_root)] {
        assert!(
            !log.contains(root.to_str().unwrap()),
            "the log names the checkout's absolute path"
        );
    }
}

/// One SARIF replacement: start line and column, end line and column
/// (1-based, characters), and the text put there.
type Replacement = (usize, usize, usize, usize, String);

/// Applies the `fixes[]` of a SARIF log to the files under `root`: each
/// replacement's region (1-based lines and columns) replaced by its text,
/// last region first so earlier positions stay valid.
fn apply_sarif_fixes(log: &J, root: &Path) {
    let mut by_file: std::collections::BTreeMap<String, Vec<Replacement>> = Default::default();
    for result in log["runs"][0]["results"].as_array().unwrap() {
        for fix in result["fixes"].as_array().into_iter().flatten() {
            for change in fix["artifactChanges"].as_array().unwrap() {
                let uri = change["artifactLocation"]["uri"].as_str().unwrap();
                for r in change["replacements"].as_array().unwrap() {
                    let region = &r["deletedRegion"];
                    let n = |k: &str| region[k].as_u64().unwrap() as usize;
                    by_file.entry(uri.to_string()).or_default().push((
                        n("startLine"),
                        n("startColumn"),
                        n("endLine"),
                        n("endColumn"),
                        r["insertedContent"]["text"].as_str().unwrap().to_string(),
                    ));
                }
            }
        }
    }
    for (uri, mut replacements) in by_file {
        let path = root.join(&uri);
        let mut text = std::fs::read_to_string(&path).unwrap();
        let offset = |text: &str, line: usize, col: usize| -> usize {
            let start: usize = text
                .split_inclusive('\n')
                .take(line - 1)
                .map(str::len)
                .sum();
            start + col - 1
        };
        replacements.sort_by_key(|r| std::cmp::Reverse((r.0, r.1)));
        for (sl, sc, el, ec, new) in replacements {
            let (start, end) = (offset(&text, sl, sc), offset(&text, el, ec));
            text.replace_range(start..end, &new);
        }
        std::fs::write(&path, text).unwrap();
    }
}

#[test]
fn sarif_fixes_make_the_same_edits_as_fix() {
    let (fixed, from_sarif) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    copy_example(fixed.path());
    copy_example(from_sarif.path());
    let out = Command::new(BIN)
        .arg(fixed.path())
        .args(["--fix", "--unsafe-fixes"])
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    let log: J = serde_json::from_str(&lint_sarif(&[from_sarif.path().to_str().unwrap()])).unwrap();
    let with_fixes = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("fixes").is_some())
        .count();
    assert_eq!(with_fixes, 2, "{log}");
    apply_sarif_fixes(&log, from_sarif.path());
    for entry in walkdir::WalkDir::new(fixed.path()) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            let rel = entry.path().strip_prefix(fixed.path()).unwrap();
            assert_eq!(
                std::fs::read_to_string(from_sarif.path().join(rel)).unwrap(),
                std::fs::read_to_string(entry.path()).unwrap(),
                "{}",
                rel.display()
            );
        }
    }
}

/// A lint of a git repository with an `origin` remote and a file that
/// does not parse: the rules link their pages, carry the properties
/// GitHub reads, the run names the commit (the remote's token left out),
/// and the broken file is a notification at its line. The log passes the
/// validator.
#[test]
fn provenance_rule_pages_and_input_problems_pass_the_sarif_multitool() {
    let Some(tool) = multitool() else {
        return;
    };
    if !common::git_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("kubernetes");
    copy_example(&sub);
    std::fs::write(sub.join("apps/broken.yaml"), "a: 1\nb: [1, 2\n").unwrap();
    common::git(dir.path(), &["init", "-q"]);
    common::git(
        dir.path(),
        &[
            "remote",
            "add",
            "origin",
            "https://x-access-token:ghs_T0KEN@github.com/o/home-ops.git",
        ],
    );
    common::git(dir.path(), &["add", "-A"]);
    common::git(dir.path(), &["commit", "-q", "-m", "init"]);
    let head = String::from_utf8(
        Command::new("git")
            .arg("-C")
            .arg(dir.path())
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let log = lint_sarif(&[sub.to_str().unwrap()]);
    assert!(!log.contains("ghs_T0KEN"), "the remote's token is printed");
    let parsed: J = serde_json::from_str(&log).unwrap();
    let run = &parsed["runs"][0];
    assert_eq!(
        run["versionControlProvenance"][0],
        serde_json::json!({
            "repositoryUri": "https://github.com/o/home-ops.git",
            "revisionId": head.trim(),
            "branch": "main",
            "mappedTo": { "uriBaseId": "%SRCROOT%" },
        })
    );
    for rule in run["tool"]["driver"]["rules"].as_array().unwrap() {
        let id = rule["id"].as_str().unwrap();
        let uri = rule["helpUri"].as_str().unwrap();
        // Rule pages are linked at the release the binary was built from.
        let release = concat!(
            "https://github.com/homelab-lint/homelab-lint/blob/v",
            env!("CARGO_PKG_VERSION"),
            "/"
        );
        let page = uri.strip_prefix(release).unwrap_or_else(|| panic!("{uri}"));
        assert!(
            Path::new(env!("CARGO_MANIFEST_DIR")).join(page).is_file(),
            "{id}: {page} is not a page of the repository"
        );
        let props = &rule["properties"];
        assert_eq!(props["precision"], "high", "{id}");
        let expected = match rule["defaultConfiguration"]["level"].as_str().unwrap() {
            "note" => "recommendation",
            level => level,
        };
        assert_eq!(props["problem.severity"], expected, "{id}");
    }
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let broken = notes
        .iter()
        .find(|n| {
            n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("broken.yaml")
        })
        .unwrap_or_else(|| panic!("no notification for the broken file: {notes:#?}"));
    let loc = &broken["locations"][0]["physicalLocation"];
    assert_eq!(
        loc["artifactLocation"]["uri"],
        "kubernetes/apps/broken.yaml"
    );
    assert!(
        loc["region"]["startLine"].as_u64().unwrap() >= 2,
        "{broken}"
    );
    let problems = validate(&tool, &log);
    assert!(problems.is_empty(), "{problems:?}\n{log}");
}

/// A lint of the live cluster alone (objects from the fake API only): the
/// findings point at cluster pages, which are no files, so they are left
/// out of the results and each said in a notification; GitHub would
/// reject the upload otherwise. Snapshot, validated.
#[test]
fn live_only_log_is_valid_and_says_each_finding() {
    let Some(tool) = multitool() else {
        return;
    };
    let fixture = fake_api::Fixture::from_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster"),
    );
    let api = fake_api::FakeApi::start(fixture, fake_api::Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    // Run outside any git repository: the log names no commit.
    let out = Command::new(BIN)
        .current_dir(dir.path())
        .env_remove("KUBECONFIG")
        .args(["--kubeconfig", kc.to_str().unwrap(), "-o", "sarif"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = String::from_utf8(out.stdout).unwrap();
    let problems = validate(&tool, &log);
    assert!(problems.is_empty(), "{problems:?}\n{log}");
    let mut parsed: J = serde_json::from_str(&log).unwrap();
    let run = &mut parsed["runs"][0];
    assert_eq!(run["results"], serde_json::json!([]));
    assert!(run.get("versionControlProvenance").is_none());
    let driver = &mut run["tool"]["driver"];
    driver["version"] = J::String("[version]".into());
    driver["semanticVersion"] = J::String("[version]".into());
    // The rule metadata is tested above; the snapshot keeps what the run said.
    driver["rules"] = J::String("[every rule]".into());
    insta::assert_snapshot!(
        "live_only_sarif",
        serde_json::to_string_pretty(&parsed).unwrap()
    );
}

/// A Renovate bump that changes only the chart version moves no alert:
/// every result keeps its rule, primary location and fingerprint, so code
/// scanning sees the same alerts, not closed ones and new ones.
#[test]
fn a_chart_version_bump_keeps_locations_and_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    copy_example(dir.path());
    let alerts = || {
        let log: J = serde_json::from_str(&lint_sarif(&[dir.path().to_str().unwrap()])).unwrap();
        let mut out: Vec<(J, J, J, J)> = log["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let loc = &r["locations"][0]["physicalLocation"];
                (
                    r["ruleId"].clone(),
                    loc["artifactLocation"]["uri"].clone(),
                    loc["region"]["startLine"].clone(),
                    r["partialFingerprints"].clone(),
                )
            })
            .collect();
        out.sort_by_key(|a| a.0.to_string());
        out
    };
    let before = alerts();
    assert!(!before.is_empty());
    common::edit(
        dir.path(),
        "apps/authentik/helmrelease.yaml",
        "version: 2025.10.1",
        "version: 2025.10.2",
    );
    let after = alerts();
    assert_eq!(before, after, "a version bump moved or renamed an alert");
}
