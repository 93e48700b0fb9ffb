//! Fingerprints name one alert each, for `--base` and for code scanning
//! (SARIF `partialFingerprints`): a rule that fires at several places of
//! one file gives each place its own, and each keeps it when lines above
//! it move.

use std::path::Path;

use crate::common::{edit, lint, report};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// flux bootstrap's layout, whose `apps` renders a ConfigMap that uses a
/// variable nothing defines at three places (tvories/k8s-gitops's
/// vpn-gateway used NETWORK_K8S_POD_CIDR so).
fn three_places() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "clusters/home/flux-system/gotk-sync.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec:\n  ref: {branch: main}\n  url: ssh://git@example.com/home-ops\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\nspec:\n  path: ./clusters/home\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    write(
        root,
        "clusters/home/flux-system/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - gotk-sync.yaml\n",
    );
    write(
        root,
        "clusters/home/apps.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substitute: {DOMAIN: example.org}\n",
    );
    write(
        root,
        "apps/vpn.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vpn, namespace: vpn}\ndata:\n  routed: \"${POD_CIDR} 10.0.0.0/8\"\n  local: \"${POD_CIDR}\"\n  policy: ${POD_CIDR}\n",
    );
    dir
}

fn prints(repo: &Path) -> Vec<(u32, String)> {
    let mut found: Vec<(u32, String)> = report(&lint(repo, &["-o", "json"]))
        .findings
        .into_iter()
        .filter(|f| f.rule == "flux-variable-undefined")
        .map(|f| (f.location.line, f.fingerprint))
        .collect();
    found.sort();
    found
}

#[test]
fn three_places_of_one_rule_in_one_file_have_three_fingerprints() {
    let repo = three_places();
    let before = prints(repo.path());
    assert_eq!(before.len(), 3, "{before:#?}");
    let unique: std::collections::BTreeSet<&String> = before.iter().map(|(_, p)| p).collect();
    assert_eq!(
        unique.len(),
        3,
        "one fingerprint for two places: {before:#?}"
    );
    // The same run again, and with the lines moved down: the same prints.
    assert_eq!(prints(repo.path()), before);
    edit(
        repo.path(),
        "apps/vpn.yaml",
        "data:\n",
        "data:\n  note: moved\n",
    );
    let after: Vec<String> = prints(repo.path()).into_iter().map(|(_, p)| p).collect();
    let before: Vec<String> = before.into_iter().map(|(_, p)| p).collect();
    assert_eq!(after, before, "a line above moved the fingerprints");
}
