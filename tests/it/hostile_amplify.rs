//! Small repositories whose kustomize transformers, patches and
//! replacements multiply what they are given by the objects they reach:
//! each run of the real binary under tests/support/limited.rs must end
//! with an issue at the kustomization entry that crosses the load's
//! budget, while the rest of the repository is linted.

use crate::support;

use std::path::Path;

use support::limited;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A repository with `good/` (one ConfigMap `survivor`) and `apps/`
/// (`count` ConfigMaps and a kustomization holding `extra`), each built
/// by a Flux Kustomization.
fn repo(count: usize, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "good/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: survivor, namespace: default}\ndata: {a: b}\n",
    );
    let cms: String = (0..count)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: default}}\ndata: {{a: b}}\n"))
        .collect();
    write(root, "apps/cms.yaml", &cms);
    write(
        root,
        "apps/kustomization.yaml",
        &format!("resources: [cms.yaml]\n{extra}"),
    );
    for (name, path) in [("good", "./good"), ("apps", "./apps")] {
        write(
            root,
            &format!("flux/{name}.yaml"),
            &format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
            ),
        );
    }
    let size: u64 = ["apps/cms.yaml", "apps/kustomization.yaml"]
        .iter()
        .map(|f| std::fs::metadata(root.join(f)).unwrap().len())
        .sum();
    assert!(size <= 1 << 20, "hostile repo is {size} bytes");
    dir
}

/// The reason the `apps` Flux Kustomization is incomplete, once the
/// rest of the repository is seen loaded.
fn why_apps_failed(inv: &limited::Inventory) -> String {
    inv.assert_loaded(&["survivor"]);
    inv.why_incomplete()
}

/// A 200 KB `namePrefix` over 3,000 ConfigMaps: each name became a copy
/// (300 objects took 446 MB; 3,000 would take 4.4 GB).
#[test]
fn a_name_prefix_copied_into_every_object_stops_at_the_output_budget() {
    let dir = repo(3000, &format!("namePrefix: {}-\n", "p".repeat(200_000)));
    let why = why_apps_failed(&limited::inventory(dir.path()));
    assert!(
        why.starts_with("apps/kustomization.yaml:2:13: namePrefix/nameSuffix: ConfigMap/default/cm")
            && why.ends_with(
                "kustomize output budget exceeded: transformers would add more than 67108864 bytes to the objects of this repository in all; not applied further"
            ),
        "{why}"
    );
}

/// 1,000 patches each targeting every one of 1,000 ConfigMaps and adding
/// a key (244 KB): each merge rewrote a mapping that grows with the
/// patches before it, N³ (92 s on a release build).
#[test]
fn patches_times_objects_stop_at_the_work_budget() {
    let patches: String = (0..1000)
        .map(|i| format!("  - target: {{kind: ConfigMap}}\n    patch: |\n      - {{op: add, path: /data/k{i}, value: v}}\n"))
        .collect();
    let dir = repo(1000, &format!("patches:\n{patches}"));
    let why = why_apps_failed(&limited::inventory(dir.path()));
    assert!(
        why.starts_with("apps/kustomization.yaml:")
            && why.contains(": ConfigMap/default/cm")
            && why.ends_with("kustomize work budget exceeded: the patches, replacements and transformers of this repository would visit more than 20000000 nodes of the objects they change in all; not applied further"),
        "{why}"
    );
}

/// Replacements in the same shape: each copies a field into every
/// ConfigMap (35 s on a release build at 1,000 over 1,000).
#[test]
fn replacements_times_objects_stop_at_the_work_budget() {
    let list: String = (0..1000)
        .map(|i| format!("  - source: {{kind: ConfigMap, name: cm0, fieldPath: data.a}}\n    targets:\n      - select: {{kind: ConfigMap}}\n        fieldPaths: [data.r{i}]\n        options: {{create: true}}\n"))
        .collect();
    let dir = repo(1000, &format!("replacements:\n{list}"));
    let why = why_apps_failed(&limited::inventory(dir.path()));
    assert!(
        why.starts_with("apps/kustomization.yaml:")
            && why.contains("kustomize work budget exceeded"),
        "{why}"
    );
}

/// `commonLabels` of 10,000 keys over 100 ConfigMaps (150 KB): each key
/// was inserted alone, rebuilding the object's labels every time (N² per
/// object). Now one pass per object: the build completes.
#[test]
fn many_common_labels_are_set_in_one_pass_per_object() {
    let labels: String = (0..10_000).map(|i| format!("  k{i}: v\n")).collect();
    let dir = repo(100, &format!("commonLabels:\n{labels}"));
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor", "cm99"]);
    let cm = inv.json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "cm99")
        .unwrap();
    let labels = cm["object"]["metadata"]["labels"].as_object().unwrap();
    assert_eq!(labels.len(), 10_000);
    assert_eq!(labels["k9999"], "v");
}
