//! A repository of several clusters, each a Flux tree of its own: what one
//! cluster lacks but another holds is said to be there, never to be
//! missing from the repository.

use std::path::Path;

use crate::common::{lint, report};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Clusters `a` and `b` (flux bootstrap layout) both apply `apps/shared`
/// with their own `cluster-settings`; only `a`'s defines `DB_NAME`.
fn two_clusters() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (cluster, settings) in [("a", "  DB_NAME: app\n"), ("b", "  OTHER: x\n")] {
        write(
            root,
            &format!("clusters/{cluster}/flux-system/gotk-sync.yaml"),
            &format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {{name: flux-system, namespace: flux-system}}\nspec:\n  ref: {{branch: main}}\n  url: ssh://git@example.com/home-ops\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: flux-system, namespace: flux-system}}\nspec:\n  path: ./clusters/{cluster}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
            ),
        );
        write(
            root,
            &format!("clusters/{cluster}/flux-system/kustomization.yaml"),
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - gotk-sync.yaml\n",
        );
        write(
            root,
            &format!("clusters/{cluster}/cluster-settings.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cluster-settings, namespace: flux-system}}\ndata:\n{settings}"
            ),
        );
        write(
            root,
            &format!("clusters/{cluster}/apps.yaml"),
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps/shared\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: ConfigMap, name: cluster-settings}\n",
        );
    }
    write(
        root,
        "apps/shared/app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata:\n  database: ${DB_NAME}\n",
    );
    dir
}

#[test]
fn a_variable_only_another_cluster_defines_is_not_said_to_be_defined_nowhere() {
    let repo = two_clusters();
    let out = lint(repo.path(), &["-o", "json"]);
    let findings: Vec<_> = report(&out)
        .findings
        .into_iter()
        .filter(|f| f.rule == "flux-variable-undefined")
        .collect();
    assert_eq!(findings.len(), 1, "cluster b only: {findings:#?}");
    let label = &findings[0].location.message;
    assert!(
        label.contains(
            "the repository sets it only at clusters/a/cluster-settings.yaml:5:12, which its \
             postBuild does not read"
        ),
        "{label}"
    );
    assert!(!label.contains("defined nowhere"), "{label}");
}

/// One app both clusters apply, whose claim neither holds: the question
/// left open is the same in both trees, in the same words, and is said once.
#[test]
fn an_undecided_question_two_clusters_share_is_said_once() {
    let repo = two_clusters();
    write(
        repo.path(),
        "apps/shared/postgres.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: postgres, namespace: default}\nspec:\n  template:\n    spec:\n      containers:\n        - {name: postgres, image: 'postgres:16', volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]}\n      volumes:\n        - {name: data, persistentVolumeClaim: {claimName: pg-data}}\n",
    );
    let out = lint(repo.path(), &["-v", "--fail-on", "never"]);
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("undecided: "))
        .collect();
    assert_eq!(
        lines,
        [
            "undecided: postgres-data-on-soft-mounted-nfs: Deployment/default/postgres: claim \
             pg-data is not in the repository in namespace default"
        ],
        "{err}"
    );
}
