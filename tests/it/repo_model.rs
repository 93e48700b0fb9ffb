//! The repository model on the bundled example repo: objects found through
//! the Flux tree, and exact source locations of the values rules care about.

use std::path::{Path, PathBuf};
use std::process::Command;

use homelab_lint::source::helm;
use homelab_lint::source::repo::{self, Repo};
use homelab_lint::yaml::{Origin, Span};

fn example_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/example-repo")
}

fn example() -> Repo {
    repo::load(&example_root(), Default::default())
}

fn at(repo: &Repo, span: Span) -> String {
    repo.files.sources.location(span)
}

#[test]
fn example_repo_loads_every_object_through_flux() {
    let repo = example();
    assert!(repo.issues.is_empty(), "{:?}", repo.issues);
    let mut ids: Vec<String> = repo.objects.iter().map(|o| o.id()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(
        ids,
        [
            "ConfigMap/flux-system/cluster-settings",
            "GitRepository/flux-system/flux-system",
            "HelmRelease/security/authentik",
            "HelmRepository/flux-system/authentik",
            "Kustomization/flux-system/authentik",
            "Kustomization/flux-system/flux-system",
            "Kustomization/flux-system/infrastructure",
            "StorageClass/ceph-block",
            "postgresql/security/auth-postgres",
        ]
    );
    let hr = repo
        .find(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            Some("security"),
            "authentik",
        )
        .unwrap();
    let chain: Vec<&str> = hr.chain.iter().map(|s| &*s.detail).collect();
    assert_eq!(chain.first(), Some(&"flux-system/authentik"), "{chain:?}");
}

#[test]
fn authentik_chart_version_location_is_exact() {
    let repo = example();
    let hr = repo
        .find(
            "helm.toolkit.fluxcd.io",
            "HelmRelease",
            Some("security"),
            "authentik",
        )
        .unwrap();
    let lookup = |kind: &str, ns: &str, name: &str| {
        repo.objects
            .iter()
            .find(|o| o.kind() == kind && o.name() == name && o.namespace() == Some(ns))
    };
    let release = helm::resolve(&repo.files.sources, hr, &lookup);
    let version = release.version.expect("chart version");
    assert_eq!(version.as_str(), Some("2025.10.1"));
    assert_eq!(
        at(&repo, version.span()),
        "apps/authentik/helmrelease.yaml:11:16"
    );
}

#[test]
fn zalando_postgresql_map_location_is_exact() {
    let repo = example();
    let pg = repo
        .find(
            "acid.zalan.do",
            "postgresql",
            Some("security"),
            "auth-postgres",
        )
        .unwrap();
    let spec = pg.root.get("spec").unwrap();
    assert_eq!(
        at(&repo, spec.get_key("postgresql").unwrap().span()),
        "apps/authentik/database.yaml:18:3"
    );
    let map = spec.get("postgresql").unwrap();
    assert_eq!(at(&repo, map.span()), "apps/authentik/database.yaml:19:5");
    let params = map.get("parameters").unwrap();
    assert!(params.get("synchronous_commit").is_none());
}

#[test]
fn postbuild_variable_keeps_both_ends() {
    let repo = example();
    let pg = repo
        .find(
            "acid.zalan.do",
            "postgresql",
            Some("security"),
            "auth-postgres",
        )
        .unwrap();
    let class = pg.root.path(&["spec", "volume", "storageClass"]).unwrap();
    assert_eq!(class.as_str(), Some("ceph-block"));
    assert_eq!(
        at(&repo, class.span()),
        "apps/authentik/database.yaml:12:19"
    );
    let Some(Origin::Substituted {
        variable,
        defined_at,
        unknown,
        ..
    }) = class.origin()
    else {
        panic!("no substitution recorded: {:?}", class.origin());
    };
    assert_eq!(variable, "CLUSTER_STORAGE_CLASS");
    assert!(!unknown);
    assert_eq!(
        at(&repo, defined_at.expect("definition")),
        "clusters/home/cluster-settings.yaml:10:26"
    );
}

#[test]
fn inventory_command_prints_provenance_json() {
    let out = Command::new(crate::common::BIN)
        .args([
            "inventory",
            "--example",
            "--provenance",
            "--kind",
            "postgresql",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let objects = json["objects"].as_array().unwrap();
    assert_eq!(objects.len(), 1);
    let prov = &objects[0]["provenance"]["spec.volume.storageClass"];
    assert_eq!(prov["at"], "apps/authentik/database.yaml:12:19");
    assert_eq!(prov["variable"], "CLUSTER_STORAGE_CLASS");
    assert_eq!(
        prov["definedAt"],
        "clusters/home/cluster-settings.yaml:10:26"
    );
}
