//! Files a kustomization reads at a URL (`--remote`): a generator's
//! `files:`, `envs:` and `env:`, and the `path:` of `patches`,
//! `patchesStrategicMerge` and `patchesJson6902`, which kustomize GETs
//! itself (its loader's `Load`). Served by a real HTTP server on
//! 127.0.0.1, allowed by the tests' `HOMELAB_LINT_REMOTE_LOCAL=1`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use crate::remote::{
    OPERATOR, assert_home_untouched, dirs, inventory, object, repo_listing, serve_bytes,
    serve_files, stderr,
};

const SETTINGS: &str = "max_connections=100\n";
const ENV: &str = "POSTGRES_DEFAULT_DATABASE=app\n";
const REPLICAS: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: ext-postgres-operator
spec:
  replicas: 2
";
const HOST: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: ext-postgres-operator
spec:
  template:
    spec:
      containers:
        - name: ext-postgres-operator
          env:
            - name: POSTGRES_HOST
              value: main-rw.databases.svc:5432
";
const USER: &str = "- op: add
  path: /spec/template/spec/containers/0/env/-
  value:
    name: POSTGRES_USER
    value: operator
";

/// The server of every remote file here; returns its base URL and the
/// count of requests served.
fn serve() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    serve_files(&[
        ("/settings.conf", SETTINGS),
        ("/operator.env", ENV),
        ("/replicas.yaml", REPLICAS),
        ("/host.yaml", HOST),
        ("/user.yaml", USER),
    ])
}

/// Each kind of entry alone (`{base}` the server): the kustomization's
/// text after its resources, where the URL is (line:column), what it is
/// read as, and the file it names.
const CASES: [(&str, &str, &str, &str); 6] = [
    (
        "configMapGenerator:\n  - name: operator-config\n    files:\n      - {base}/settings.conf\n",
        "9:9",
        "generator input",
        "/settings.conf",
    ),
    (
        "configMapGenerator:\n  - name: operator-config\n    envs:\n      - {base}/operator.env\n",
        "9:9",
        "generator input",
        "/operator.env",
    ),
    (
        "secretGenerator:\n  - name: operator-secret\n    env: {base}/operator.env\n",
        "8:10",
        "generator input",
        "/operator.env",
    ),
    (
        "patches:\n  - path: {base}/host.yaml\n    target:\n      kind: Deployment\n",
        "7:11",
        "a patch",
        "/host.yaml",
    ),
    (
        "patchesStrategicMerge:\n  - {base}/replicas.yaml\n",
        "7:5",
        "a patch",
        "/replicas.yaml",
    ),
    (
        "patchesJson6902:\n  - target:\n      group: apps\n      version: v1\n      kind: Deployment\n      name: ext-postgres-operator\n    path: {base}/user.yaml\n",
        "12:11",
        "a patch",
        "/user.yaml",
    ),
];

/// Every kind of entry at once.
const ALL: &str = "configMapGenerator:
  - name: operator-config
    files:
      - {base}/settings.conf
    envs:
      - {base}/operator.env
secretGenerator:
  - name: operator-secret
    env: {base}/operator.env
patchesStrategicMerge:
  - {base}/replicas.yaml
patches:
  - path: {base}/host.yaml
    target:
      kind: Deployment
patchesJson6902:
  - target:
      group: apps
      version: v1
      kind: Deployment
      name: ext-postgres-operator
    path: {base}/user.yaml
";

/// A Flux repository whose app kustomization lists a local Deployment
/// and then `body` (with `{base}` the server's URL).
fn repo_reading(root: &Path, base: &str, body: &str) -> PathBuf {
    let repo = repo_listing(root, &["operator.yaml"]);
    let app = repo.join("apps/operator");
    std::fs::write(app.join("operator.yaml"), OPERATOR).unwrap();
    std::fs::write(
        app.join("kustomization.yaml"),
        format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: databases\nresources:\n  - operator.yaml\n{}",
            body.replace("{base}", base)
        ),
    )
    .unwrap();
    repo
}

/// The inventory's object of `kind` whose name starts with `prefix` (a
/// generated name ends in its hash).
fn generated(out: &std::process::Output, kind: &str, prefix: &str) -> Option<serde_json::Value> {
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("inventory is not JSON ({e}): {}", stderr(out)));
    json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| {
            o["kind"] == kind
                && o["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with(&format!("{prefix}-")))
        })
        .cloned()
}

#[test]
fn generator_files_and_patch_paths_at_urls_are_fetched_with_remote() {
    let (base, hits) = serve();
    let d = dirs();
    let repo = repo_reading(&d.root, &base, ALL);
    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("not fetched"), "{err}");
    for file in [
        "settings.conf",
        "operator.env",
        "replicas.yaml",
        "host.yaml",
        "user.yaml",
    ] {
        assert!(
            err.contains(&format!("remote: {base}/{file}: fetched")),
            "{err}"
        );
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        5,
        "a URL read twice is fetched once"
    );

    let config = generated(&out, "ConfigMap", "operator-config")
        .unwrap_or_else(|| panic!("the generated ConfigMap: {err}"));
    assert_eq!(config["namespace"], "databases");
    assert_eq!(config["object"]["data"]["settings.conf"], SETTINGS);
    assert_eq!(config["object"]["data"]["POSTGRES_DEFAULT_DATABASE"], "app");
    let secret = generated(&out, "Secret", "operator-secret")
        .unwrap_or_else(|| panic!("the generated Secret: {err}"));
    assert!(
        secret["object"]["data"]
            .get("POSTGRES_DEFAULT_DATABASE")
            .is_some(),
        "{secret}"
    );

    let op = object(&out, "Deployment", "ext-postgres-operator").expect("the Deployment");
    let spec = &op["object"]["spec"];
    assert_eq!(spec["replicas"], 2, "{op}");
    let env = &spec["template"]["spec"]["containers"][0]["env"];
    assert_eq!(env[0]["name"], "POSTGRES_HOST", "{op}");
    assert_eq!(env[0]["value"], "main-rw.databases.svc:5432");
    assert_eq!(env[1]["name"], "POSTGRES_USER", "{op}");
    assert_eq!(env[1]["value"], "operator");
    let at = |path: &str| {
        op["provenance"][path]["at"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert_eq!(at("spec.replicas"), format!("{base}/replicas.yaml:6:13"));
    assert_eq!(
        at("spec.template.spec.containers[0].env[0].value"),
        format!("{base}/host.yaml:12:22")
    );
    assert!(
        at("spec.template.spec.containers[0].env[1].value")
            .starts_with(&format!("{base}/user.yaml:")),
        "{op}"
    );
    let steps: Vec<&str> = op["chain"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "patch")
        .map(|s| s["detail"].as_str().unwrap())
        .collect();
    let named = |f: &str| format!("{base}/{f}");
    assert_eq!(
        steps,
        [
            named("replicas.yaml"),
            named("host.yaml"),
            named("user.yaml")
        ],
        "{op}"
    );

    let again = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    assert!(
        stderr(&again).contains(&format!("remote: {base}/settings.conf: from the cache")),
        "{}",
        stderr(&again)
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        5,
        "the second run asked the server"
    );
    assert_eq!(out.stdout, again.stdout);
    assert_home_untouched(&d);
}

#[test]
fn without_remote_each_file_at_a_url_says_it_was_not_fetched_and_nothing_is_made_up() {
    let (base, hits) = serve();
    for (body, at, role, file) in CASES {
        let d = dirs();
        let repo = repo_reading(&d.root, &base, body);
        let out = inventory(&repo, &d.home, &d.cache, true, &[]);
        let err = stderr(&out);
        assert!(out.status.success(), "{err}");
        let url = format!("{base}{file}");
        assert!(
            err.contains(&format!(
                "apps/operator/kustomization.yaml:{at}: remote file '{url}' ({role}) is not \
                 fetched: kustomize fetches it over HTTP; remote entries are fetched only with \
                 --remote"
            )),
            "{body}: {err}"
        );
        assert!(
            generated(&out, "ConfigMap", "operator-config").is_none()
                && generated(&out, "Secret", "operator-secret").is_none(),
            "a generator is not made without its input: {err}"
        );
        let op = object(&out, "Deployment", "ext-postgres-operator").expect("the Deployment");
        let spec = &op["object"]["spec"];
        assert!(
            spec.get("replicas").is_none()
                && spec["template"]["spec"]["containers"][0]
                    .get("env")
                    .is_none(),
            "nothing of a patch not read: {op}"
        );
        assert!(!d.cache.exists(), "an offline run made the cache folder");
        assert_home_untouched(&d);
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);

    // With --remote, plain http is refused without the tests' allowance.
    let d = dirs();
    let repo = repo_reading(&d.root, &base, CASES[0].0);
    let out = inventory(&repo, &d.home, &d.cache, false, &["--remote"]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "remote file '{base}/settings.conf' (generator input) is not fetched: plain http is not fetched, only https"
        )),
        "{err}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}

#[test]
fn remote_budgets_stop_generator_files_and_patch_paths_with_a_reason() {
    let (base, _hits) = serve();
    let d = dirs();
    let repo = repo_reading(&d.root, &base, ALL);

    // Env files are read first: operator.env, then settings.conf; the
    // Secret's operator.env is the same fetch.
    let out = inventory(
        &repo,
        &d.home,
        &d.cache,
        true,
        &["--remote", "--remote-max-fetches", "2"],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "apps/operator/kustomization.yaml:16:5: remote file '{base}/replicas.yaml' (a patch) \
             is not fetched: remote fetch budget exceeded: more than 2 remote entries"
        )),
        "{err}"
    );
    let config = generated(&out, "ConfigMap", "operator-config").expect("the ConfigMap");
    assert_eq!(config["object"]["data"]["settings.conf"], SETTINGS);
    assert!(generated(&out, "Secret", "operator-secret").is_some());

    // 30 bytes of operator.env leave 10 of 40: settings.conf's 20 do
    // not fit, and its generator is left out.
    let out = inventory(
        &repo,
        &d.home,
        &d.root.join("cache2"),
        true,
        &["--remote", "--remote-max-bytes", "40"],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "apps/operator/kustomization.yaml:9:9: remote file '{base}/settings.conf' (generator \
             input) is not fetched: fetching {base}/settings.conf failed: the file is larger than \
             the 10 bytes left in the budget"
        )),
        "{err}"
    );
    assert!(generated(&out, "ConfigMap", "operator-config").is_none());
    assert!(generated(&out, "Secret", "operator-secret").is_some());
    assert_home_untouched(&d);
}

/// Bytes that are not UTF-8 (a PNG's signature).
const BINARY: &[u8] = b"\x89PNG\r\n\x1a\n\x00\xff";

#[test]
fn a_generator_file_at_a_url_that_is_not_utf8_is_binary_data_as_a_local_one_is() {
    let (base, _) = serve_bytes(&[("/logo.png", BINARY)]);
    let d = dirs();
    let body = "configMapGenerator:
  - name: remote-logo
    files:
      - {base}/logo.png
  - name: local-logo
    files:
      - logo.png
";
    let repo = repo_reading(&d.root, &base, body);
    std::fs::write(repo.join("apps/operator/logo.png"), BINARY).unwrap();
    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("remote: {base}/logo.png: fetched")),
        "{err}"
    );
    let object = |prefix: &str| {
        generated(&out, "ConfigMap", prefix).unwrap_or_else(|| panic!("ConfigMap {prefix}: {err}"))
            ["object"]
            .clone()
    };
    let (remote, local) = (object("remote-logo"), object("local-logo"));
    assert_eq!(
        remote["binaryData"]["logo.png"], "iVBORw0KGgoA/w==",
        "{remote}"
    );
    assert!(remote.get("data").is_none(), "{remote}");
    assert_eq!(remote["binaryData"], local["binaryData"]);

    // Read as text (a patch), it is refused at its first bad byte.
    let d = dirs();
    let repo = repo_reading(
        &d.root,
        &base,
        "patchesStrategicMerge:\n  - {base}/logo.png\n",
    );
    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{base}/logo.png:1:1: file is not valid UTF-8")),
        "{err}"
    );
    assert_home_untouched(&d);
}
