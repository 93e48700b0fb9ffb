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

/// The SARIF log of a lint of `repo`.
fn sarif_of(repo: &Path) -> J {
    let out = Command::new(BIN)
        .arg(repo)
        .args(["--no-probe", "--format", "sarif"])
        .output()
        .unwrap();
    let sarif: J = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not SARIF ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    sarif
}

/// `(uri, startLine, text of that line, fingerprint)` of the rule's result.
fn primary(repo: &Path) -> (String, u64, String, String) {
    let sarif = sarif_of(repo);
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

/// `(uri, line text)` of the primary location and the fingerprints of
/// every result of `rule` in a SARIF run of `repo`.
fn sarif_results(repo: &Path, rule: &str) -> Vec<(String, String, String)> {
    let sarif = sarif_of(repo);
    sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ruleId"] == rule)
        .map(|r| {
            let location = &r["locations"][0]["physicalLocation"];
            let uri = location["artifactLocation"]["uri"].as_str().unwrap();
            let line = location["region"]["startLine"].as_u64().unwrap() as usize;
            let text = std::fs::read_to_string(repo.join(uri)).unwrap();
            let line_text = text.lines().nth(line - 1).unwrap().trim().to_string();
            (
                uri.to_string(),
                line_text,
                r["partialFingerprints"].to_string(),
            )
        })
        .collect()
}

/// Vaultwarden 1.31 removed the WebSocket server on 3012: what a user
/// changes is the 3012 port the values still expose, not the image tag,
/// which a Renovate bump moves (app-template values, as tvories/k8s-gitops
/// writes them).
#[test]
fn the_vaultwarden_finding_points_at_the_3012_port_a_user_changes() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path();
    std::fs::write(
        repo.join("helmrelease.yaml"),
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: vaultwarden, namespace: selfhosted}\nspec:\n  chart:\n    spec: {chart: app-template, version: 4.4.0, sourceRef: {kind: HelmRepository, name: bjw-s}}\n  values:\n    controllers:\n      vaultwarden:\n        containers:\n          app:\n            image:\n              repository: vaultwarden/server\n              tag: 1.37.1\n            env:\n              WEBSOCKET_ENABLED: true\n    service:\n      app:\n        controller: vaultwarden\n        ports:\n          http:\n            port: 80\n          websocket:\n            port: 3012\n",
    )
    .unwrap();
    const RULE: &str = "vaultwarden-websocket-port-after-1-31";
    let before = sarif_results(repo, RULE);
    assert_eq!(before.len(), 1, "{before:#?}");
    assert_eq!(before[0].1, "port: 3012", "{before:#?}");
    common::edit(repo, "helmrelease.yaml", "tag: 1.37.1", "tag: 1.38.0");
    assert_eq!(
        sarif_results(repo, RULE),
        before,
        "the bump moved the finding"
    );
}
