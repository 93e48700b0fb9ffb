//! `--base <git ref>` on a git fixture repo: a base commit, then a
//! Renovate-style bump of Authentik's chart version. Only findings that
//! are new against the base are reported, and a bump across 2025.10 on
//! Ceph RBD is reported with the release facts. The GitHub annotations
//! and the SARIF of such a run are snapshots.

use crate::common;

use std::process::Output;

use serde_json::Value as J;

use crate::common::{lint, rules as rules_in_json};
const HAZARD: &str = "authentik-upgrade-moves-cache-to-sync-replicated-postgres";
const CROSSED: &str = "app-upgrade-crosses-breaking-release";
const HELMRELEASE: &str = "apps/authentik/helmrelease.yaml";

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn bump_across_2025_10_on_ceph_rbd_reports_the_hazard_with_the_release_facts() {
    if !common::git_available() {
        return;
    }
    let (_dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |_| {});
    // Without --base every finding of the tree is reported, and no bump.
    let all = lint(&repo, &["--format", "json"]);
    let all_rules = rules_in_json(&all);
    assert!(!all_rules.contains(&HAZARD.to_string()), "{all_rules:?}");
    assert!(!all_rules.is_empty());

    let out = lint(&repo, &["--base", "HEAD~1", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rules = rules_in_json(&out);
    // New against the base are the crossing, the static rule (the cache
    // is now in Postgres) and the upgrade rule, all one hazard: the
    // upgrade finding, which carries the release facts, replaces the others.
    assert_eq!(
        rules,
        [HAZARD],
        "one finding per hazard, new against the base"
    );
    let kept = lint(&repo, &["--base", "HEAD~1", "--all-findings", "-o", "json"]);
    assert!(
        !rules_in_json(&kept).contains(&"authentik-cache-on-sync-replicated-postgres".into()),
        "the static finding is subsumed with --all-findings too"
    );
    let report = common::report(&out);
    let hazard = report.findings.iter().find(|f| f.rule == HAZARD).unwrap();
    let message = &hazard.message;
    for fact in [
        "moves the cache onto a database that commits synchronously to replicated storage",
        "from 2025.8.3 (the base commit HEAD~1) to 2025.10.1",
        "synchronous_commit=on on ceph-block",
        "Redis is no longer used",
        "roughly 50% more database connections",
        "TLS 1.3 or the Extended Master Secret",
    ] {
        assert!(message.contains(fact), "{fact:?} not in {message:?}");
    }

    // The same run as GitHub annotations and as SARIF, snapshotted.
    let github = lint(&repo, &["--base", "HEAD~1", "--format", "github"]);
    assert_eq!(github.status.code(), Some(1));
    insta::assert_snapshot!("base_run_github_annotations", stdout(&github));

    let sarif = lint(&repo, &["--base", "HEAD~1", "-o", "sarif"]);
    assert_eq!(sarif.status.code(), Some(1));
    let mut log: J = serde_json::from_slice(&sarif.stdout).unwrap();
    // The rule documentation is the rule files' (tested in rule_docs);
    // the snapshot keeps the ids and what the run found.
    let driver = &mut log["runs"][0]["tool"]["driver"];
    driver["version"] = J::String("[version]".into());
    driver["semanticVersion"] = J::String("[version]".into());
    let ids: Vec<J> = driver["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    driver["rules"] = J::Array(ids);
    insta::assert_snapshot!(
        "base_run_sarif",
        serde_json::to_string_pretty(&log).unwrap()
    );
}

#[test]
fn patch_bump_within_2025_10_reports_nothing_new() {
    if !common::git_available() {
        return;
    }
    let (_dir, repo) = common::bump_fixture("2025.10.1", "2025.10.2", |_| {});
    let out = lint(&repo, &["--base", "HEAD~1", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(rules_in_json(&out), Vec::<String>::new());
    // The findings are there, just not new: without --base they show,
    // and with --all-findings (for SARIF uploads) too.
    let all = lint(&repo, &["--format", "json"]);
    assert!(rules_in_json(&all).contains(&"authentik-cache-on-sync-replicated-postgres".into()));
    let kept = lint(
        &repo,
        &["--base", "HEAD~1", "--all-findings", "--format", "json"],
    );
    assert_eq!(rules_in_json(&kept), rules_in_json(&all));
}

#[test]
fn bump_across_2025_10_on_local_storage_is_a_crossing_but_not_the_hazard() {
    if !common::git_available() {
        return;
    }
    let (_dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |repo| {
        std::fs::write(
            repo.join("infrastructure/storage/local-path.yaml"),
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: local-path\n\
             provisioner: rancher.io/local-path\n",
        )
        .unwrap();
        common::edit(
            repo,
            "infrastructure/storage/kustomization.yaml",
            "  - ./ceph-block.yaml",
            "  - ./ceph-block.yaml\n  - ./local-path.yaml",
        );
        common::edit(
            repo,
            "clusters/home/cluster-settings.yaml",
            "CLUSTER_STORAGE_CLASS: ceph-block",
            "CLUSTER_STORAGE_CLASS: local-path",
        );
    });
    let out = lint(&repo, &["--base", "HEAD~1", "--format", "json"]);
    // The crossing itself is info: below the default --fail-on warning.
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(rules_in_json(&out), [CROSSED]);
}

#[test]
fn a_bad_base_ref_or_a_directory_outside_git_is_a_usage_error() {
    if !common::git_available() {
        return;
    }
    let (_dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |_| {});
    for reference in ["no-such-branch", "--help", ""] {
        let out = lint(&repo, &[&format!("--base={reference}")]);
        assert_eq!(out.status.code(), Some(2), "--base {reference:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is not a commit"), "{err}");
    }
    let plain = tempfile::tempdir().unwrap();
    common::copy_dir(&common::example_repo(), plain.path());
    let out = lint(plain.path(), &["--base", "main"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not inside a git repository"));
}

#[test]
fn base_of_a_gitops_tree_in_a_subdirectory_of_the_repository() {
    if !common::git_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mono = dir.path().join("mono");
    let tree = mono.join("kubernetes");
    common::copy_dir(&common::example_repo(), &tree);
    std::fs::write(mono.join("README.md"), "monorepo\n").unwrap();
    common::edit(
        &tree,
        HELMRELEASE,
        "version: 2025.10.1",
        "version: 2025.8.3",
    );
    common::git(&mono, &["init", "-q"]);
    common::git(&mono, &["add", "-A"]);
    common::git(&mono, &["commit", "-q", "-m", "base"]);
    common::edit(
        &tree,
        HELMRELEASE,
        "version: 2025.8.3",
        "version: 2025.10.1",
    );
    common::git(&mono, &["commit", "-q", "-am", "bump"]);
    // From the repository root with a path, and from inside the tree.
    for (cwd, path) in [(&mono, "kubernetes"), (&tree, ".")] {
        let out = lint(cwd, &[path, "--base", "HEAD~1", "--format", "json"]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(rules_in_json(&out).contains(&HAZARD.to_string()));
        assert!(!rules_in_json(&out).contains(&"flux-kustomization-path-missing".to_string()));
    }
}

/// The base commit's count is of findings, as the run's own summary counts
/// them: one variable undefined at three lines of one object is three
/// findings of fewer fingerprints, and the base holds all three.
#[test]
fn the_base_line_counts_findings_not_fingerprints() {
    if !common::git_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "flux/apps.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substitute: {DEFINED: x}\n",
    );
    write(
        "apps/app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata:\n  first: ${UNDEFINED}\n  second: ${UNDEFINED}\n  third: ${UNDEFINED}\n",
    );
    common::git(root, &["init", "-q"]);
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-qm", "base"]);
    write(
        "apps/other.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\n",
    );
    common::git(root, &["add", "-A"]);
    common::git(root, &["commit", "-qm", "unrelated"]);
    let plain = lint(root, &["-o", "concise"]);
    assert!(
        stdout(&plain).contains("3 findings: 3 errors, 0 warnings"),
        "{}",
        stdout(&plain)
    );
    let out = lint(root, &["--base", "HEAD~1", "-o", "concise"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("objects, 3 findings"), "{stderr}");
    let summary = stdout(&out).lines().last().unwrap_or_default().to_string();
    assert!(summary.starts_with("0 findings"), "{}", stdout(&out));
}
