//! Suppressions (comment and annotation, each with a reason), unused
//! suppressions, and `.homelab-lint.yaml`, through the real binary on a
//! copy of the example repo.

use std::path::Path;
use std::process::Output;

use crate::common::{self, edit};

fn copy_example() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::example_repo(), dir.path());
    dir
}

/// The run's output, and each finding's rule, path and line.
fn lint_json(root: &Path) -> (Output, Vec<(String, String, u32)>) {
    let out = common::lint(
        Path::new("."),
        &[root.to_str().unwrap(), "--format", "json"],
    );
    let findings = if out.stdout.is_empty() {
        Vec::new()
    } else {
        common::report(&out)
            .findings
            .into_iter()
            .map(|f| (f.rule, f.location.path, f.location.line))
            .collect()
    };
    (out, findings)
}

const CACHE: &str = "authentik-cache-on-sync-replicated-postgres";
const CONN: &str = "authentik-persistent-connections-without-keepalives";

#[test]
fn comment_and_annotation_suppress_with_reason_and_unused_ones_are_reported() {
    let repo = copy_example();
    let root = repo.path();
    // At the finding's primary line's map (where the fix edits), which a
    // version bump does not move.
    edit(
        root,
        "apps/authentik/database.yaml",
        "    parameters:\n",
        "    parameters: # homelab-lint: ignore authentik-cache-on-sync-replicated-postgres -- measured: 40 ms logins\n",
    );
    edit(
        root,
        "apps/authentik/helmrelease.yaml",
        "  name: authentik\n",
        "  name: authentik\n  annotations:\n    homelab-lint.io/ignore: \"authentik-persistent-connections-without-keepalives: firewall-free LAN\"\n",
    );
    edit(
        root,
        "apps/authentik/database.yaml",
        "  teamId: auth\n",
        "  teamId: auth # homelab-lint: ignore postgres-durability-off -- left over\n",
    );
    let (out, findings) = lint_json(root);
    let rules: Vec<&str> = findings.iter().map(|(r, _, _)| r.as_str()).collect();
    assert!(!rules.contains(&CACHE), "{findings:?}");
    assert!(!rules.contains(&CONN), "{findings:?}");
    assert_eq!(
        findings,
        [(
            "unused-suppression".to_string(),
            "apps/authentik/database.yaml".to_string(),
            8
        )]
    );
    // Info only: below the default --fail-on warning.
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn suppression_without_reason_is_not_applied() {
    let repo = copy_example();
    edit(
        repo.path(),
        "apps/authentik/database.yaml",
        "    parameters:\n",
        "    parameters: # homelab-lint: ignore authentik-cache-on-sync-replicated-postgres\n",
    );
    let (out, findings) = lint_json(repo.path());
    assert!(findings.iter().any(|(r, _, _)| r == CACHE), "{findings:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("apps/authentik/database.yaml:20:"),
        "{stderr}"
    );
    assert!(stderr.contains("has no reason"), "{stderr}");
}

#[test]
fn config_disables_overrides_and_ignores() {
    let repo = copy_example();
    let root = repo.path();
    std::fs::write(
        root.join(".homelab-lint.yaml"),
        format!("rules:\n  disable: [{CONN}]\n  severity:\n    {CACHE}: error\n"),
    )
    .unwrap();
    let (_, findings) = lint_json(root);
    assert_eq!(findings.len(), 1, "{findings:?}");
    let root_arg = root.to_str().unwrap();
    let out = common::lint(
        Path::new("."),
        &[root_arg, "--format", "json", "--fail-on", "error"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "the overridden severity is error"
    );

    std::fs::write(
        root.join(".homelab-lint.yaml"),
        "ignorePaths: ['apps/**']\n",
    )
    .unwrap();
    let (out, findings) = lint_json(root);
    assert!(findings.is_empty(), "{findings:?}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn bad_config_is_a_usage_error_with_position() {
    let repo = copy_example();
    let root = repo.path();
    std::fs::write(root.join(".homelab-lint.yaml"), "rules:\n  disabel: [x]\n").unwrap();
    let (out, _) = lint_json(root);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".homelab-lint.yaml:2:"), "{stderr}");

    std::fs::write(
        root.join(".homelab-lint.yaml"),
        "rules:\n  disable: [no-such-rule]\n",
    )
    .unwrap();
    let (out, _) = lint_json(root);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-rule"));
}
