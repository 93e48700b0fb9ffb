//! Release knowledge on real repositories: corpus repositories copied to
//! a temporary directory and bumped the way a Renovate pull request
//! would, linted against the unbumped corpus copy as the base (what
//! `--base` reads from git). Each bump that crosses a release whose
//! breaking setting the repository has gets its finding, at the version
//! line, and the same bump where the repository does not have the
//! setting gets none.

use crate::common;

use std::path::Path;

use homelab_lint::model::Model;
use homelab_lint::rules::{self, releases};
use homelab_lint::source::repo;

/// `(rule, path:line:column, related places)` of the findings of `rule`
/// in corpus repository `name` after replacing `from` with `to` in
/// `file`, with the unchanged repository as the base.
fn bumped_findings(
    name: &str,
    file: &str,
    from: &str,
    to: &str,
    rule: &str,
) -> Option<Vec<(String, Vec<String>)>> {
    let corpus = common::corpus()?;
    let original = corpus.join(name);
    let dir = tempfile::tempdir().unwrap();
    let head = dir.path().join(name);
    common::copy_dir(&original, &head);
    common::edit(&head, file, from, to);

    let base = repo::load(&original, Default::default());
    let baseline =
        releases::Baseline::of(&Model::new(&base), releases::builtin(), "the base commit");
    let loaded = repo::load(&head, Default::default());
    let model = Model::new(&loaded);
    let outcome = rules::lint_with(&model, &rules::builtin(), &baseline);
    let at = |span| loaded.files.sources.location(span);
    let shown = |p: &str| {
        Path::new(p)
            .strip_prefix(&head)
            .map_or(p.to_string(), |r| r.display().to_string())
    };
    Some(
        outcome
            .findings
            .iter()
            .filter(|f| f.rule == rule)
            .map(|f| {
                (
                    shown(&at(f.primary.span)),
                    f.related.iter().map(|l| shown(&at(l.span))).collect(),
                )
            })
            .collect(),
    )
}

#[test]
fn bjw_s_external_secrets_bumped_to_0_17_lists_the_v1beta1_objects_of_its_own_cluster() {
    const HR: &str = "kubernetes/main/apps/security/external-secrets/app/helmrelease.yaml";
    let Some(found) = bumped_findings(
        "bjw-s-labs__home-ops",
        HR,
        "version: 0.9.13",
        "version: 0.17.0",
        "external-secrets-v1beta1-after-0-17",
    ) else {
        return;
    };
    // One finding, at the bumped chart version of the main cluster's
    // operator; its labels are the main cluster's v1beta1 objects (the
    // repository's ExternalSecrets and ClusterSecretStores are all
    // v1beta1), none of the nas cluster's, whose operator is not bumped.
    assert_eq!(found.len(), 1, "{found:#?}");
    let (primary, related) = &found[0];
    assert_eq!(primary, &format!("{HR}:12:16"));
    assert!(related.len() > 20, "{related:#?}");
    assert!(
        related.iter().all(|r| r.starts_with("kubernetes/main/")),
        "{related:#?}"
    );
    assert!(
        related.iter().any(|r| r
            == "kubernetes/main/apps/database/crunchy-postgres-operator/clustersecretstore/clustersecretstore.yaml:2:13"),
        "{related:#?}"
    );
}

#[test]
fn buroa_vaultwarden_bumped_to_1_31_points_at_the_3012_route() {
    const HR: &str = "kubernetes/apps/home/vaultwarden/app/helmrelease.yaml";
    let Some(found) = bumped_findings(
        "buroa__k8s-gitops",
        HR,
        "tag: 1.28.1",
        "tag: 1.31.0",
        "vaultwarden-websocket-port-after-1-31",
    ) else {
        return;
    };
    // The k8s-at-home chart's values name a websocket Service port 3012:
    // the line a user changes is the primary place, the image tag a
    // related one.
    assert_eq!(
        found,
        [(format!("{HR}:50:19"), vec![format!("{HR}:32:12")])]
    );
}

#[test]
fn gandazgul_kube_prometheus_stack_bumped_to_71_leaves_its_crds_behind() {
    const HR: &str = "infrastructure/setup/KubePrometheusStack.yaml";
    let Some(found) = bumped_findings(
        "gandazgul__k8s-infrastructure",
        HR,
        "version: 70.7.0",
        "version: 71.0.0",
        "helm-upgrade-leaves-crds-behind",
    ) else {
        return;
    };
    // No upgrade.crds in the HelmRelease and no other source of the
    // Prometheus Operator CRDs in the repository: 71.x needs v0.82's.
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(found[0].0, format!("{HR}:20:16"));
}

#[test]
fn buroa_kube_prometheus_stack_bumped_across_crd_changes_upgrades_its_crds() {
    let Some(found) = bumped_findings(
        "buroa__k8s-gitops",
        "kubernetes/apps/monitoring/kube-prometheus-stack/app/helmrelease.yaml",
        "version: 45.8.1",
        "version: 56.0.0",
        "helm-upgrade-leaves-crds-behind",
    ) else {
        return;
    };
    // buroa sets upgrade.crds: CreateReplace: Flux upgrades the CRDs.
    assert!(found.is_empty(), "{found:#?}");
}
