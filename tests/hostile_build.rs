//! Hostile kustomize builds, Helm merges and rules (issue 14): each case
//! runs the real binary as a subprocess under the memory, CPU and
//! wall-clock limits of tests/support/limited.rs, on a repository of at
//! most 1 MB, and must end with a clear issue while the rest of the
//! repository is still linted.

mod support;

use std::path::Path;

use support::limited;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn flux_ks(root: &Path, name: &str, path: &str) {
    write(
        root,
        &format!("flux/{name}.yaml"),
        &format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
        ),
    );
}

/// A repository with a Flux Kustomization `good` over one ConfigMap
/// `survivor`, to check the rest was still linted.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "good/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: survivor, namespace: default}\ndata: {a: b}\n",
    );
    flux_ks(dir.path(), "good", "./good");
    dir
}

fn assert_small(root: &Path) {
    fn size(dir: &Path) -> u64 {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    size(&e.path())
                } else {
                    e.metadata().unwrap().len()
                }
            })
            .sum()
    }
    let bytes = size(root);
    assert!(bytes <= 1 << 20, "hostile repo is {bytes} bytes");
}

/// Levels `dag/l0` .. `dag/l{levels}`, each listing the next twice; the
/// last one lists a file that is missing, a gap the build goes on
/// without, so that every level is built to the end.
fn dag(root: &Path, levels: usize) {
    for i in 0..levels {
        write(
            root,
            &format!("dag/l{i}/kustomization.yaml"),
            &format!("resources:\n  - ../l{n}\n  - ../l{n}\n", n = i + 1),
        );
    }
    write(
        root,
        &format!("dag/l{levels}/kustomization.yaml"),
        "resources:\n  - missing.yaml\n",
    );
    flux_ks(root, "dag", "./dag/l0");
}

#[test]
fn a_kustomization_dag_listing_each_level_twice_is_built_once_per_directory() {
    let dir = repo();
    // 2^40 paths through the DAG: only a memo per directory ends this.
    dag(dir.path(), 40);
    assert_small(dir.path());
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    // Flux's build fails on the missing file, reported once at its entry.
    let incomplete = &inv.json["coverage"]["fluxKustomizationsIncomplete"];
    assert_eq!(incomplete.as_array().unwrap().len(), 1, "{incomplete:#}");
    assert_eq!(incomplete[0]["outcome"], "failed (missing files)");
    let why = incomplete[0]["why"].as_str().unwrap();
    assert!(why.starts_with("dag/l40/kustomization.yaml:2:5: "), "{why}");
}

#[test]
fn a_chain_of_components_each_applied_twice_stops_at_the_build_budget() {
    let dir = repo();
    let root = dir.path();
    // A component is applied each time it is listed (it changes what the
    // listing kustomization has so far), so nothing can be reused.
    for i in 0..40 {
        write(
            root,
            &format!("chain/c{i}/kustomization.yaml"),
            &format!(
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncomponents:\n  - ../c{n}\n  - ../c{n}\n",
                n = i + 1
            ),
        );
    }
    write(
        root,
        "chain/c40/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
    );
    write(
        root,
        "chain/top/kustomization.yaml",
        "resources:\n  - cm.yaml\ncomponents:\n  - ../c0\n",
    );
    write(
        root,
        "chain/top/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chained, namespace: default}\n",
    );
    flux_ks(root, "chain", "./chain/top");
    assert_small(root);
    let inv = limited::inventory(root);
    inv.assert_loaded(&["survivor"]);
    let incomplete = &inv.json["coverage"]["fluxKustomizationsIncomplete"];
    let why = incomplete[0]["why"].as_str().unwrap();
    assert!(
        why.contains("kustomize build budget exceeded: more than 10000"),
        "{incomplete:#}"
    );
    assert!(why.starts_with("chain/c"), "{why}");
}
