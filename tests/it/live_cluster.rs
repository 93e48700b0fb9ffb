//! The live cluster reader against a fake API server serving the fixture
//! cluster (testdata/cluster); the fake itself checked with real kubectl.

use crate::common;
use crate::fake_api;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use fake_api::{FakeApi, Faults, Fixture};
use homelab_lint::report::json::{Finding, Report};

fn fixture() -> Fixture {
    Fixture::from_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster"))
}

/// A fake serving `fixture()` with `faults`, and a kubeconfig for it in
/// a temporary directory (kept alive by the returned guard).
fn fake(faults: Faults) -> (FakeApi, tempfile::TempDir, std::path::PathBuf) {
    let api = FakeApi::start(fixture(), faults);
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    (api, dir, kc)
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
    let cache = kubeconfig.parent().unwrap().join("kube-cache");
    Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(&cache)
        .args(args)
        .output()
        .expect("run kubectl")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn real_kubectl_lists_custom_resources_from_the_fake() {
    if !common::kubectl_available() {
        return;
    }
    let (_api, _dir, kc) = fake(Faults::default());
    let out = kubectl(&kc, &["get", "postgresql", "-A", "-o", "json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let items = json["items"].as_array().unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0]["metadata"]["name"], "auth-postgres");
    assert_eq!(
        items[0]["spec"]["volume"]["storageClass"], "ceph-block",
        "{json}"
    );
    // get by name in a namespace, and a label selector.
    let out = kubectl(
        &kc,
        &[
            "get",
            "helmrelease",
            "authentik",
            "-n",
            "security",
            "-o",
            "json",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("\"chart\": \"authentik\""));
    let out = kubectl(
        &kc,
        &["get", "pods", "-A", "-l", "application=spilo", "-o", "name"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "pod/auth-postgres-0");
}

#[test]
fn real_kubectl_paginates_with_chunk_size() {
    if !common::kubectl_available() {
        return;
    }
    let (api, _dir, kc) = fake(Faults::default());
    let out = kubectl(&kc, &["get", "pods", "-A", "--chunk-size=1", "-o", "name"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut names: Vec<&str> = text.lines().map(str::trim).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "pod/auth-postgres-0",
            "pod/authentik-server-7d9f8b6c5d-x2x9q"
        ]
    );
    let reqs = api.requests();
    let pod_lists: Vec<&String> = reqs
        .iter()
        .filter(|r| r.starts_with("GET /api/v1/pods"))
        .collect();
    assert!(
        pod_lists
            .iter()
            .any(|r| r.contains("limit=1") && !r.contains("continue=")),
        "{pod_lists:?}"
    );
    assert!(
        pod_lists
            .iter()
            .any(|r| r.contains("continue=fake-continue-1")),
        "{pod_lists:?}"
    );
}

#[test]
fn real_kubectl_sees_forbidden_and_absent_kinds() {
    if !common::kubectl_available() {
        return;
    }
    let api = FakeApi::start(
        fixture(),
        Faults {
            forbidden: vec!["secrets".into()],
            ..Faults::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    let out = kubectl(&kc, &["get", "secrets", "-A", "-o", "name"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("forbidden"), "{}", stderr(&out));
    // No CNPG in this cluster: kubectl does not know the resource.
    let out = kubectl(&kc, &["get", "clusters.postgresql.cnpg.io", "-A"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("doesn't have a resource type"),
        "{}",
        stderr(&out)
    );
}

/// kubectl learns every resource from `/api` and `/apis` in aggregated
/// form, so it asks for no per-group document; absent CRDs stay absent.
#[test]
fn real_kubectl_uses_aggregated_discovery() {
    if !common::kubectl_available() {
        return;
    }
    let (api, _dir, kc) = fake(Faults::default());
    let out = kubectl(&kc, &["api-resources", "--no-headers"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let resources: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            // NAME [SHORTNAMES] APIVERSION NAMESPACED KIND
            Some((*cols.first()?, *cols.get(cols.len().checked_sub(3)?)?))
        })
        .collect();
    for expected in [
        ("pods", "v1"),
        ("persistentvolumes", "v1"),
        ("deployments", "apps/v1"),
        ("storageclasses", "storage.k8s.io/v1"),
        ("helmreleases", "helm.toolkit.fluxcd.io/v2"),
        ("postgresqls", "acid.zalan.do/v1"),
    ] {
        assert!(resources.contains(&expected), "{expected:?} in {text}");
    }
    assert!(
        !text.contains("postgresql.cnpg.io") && !text.contains("crunchydata"),
        "{text}"
    );
    let out = kubectl(&kc, &["get", "pods", "-A", "-o", "name"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("pod/auth-postgres-0"),
        "{}",
        stdout(&out)
    );
    let reqs = api.requests();
    let paths: Vec<&str> = reqs.iter().map(|r| r.split('?').next().unwrap()).collect();
    assert!(paths.contains(&"GET /api"), "{reqs:?}");
    assert!(paths.contains(&"GET /apis"), "{reqs:?}");
    let per_group: Vec<&&str> = paths
        .iter()
        .filter(|p| {
            **p == "GET /api/v1" || (p.starts_with("GET /apis/") && p.matches('/').count() == 3)
        })
        .collect();
    assert!(per_group.is_empty(), "legacy discovery used: {per_group:?}");
}

/// Without the aggregated media type in Accept, the legacy documents,
/// which list the same resources and subresources.
#[test]
fn discovery_documents_agree_in_both_forms() {
    let api = FakeApi::start(fixture(), Faults::default());
    let get = |path: &str, accept: &str| -> (String, serde_json::Value) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let resp = reqwest::Client::new()
                .get(format!("{}{path}", api.url()))
                .header("accept", accept)
                .timeout(Duration::from_secs(10))
                .send()
                .await
                .unwrap();
            assert!(resp.status().is_success(), "{path}: {}", resp.status());
            let content_type = resp.headers()["content-type"].to_str().unwrap().to_string();
            let body = resp.bytes().await.unwrap();
            (content_type, serde_json::from_slice(&body).unwrap())
        })
    };
    const KUBECTL_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    let (content_type, core) = get("/api", KUBECTL_ACCEPT);
    assert_eq!(
        content_type,
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    assert_eq!(core["apiVersion"], "apidiscovery.k8s.io/v2");
    let versions = core["items"][0]["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1);
    let pods = versions[0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "pods")
        .unwrap();
    assert_eq!(pods["scope"], "Namespaced");
    assert_eq!(
        pods["responseKind"],
        serde_json::json!({"group": "", "version": "v1", "kind": "Pod"})
    );
    assert_eq!(pods["subresources"][0]["subresource"], "portforward");
    assert_eq!(
        pods["subresources"][0]["verbs"],
        serde_json::json!(["create", "get"])
    );
    let (_, groups) = get("/apis", KUBECTL_ACCEPT);
    let names: Vec<&str> = groups["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["metadata"]["name"].as_str().unwrap())
        .collect();
    // Objects of Flux's helm and kustomize groups and of Zalando are in
    // the fixture; of Flux's sources, CNPG and Crunchy there are none.
    assert_eq!(
        names,
        [
            "apps",
            "batch",
            "storage.k8s.io",
            "helm.toolkit.fluxcd.io",
            "kustomize.toolkit.fluxcd.io",
            "acid.zalan.do"
        ]
    );
    let storage = &groups["items"][2]["versions"][0]["resources"][0];
    assert_eq!(storage["resource"], "storageclasses");
    assert_eq!(storage["scope"], "Cluster");

    // Only v2beta1, or plain JSON: the legacy documents.
    for accept in [
        "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
        "application/json",
    ] {
        let (content_type, legacy) = get("/apis", accept);
        assert_eq!(content_type, "application/json");
        assert_eq!(legacy["kind"], "APIGroupList");
        let legacy_names: Vec<&str> = legacy["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        assert_eq!(legacy_names, names);
    }
    let (_, v1) = get("/api/v1", "application/json");
    let subresource = v1["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "pods/portforward")
        .unwrap_or_else(|| panic!("{v1}"));
    assert_eq!(subresource["kind"], "PodPortForwardOptions");
}

/// The linter run from the project, where `testdata/` is.
fn lint(args: &[&str]) -> Output {
    common::lint(Path::new(env!("CARGO_MANIFEST_DIR")), args)
}

fn rules_of(found: &[(String, String)]) -> Vec<&str> {
    found.iter().map(|(r, _)| r.as_str()).collect()
}

const FOUNDING: [&str; 2] = [
    "authentik-cache-on-sync-replicated-postgres",
    "authentik-persistent-connections-without-keepalives",
];

#[test]
fn live_only_reproduces_the_founding_findings_like_the_snapshot() {
    let (api, _dir, kc) = fake(Faults::default());
    let kc = kc.to_str().unwrap();
    let live = lint(&["--kubeconfig", kc, "--format", "json"]);
    assert_eq!(live.status.code(), Some(1), "{}", stderr(&live));
    let live_found = common::rules_and_paths(&live);
    assert_eq!(rules_of(&live_found), FOUNDING);
    // The cache finding points at the setting, in the Postgres object.
    for (rule, path) in &live_found {
        let kind = if rule == FOUNDING[0] {
            "postgresqls.acid.zalan.do"
        } else {
            "helmreleases.helm.toolkit.fluxcd.io"
        };
        assert_eq!(*path, format!("cluster://fake/{kind}"));
    }
    let snap = lint(&["--snapshot", "testdata/cluster", "--format", "json"]);
    assert_eq!(
        rules_of(&common::rules_and_paths(&snap)),
        rules_of(&live_found)
    );
    // Secrets are never listed, only read by name for the probe (the
    // operator's credentials); absent CRDs (CNPG, Crunchy) are not asked for.
    let reqs = api.requests();
    let secrets: Vec<_> = reqs.iter().filter(|r| r.contains("secrets")).collect();
    assert!(
        secrets
            .iter()
            .all(|r| r.contains("/secrets/authentik.auth-postgres.credentials.")),
        "{secrets:?}"
    );
    assert!(!reqs.iter().any(|r| r.contains("cnpg")), "{reqs:?}");
    // Aggregated discovery: `/apis` alone names the resources, so no
    // per-group document (`/apis/<group>/<version>`) is fetched.
    let group_docs: Vec<_> = reqs
        .iter()
        .filter(|r| {
            let path = r.split_whitespace().last().unwrap_or("");
            path.starts_with("/apis/") && path.split('?').next().unwrap().split('/').count() == 4
        })
        .collect();
    assert!(group_docs.is_empty(), "{group_docs:?}");
    assert!(stderr(&live).contains("API calls"), "{}", stderr(&live));
}

#[test]
fn live_with_repo_points_findings_at_repo_files() {
    let (report, err) = lint_example_with(fixture());
    let found: Vec<(&str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.rule.as_str(), f.location.path.as_str()))
        .collect();
    assert_eq!(
        found.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
        FOUNDING,
        "{err}"
    );
    for (rule, path) in &found {
        let file = if *rule == FOUNDING[0] {
            "database"
        } else {
            "helmrelease"
        };
        assert_eq!(*path, format!("apps/authentik/{file}.yaml"));
    }
    assert!(err.contains("linked"), "{err}");
}

/// The example repository linted with the cluster `fixture` (no probe):
/// the JSON report, and stderr for messages.
fn lint_example_with(cluster: Fixture) -> (Report, String) {
    let api = FakeApi::start(cluster, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    let out = lint(&[
        "--example",
        "--kubeconfig",
        kc.to_str().unwrap(),
        "--format",
        "json",
        "--no-probe",
    ]);
    (common::report(&out), stderr(&out))
}

/// The findings of `rule` in a JSON report.
fn findings_of<'r>(report: &'r Report, rule: &str) -> Vec<&'r Finding> {
    report.findings.iter().filter(|f| f.rule == rule).collect()
}

#[test]
fn repo_version_crossing_a_release_from_the_running_one_is_found() {
    const UPGRADE: &str = "authentik-upgrade-moves-cache-to-sync-replicated-postgres";
    // The cluster's HelmRelease asks for 2025.10.1 but its upgrade failed:
    // 2025.8.3 is what is deployed (status.history).
    let mut cluster = fixture();
    cluster.edit("HelmRelease", "authentik", |hr| {
        let deployed = &mut hr["status"]["history"][0];
        deployed["chartVersion"] = "2025.8.3".into();
        deployed["appVersion"] = "2025.8.3".into();
    });
    let (report, err) = lint_example_with(cluster);
    let upgrade = findings_of(&report, UPGRADE);
    assert_eq!(upgrade.len(), 1, "{report:#?}\n{err}");
    let message = &upgrade[0].message;
    assert!(
        message.contains("from 2025.8.3 (running in the cluster) to 2025.10.1"),
        "{message}"
    );
    assert_eq!(
        upgrade[0].location.path, "apps/authentik/helmrelease.yaml",
        "{:#?}",
        upgrade[0]
    );

    // Deployed as declared: no bump.
    let (report, err) = lint_example_with(fixture());
    assert!(
        findings_of(&report, UPGRADE).is_empty(),
        "{report:#?}\n{err}"
    );
}

#[test]
fn live_only_lint_judges_the_deployed_chart_not_the_requested_one() {
    // The upgrade to 2025.10.1 failed: 2025.8.3, whose cache is in Redis,
    // is what runs, so the cache finding does not apply yet.
    let mut cluster = fixture();
    cluster.edit("HelmRelease", "authentik", |hr| {
        hr["status"]["history"][0]["chartVersion"] = "2025.8.3".into();
    });
    let api = FakeApi::start(cluster, Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    let out = lint(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "--format",
        "json",
        "--no-probe",
    ]);
    assert_eq!(
        rules_of(&common::rules_and_paths(&out)),
        ["authentik-persistent-connections-without-keepalives"],
        "{}",
        stderr(&out)
    );
}

#[test]
fn parameter_patched_in_the_cluster_is_drift_pointing_at_the_repo() {
    let mut cluster = fixture();
    cluster.edit("postgresql", "auth-postgres", |pg| {
        pg["spec"]["postgresql"]["parameters"]["synchronous_commit"] = "off".into();
    });
    let (report, err) = lint_example_with(cluster);
    let drift = findings_of(&report, "postgres-parameter-drift");
    assert_eq!(drift.len(), 1, "{report:#?}\n{err}");
    let f = drift[0];
    assert_eq!(
        f.message,
        "postgresql/security/auth-postgres: synchronous_commit is \"off\" in the cluster \
         but unset in the repository"
    );
    // At the declaration's parameter map (its first line), where the
    // value would go.
    assert_eq!(f.location.path, "apps/authentik/database.yaml");
    assert_eq!(f.location.line, 21, "{f:#?}");

    // The same parameters on both sides: no drift.
    let (report, _) = lint_example_with(fixture());
    assert!(findings_of(&report, "postgres-parameter-drift").is_empty());
}

#[test]
fn live_pagination_follows_continue_tokens() {
    let (api, _dir, kc) = fake(Faults::default());
    let out = lint(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "--chunk-size",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(
        rules_of(&common::rules_and_paths(&out)),
        FOUNDING,
        "{}",
        stderr(&out)
    );
    let reqs = api.requests();
    assert!(
        reqs.iter()
            .any(|r| r == "GET /api/v1/pods?limit=1&continue=fake-continue-1"),
        "{reqs:?}"
    );
    assert!(
        reqs.iter()
            .any(|r| r
                == "GET /apis/storage.k8s.io/v1/storageclasses?limit=1&continue=fake-continue-1"),
        "{reqs:?}"
    );
}

#[test]
fn forbidden_kind_gives_a_warning_and_partial_results() {
    let api = FakeApi::start(
        fixture(),
        Faults {
            forbidden: vec!["storageclasses".into(), "persistentvolumes".into()],
            errors: vec![("configmaps".into(), 500)],
            ..Faults::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    let out = lint(&["--kubeconfig", kc.to_str().unwrap(), "--format", "json"]);
    let err = stderr(&out);
    assert!(
        err.contains("warning: cannot list storageclasses.storage.k8s.io: forbidden"),
        "{err}"
    );
    assert!(
        err.contains("warning: cannot list configmaps: 500"),
        "{err}"
    );
    assert!(
        err.contains("warning: cannot list persistentvolumes: forbidden"),
        "{err}"
    );
    // Without StorageClasses and PVs the storage of the database is
    // unknown: the cache rule cannot fire, the keepalive rule still does.
    assert_eq!(
        rules_of(&common::rules_and_paths(&out)),
        ["authentik-persistent-connections-without-keepalives"]
    );
}

/// The bound PV's CSI driver is the ground truth when the StorageClass
/// cannot be read.
#[test]
fn bound_volume_csi_driver_stands_in_for_an_unreadable_storage_class() {
    let api = FakeApi::start(
        fixture(),
        Faults {
            forbidden: vec!["storageclasses".into()],
            ..Faults::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    let out = lint(&["--kubeconfig", kc.to_str().unwrap(), "--format", "json"]);
    assert_eq!(
        rules_of(&common::rules_and_paths(&out)),
        FOUNDING,
        "{}",
        stderr(&out)
    );
    let report = common::report(&out);
    let cache = findings_of(&report, FOUNDING[0])[0];
    assert_eq!(
        common::evidence(cache, "storage.provisioner"),
        "rook-ceph.rbd.csi.ceph.com"
    );
    assert!(
        cache
            .related
            .iter()
            .any(|r| r.path == "cluster://fake/persistentvolumes"),
        "{cache:#?}"
    );
}

#[test]
fn unreachable_server_fails_fast_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, fake_api::kubeconfig_text("http://127.0.0.1:1")).unwrap();
    let started = Instant::now();
    let out = lint(&["--kubeconfig", kc.to_str().unwrap()]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cannot reach the Kubernetes API server at http://127.0.0.1:1"),
        "{err}"
    );
    assert!(err.to_lowercase().contains("connection refused"), "{err}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn slow_server_times_out_with_a_clear_message() {
    let api = FakeApi::start(
        fixture(),
        Faults {
            latency: Duration::from_secs(30),
            ..Faults::default()
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let kc = api.kubeconfig(dir.path());
    let started = Instant::now();
    let out = lint(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "--request-timeout",
        "2",
    ]);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did not answer within 2 s"),
        "{}",
        stderr(&out)
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn namespace_flag_limits_namespaced_lists() {
    let (api, _dir, kc) = fake(Faults::default());
    let out = lint(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "-n",
        "security",
        "--format",
        "json",
    ]);
    assert_eq!(
        rules_of(&common::rules_and_paths(&out)),
        FOUNDING,
        "{}",
        stderr(&out)
    );
    let reqs = api.requests();
    assert!(
        reqs.iter()
            .any(|r| r.starts_with("GET /api/v1/namespaces/security/pods?")),
        "{reqs:?}"
    );
    assert!(
        reqs.iter()
            .any(|r| r.starts_with("GET /apis/storage.k8s.io/v1/storageclasses?")),
        "{reqs:?}"
    );
}

/// The planted password appears in no output format, nor in -vv logs.
#[test]
fn planted_password_never_printed_from_live() {
    const PLANTED: &[&str] = &["Planted-Pa55word-7c1e", "UGxhbnRlZC1QYTU1d29yZC03YzFl"];
    let (_api, _dir, kc) = fake(Faults::default());
    for format in ["human", "json", "sarif", "github"] {
        for repo in [false, true] {
            let mut args = vec![
                "--kubeconfig",
                kc.to_str().unwrap(),
                "-vv",
                "--format",
                format,
            ];
            if repo {
                args.push("--example");
            }
            let out = lint(&args);
            let all = format!("{}{}", stdout(&out), stderr(&out));
            assert!(all.contains("api: GET"), "-vv logs API calls: {all}");
            for p in PLANTED {
                assert!(!all.contains(p), "{format} repo={repo}: password printed");
            }
        }
    }
}

/// A cluster of `total` objects: the fixture plus generated Pods,
/// ConfigMaps, Services, Deployments, PVCs and PVs in the given shares.
fn big_fixture(total: usize, shares: &[(&str, usize)]) -> Fixture {
    let mut f = fixture();
    // The fixture's Secrets are not counted: the reader never lists them.
    let mut n = f.len() - 2;
    let weight: usize = shares.iter().map(|(_, w)| w).sum();
    for (kind, w) in shares {
        let count = (total - n).min((total - 16) * w / weight);
        for i in 0..count {
            f.add(generated(kind, i));
        }
        n += count;
    }
    let mut i = 1_000_000;
    while n < total {
        f.add(generated("Pod", i));
        i += 1;
        n += 1;
    }
    f
}

fn generated(kind: &str, i: usize) -> serde_json::Value {
    let ns = format!("ns-{}", i % 40);
    let name = format!("{}-{i}", kind.to_lowercase());
    let meta = serde_json::json!({"name": name, "namespace": ns, "uid": format!("gen-{kind}-{i}"),
        "resourceVersion": "1", "labels": {"app.kubernetes.io/name": format!("app-{}", i % 200)}});
    match kind {
        "Pod" => serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "main", "image": format!("ghcr.io/example/app-{}:1.{}.0", i % 200, i % 7),
                "env": [{"name": "LOG_LEVEL", "value": "info"}]}]},
            "status": {"phase": "Running", "containerStatuses": [{"name": "main", "ready": true,
                "imageID": format!("ghcr.io/example/app@sha256:{:064x}", i)}]}}),
        "ConfigMap" => {
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
            "data": {"config.yaml": "key: value\nother: 1\n", "LOG_LEVEL": "info"}})
        }
        "Service" => serde_json::json!({"apiVersion": "v1", "kind": "Service", "metadata": meta,
            "spec": {"type": "ClusterIP", "ports": [{"port": 80, "targetPort": 8080}]}}),
        "Deployment" => {
            serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "main",
                "image": format!("ghcr.io/example/app-{}:1.0.0", i % 200)}]}}}})
        }
        "PersistentVolumeClaim" => {
            serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": meta, "spec": {"storageClassName": "ceph-block", "volumeName": format!("pv-{i}")}})
        }
        _ => serde_json::json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": format!("pv-{i}"), "uid": format!("gen-pv-{i}"), "resourceVersion": "1"},
            "spec": {"csi": {"driver": "rook-ceph.rbd.csi.ceph.com", "volumeHandle": format!("h-{i}")}}}),
    }
}

/// Collection of a 5,000-object cluster with 50 ms added to every API
/// call (BENCHMARKS.md). Run with
/// `cargo test --release --test it live_cluster::bench -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark; run explicitly"]
fn bench_collect_5000_objects_50ms_latency() {
    let layouts: [(&str, &[(&str, usize)]); 2] = [
        (
            "mixed",
            &[
                ("Pod", 48),
                ("ConfigMap", 20),
                ("Service", 12),
                ("Deployment", 8),
                ("PersistentVolumeClaim", 6),
                ("PersistentVolume", 6),
            ],
        ),
        ("all pods", &[("Pod", 1)]),
    ];
    for (label, shares) in layouts {
        let f = big_fixture(5_000, shares);
        let api = FakeApi::start(
            f,
            Faults {
                latency: Duration::from_millis(50),
                ..Faults::default()
            },
        );
        let dir = tempfile::tempdir().unwrap();
        let kc = api.kubeconfig(dir.path());
        let started = Instant::now();
        // Collection only: the probe's port-forward is measured apart.
        let out = lint(&[
            "--kubeconfig",
            kc.to_str().unwrap(),
            "--format",
            "json",
            "--no-probe",
        ]);
        let wall = started.elapsed();
        let err = stderr(&out);
        let summary = err
            .lines()
            .find(|l| l.starts_with("cluster fake:"))
            .unwrap_or_else(|| panic!("{err}"));
        println!(
            "bench {label}: {summary}; fake saw {} requests; whole run {} ms",
            api.requests().len(),
            wall.as_millis()
        );
        assert!(summary.contains("5000 objects"), "{summary}");
    }
}

/// Two contexts in one run: each cluster is read (in parallel, one
/// process per context) and gets its own report.
#[test]
fn several_contexts_are_linted_in_one_run() {
    let a = FakeApi::start(fixture(), Faults::default());
    let b = FakeApi::start(fixture(), Faults::default());
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(
        &kc,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n  - name: a\n    cluster: {{server: {}}}\n  - name: b\n    cluster: {{server: {}}}\ncontexts:\n  - name: home\n    context: {{cluster: a, user: u}}\n  - name: lab\n    context: {{cluster: b, user: u}}\ncurrent-context: home\nusers:\n  - name: u\n    user: {{token: fake}}\n",
            a.url(),
            b.url()
        ),
    )
    .unwrap();
    let out = lint(&[
        "--kubeconfig",
        kc.to_str().unwrap(),
        "--context",
        "home",
        "--context",
        "lab",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let contexts = json["contexts"].as_array().unwrap();
    let names: Vec<&str> = contexts
        .iter()
        .map(|c| c["context"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["home", "lab"]);
    for c in contexts {
        // Each context's report is the JSON report of a single run.
        let report: Report = serde_json::from_value(c["report"].clone())
            .unwrap_or_else(|e| panic!("not a JSON report ({e}): {c}"));
        assert!(
            report
                .rules()
                .contains(&"authentik-cache-on-sync-replicated-postgres"),
            "{c}"
        );
    }
    let err = stderr(&out);
    assert!(err.contains("[home]") && err.contains("[lab]"), "{err}");
}
