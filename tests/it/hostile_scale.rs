//! Hostile repositories whose cost grows with what they repeat: one
//! large values key named by many `valuesFrom` entries, and many small
//! objects listed by `inventory`. Each runs the real binary under the
//! limits of tests/support/limited.rs.

use crate::support;

use std::path::Path;

use support::limited;

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The `helm` entry of HelmRelease `name` in the inventory.
fn helm_of<'i>(inv: &'i limited::Inventory, name: &str) -> &'i serde_json::Value {
    let objects = inv.json["objects"].as_array().unwrap();
    let release = objects.iter().find(|o| o["name"] == name);
    &release.expect("the HelmRelease is loaded")["helm"]
}

/// 400 `valuesFrom` entries naming one 6 MB values key: each merge
/// copied the parsed document again (200 over 12 MB took 89 s of CPU on
/// a debug build; this, past the harness's 60). The document is parsed
/// once per (object, key), and the merges share the run's output budget
/// (64 MiB): the twelfth stops with an issue at its entry that the
/// inventory shows, and so does every one after it; the values hold
/// what the first eleven merged.
#[test]
fn values_from_naming_one_large_key_many_times_share_the_output_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let value = "v".repeat(100);
    let keys: String = (0..55_000)
        .map(|i| format!("    k{i}: {value}\n"))
        .collect();
    let entries = "    - {kind: ConfigMap, name: big}\n".repeat(400);
    write(
        root,
        "r/release.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, namespace: default}}\ndata:\n  values.yaml: |\n{keys}---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: merged, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: app, sourceRef: {{kind: HelmRepository, name: charts}}}}\n  valuesFrom:\n{entries}"
        ),
    );
    let inv = limited::inventory(root);
    let helm = helm_of(&inv, "merged");
    assert_eq!(helm["values"].as_object().map(|m| m.len()), Some(55_000));
    let issues = helm["issues"].as_array().expect("the budget is said");
    // The first entry: 5 lines before the keys, 8 after them.
    let first = 55_000 + 14;
    assert_eq!(issues.len(), 389, "{:#}", issues[0]);
    assert_eq!(issues[0]["path"], "r/release.yaml");
    assert_eq!(issues[0]["line"], first + 11);
    assert!(
        issues[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("Helm values budget exceeded: the valuesFrom merges of this repository would copy more than 67108864 bytes"),
        "{:#}",
        issues[0]
    );
}

/// `inventory` over 40,000 small ConfigMaps (4.4 MB in 400 files), under
/// an address-space limit of 128 MB plus 100 bytes per input byte. It
/// needs about 320 MB of address space (108 MB resident, 19 bytes per
/// input byte over the 57 MB an empty repository takes); when it held
/// one JSON tree of every object it took 73 bytes of resident memory per
/// input byte (1,000,000 ConfigMaps, 64 MB, held 5 GB), which is past
/// this limit.
#[test]
fn inventory_memory_grows_with_the_input_within_a_bound_per_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut bytes = 0;
    for f in 0..400 {
        let cms: String = (0..100)
            .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm{f}-{i}, namespace: default}}\ndata: {{a: xxxxxxxxxxxxxxxx}}\n"))
            .collect();
        bytes += cms.len() as u64;
        write(root, &format!("apps/cm{f}.yaml"), &cms);
    }
    let mut cmd = limited::linter();
    cmd.args(["inventory", root.to_str().unwrap()]);
    let limits = limited::Limits {
        address_space: (128 << 20) + 100 * bytes,
        ..limited::Limits::default()
    };
    let run = limited::run_limited(cmd, limits);
    assert!(run.status.success(), "{:?}\n{}", run.status, run.stderr);
    let json = run.json();
    assert_eq!(json["objects"].as_array().map(Vec::len), Some(40_000));
}

/// A billion laughs in a values document a `valuesFrom` entry names: the
/// document stops at the alias budget, and the release's values are
/// empty. The reason was collected and shown nowhere, so the release
/// looked as if it set nothing; both the lint and the inventory say it.
#[test]
fn values_that_stop_at_the_alias_budget_are_an_issue_the_user_sees() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut laughs =
        String::from("    a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        laughs.push_str(&format!("    a{i}: &a{i} [{refs}]\n"));
    }
    write(
        root,
        "r/release.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: laughs, namespace: default}}\ndata:\n  values.yaml: |\n{laughs}---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: app, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: app, sourceRef: {{kind: HelmRepository, name: charts}}}}\n  valuesFrom:\n    - {{kind: ConfigMap, name: laughs}}\n"
        ),
    );
    let inv = limited::inventory(root);
    let issues = &helm_of(&inv, "app")["issues"];
    let message = issues[0]["message"].as_str().unwrap_or_default();
    assert!(
        issues[0]["path"] == "r/release.yaml"
            && message.starts_with("values are not valid YAML: alias expansion exceeds the budget"),
        "{issues:#}"
    );
    let run = limited::run_linter(&["--color", "never", root.to_str().unwrap()]);
    assert!(
        run.stderr.contains("r/release.yaml:")
            && run.stderr.contains("alias expansion exceeds the budget"),
        "{}",
        run.stderr
    );
}

/// A chain of loose Flux Kustomizations, each rendered only because one
/// before it waits for it (`dependsOn`): each took one round, and each
/// round read the whole output and every loose Kustomization again, so
/// 3,000 (1.2 MB) took 54 s of a debug build and 5,000 passed the
/// harness's 60 s of CPU. Each round now reads what it added.
#[test]
fn a_chain_of_loose_kustomizations_each_awaited_by_the_last_renders_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let ks = |name: &str, path: &str, waits: Option<String>| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n{}",
            waits.map_or(String::new(), |w| format!("  dependsOn: [{{name: {w}}}]\n"))
        )
    };
    write(
        root,
        "clusters/home/flux-system/gotk-sync.yaml",
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {{name: flux-system, namespace: flux-system}}\nspec: {{url: 'https://example.com/x', interval: 1h}}\n---\n{}",
            ks("flux-system", "./clusters/home", None)
        ),
    );
    write(
        root,
        "clusters/home/flux-system/kustomization.yaml",
        "resources: [gotk-sync.yaml]\n",
    );
    write(
        root,
        "clusters/home/kustomization.yaml",
        "resources: [flux-system, k0.yaml]\n",
    );
    write(
        root,
        "clusters/home/k0.yaml",
        &ks("k0", "./empty", Some("l0".into())),
    );
    write(
        root,
        "empty/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: e, namespace: default}\n",
    );
    const N: usize = 5_000;
    for i in 0..N {
        write(
            root,
            &format!("loose/l{i}.yaml"),
            &ks(&format!("l{i}"), &format!("./out/{i}"), None),
        );
        write(
            root,
            &format!("out/{i}/k.yaml"),
            &ks(
                &format!("k{}", i + 1),
                "./empty",
                Some(format!("l{}", i + 1)),
            ),
        );
    }
    let run = limited::run_linter(&["--no-probe", "-o", "concise", root.to_str().unwrap()]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    // Every loose one was rendered, the last one's wait unanswered.
    let out = run.stdout_text();
    assert!(
        out.contains(&format!("{} Flux Kustomizations", 2 * N + 2)),
        "{out}"
    );
    assert!(
        out.contains(&format!("{0} of {0} manifest files rendered", N + 3)),
        "{out}"
    );
}

/// A 12 MB file of bare `---` lines: four million empty documents, none
/// of them an object. The block scanner held three events of 88 bytes
/// for every four bytes until the tree builder dropped them, 68 bytes of
/// resident memory per input byte (10 MB took 680 MB); it now forgets an
/// empty document when it closes one, and the file costs a few bytes per
/// byte, as one comment line would.
#[test]
fn a_file_of_empty_documents_costs_memory_in_line_with_its_size() {
    one_file_beside_a_config_map("---\n".repeat(3 << 20), 30);
}

/// A 12 MB file of a million and a half small documents (`a: b`), none
/// an object. The block scanner handed its events over only once it had
/// read the whole file: three quarters of an event of 96 bytes per input
/// byte, in a list that doubled past 2 GB (a 16 MB file aborted under
/// 4 GB; this one under 3.2 GB). It now hands them over a document at a
/// time, and the file costs what its trees do.
#[test]
fn a_file_of_many_small_documents_is_scanned_a_document_at_a_time() {
    one_file_beside_a_config_map("---\na: b\n".repeat(1_500_000), 80);
}

/// 30,000 Postgres Deployments (9.7 MB), each mounting a claim the
/// repository does not hold. Each database's storage asked two
/// questions that scanned every object: which claim is bound to it
/// (`of_kind` over the whole model) and whether some claim is named so
/// unless a Flux variable is set: 42 s of a release build, past the 20 s
/// of CPU given here. Both are now found through indexes, by kind and by
/// the name a variable's default gives (0.7 s).
#[test]
fn workloads_whose_claims_are_missing_are_checked_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    const N: usize = 30_000;
    let deployments: String = (0..N)
        .map(|i| {
            format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n      - {{name: c, image: 'postgres:16', volumeMounts: [{{name: data, mountPath: /var/lib/postgresql/data}}]}}\n      volumes:\n      - {{name: data, persistentVolumeClaim: {{claimName: missing{i}}}}}\n"
            )
        })
        .collect();
    write(root, "apps/deployments.yaml", &deployments);
    let mut cmd = limited::linter();
    cmd.args(["--no-probe", "-v", "-o", "concise", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(20));
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    let missing = run
        .stderr
        .lines()
        .filter(|l| l.ends_with("is not in the repository in namespace default"))
        .count();
    assert_eq!(missing, N, "{}", run.stderr);
}

/// The default limits with `seconds` of CPU, which a release build
/// passed on these cases before their fix.
fn cpu_seconds(seconds: u64) -> limited::Limits {
    limited::Limits {
        cpu_seconds: seconds,
        ..limited::Limits::default()
    }
}

/// A HelmRelease whose 20,000 `valuesFrom` entries each name one key of
/// a ConfigMap of 20,000 keys (1.5 MB; each sets one value, so that the
/// merges stay small), and an Authentik Deployment
/// whose 6,000 `env` variables each read one key of another (0.6 MB):
/// each key read every key of its ConfigMap to find itself, 46 s for the
/// first in a release build and past 100 s for 20,000 variables. Each
/// object's keys are now read once.
#[test]
fn many_references_to_the_keys_of_one_config_map_read_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let cm = |name: &str, n: usize, value: &dyn Fn(usize) -> String| {
        let keys: String = (0..n).map(|i| format!("  k{i}: {}\n", value(i))).collect();
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\ndata:\n{keys}"
        )
    };
    const VALUES: usize = 20_000;
    let entries: String = (0..VALUES)
        .map(|i| format!("    - {{kind: ConfigMap, name: values, valuesKey: k{i}}}\n"))
        .collect();
    write(
        root,
        "apps/release.yaml",
        &format!(
            "{}---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: merged, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: app, sourceRef: {{kind: HelmRepository, name: charts}}}}\n  valuesFrom:\n{entries}",
            cm("values", VALUES, &|i| format!("'last: {i}'"))
        ),
    );
    const ENV: usize = 6_000;
    let env: String = (0..ENV)
        .map(|i| format!("        - {{name: E{i}, valueFrom: {{configMapKeyRef: {{name: env, key: k{i}}}}}}}\n"))
        .collect();
    write(
        root,
        "apps/authentik.yaml",
        &format!(
            "{}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: authentik, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n      - name: server\n        image: ghcr.io/goauthentik/server:2025.10.1\n        env:\n{env}",
            cm("env", ENV, &|i| format!("v{i}"))
        ),
    );
    let mut cmd = limited::linter();
    cmd.args(["inventory", "--kind", "HelmRelease", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(30));
    assert!(run.status.success(), "{:?}\n{}", run.status, run.stderr);
    let json = run.json();
    let helm = &json["objects"][0]["helm"];
    assert_eq!(
        helm["values"],
        serde_json::json!({"last": VALUES - 1}),
        "{:#}",
        helm["issues"]
    );
    let mut cmd = limited::linter();
    cmd.args(["--no-probe", "-o", "concise", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(30));
    assert!(
        matches!(run.code(), Some(0 | 1)),
        "{:?}\n{}",
        run.status,
        run.stderr
    );
}

/// An Authentik Deployment whose `envFrom` reads a Secret of 60,000
/// `stringData` keys (1 MB): each key searched the keys before it twice,
/// once as the Secret's entries were read (`stringData` replaces `data`
/// key by key) and once as the variables were gathered; 20,000 took
/// 9.7 s in a release build. Both now find a key by a map.
#[test]
fn an_env_from_secret_of_many_string_data_keys_is_read_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let keys: String = (0..60_000).map(|i| format!("  k{i}: v{i}\n")).collect();
    write(
        root,
        "apps/authentik.yaml",
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: env, namespace: default}}\nstringData:\n{keys}---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: authentik, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n      - name: server\n        image: ghcr.io/goauthentik/server:2025.10.1\n        envFrom:\n        - secretRef: {{name: env}}\n"
        ),
    );
    let mut cmd = limited::linter();
    cmd.args(["--no-probe", "-o", "concise", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(30));
    assert!(
        matches!(run.code(), Some(0 | 1)),
        "{:?}\n{}",
        run.status,
        run.stderr
    );
}

/// A ConfigMap `vals` whose `keys` keys `vI` hold `value(i)`, and a
/// HelmRelease of `entries` `valuesFrom` entries, `entry(i)` each.
fn release_of(
    root: &Path,
    (keys, entries): (usize, usize),
    value: &dyn Fn(usize) -> String,
    entry: &dyn Fn(usize) -> String,
) {
    let keys: String = (0..keys)
        .map(|i| format!("  v{i}: {}\n", value(i)))
        .collect();
    let entries: String = (0..entries)
        .map(|i| format!("    - {}\n", entry(i)))
        .collect();
    write(
        root,
        "apps/release.yaml",
        &format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: vals, namespace: default}}\ndata:\n{keys}---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: merged, namespace: default}}\nspec:\n  chart:\n    spec: {{chart: app, sourceRef: {{kind: HelmRepository, name: charts}}}}\n  valuesFrom:\n{entries}"
        ),
    );
}

/// The values of the one HelmRelease of `root`, from `inventory` under
/// `seconds` of CPU.
fn release_values(root: &Path, seconds: u64) -> serde_json::Value {
    let mut cmd = limited::linter();
    cmd.args(["inventory", "--kind", "HelmRelease", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(seconds));
    assert!(run.status.success(), "{:?}\n{}", run.status, run.stderr);
    let json = run.json();
    let helm = &json["objects"][0]["helm"];
    let issues = helm["issues"].as_array().map_or(0, Vec::len);
    assert_eq!(issues, 0, "{helm:#}");
    helm["values"].clone()
}

/// 20,000 `valuesFrom` entries (1.5 MB), each merging a values document
/// of its own one key: each merge indexed the keys merged so far and
/// copied the mapping to add one, 2.4 s of a debug build for 2,000 and
/// past 200 s for 20,000. The values are now built with each mapping's
/// keys indexed, and made a node once (1.4 s).
#[test]
fn values_from_entries_each_adding_a_key_merge_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    const N: usize = 20_000;
    release_of(root, (N, N), &|i| format!("'k{i}: x'"), &|i| {
        format!("{{kind: ConfigMap, name: vals, valuesKey: v{i}}}")
    });
    let values = release_values(root, 30);
    assert_eq!(values.as_object().map(|m| m.len()), Some(N));
    assert_eq!(
        (&values["k0"], &values["k19999"]),
        (&"x".into(), &"x".into())
    );
}

/// 40,000 `valuesFrom` entries with a `targetPath` of their own (3 MB),
/// every other one from a ConfigMap the repository does not hold (a
/// placeholder, dropped at the end unless something sets the path
/// later): each path searched the keys set before it and copied the
/// mapping to add one, each placeholder was looked for key by key and
/// each entry of the values compared with every placeholder, 12 s of a
/// debug build for 20,000 and about 50 s for these (0.8 and 1.7 s now).
#[test]
fn target_paths_of_their_own_keys_are_set_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    const N: usize = 40_000;
    release_of(root, (1, N), &|_| "x".into(), &|i| match i % 2 {
        0 => format!("{{kind: ConfigMap, name: vals, valuesKey: v0, targetPath: k{i}}}"),
        _ => format!("{{kind: ConfigMap, name: absent, optional: true, targetPath: k{i}}}"),
    });
    let values = release_values(root, 15);
    assert_eq!(values.as_object().map(|m| m.len()), Some(N / 2));
    assert_eq!(
        (&values["k0"], &values["k39998"]),
        (&"x".into(), &"x".into())
    );
    assert_eq!(values.get("k1"), None);
}

/// 10,000 Postgres Deployments whose claims are missing (their storage
/// is then looked for among the bound claims, as a live cluster shows
/// them), 10,000 bound claims of other names, and 10,000 apps each
/// naming its database by a Service (4.5 MB): each database scanned
/// every claim, and each Service's selector every object, 10,000 x
/// 10,000 of each. Both are found through indexes now: claims by the
/// names of the databases they may hold, workloads by their pods'
/// labels.
#[test]
fn postgres_workloads_bound_claims_and_services_are_matched_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    const N: usize = 10_000;
    let objects: String = (0..N)
        .map(|i| {
            format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}, namespace: default}}\nspec:\n  template:\n    metadata: {{labels: {{app: d{i}, tier: db}}}}\n    spec:\n      containers:\n      - {{name: c, image: 'postgres:16', volumeMounts: [{{name: data, mountPath: /var/lib/postgresql/data}}]}}\n      volumes:\n      - {{name: data, persistentVolumeClaim: {{claimName: missing{i}}}}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: other{i}-0, namespace: default}}\nspec: {{volumeName: pv{i}}}\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: pg{i}, namespace: default}}\nspec: {{selector: {{tier: db, app: d{i}}}}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: app{i}, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n      - {{name: c, image: 'nginx:1.27', env: [{{name: DB_HOST, value: pg{i}}}]}}\n"
            )
        })
        .collect();
    write(root, "apps/objects.yaml", &objects);
    let mut cmd = limited::linter();
    cmd.args(["--no-probe", "-v", "-o", "concise", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(30));
    assert!(matches!(run.code(), Some(0 | 1)), "{}", run.stderr);
    let missing = run
        .stderr
        .lines()
        .filter(|l| l.ends_with("is not in the repository in namespace default"))
        .count();
    assert_eq!(missing, N, "{}", &run.stderr[..run.stderr.len().min(4000)]);
}

/// 10,000 Postgres Deployments whose claims each request a class that
/// only a PersistentVolume of its own names (3.3 MB): each claim's class
/// was looked for in a copy of every class, 63 s of CPU of a debug build
/// (2.8 s now, the classes found by name).
#[test]
fn many_claims_each_of_its_own_static_class_are_checked_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let objects: String = (0..10_000)
        .map(|i| {
            format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d{i}, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n      - {{name: c, image: 'postgres:16', volumeMounts: [{{name: data, mountPath: /var/lib/postgresql/data}}]}}\n      volumes:\n      - {{name: data, persistentVolumeClaim: {{claimName: claim{i}}}}}\n---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: claim{i}, namespace: default}}\nspec: {{storageClassName: c{i}}}\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: pv{i}}}\nspec: {{storageClassName: c{i}, csi: {{driver: rook-ceph.rbd.csi.ceph.com, volumeHandle: h{i}}}}}\n"
            )
        })
        .collect();
    write(root, "apps/objects.yaml", &objects);
    let mut cmd = limited::linter();
    cmd.args(["--no-probe", "-o", "concise", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(30));
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    assert!(
        run.stdout.starts_with(b"0 findings"),
        "{}",
        String::from_utf8_lossy(&run.stdout)
    );
}

/// 5,000 Authentik Deployments, each reading its database host from the
/// Secret an ext-postgres-operator PostgresUser of its own makes, beside
/// 5,000 other objects (2.9 MB): each Secret's value scanned every user
/// for the one that makes it, and every object for the operators, past
/// 170 s of CPU of a debug build. Users are now found by the Secret they
/// make and the operators once per Flux tree (2.8 s).
#[test]
fn many_ext_postgres_users_are_matched_to_their_secrets_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    const N: usize = 5_000;
    let mut objects = String::from(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: pg-operator, namespace: db}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: c, image: 'movetokube/postgres-operator:1.3.3', env: [{name: POSTGRES_HOST, value: pg.db.svc}]}\n",
    );
    for i in 0..N {
        objects.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: a{i}, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: ghcr.io/goauthentik/server:2025.10.1\n        args: [server]\n        env:\n        - {{name: AUTHENTIK_POSTGRESQL__HOST, valueFrom: {{secretKeyRef: {{name: db-a{i}, key: HOST}}}}}}\n---\napiVersion: db.movetokube.com/v1alpha1\nkind: PostgresUser\nmetadata: {{name: a{i}, namespace: default}}\nspec: {{role: a{i}, database: a{i}, secretName: db}}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: f{i}, namespace: default}}\ndata: {{k: v}}\n"
        ));
    }
    write(root, "apps/objects.yaml", &objects);
    let mut cmd = limited::linter();
    cmd.args(["--no-probe", "-v", "-o", "concise", root.to_str().unwrap()]);
    let run = limited::run_limited(cmd, cpu_seconds(30));
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    // Each app's host is the operator's POSTGRES_HOST, read through its
    // user's Secret.
    let read = run
        .stderr
        .lines()
        .filter(|l| {
            l.starts_with("undecided: authentik-cache-on-sync-replicated-postgres:")
                && l.contains("host pg.db.svc (AUTHENTIK_POSTGRESQL__HOST from key HOST of Secret")
        })
        .count();
    assert_eq!(read, N, "{}", &run.stderr[..run.stderr.len().min(4000)]);
}

/// `text` as one file beside a ConfigMap, inventoried within 128 MB and
/// `per_byte` bytes of address space per byte of `text`: the run ends
/// well and the ConfigMap is loaded.
fn one_file_beside_a_config_map(text: String, per_byte: u64) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(root, "apps/big.yaml", &text);
    write(
        root,
        "apps/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: survivor\n  namespace: default\n",
    );
    let mut cmd = limited::linter();
    cmd.args(["inventory", root.to_str().unwrap()]);
    let limits = limited::Limits {
        address_space: (128 << 20) + per_byte * text.len() as u64,
        ..limited::Limits::default()
    };
    let run = limited::run_limited(cmd, limits);
    assert!(run.status.success(), "{:?}\n{}", run.status, run.stderr);
    let json = run.json();
    let inv = limited::Inventory { json, run };
    inv.assert_loaded(&["survivor"]);
}
