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
                "kustomize output budget exceeded: the patches, replacements and transformers of this repository would add more than 67108864 bytes to its objects in all (the values they set and the steps that record them); not applied further"
            ),
        "{why}"
    );
}

/// The data keys of ConfigMap `name` in the inventory.
fn data_keys(inv: &limited::Inventory, name: &str) -> usize {
    let cm = inv.json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not loaded"));
    cm["object"]["data"].as_object().map_or(0, |d| d.len())
}

/// P patches each targeting every one of N ConfigMaps and adding a key:
/// each application measured and copied the object, which grows with
/// the patches before it, N·P² (1,000 over 1,000, 244 KB, took 92 s on
/// a release build; then the work budget stopped it, here at 400 over
/// 400). Each application now pays for the keys it searches and the
/// nodes it writes: the build completes.
#[test]
fn patches_times_objects_cost_patches_times_objects() {
    let patches: String = (0..400)
        .map(|i| format!("  - target: {{kind: ConfigMap}}\n    patch: |\n      - {{op: add, path: /data/k{i}, value: v}}\n"))
        .collect();
    let dir = repo(400, &format!("patches:\n{patches}"));
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor", "cm399"]);
    assert_eq!(
        inv.json["coverage"]["fluxKustomizationsIncomplete"],
        serde_json::json!([]),
        "{:#}",
        inv.json["issues"]
    );
    assert_eq!(data_keys(&inv, "cm0"), 401);
    assert_eq!(data_keys(&inv, "cm399"), 401);
}

/// The same as strategic-merge patches (300 over 300): each merge copied
/// the object whole and merged into the copy.
#[test]
fn strategic_merge_patches_times_objects_cost_patches_times_objects() {
    let patches: String = (0..300)
        .map(|i| format!("  - target: {{kind: ConfigMap}}\n    patch: |\n      {{apiVersion: v1, kind: ConfigMap, metadata: {{name: x}}, data: {{k{i}: v}}}}\n"))
        .collect();
    let dir = repo(300, &format!("patches:\n{patches}"));
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor", "cm299"]);
    assert_eq!(data_keys(&inv, "cm150"), 301, "{:#}", inv.json["issues"]);
}

/// Replacements in the same shape (300 over 300): each copies a field
/// into every ConfigMap (35 s on a release build at 1,000 over 1,000),
/// and each measured the object whole.
#[test]
fn replacements_times_objects_cost_replacements_times_objects() {
    let list: String = (0..300)
        .map(|i| format!("  - source: {{kind: ConfigMap, name: cm0, fieldPath: data.a}}\n    targets:\n      - select: {{kind: ConfigMap}}\n        fieldPaths: [data.r{i}]\n        options: {{create: true}}\n"))
        .collect();
    let dir = repo(300, &format!("replacements:\n{list}"));
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor", "cm299"]);
    assert_eq!(data_keys(&inv, "cm299"), 301, "{:#}", inv.json["issues"]);
}

/// Patches over one very wide object: each still pays for the keys it
/// searches, so enough of them stop at the work budget instead of
/// searching without end (here a budget of 100,000 visits: 1,000 patches
/// over 10,000 keys compare 10 million keys, about 2.5 million visits).
#[test]
fn patches_over_a_very_wide_object_pay_for_their_searches() {
    use homelab_lint::source::{Files, Limits, repo as load};
    let keys: String = (0..10_000).map(|i| format!("  w{i}: v\n")).collect();
    let patches: String = (0..1000)
        .map(|i| format!("- target: {{kind: ConfigMap}}\n  patch: '[{{op: add, path: /data/k{i}, value: v}}]'\n"))
        .collect();
    let dir = repo(0, &format!("patches:\n{patches}"));
    write(
        dir.path(),
        "apps/cms.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: wide, namespace: default}}\ndata:\n{keys}"
        ),
    );
    let run = |max_run_work| {
        let limits = Limits {
            kustomize: homelab_lint::source::kustomize::Limits {
                max_run_work,
                ..Default::default()
            },
            ..Limits::default()
        };
        let loaded = load::load_files(Files::new(dir.path(), limits));
        let issues: Vec<String> = loaded.issues.iter().map(|i| i.to_string()).collect();
        (loaded, issues)
    };
    let (loaded, issues) = run(5_000_000);
    let wide = loaded.objects.iter().find(|o| o.name() == "wide").unwrap();
    assert_eq!(
        wide.root.get("data").unwrap().as_map().unwrap().len(),
        11_000,
        "{issues:#?}"
    );
    let (_, issues) = run(100_000);
    assert!(
        issues
            .iter()
            .any(|i| i.starts_with("apps/kustomization.yaml:")
                && i.contains("ConfigMap/default/wide: kustomize work budget exceeded")),
        "{issues:#?}"
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

/// Patches, replacements and transformers add a step to the chain of
/// every object they change, with its own copy of the step's text,
/// however little they set: 5,000 labels that set no byte (`{"": ""}`)
/// over 2,000 ConfigMaps, 5,000 `replicas` entries over 2,000 ConfigMaps
/// of one name (one per namespace), and one patch file named by a 4 KB
/// path listed 150 times over 4,000 ConfigMaps each made 10 million
/// steps or 2.4 GB of their text (the labels: 1,000 over 2,000 took 48 s
/// and printed a 265 MB inventory). Steps are paid from the output
/// budget: each build stops there, the rest is linted.
#[test]
fn steps_of_changes_that_set_nothing_stop_at_the_output_budget() {
    let labels = format!("labels:\n{}", "  - pairs: {\"\": \"\"}\n".repeat(5000));
    let replicas = format!("replicas:\n{}", "  - {name: x, count: 1}\n".repeat(5000));
    let deep: Vec<String> = (0..16)
        .map(|j| format!("d{j:02}{}", "x".repeat(240)))
        .collect();
    let deep = deep.join("/");
    let patches = format!(
        "patches:\n{}",
        format!("  - path: {deep}/p.yaml\n    target: {{kind: ConfigMap}}\n").repeat(150)
    );
    for (count, extra) in [(2000, &labels), (2000, &replicas), (4000, &patches)] {
        let dir = repo(count, extra);
        if extra == &replicas {
            let one_name: String = (0..count)
                .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: x, namespace: n{i}}}\n"))
                .collect();
            write(dir.path(), "apps/cms.yaml", &one_name);
        }
        write(
            dir.path(),
            &format!("apps/{deep}/p.yaml"),
            "- {op: add, path: /data/b, value: c}\n",
        );
        let inv = limited::inventory(dir.path());
        let why = why_apps_failed(&inv);
        assert!(
            why.starts_with("apps/kustomization.yaml:")
                && why.contains("kustomize output budget exceeded"),
            "{why}"
        );
        assert_eq!(
            inv.json["coverage"]["fluxKustomizationsIncomplete"][0]["outcome"],
            "stopped: output budget of 67108864 bytes added reached"
        );
    }
}

/// Replacements whose target selects nothing still look at every object
/// of the build: 4,000 selecting kind `Nope` over 5,000 ConfigMaps (860
/// KB) ran past 120 s of a debug build, reading the selector again for
/// each object and spending nothing of the work budget. A selector is
/// read once, and each pass over the objects (the source's, each
/// target's) is paid from the work budget.
#[test]
fn replacement_targets_that_select_nothing_pay_for_their_pass() {
    let list = "  - source: {kind: ConfigMap, name: cm0, fieldPath: data.a}\n    targets:\n      - select: {kind: Nope}\n        fieldPaths: [data.x]\n".repeat(4000);
    let dir = repo(5000, &format!("replacements:\n{list}"));
    let why = why_apps_failed(&limited::inventory(dir.path()));
    assert!(
        why.starts_with("apps/kustomization.yaml:")
            && why.contains("kustomize work budget exceeded"),
        "{why}"
    );
}

/// A `configurations:` file whose commonLabels field spec creates a path
/// of 100,000 fields (200 KB): the label was set at the end of a map
/// nested that deep, whose recursive walks overflowed the stack (abort,
/// exit 134); at 10,000 fields the inventory printed 200 MB for 32 KB of
/// input, a provenance path per level. A path of more fields than a YAML
/// document may nest fails its build with the reason.
#[test]
fn a_field_spec_path_deeper_than_yaml_nests_fails_its_build() {
    let path = vec!["a"; 100_000].join("/");
    let dir = repo(1, "configurations: [conf.yaml]\ncommonLabels: {x: y}\n");
    write(
        dir.path(),
        "apps/conf.yaml",
        &format!("commonLabels:\n- path: {path}\n  create: true\n"),
    );
    let inv = limited::inventory(dir.path());
    let why = why_apps_failed(&inv);
    assert!(
        why.starts_with("apps/conf.yaml:2:")
            && why.contains("field spec path has 100000 fields, more than the 256"),
        "{why}"
    );
    assert!(
        inv.run.stdout.len() < 1 << 20,
        "{} bytes",
        inv.run.stdout.len()
    );
}
