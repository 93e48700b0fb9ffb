//! GitHub code scanning tracks an alert by a hash of its primary line's
//! text: a combination finding's primary location is where the fix
//! edits (the Postgres setting), not the app's version line, so a
//! Renovate bump of the version keeps the alert and its dismissal.

use crate::common;

use std::path::Path;
use std::process::Command;

use serde_json::Value as J;

use crate::common::BIN;
const RULE: &str = "authentik-cache-on-sync-replicated-postgres";

/// `(uri, startLine, text of that line, fingerprint)` of the rule's result.
fn primary(repo: &Path) -> (String, u64, String, String) {
    let out = Command::new(BIN)
        .arg(repo)
        .args(["--no-probe", "--format", "sarif"])
        .output()
        .unwrap();
    let sarif: J = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not SARIF ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let result = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == RULE)
        .unwrap_or_else(|| panic!("{RULE} did not fire:\n{sarif:#}"))
        .clone();
    let location = &result["locations"][0]["physicalLocation"];
    let uri = location["artifactLocation"]["uri"]
        .as_str()
        .unwrap()
        .to_string();
    let line = location["region"]["startLine"].as_u64().unwrap();
    let text = std::fs::read_to_string(repo.join(&uri)).unwrap();
    let line_text = text.lines().nth(line as usize - 1).unwrap().to_string();
    let fingerprint = result["partialFingerprints"].to_string();
    (uri, line, line_text, fingerprint)
}

#[test]
fn a_version_bump_keeps_the_primary_line() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("gitops");
    common::copy_dir(&common::example_repo(), &repo);
    let before = primary(&repo);
    assert!(
        !before.0.contains("helmrelease"),
        "the primary location is the app's version, not the setting: {before:?}"
    );
    // synchronous_commit is not set: the label is on the parameters map
    // the fix adds it to (its first line).
    assert_eq!(
        before.0, "apps/authentik/database.yaml",
        "the primary location is not the database's parameters: {before:?}"
    );
    common::edit(
        &repo,
        "apps/authentik/helmrelease.yaml",
        "version: 2025.10.1",
        "version: 2025.12.3",
    );
    let after = primary(&repo);
    assert_eq!(before, after, "the bump moved the finding");
}
