//! The `fetch` init container of `deploy/` (rendered with `kubectl
//! kustomize`) run for real with sh, curl, sha256sum and tar against a
//! loopback stand-in for the API server and source-controller: it reads
//! the GitRepository with the ServiceAccount's token, downloads
//! `.status.artifact.url`, checks `.status.artifact.digest` and unpacks
//! the repository, which then lints like the original; a wrong digest or
//! a GitRepository without an artifact stops it with a clear message.
//! The only changes to the script are its fixed paths (the token
//! directory, the API address, /tmp and /repo), which the test points into
//! a temporary directory.

use crate::common;
use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use homelab_lint::yaml::{FileId, Limits, parse_documents};

use crate::common::BIN;
const TOKEN: &str = "sa-token-7c2e";
const COMMIT: &str = "dc0fd09d0915f47cbda5f235a8a9c30b2d8baa69";

/// The fetch script, its environment and its settings from the rendering.
fn fetch_script() -> Option<(String, serde_json::Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let Ok(out) = Command::new("kubectl")
        .arg("kustomize")
        .arg(root.join("deploy"))
        .output()
    else {
        common::skip_or_fail("kubectl is not on PATH");
        return None;
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docs = parse_documents(
        &String::from_utf8(out.stdout).unwrap(),
        FileId(0),
        &Limits::default(),
    )
    .unwrap();
    let objects: Vec<serde_json::Value> = docs.iter().map(|d| d.to_json()).collect();
    let cron = objects.iter().find(|o| o["kind"] == "CronJob").unwrap();
    let fetch = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["initContainers"][0];
    assert_eq!(fetch["name"], "fetch");
    let script = fetch["args"][0].as_str().unwrap().to_string();
    let config = objects.iter().find(|o| o["kind"] == "ConfigMap").unwrap()["data"].clone();
    Some((script, config))
}

/// The script with its fixed paths moved into `dir` and the API at `api`.
fn localised(script: &str, dir: &Path, api: &str) -> String {
    let mut s = script.to_string();
    // /tmp first: the temporary directory itself is under /tmp.
    for (from, to) in [
        ("/tmp/".to_string(), format!("{}/tmp/", dir.display())),
        (
            "/var/run/secrets/kubernetes.io/serviceaccount".to_string(),
            dir.join("sa").display().to_string(),
        ),
        (
            "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT".to_string(),
            api.to_string(),
        ),
        (
            "/repo/tree".to_string(),
            dir.join("repo/tree").display().to_string(),
        ),
    ] {
        assert!(s.contains(&from), "the script no longer has {from}");
        s = s.replace(&from, &to);
    }
    s
}

/// The example repository as source-controller packs it: a gzipped tar.
fn artifact(dir: &Path) -> Vec<u8> {
    let file = dir.join("artifact-src.tar.gz");
    let ok = Command::new("tar")
        .arg("-czf")
        .arg(&file)
        .arg("-C")
        .arg(common::example_repo())
        .arg(".")
        .status()
        .unwrap();
    assert!(ok.success());
    std::fs::read(file).unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Serves the GitRepository (JSON from `object`, given the server's own
/// address) to the bearer token only, and the artifact.
fn start(object: impl Fn(&str) -> String + Send + Sync + 'static, tarball: Vec<u8>) -> String {
    let tarball = Arc::new(tarball);
    let addr_cell: Arc<std::sync::OnceLock<String>> = Arc::new(std::sync::OnceLock::new());
    let cell = addr_cell.clone();
    let object = Arc::new(object);
    let addr = support::serve::spawn(move |req: hyper::Request<hyper::body::Incoming>| {
        let (tarball, cell, object) = (tarball.clone(), cell.clone(), object.clone());
        async move {
            let base = cell.get().cloned().unwrap_or_default();
            let path = req.uri().path().to_string();
            let authorized = req
                .headers()
                .get("authorization")
                .is_some_and(|v| v == format!("Bearer {TOKEN}").as_str());
            let (status, body) = if path
                == "/apis/source.toolkit.fluxcd.io/v1/namespaces/flux-system/gitrepositories/flux-system"
            {
                if authorized {
                    (200, object(&base).into_bytes())
                } else {
                    (401, b"{}".to_vec())
                }
            } else if path == format!("/gitrepository/flux-system/flux-system/{COMMIT}.tar.gz") {
                (200, tarball.to_vec())
            } else {
                (404, b"not found".to_vec())
            };
            hyper::Response::builder()
                .status(status)
                .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
                .unwrap()
        }
    });
    let base = format!("http://{addr}");
    addr_cell.set(base.clone()).unwrap();
    base
}

/// A GitRepository as the API server returns it for a CRD: compact JSON,
/// keys sorted (an included artifact after the main one).
fn git_repository(base: &str, digest: &str) -> String {
    format!(
        concat!(
            r#"{{"apiVersion":"source.toolkit.fluxcd.io/v1","kind":"GitRepository","#,
            r#""metadata":{{"name":"flux-system","namespace":"flux-system"}},"#,
            r#""spec":{{"interval":"1m0s","ref":{{"branch":"main"}},"url":"ssh://git@github.com/example/home-ops"}},"#,
            r#""status":{{"artifact":{{"digest":"sha256:{digest}","lastUpdateTime":"2026-12-01T09:00:00Z","#,
            r#""path":"gitrepository/flux-system/flux-system/{commit}.tar.gz","revision":"main@sha1:{commit}","#,
            r#""size":1234,"url":"{base}/gitrepository/flux-system/flux-system/{commit}.tar.gz"}},"#,
            r#""conditions":[{{"message":"stored artifact for revision 'main@sha1:{commit}'","reason":"Succeeded","status":"True","type":"Ready"}}],"#,
            r#""includedArtifacts":[{{"digest":"sha256:{zeros}","path":"x","revision":"y","url":"{base}/other.tar.gz"}}],"#,
            r#""observedGeneration":1}}}}"#
        ),
        digest = digest,
        commit = COMMIT,
        base = base,
        zeros = "0".repeat(64),
    )
}

fn run(script: &str, dir: &Path, config: &serde_json::Value) -> Output {
    let sa = dir.join("sa");
    std::fs::create_dir_all(&sa).unwrap();
    std::fs::write(sa.join("token"), TOKEN).unwrap();
    std::fs::write(sa.join("ca.crt"), "").unwrap();
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(script);
    for (k, v) in config.as_object().unwrap() {
        cmd.env(k, v.as_str().unwrap());
    }
    cmd.output().unwrap()
}

fn tools_available() -> bool {
    let ok = ["sh", "curl", "sha256sum", "tar"].iter().all(|t| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {t}"))
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if !ok {
        common::skip_or_fail("sh, curl, sha256sum or tar is missing");
    }
    ok
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn fetch_downloads_the_flux_artifact_checks_its_digest_and_the_tree_lints() {
    let Some((script, config)) = fetch_script() else {
        return;
    };
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tarball = artifact(dir.path());
    let digest = sha256_hex(&tarball);
    let base = start(move |base| git_repository(base, &digest), tarball);
    let out = run(&localised(&script, dir.path(), &base), dir.path(), &config);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("OK"), "sha256sum -c: {}", text(&out));
    let tree: PathBuf = dir.path().join("repo/tree");
    let lint = Command::new(BIN)
        .arg(&tree)
        .args(["--format", "json", "--fail-on", "never"])
        .output()
        .unwrap();
    assert!(lint.status.success(), "{}", text(&lint));
    assert!(
        String::from_utf8_lossy(&lint.stdout)
            .contains("authentik-cache-on-sync-replicated-postgres")
    );
}

#[test]
fn fetch_refuses_an_artifact_whose_digest_differs() {
    let Some((script, config)) = fetch_script() else {
        return;
    };
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tarball = artifact(dir.path());
    let wrong = sha256_hex(b"something else");
    let base = start(move |base| git_repository(base, &wrong), tarball);
    let out = run(&localised(&script, dir.path(), &base), dir.path(), &config);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("FAILED"), "{}", text(&out));
    assert!(!dir.path().join("repo/tree").exists());
}

#[test]
fn fetch_says_when_the_git_repository_has_no_artifact() {
    let Some((script, config)) = fetch_script() else {
        return;
    };
    if !tools_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = start(
        |_| {
            r#"{"kind":"GitRepository","spec":{"url":"https://example.com/r.git"},"status":{"conditions":[]}}"#.to_string()
        },
        Vec::new(),
    );
    let out = run(&localised(&script, dir.path(), &base), dir.path(), &config);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("GitRepository flux-system/flux-system has no artifact yet"),
        "{}",
        text(&out)
    );
}
