//! A user rule written only in YAML (no Rust), loaded by the real binary
//! with `--rules DIR`: it must fire on a repo it is about, and a broken
//! rule file must stop the run with exit status 2 and say where it broke.
//!
//! The rule is about Nextcloud. Its chart takes the database host from
//! `externalDatabase.host` and hands it to the container as
//! `POSTGRES_HOST`; `valuesEnvPrefixes: {externalDatabase: POSTGRES}` makes
//! the model read that values key under the same name, so one `hostEnv`
//! covers both the chart values and a plain `POSTGRES_HOST` variable.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::{self, BIN};
const RULE_ID: &str = "nextcloud-postgres-sync-commit-on-replicated-storage";

const NEXTCLOUD_RULE: &str = r#"id: nextcloud-postgres-sync-commit-on-replicated-storage
title: Nextcloud's Postgres commits synchronously to network-replicated storage
severity: info
category: performance
message: >-
  {app.name} {app.version} uses Postgres {database.name} with
  {setting.name}={setting.value} on {storage.class}, a network-replicated volume
what: >-
  Finds Nextcloud whose Postgres database has synchronous_commit on and keeps its data on
  network-replicated block storage.
why: >-
  Nextcloud writes file cache and lock rows on every sync; each commit then waits for a
  replicated WAL flush.
example: |
  externalDatabase:
    host: nextcloud-db-rw
useInstead: |
  postgresql:
    parameters:
      synchronous_commit: "off"
remediation: >-
  Set synchronous_commit to off for Nextcloud's database.
references:
  - https://www.postgresql.org/docs/current/wal-async-commit.html
match:
  - app:
      charts: [nextcloud]
      images: [nextcloud]
      valuesEnvPrefixes: {externalDatabase: POSTGRES}
  - database:
      hostEnv: [POSTGRES_HOST]
  - setting:
      name: synchronous_commit
      in: ["on"]
  - storage:
      category: [network-replicated-block]
"#;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create directory");
    }
    std::fs::write(path, text).expect("write file");
}

/// Nextcloud on a CloudNativePG cluster on Ceph RBD. `host_values` is
/// the HelmRelease's values block that names the database.
fn nextcloud_repo(root: &Path, host_values: &str) {
    write(
        root,
        "apps/nextcloud/helmrelease.yaml",
        &format!(
            "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: nextcloud
  namespace: cloud
spec:
  interval: 30m
  chart:
    spec:
      chart: nextcloud
      version: 6.6.4
      sourceRef:
        kind: HelmRepository
        name: nextcloud
        namespace: flux-system
  values:
    image:
      tag: 30.0.4-apache
    internalDatabase:
      enabled: false
{host_values}"
        ),
    );
    write(
        root,
        "apps/nextcloud/database.yaml",
        "apiVersion: postgresql.cnpg.io/v1
kind: Cluster
metadata:
  name: nextcloud-db
  namespace: cloud
spec:
  instances: 1
  storage:
    size: 20Gi
    storageClass: ceph-block
  postgresql:
    parameters:
      max_connections: \"200\"
",
    );
    write(
        root,
        "infrastructure/ceph-block.yaml",
        "apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: ceph-block
provisioner: rook-ceph.rbd.csi.ceph.com
",
    );
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run kubectl-homelab_lint")
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temporary paths are UTF-8")
}

/// Findings of the user rule in `--format json` output, as
/// `path:line:column` of their primary location.
fn user_rule_findings(output: &Output) -> Vec<String> {
    common::report(output)
        .findings
        .into_iter()
        .filter(|f| f.rule == RULE_ID)
        .map(|f| f.location.to_string())
        .collect()
}

fn rules_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("rules directory");
    write(dir.path(), "nextcloud.yaml", NEXTCLOUD_RULE);
    dir
}

#[test]
fn yaml_user_rule_fires_with_host_from_chart_values() {
    let rules = rules_dir();
    let repo = tempfile::tempdir().expect("repo directory");
    nextcloud_repo(
        repo.path(),
        "    externalDatabase:
      enabled: true
      type: postgresql
      host: nextcloud-db-rw.cloud.svc.cluster.local
      database: nextcloud
",
    );
    let out = run(&[
        path_str(repo.path()),
        "--rules",
        path_str(rules.path()),
        "--format",
        "json",
        "--fail-on",
        "info",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The image tag in the values is what runs: `      tag: 30.0.4-apache`.
    assert_eq!(
        user_rule_findings(&out),
        ["apps/nextcloud/helmrelease.yaml:18:12"]
    );
    let report = common::report(&out);
    let finding = report
        .findings
        .iter()
        .find(|f| f.rule == RULE_ID)
        .expect("the user rule's finding");
    assert_eq!(finding.evidence["database.name"], "nextcloud-db");
    assert_eq!(finding.evidence["storage.class"], "ceph-block");
    let related: Vec<String> = finding.related.iter().map(|l| l.to_string()).collect();
    // `      host: nextcloud-db-rw…` names the database.
    assert!(
        related.contains(&"apps/nextcloud/helmrelease.yaml:24:13".to_string()),
        "{related:?}"
    );
}

#[test]
fn yaml_user_rule_fires_with_host_from_an_env_var() {
    let rules = rules_dir();
    let repo = tempfile::tempdir().expect("repo directory");
    nextcloud_repo(
        repo.path(),
        "    nextcloud:
      extraEnv:
        - name: POSTGRES_HOST
          value: nextcloud-db-rw
",
    );
    let out = run(&[
        path_str(repo.path()),
        "--rules",
        path_str(rules.path()),
        "--format",
        "json",
    ]);
    assert_eq!(
        user_rule_findings(&out),
        ["apps/nextcloud/helmrelease.yaml:18:12"],
        "stderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn user_rule_stays_quiet_without_its_rule_file() {
    let repo = tempfile::tempdir().expect("repo directory");
    nextcloud_repo(
        repo.path(),
        "    externalDatabase:
      enabled: true
      host: nextcloud-db-rw
",
    );
    let out = run(&[path_str(repo.path()), "--format", "json"]);
    assert!(user_rule_findings(&out).is_empty());
}

#[test]
fn malformed_user_rule_exits_2_and_says_where() {
    let rules = tempfile::tempdir().expect("rules directory");
    // Line 3: `severity: critical` is not a severity.
    write(
        rules.path(),
        "broken.yaml",
        &NEXTCLOUD_RULE.replacen("severity: info", "severity: critical", 1),
    );
    let repo = tempfile::tempdir().expect("repo directory");
    nextcloud_repo(repo.path(), "");
    let out = run(&[path_str(repo.path()), "--rules", path_str(rules.path())]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr:\n{stderr}");
    let file = rules.path().join("broken.yaml");
    let want = format!("{}:3:11", file.display());
    assert!(
        stderr.contains(&want),
        "stderr should name {want}:\n{stderr}"
    );
    assert!(out.stdout.is_empty(), "no report for a broken rule set");
}
