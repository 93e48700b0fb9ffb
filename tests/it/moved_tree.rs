//! An old cluster kept under `archive/` beside the live one, its paths
//! still from the repository root (tvories/k8s-gitops): its GitRepository
//! has another name than the live one but the same URL, so it is this
//! repository, read from its root, where Flux finds none of the archive's
//! paths. Nothing of the archive is linted as applied, and `-v` says why.

use std::path::Path;

use crate::common::{lint, report};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The live cluster, applied by hand (`kubectl apply -k
/// k8s/clusters/cluster-0`) from GitRepository `k8s-gitops`, and the
/// archive: flux bootstrap's `flux-system` of the same repository,
/// spelled without `.git`, building `./cluster/base`, whose `apps` uses
/// a variable nothing defines.
fn live_and_archive() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "k8s/clusters/cluster-0/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - git.yaml\n  - deploy.yaml\n",
    );
    write(
        root,
        "k8s/clusters/cluster-0/git.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: k8s-gitops, namespace: flux-system}\nspec:\n  ref: {branch: main}\n  url: https://github.com/me/k8s-gitops.git\n",
    );
    write(
        root,
        "k8s/clusters/cluster-0/deploy.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: cluster-apps, namespace: flux-system}\nspec:\n  path: ./k8s/clusters/cluster-0/apps\n  sourceRef: {kind: GitRepository, name: k8s-gitops}\n  postBuild:\n    substitute: {DOMAIN: example.org}\n",
    );
    write(
        root,
        "k8s/clusters/cluster-0/apps/web.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web, namespace: default}\ndata:\n  host: web.${DOMAIN}\n",
    );
    write(
        root,
        "archive/cluster/base/flux-system/gotk-sync.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1beta1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec:\n  ref: {branch: main}\n  url: https://github.com/me/k8s-gitops\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1beta1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\nspec:\n  path: ./cluster/base\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    write(
        root,
        "archive/cluster/base/flux-system/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - gotk-sync.yaml\n",
    );
    write(
        root,
        "archive/cluster/base/apps.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1beta1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./cluster/apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: ConfigMap, name: cluster-settings}\n",
    );
    write(
        root,
        "archive/cluster/base/cluster-settings.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings, namespace: flux-system}\ndata:\n  OLD: x\n",
    );
    write(
        root,
        "archive/cluster/apps/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - vpn.yaml\n",
    );
    write(
        root,
        "archive/cluster/apps/vpn.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vpn, namespace: vpn}\ndata:\n  cidr: ${NETWORK_K8S_POD_CIDR}\n",
    );
    dir
}

#[test]
fn an_archived_tree_of_the_same_repository_is_not_linted_as_applied() {
    let repo = live_and_archive();
    let out = lint(repo.path(), &["-o", "json", "-v"]);
    let findings = report(&out).findings;
    assert!(
        findings
            .iter()
            .all(|f| !f.location.path.starts_with("archive/")),
        "Flux applies nothing of archive/: {findings:#?}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The archive's root is not guessed, so no warning says it is.
    assert!(!stderr.contains("warning:"), "{stderr}");
    // Every archived file is listed with the reason.
    for file in [
        "archive/cluster/apps/vpn.yaml",
        "archive/cluster/base/apps.yaml",
        "archive/cluster/base/cluster-settings.yaml",
        "archive/cluster/base/flux-system/gotk-sync.yaml",
    ] {
        let line = stderr
            .lines()
            .find(|l| l.starts_with(&format!("skipped: {file}: ")))
            .unwrap_or_else(|| panic!("{file} is not listed: {stderr}"));
        assert!(
            line.contains("is this repository (read from its root), where that is no directory")
                && line.contains("kustomization path not found"),
            "{line}"
        );
    }
    // The live tree is rendered, with its variable.
    let inventory = lint(repo.path(), &["inventory", "-o", "json"]);
    let inventory: serde_json::Value = serde_json::from_slice(&inventory.stdout).unwrap();
    let web = inventory["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == "ConfigMap" && o["name"] == "web")
        .expect("the live ConfigMap is rendered");
    assert_eq!(web["object"]["data"]["host"], "web.example.org");
    assert!(
        inventory["objects"]
            .as_array()
            .unwrap()
            .iter()
            .all(|o| !o["file"].as_str().unwrap().starts_with("archive/")),
        "nothing of archive/ is an object of the cluster"
    );
}
