//! Hostile kustomize builds, Helm merges and rules: each case
//! runs the real binary as a subprocess under the memory, CPU and
//! wall-clock limits of tests/support/limited.rs, on a repository of at
//! most 1 MB, and must end with a clear issue while the rest of the
//! repository is still linted.

use crate::support;

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
    assert_eq!(incomplete[0]["outcome"], "failed (build errors)");
    let why = incomplete[0]["why"].as_str().unwrap();
    assert!(why.starts_with("dag/l40/kustomization.yaml:2:5: "), "{why}");
}

/// Kustomizations `deep/l0` .. `deep/l{levels}`, each listing the next,
/// the last one empty, built by a Flux Kustomization `deep`.
fn nested(root: &Path, levels: usize) {
    for i in 0..levels {
        write(
            root,
            &format!("deep/l{i}/kustomization.yaml"),
            &format!("resources:\n  - ../l{}\n", i + 1),
        );
    }
    write(
        root,
        &format!("deep/l{levels}/kustomization.yaml"),
        "resources: []\n",
    );
    flux_ks(root, "deep", "./deep/l0");
}

#[test]
fn kustomizations_nested_past_the_depth_budget_stop_with_an_issue() {
    let dir = repo();
    // Each level is a frame of the recursive build: 9,000 of them
    // overflowed the stack.
    nested(dir.path(), 9000);
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    let why = inv.why_incomplete();
    assert_eq!(
        why,
        "deep/l99/kustomization.yaml:2:5: kustomize build budget exceeded: kustomizations and components nested more than 100 deep"
    );
}

/// A Flux Kustomization a budget stops is counted apart from those with
/// build errors, and says which budget, in every format that shows the
/// summary (it was counted as "build failed" like a broken kustomization).
#[test]
fn a_kustomization_a_budget_stops_is_summarised_as_stopped_in_every_format() {
    let dir = repo();
    nested(dir.path(), 150);
    let root = dir.path().to_str().unwrap();
    let stopped = "1 stopped: nesting budget of 100 levels reached";
    for format in ["human", "concise", "json", "yaml", "sarif", "markdown"] {
        let run = limited::run_linter(&["-o", format, "--color", "never", root]);
        // Markdown escapes the colon.
        let out = run.stdout_text().replace("\\:", ":");
        assert!(out.contains(stopped), "{format}:\n{out}\n{}", run.stderr);
        assert!(!out.contains("build failed"), "{format}:\n{out}");
    }
    let inv = limited::inventory(dir.path());
    let incomplete = &inv.json["coverage"]["fluxKustomizationsIncomplete"];
    assert_eq!(
        incomplete[0]["outcome"], "stopped: nesting budget of 100 levels reached",
        "{incomplete:#}"
    );
}

#[test]
fn a_chain_of_components_each_applied_twice_stops_at_the_build_budget() {
    let dir = repo();
    let root = dir.path();
    component_chain(root);
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

/// Components `chain/c0` .. `chain/c40`, each listing the next twice: a
/// component is applied each time it is listed (it changes what the
/// listing kustomization has so far), so nothing can be reused and c0
/// costs 2^41 directories.
fn component_chain(root: &Path) {
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
}

/// Builds are keyed by path, so each Flux Kustomization over its own small
/// directory that lists one costly component chain spends the whole
/// per-build budget: 300 of them (under 100 KB) took minutes of CPU
/// before the load's builds shared one budget.
#[test]
fn many_builds_listing_one_costly_chain_share_one_budget() {
    let dir = repo();
    let root = dir.path();
    component_chain(root);
    for i in 0..300 {
        write(
            root,
            &format!("many/z{i:03}/kustomization.yaml"),
            "components:\n  - ../../chain/c0\n",
        );
        flux_ks(root, &format!("z{i:03}"), &format!("./many/z{i:03}"));
    }
    assert_small(root);
    let inv = limited::inventory(root);
    inv.assert_loaded(&["survivor"]);
    let incomplete = inv.json["coverage"]["fluxKustomizationsIncomplete"]
        .as_array()
        .unwrap();
    let spent = incomplete
        .iter()
        .filter(|i| {
            i["why"].as_str().unwrap().contains(
                "went through more than 100000 kustomization and component directories in all",
            )
        })
        .count();
    // Each build stops at its own budget (10,000) until the shared one
    // (100,000) is spent: the first ten or so, then all the rest.
    assert!(
        spent >= 280,
        "{spent} of {} incomplete: {incomplete:#?}",
        incomplete.len()
    );
}

/// An app `app/` whose kustomization holds `extra`, over a ConfigMap
/// `doubled`, reached from Flux.
fn app(root: &Path, extra: &str) {
    write(
        root,
        "app/kustomization.yaml",
        &format!("resources:\n  - cm.yaml\n{extra}"),
    );
    write(
        root,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doubled, namespace: default}\ndata: {a: xxxxxxxxxxxxxxxx}\n",
    );
    flux_ks(root, "app", "./app");
}

#[test]
fn json_patch_copies_that_double_the_object_stop_at_the_object_budget() {
    let dir = repo();
    // Each copy to a new key doubles `data`.
    let ops: String = (0..60)
        .map(|i| format!("      - {{op: copy, from: /data, path: /data/c{i}}}\n"))
        .collect();
    app(
        dir.path(),
        &format!("patches:\n  - target: {{kind: ConfigMap}}\n    patch: |\n{ops}"),
    );
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    let why = inv.why_incomplete();
    assert!(
        why.starts_with("app/kustomization.yaml:")
            && why.contains(
                "patch output budget exceeded: the object would have more than 1000000 nodes"
            ),
        "{why}"
    );
}

#[test]
fn replacements_that_copy_an_object_into_itself_stop_at_the_object_budget() {
    let dir = repo();
    let list: String = (0..60)
        .map(|i| format!("  - source: {{kind: ConfigMap, name: doubled, fieldPath: data}}\n    targets:\n      - select: {{kind: ConfigMap, name: doubled}}\n        fieldPaths: [data.c{i}]\n        options: {{create: true}}\n"))
        .collect();
    app(dir.path(), &format!("replacements:\n{list}"));
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    let why = inv.why_incomplete();
    assert!(
        why.starts_with("app/kustomization.yaml:")
            && why.contains(
                "replacement output budget exceeded: ConfigMap/default/doubled would have more than"
            ),
        "{why}"
    );
}

#[test]
fn many_values_from_over_a_large_values_file_merge_in_linear_time() {
    let dir = repo();
    let root = dir.path();
    let keys: String = (0..5000).map(|i| format!("    k{i}: v{i}\n")).collect();
    let mut entries = String::new();
    for _ in 0..200 {
        entries.push_str("    - {kind: ConfigMap, name: big}\n");
    }
    entries.push_str("    - {kind: ConfigMap, name: last}\n");
    write(
        root,
        "good/release.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, namespace: default}}\ndata:\n  values.yaml: |\n{keys}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: last, namespace: default}}\ndata:\n  values.yaml: |\n    k1: last\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: merged, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: app, sourceRef: {{kind: HelmRepository, name: charts}}}}\n  valuesFrom:\n{entries}"
        ),
    );
    assert_small(root);
    let inv = limited::inventory(root);
    inv.assert_loaded(&["survivor"]);
    let release = inv.json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "merged")
        .expect("the HelmRelease is loaded");
    let values = &release["helm"]["values"];
    assert_eq!(
        values.as_object().map(|m| m.len()),
        Some(5000),
        "{:#}",
        release["helm"]
    );
    assert_eq!(values["k4999"], "v4999");
    assert_eq!(values["k1"], "last", "the last valuesFrom wins");
}

/// A user rule with the metadata every rule needs and `matches` as its
/// `match:` list, in a fresh rules directory.
fn rule_dir(matches: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "hostile.yaml",
        &format!(
            "id: hostile-rule\ntitle: A rule written to make evaluation explode\nseverity: info\ncategory: performance\nmessage: >-\n  {{object.id}} matched\nwhat: >-\n  Finds ConfigMaps.\nwhy: >-\n  To test budgets.\nexample: |\n  data: {{}}\nuseInstead: |\n  data: {{}}\nremediation: >-\n  Remove it.\nreferences:\n  - https://www.rfc-editor.org/rfc/rfc9535\nmatch:\n{matches}"
        ),
    );
    dir
}

fn lint_with_rules(root: &Path, rules: &Path) -> limited::Run {
    limited::run_linter(&[
        root.to_str().unwrap(),
        "--rules",
        rules.to_str().unwrap(),
        "--output",
        "json",
    ])
}

#[test]
fn an_invalid_or_exploding_jsonpath_in_a_rule_is_an_error_at_its_line() {
    let dir = repo();
    for (path, why) in [
        ("$.data[?", "JSONPath $.data[?"),
        ("$..*..*..*", "3 descendant segments"),
        ("$[?@..a][?@..b]", "2 descendant segments"),
        // keys^3.7 on main: 300 keys took hours.
        ("$.data[?$.data[?$.data[?$.data[*]]]]", "absolute query"),
        // Never matched, so `is: unset` held on every object.
        ("$.data[?search(@, '[')]", "not a valid regular expression"),
    ] {
        let rules = rule_dir(&format!(
            "  - object:\n      group: \"\"\n      kind: ConfigMap\n      where: [{{path: \"{path}\", is: unset}}]\n"
        ));
        let run = lint_with_rules(dir.path(), rules.path());
        assert_eq!(run.code(), Some(2), "{path}: {}", run.stderr);
        // Line 23 is the `where:` line.
        let at = format!("{}:23:", rules.path().join("hostile.yaml").display());
        assert!(
            run.stderr.contains(&at) && run.stderr.contains(why),
            "{path}: {}",
            run.stderr
        );
        assert!(run.stdout.is_empty(), "no report for a broken rule set");
    }
}

/// A `matches` pattern that does not compile, or compiles past the
/// `regex` crate's size limit, is an error at its line and column in the
/// rule file (it was at 1:1), in one line however long the pattern.
#[test]
fn a_rule_regex_over_the_size_limit_or_invalid_is_an_error_at_its_line() {
    let dir = repo();
    for (pattern, why) in [
        ("\\\\w{1000}{1000}".to_string(), "exceeds size limit"),
        (format!("({}", "a".repeat(100_000)), "unclosed group"),
    ] {
        let rules = rule_dir(&format!(
            "  - object:\n      group: \"\"\n      kind: ConfigMap\n      where:\n        - path: $.data.a\n          is: {{matches: \"{pattern}\"}}\n"
        ));
        let run = lint_with_rules(dir.path(), rules.path());
        assert_eq!(run.code(), Some(2), "{why}: {}", run.stderr);
        // Line 25 is the `is:` line.
        let at = format!("{}:25:", rules.path().join("hostile.yaml").display());
        let line = run.stderr.lines().find(|l| l.contains(&at));
        assert!(
            line.is_some_and(|l| l.contains(why) && l.len() < 400),
            "{why}: {}",
            &run.stderr[..run.stderr.len().min(2000)]
        );
    }
}

#[test]
fn a_rule_whose_object_steps_multiply_stops_at_the_work_budget() {
    let dir = repo();
    let many: String = (0..300)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: default}}\n"))
        .collect();
    write(dir.path(), "good/many.yaml", &many);
    // 300^4 candidate combinations.
    let step = "  - object:\n      group: \"\"\n      kind: ConfigMap\n      where: [{path: \"$.metadata.name\", is: set}]\n";
    let rules = rule_dir(&step.repeat(4));
    let run = lint_with_rules(dir.path(), rules.path());
    // Info findings only: exit 0 (a budget hit is a warning, not a failure).
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "rule hostile-rule: rule match budget exceeded: evaluation stopped at 10000 matches"
        ),
        "{}",
        run.stderr
    );
    // What was found before the budget is reported.
    let report = run.report();
    let found = report
        .rules()
        .iter()
        .filter(|r| **r == "hostile-rule")
        .count();
    assert!(found > 0, "{report:#?}");
}

/// A finding on a Secret's name, with its `stringData` on the next line:
/// the snippet's context line would show the value.
#[test]
fn secret_values_next_to_a_finding_appear_in_no_output_format() {
    const SECRET: &str = "Zq9-known-secret-Xv";
    let dir = repo();
    write(
        dir.path(),
        "good/secret.yaml",
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: db-app, namespace: db}}\nstringData: {{password: {SECRET}, uri: \"postgres://app:{SECRET}@db-rw\"}}\ndata:\n  token: {SECRET}\n"
        ),
    );
    // The kind spelled with an escape: the text never says "Secret".
    write(
        dir.path(),
        "good/escaped.yaml",
        &format!(
            "apiVersion: v1\nkind: \"\\x53ecret\"\nmetadata: {{name: escaped, namespace: db}}\nstringData: {{password: {SECRET}}}\n"
        ),
    );
    let rules = rule_dir(
        "  - object:\n      group: \"\"\n      kind: Secret\n      where: [{path: \"$.metadata.name\", is: set}]\n",
    );
    for format in [
        "human", "json", "yaml", "concise", "sarif", "github", "markdown",
    ] {
        let run = limited::run_linter(&[
            dir.path().to_str().unwrap(),
            "--rules",
            rules.path().to_str().unwrap(),
            "--output",
            format,
        ]);
        let out = format!("{}{}", run.stdout_text(), run.stderr);
        assert!(!out.contains(SECRET), "{format} shows the secret:\n{out}");
        assert!(out.contains("hostile-rule"), "{format}: no finding:\n{out}");
        if format == "human" {
            // The snippet is there, the next line masked as context.
            assert!(
                out.contains("stringData: {password: *******************, uri:"),
                "{out}"
            );
        }
    }
    // The inventory shows each Secret's keys, not its values.
    let inv = limited::run_linter(&["inventory", dir.path().to_str().unwrap(), "-o", "json"]);
    let out = format!("{}{}", inv.stdout_text(), inv.stderr);
    assert!(!out.contains(SECRET), "inventory shows the secret:\n{out}");
    assert!(
        out.contains("\"password\": \"<redacted: 19 bytes>\""),
        "{out}"
    );
}

/// A resource path of 600 KB (`a/a/a/…`): the disk's directory cache
/// noted every prefix of it, a copy of the path per component (2.5 GB,
/// killed after minutes). The build fails at the entry, the rest is linted.
#[test]
fn a_resource_path_of_many_components_fails_its_build_alone() {
    let dir = repo();
    write(
        dir.path(),
        "long/kustomization.yaml",
        &format!(
            "resources:\n  - cm.yaml\n  - {}x.yaml\n",
            "a/".repeat(300_000)
        ),
    );
    write(
        dir.path(),
        "long/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: long-cm, namespace: default}\n",
    );
    flux_ks(dir.path(), "long", "./long");
    assert_small(dir.path());
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    let why = inv.why_incomplete();
    assert!(
        why.starts_with("long/kustomization.yaml:3:5: 'long/a/a/a/"),
        "{}",
        &why[..200]
    );
}

/// One 400 KB file listed under 2,000 keys of a configMapGenerator: 800
/// MB of generated data (30,000 keys made 12 GB and aborted), and a key
/// check per key over all the keys before it. The build stops at its
/// generator byte budget, at the entry that crosses it.
#[test]
fn a_generator_listing_one_file_many_times_stops_at_its_byte_budget() {
    let dir = repo();
    write(dir.path(), "gen/big.txt", &"x".repeat(400_000));
    let entries: String = (0..2_000)
        .map(|i| format!("      - k{i}=big.txt\n"))
        .collect();
    write(
        dir.path(),
        "gen/kustomization.yaml",
        &format!("configMapGenerator:\n  - name: bomb\n    files:\n{entries}"),
    );
    flux_ks(dir.path(), "gen", "./gen");
    assert_small(dir.path());
    let inv = limited::inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    let why = inv.why_incomplete();
    // 32 MiB / 400,000 bytes: the 84th entry (line 4 + 83) crosses it.
    assert_eq!(
        why,
        "gen/kustomization.yaml:87:9: kustomize build budget exceeded: generators of this build read more than 33554432 bytes"
    );
}

/// Objects multiplied from a small repository: a directory of 30
/// ConfigMaps listed by overlays that each rename them (one build
/// copies them into each: two levels of 100 overlays over 5,000 made 50
/// million objects from 1 MB), and Flux Kustomizations that each render
/// a copy (50 over 5,000: 250,000 objects, 14 s, 640 MB). Each stops at
/// its budget with an issue at the entry or Flux Kustomization that
/// crosses it; here with small budgets, to see them hold.
#[test]
fn objects_multiplied_by_overlays_or_flux_kustomizations_stop_at_their_budgets() {
    use homelab_lint::source::Files;
    use homelab_lint::source::Limits;
    use homelab_lint::source::repo;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let cms: String = (0..30)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}}}\n"))
        .collect();
    write(root, "shared/cms.yaml", &cms);
    write(root, "shared/kustomization.yaml", "resources: [cms.yaml]\n");
    for i in 0..4 {
        write(
            root,
            &format!("overlays/o{i}/kustomization.yaml"),
            &format!("resources: [../../shared]\nnamePrefix: p{i}-\n"),
        );
    }
    write(
        root,
        "top/kustomization.yaml",
        "resources: [../overlays/o0, ../overlays/o1, ../overlays/o2, ../overlays/o3]\n",
    );
    flux_ks(root, "top", "./top");
    for i in 0..4 {
        write(
            root,
            &format!("flux/copy{i}.yaml"),
            &format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: copy{i}, namespace: flux-system}}\nspec:\n  path: ./shared\n  targetNamespace: ns{i}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
            ),
        );
    }
    let limits = Limits {
        kustomize: homelab_lint::source::kustomize::Limits {
            max_objects: 100,
            ..Default::default()
        },
        flux: homelab_lint::source::flux::Limits {
            max_rendered_objects: 100,
            ..Default::default()
        },
        ..Limits::default()
    };
    let loaded = repo::load_files(Files::new(root, limits));
    let issues: Vec<String> = loaded.issues.iter().map(|i| i.to_string()).collect();
    assert!(
        issues
            .iter()
            .any(|i| i.starts_with("top/kustomization.yaml:1:")
                && i.contains("more than 100 objects gathered")),
        "{issues:#?}"
    );
    let over: Vec<&String> = issues
        .iter()
        .filter(|i| i.contains("render more than 100 objects in all"))
        .collect();
    assert_eq!(over.len(), 1, "{issues:#?}");
    assert!(over[0].starts_with("flux/copy3.yaml:1:"), "{over:?}");
    // Counted as stopped by that budget, not as failed.
    let copy3 = loaded.flux.iter().find(|r| r.name == "copy3").unwrap();
    assert_eq!(
        copy3.outcome.key(),
        "stopped: render budget of 100 objects reached"
    );
    assert!(
        loaded
            .coverage
            .summary()
            .contains("1 stopped: render budget of 100 objects reached"),
        "{}",
        loaded.coverage.summary()
    );
    // The three copies before it are rendered.
    let copies = loaded.objects.iter().filter(|o| o.name() == "cm0").count();
    assert!(copies >= 3, "{copies}");
}

/// 3,000 Flux Kustomizations, each its own name, over one directory of
/// 500 ConfigMaps (630 KB): every one looked through all that the ones
/// before it rendered for its own document (3,000 roots over up to
/// 500,000 objects: 51 s, 646 MB on a release build), and each past the
/// render budget copied the build and ran its steps before being
/// refused. The directory is built once; the first 1,000 render, the
/// rest stop at the budget before any copy, each counted as stopped.
#[test]
fn many_flux_kustomizations_over_one_directory_share_its_build_and_stop_at_the_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let cms: String = (0..500)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: default}}\ndata: {{a: b}}\n"))
        .collect();
    write(root, "apps/cms.yaml", &cms);
    write(root, "apps/kustomization.yaml", "resources: [cms.yaml]\n");
    let kss: String = (0..3000)
        .map(|i| format!("---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: k{i}, namespace: flux-system}}\nspec:\n  path: ./apps\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"))
        .collect();
    write(root, "flux/ks.yaml", &kss);
    assert_small(root);
    let run = limited::run_linter(&["-o", "json", root.to_str().unwrap()]);
    assert!(matches!(run.code(), Some(0 | 1)), "{}", run.stderr);
    let coverage = &run.json()["coverage"];
    let summary = coverage["summary"].as_str().unwrap();
    assert!(
        summary.contains(
            "3000 Flux Kustomizations (2000 stopped: render budget of 500000 objects reached)"
        ),
        "{summary}"
    );
    let stopped = &coverage["fluxKustomizationsIncomplete"][0];
    assert_eq!(stopped["kustomization"], "flux-system/k1000", "{stopped:#}");
}

/// 1,200 HelmReleases whose `valuesFrom` entries each set one 400 KB
/// ConfigMap key at a `targetPath` (850 KB of input): each entry copied
/// the value whole, outside the budget on what valuesFrom merges copy
/// (2,000 releases over a 1 MB key reached 2.2 GB). Such copies spend the
/// same budget; past it, an issue at the entry.
#[test]
fn many_releases_setting_one_large_key_at_a_target_path_share_the_values_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let value = "v".repeat(400 * 1024);
    let entries: String = (0..4)
        .map(|i| format!("    - {{kind: ConfigMap, name: big, targetPath: t{i}}}\n"))
        .collect();
    let releases: String = (0..1200)
        .map(|i| format!("---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: r{i}, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: app, sourceRef: {{kind: HelmRepository, name: charts}}}}\n  valuesFrom:\n{entries}"))
        .collect();
    write(
        root,
        "apps/big.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, namespace: default}}\ndata:\n  values.yaml: {value}\n"
        ),
    );
    write(root, "apps/releases.yaml", &releases);
    assert_small(root);
    let run = limited::run_linter(&["-o", "json", root.to_str().unwrap()]);
    assert!(matches!(run.code(), Some(0 | 1)), "{}", run.stderr);
    assert!(
        run.stderr.lines().any(|l| l.contains("apps/releases.yaml:")
            && l.contains("Helm values budget exceeded")),
        "{}",
        &run.stderr[..run.stderr.len().min(4000)]
    );
}

/// A HelmRelease whose `valuesFrom` entries each set `kN[65536]`: every
/// one made a list of 65,537 items (1,000 entries, 74 KB, aborted at
/// 2.4 GB). The items the targetPaths of one release may create are
/// bounded, within the harness's memory limit.
#[test]
fn target_path_list_indexes_are_bounded_per_release() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let entries: String = (0..1000)
        .map(|i| {
            format!(
                "    - {{kind: ConfigMap, name: vals, valuesKey: v, targetPath: \"k{i}[65536]\"}}\n"
            )
        })
        .collect();
    write(
        root,
        "apps/app.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: vals, namespace: default}}\ndata:\n  v: x\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: app, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: authentik, version: 2025.10.0, sourceRef: {{kind: HelmRepository, name: authentik}}}}\n  valuesFrom:\n{entries}"
        ),
    );
    // The inventory resolves every HelmRelease's values.
    let inv = limited::inventory(root);
    inv.assert_loaded(&["vals", "app"]);
}

/// `valuesFrom` targetPaths 100,000 steps deep (`a.a.a…`, 200 KB, and
/// `a[0][0]…`, 300 KB): each made values nested that deep, and the
/// recursion that walks them overflowed the stack (abort, exit 134).
/// Past Helm's thirty nested names helm-controller fails the path, and
/// past 256 steps (list indexes, which Helm does not bound) the linter
/// does not follow it; each is an issue at its entry.
#[test]
fn target_paths_nested_past_the_limits_are_issues_not_a_stack_overflow() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let names = vec!["a"; 100_000].join(".");
    let lists = format!("a{}", "[0]".repeat(100_000));
    write(
        root,
        "apps/app.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: vals, namespace: default}}\ndata:\n  v: x\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: app, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: authentik, version: 2025.10.0, sourceRef: {{kind: HelmRepository, name: authentik}}}}\n  valuesFrom:\n    - {{kind: ConfigMap, name: vals, valuesKey: v, targetPath: {names}}}\n    - {{kind: ConfigMap, name: vals, valuesKey: v, targetPath: \"{lists}\"}}\n    - {{kind: ConfigMap, name: vals, valuesKey: v, targetPath: ok.path}}\n"
        ),
    );
    let inv = limited::inventory(root);
    inv.assert_loaded(&["vals", "app"]);
    let release = inv.json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "app")
        .unwrap();
    assert_eq!(
        release["helm"]["values"],
        serde_json::json!({"ok": {"path": "x"}})
    );
    let issues: Vec<&str> = release["helm"]["issues"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["message"].as_str())
        .collect();
    assert!(
        issues.len() == 2
            && issues[0].contains("maximum supported nested level of 30: helm-controller fails")
            && issues[1].contains("more than 256 keys and list indexes"),
        "{issues:#?}"
    );
}

/// A 1 MB `commonAnnotations` value over 3,000 ConfigMaps (1.2 MB of
/// input before it): each object got a copy (2,000 reached 2.1 GB, 3,000
/// aborted). The bytes transformers may add in a load are bounded; past
/// them the build fails with the reason, and the run goes on.
#[test]
fn a_common_annotation_copied_into_every_object_is_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let cms: String = (0..3000)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: default}}\n"))
        .collect();
    write(root, "apps/cms.yaml", &cms);
    write(
        root,
        "apps/kustomization.yaml",
        &format!(
            "resources: [cms.yaml]\ncommonAnnotations:\n  big: \"{}\"\n",
            "x".repeat(1 << 20)
        ),
    );
    write(
        root,
        "flux/apps.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    let inv = limited::inventory(root);
    inv.issue(
        "apps/kustomization.yaml:3:",
        "kustomize output budget exceeded: the patches, replacements and transformers of this repository would add more than 67108864 bytes",
    );
}

/// A FluxInstance in a self-applying root's tree syncs a directory of
/// 2,000 Flux Kustomizations, each over its own ConfigMap; the tree holds
/// 5,000 more (1 MB in all). The FluxInstance's root joins that tree
/// (one cluster), and each object it renders is checked against the
/// tree's: that check made a map of the whole tree for each Kustomization
/// rendered (68 s on a debug build), and its set-up scanned the whole
/// output for each joining root. The tree's index is made once and kept
/// up to date: well within a CPU budget a twentieth of that.
#[test]
fn a_root_that_joins_an_earlier_tree_checks_its_renders_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(
        root,
        "flux/config/cluster.yaml",
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: https://github.com/example/home-ops, ref: {branch: main}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: cluster, namespace: flux-system}\nspec:\n  path: ./flux\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    write(
        root,
        "flux/cluster/ks.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: cluster-apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    write(
        root,
        "apps/flux-instance.yaml",
        "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec:\n  distribution: {version: 2.x}\n  sync:\n    kind: GitRepository\n    url: https://github.com/example/home-ops\n    ref: refs/heads/main\n    path: other\n",
    );
    let cms: String = (0..5000)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{i}, namespace: default}}\ndata: {{a: b}}\n"))
        .collect();
    write(root, "apps/cms.yaml", &cms);
    let kss: String = (0..2000)
        .map(|i| format!("---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: o{i}, namespace: flux-system}}\nspec:\n  path: ./o/o{i}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"))
        .collect();
    write(root, "other/ks.yaml", &kss);
    for i in 0..2000 {
        write(
            root,
            &format!("o/o{i}/cm.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: oc{i}, namespace: default}}\ndata: {{a: b}}\n"
            ),
        );
    }
    let mut cmd = limited::linter();
    cmd.args(["-o", "json", root.to_str().unwrap()]);
    let run = limited::run_limited(
        cmd,
        limited::Limits {
            cpu_seconds: 20,
            ..Default::default()
        },
    );
    assert!(matches!(run.code(), Some(0 | 1)), "{}", run.stderr);
    let summary = run.json()["coverage"]["summary"]
        .as_str()
        .unwrap()
        .to_string();
    // Every file rendered once, as one cluster: the tree's Kustomizations
    // and the 2,000 the joining root applies.
    assert!(
        summary.starts_with("2005 of 2005 manifest files rendered through Flux")
            && summary.ends_with("2003 Flux Kustomizations"),
        "{summary}"
    );
}

/// git in `dir` with `input` on stdin: its output, trimmed.
fn git_out(dir: &Path, args: &[&str], input: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=a", "-c", "user.email=a@example.com"])
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// With `--remote`, a remote git folder whose commit names 10^8 files
/// in a few hundred bytes (one tree listed ten times, eight levels
/// deep): `git checkout` builds an index entry per file before writing
/// any (it grew by 28 MB a second until the time budget, 120 s by
/// default, ended it). The commit's listing is read first and refused
/// past 100,000 files, with the reason at the entry; the rest is linted.
#[test]
fn a_remote_folder_of_a_hundred_million_files_is_refused_before_its_checkout() {
    let tmp = tempfile::tempdir().unwrap();
    let bare = tmp.path().join("bomb.git");
    std::fs::create_dir_all(&bare).unwrap();
    git_out(&bare, &["init", "-q", "--bare"], "");
    let blob = git_out(&bare, &["hash-object", "-w", "--stdin"], "x\n");
    let mut tree = git_out(
        &bare,
        &["mktree"],
        &(0..10)
            .map(|i| format!("100644 blob {blob}\tf{i}\n"))
            .collect::<String>(),
    );
    for _ in 0..7 {
        let entries: String = (0..10)
            .map(|i| format!("040000 tree {tree}\td{i}\n"))
            .collect();
        tree = git_out(&bare, &["mktree"], &entries);
    }
    let commit = git_out(&bare, &["commit-tree", &tree, "-m", "bomb"], "");
    git_out(&bare, &["tag", "v1", &commit], "");
    let dir = repo();
    let root = dir.path();
    write(
        root,
        "remote/kustomization.yaml",
        &format!("resources:\n  - file://{}//d0?ref=v1\n", bare.display()),
    );
    flux_ks(root, "remote", "./remote");
    let home = tmp.path().join("home");
    let mut cmd = limited::linter();
    cmd.args(["inventory", "--remote", "--remote-budget", "60s"])
        .arg("--remote-cache")
        .arg(tmp.path().join("cache"))
        .arg(root)
        .env("HOME", &home)
        .env("HOMELAB_LINT_REMOTE_LOCAL", "1");
    let run = limited::run_limited(cmd, limited::Limits::default());
    assert!(run.status.success(), "{}", run.stderr);
    assert!(
        run.stderr
            .lines()
            .any(|l| l.starts_with("warning: remote/kustomization.yaml:2:5:")
                && l.contains("the checkout would hold more than 100000 files")),
        "{}",
        run.stderr
    );
    let names: Vec<String> = run.json()["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["name"].as_str().map(str::to_string))
        .collect();
    assert!(names.iter().any(|n| n == "survivor"), "{names:?}");
}
