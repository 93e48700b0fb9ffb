//! Corpus repositories that run Authentik before 2025.10, copied to a
//! temporary directory and bumped to 2025.10.1 the way a Renovate pull
//! request would: each gets the findings a careful reader expects, at the
//! places they point to, and buroa's fix (into the chart-bundled Bitnami
//! Postgres, whose `primary` map holds an alias of an anchored block) is
//! applied with `--fix --unsafe-fixes` and renders as intended.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use homelab_lint::model::Model;
use homelab_lint::source::repo;
use homelab_lint::yaml::Node;

use crate::common::BIN;

/// A copy of corpus repository `name` with `from` replaced by `to` in `file`.
fn bumped(name: &str, file: &str, from: &str, to: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    let corpus = common::corpus()?;
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join(name);
    common::copy_dir(&corpus.join(name), &repo);
    common::edit(&repo, file, from, to);
    Some((dir, repo))
}

/// `(rule, path:line:column)` of every finding, sorted.
fn findings(repo: &Path, extra: &[&str]) -> Vec<(String, String)> {
    let out = Command::new(BIN)
        .arg(repo)
        .args(["--no-probe", "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    let mut found = common::report(&out).rule_locations();
    found.sort();
    found
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = list
        .iter()
        .map(|(r, a)| (r.to_string(), a.to_string()))
        .collect();
    v.sort();
    v
}

#[test]
fn bjw_s_bumped_to_2025_10_gets_the_synchronous_replication_finding() {
    let Some((_dir, repo)) = bumped(
        "bjw-s-labs__home-ops",
        "kubernetes/main/apps/security/authentik/app/helmrelease.yaml",
        "version: 2024.2.0",
        "version: 2025.10.1",
    ) else {
        return;
    };
    // The database host is `{{ index . "pgbouncer-host" }}` of an
    // ExternalSecret over Crunchy's postgres-pguser-authentik Secret:
    // postgres-pgbouncer.database.svc, the PostgresCluster postgres, which
    // runs Patroni synchronous_mode with 3 replicas on local-hostpath.
    // Redis is still configured; USE_PGBOUNCER=true without keepalives.
    let authentik: Vec<(String, String)> = findings(&repo, &[])
        .into_iter()
        .filter(|(r, _)| r.starts_with("authentik-"))
        .collect();
    assert_eq!(
        authentik,
        pairs(&[
            (
                "authentik-cache-on-synchronously-replicated-postgres",
                "kubernetes/main/apps/database/crunchy-postgres-operator/cluster/postgrescluster.yaml:5:9",
            ),
            (
                "authentik-persistent-connections-without-keepalives",
                "kubernetes/main/apps/security/authentik/app/externalsecret.yaml:56:46",
            ),
            (
                "authentik-redis-settings-after-2025-10",
                "kubernetes/main/apps/security/authentik/app/helmrelease.yaml:12:16",
            ),
        ])
    );
}

#[test]
fn buroa_bumped_to_2025_10_is_fixed_next_to_the_alias_not_inside_the_anchor() {
    const HR: &str = "kubernetes/apps/home/authentik/app/helmrelease.yaml";
    let Some((_dir, repo)) = bumped(
        "buroa__k8s-gitops",
        HR,
        "version: 2023.3.1",
        "version: 2025.10.1",
    ) else {
        return;
    };
    let cache = "authentik-cache-on-sync-replicated-postgres";
    let before = findings(&repo, &[]);
    // Bundled Bitnami Postgres on the authentik-postgres-db claim, class
    // ${CLUSTER_STORAGE_CLASS} = ceph-block (Rook RBD); Redis still on.
    assert!(
        before.contains(&(
            cache.into(),
            "kubernetes/apps/home/authentik/app/helmrelease.yaml:5:9".into()
        )),
        "{before:#?}"
    );
    assert!(
        before
            .iter()
            .any(|(r, _)| r == "authentik-redis-settings-after-2025-10"),
        "{before:#?}"
    );
    let anchored = std::fs::read_to_string(repo.join(HR)).unwrap();

    let out = Command::new(BIN)
        .arg(&repo)
        .args(["--no-probe", "--fix", "--unsafe-fixes"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = findings(&repo, &[]);
    assert!(!after.iter().any(|(r, _)| r == cache), "{after:#?}");

    // Rendered again: the parameter reaches the bundled Postgres (with the
    // authentik chart's own max_connections line, which a block of ours
    // would otherwise replace), and the anchored resources (aliased by
    // redis and the Postgres primary) are what they were.
    let loaded = repo::load(&repo, Default::default());
    let model = Model::new(&loaded);
    let hr = (0..loaded.objects.len())
        .find(|&i| model.object(i).id() == "HelmRelease/home/authentik")
        .unwrap();
    let values = &model.release(hr).unwrap().values;
    let text = |n: Option<&Node>| n.map(|n| n.to_json().to_string()).unwrap_or_default();
    assert_eq!(
        values.str_at(&["postgresql", "primary", "extendedConfiguration"]),
        Some("max_connections = 500\nsynchronous_commit = off\n")
    );
    let resources = text(values.get("resources"));
    assert!(!resources.contains("extendedConfiguration"), "{resources}");
    assert_eq!(
        text(values.path(&["postgresql", "primary", "resources"])),
        resources
    );
    assert_eq!(
        text(values.path(&["redis", "master", "resources"])),
        resources
    );
    // Only the added lines changed in the file.
    let fixed = std::fs::read_to_string(repo.join(HR)).unwrap();
    let added: Vec<&str> = fixed
        .lines()
        .filter(|l| !anchored.lines().any(|a| a == *l))
        .collect();
    assert_eq!(
        added,
        [
            "        extendedConfiguration: |",
            "          max_connections = 500",
            "          synchronous_commit = off"
        ]
    );
}
