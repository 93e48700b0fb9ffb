//! Remote kustomize resources (`--remote`): a manifest served over HTTP by
//! a real server on 127.0.0.1, and a folder of a real git repository (a
//! bare repository the test makes, fetched over git's `file://`
//! transport), both read as kustomize reads them. Loopback http and
//! `file://` are refused unless `HOMELAB_LINT_REMOTE_LOCAL=1`, the
//! tests' allowance (SECURITY.md). Nothing but the cache folder and the
//! repository is written: `HOME` is an empty folder that stays empty.

use crate::{common, support};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub(crate) const OPERATOR: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: ext-postgres-operator
spec:
  selector:
    matchLabels: {app: op}
  template:
    metadata:
      labels: {app: op}
    spec:
      containers:
        - name: ext-postgres-operator
          image: movetokube/postgres-operator:2.4.0
";

/// Serves `OPERATOR` at `/operator.yaml` and 404 elsewhere; returns the
/// base URL and the count of requests served.
fn serve_manifest() -> (String, Arc<AtomicUsize>) {
    serve_files(&[("/operator.yaml", OPERATOR)])
}

/// Serves each `(path, body)` of `files` and 404 elsewhere; returns the
/// base URL and the count of requests served.
pub(crate) fn serve_files(files: &[(&'static str, &'static str)]) -> (String, Arc<AtomicUsize>) {
    let files: Vec<_> = files.iter().map(|(p, b)| (*p, b.as_bytes())).collect();
    serve_bytes(&files)
}

/// [`serve_files`] for bodies that need not be text.
pub(crate) fn serve_bytes(files: &[(&'static str, &'static [u8])]) -> (String, Arc<AtomicUsize>) {
    let files = files.to_vec();
    let hits = Arc::new(AtomicUsize::new(0));
    let counted = hits.clone();
    let addr = support::serve::spawn(move |req: hyper::Request<hyper::body::Incoming>| {
        let counted = counted.clone();
        let found = files
            .iter()
            .find(|(p, _)| *p == req.uri().path())
            .map(|(_, b)| *b);
        async move {
            counted.fetch_add(1, Ordering::SeqCst);
            let (status, body) = match found {
                Some(body) => (200, body),
                None => (404, &b"not found"[..]),
            };
            hyper::Response::builder()
                .status(status)
                .body(http_body_util::Full::new(hyper::body::Bytes::from(body)))
                .unwrap()
        }
    });
    (format!("http://{addr}"), hits)
}

/// A Flux repository whose one app kustomization lists `resources` and
/// patches the operator's Deployment with its POSTGRES_HOST.
pub(crate) fn repo_listing(dir: &Path, resources: &[&str]) -> PathBuf {
    let repo = dir.join("gitops");
    let write = |rel: &str, text: &str| {
        let path = repo.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "clusters/home/flux.yaml",
        &format!(
            "{}---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: operator, namespace: flux-system}}
spec: {{interval: 1h, path: ./apps/operator, prune: true, sourceRef: {{kind: GitRepository, name: flux-system}}}}
",
            common::FLUX_ROOT
        ),
    );
    let list: String = resources.iter().map(|r| format!("  - {r}\n")).collect();
    write(
        "apps/operator/kustomization.yaml",
        &format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: databases
resources:
{list}patches:
  - target:
      kind: Deployment
      name: ext-postgres-operator
    patch: |-
      apiVersion: apps/v1
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
"
        ),
    );
    repo
}

/// `inventory PATH --provenance -v` with `args`, `HOME` at `home` and the
/// cache at `cache`.
pub(crate) fn inventory(
    repo: &Path,
    home: &Path,
    cache: &Path,
    local: bool,
    args: &[&str],
) -> Output {
    let mut cmd = Command::new(common::BIN);
    cmd.arg("inventory")
        .arg(repo)
        .args(["--provenance", "-v", "--remote-cache"])
        .arg(cache)
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOMELAB_LINT_REMOTE")
        .env_remove("HOMELAB_LINT_REMOTE_CACHE");
    if local {
        cmd.env("HOMELAB_LINT_REMOTE_LOCAL", "1");
    } else {
        cmd.env_remove("HOMELAB_LINT_REMOTE_LOCAL");
    }
    cmd.output().unwrap()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The inventory's object of `kind` and `name`, if listed.
pub(crate) fn object(out: &Output, kind: &str, name: &str) -> Option<serde_json::Value> {
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("inventory is not JSON ({e}): {}", stderr(out)));
    json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["kind"] == kind && o["name"] == name)
        .cloned()
}

pub(crate) struct Dirs {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub cache: PathBuf,
}

pub(crate) fn dirs() -> Dirs {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let home = root.join("home");
    std::fs::create_dir_all(&home).unwrap();
    Dirs {
        cache: root.join("cache"),
        home,
        root,
        _tmp: tmp,
    }
}

pub(crate) fn assert_home_untouched(d: &Dirs) {
    let left: Vec<_> = std::fs::read_dir(&d.home).unwrap().collect();
    assert!(left.is_empty(), "the run wrote into HOME: {left:?}");
}

#[test]
fn http_manifest_is_fetched_once_then_read_from_the_cache() {
    let (base, hits) = serve_manifest();
    let d = dirs();
    let url = format!("{base}/operator.yaml");
    let repo = repo_listing(&d.root, &[&url]);

    let first = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&first);
    assert!(first.status.success(), "{err}");
    assert!(err.contains(&format!("remote: {url}: fetched")), "{err}");
    assert!(!err.contains("not fetched"), "{err}");
    let op = object(&first, "Deployment", "ext-postgres-operator").expect("the fetched Deployment");
    assert_eq!(op["file"], url.as_str(), "{op}");
    assert_eq!(op["namespace"], "databases");
    let image = &op["provenance"]["spec.template.spec.containers[0].image"]["at"];
    assert_eq!(image, &format!("{url}:14:18").as_str(), "{op}");
    let host = &op["provenance"]["spec.template.spec.containers[0].env[0].value"]["at"];
    assert!(
        host.as_str()
            .unwrap()
            .ends_with("apps/operator/kustomization.yaml:22:28"),
        "{host}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    let second = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&second);
    assert!(
        err.contains(&format!("remote: {url}: from the cache")),
        "{err}"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the second run asked the server"
    );
    assert_eq!(first.stdout, second.stdout);
    assert_home_untouched(&d);
}

#[test]
fn loopback_http_is_refused_without_the_test_allowance_and_the_run_goes_on() {
    let (base, hits) = serve_manifest();
    let d = dirs();
    let url = format!("{base}/operator.yaml");
    let repo = repo_listing(&d.root, &[&url]);
    let out = inventory(&repo, &d.home, &d.cache, false, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "apps/operator/kustomization.yaml:5:5: remote resource '{url}' is not fetched: plain http is not fetched, only https"
        )),
        "{err}"
    );
    assert_eq!(hits.load(Ordering::SeqCst), 0);
    assert_home_untouched(&d);
}

#[test]
fn without_remote_the_patch_of_a_remote_deployment_still_gives_its_env() {
    let d = dirs();
    let url =
        "https://raw.githubusercontent.com/movetokube/postgres-operator/2.4.0/deploy/operator.yaml";
    let repo = repo_listing(&d.root, &[url]);
    let out = inventory(&repo, &d.home, &d.cache, false, &[]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "apps/operator/kustomization.yaml:5:5: remote resource '{url}' is not fetched: it is a manifest file; remote entries are fetched only with --remote"
        )),
        "{err}"
    );
    let op = object(&out, "Deployment", "ext-postgres-operator").expect("the stand-in");
    let chain = op["chain"].as_array().unwrap();
    assert!(
        chain
            .iter()
            .any(|s| s["kind"] == "remote-stand-in" && s["detail"] == url),
        "{op}"
    );
    let env = &op["object"]["spec"]["template"]["spec"]["containers"][0]["env"][0];
    assert_eq!(env["value"], "main-rw.databases.svc:5432");
    let at = &op["provenance"]["spec.template.spec.containers[0].env[0].value"]["at"];
    assert!(
        at.as_str()
            .unwrap()
            .ends_with("apps/operator/kustomization.yaml:22:28"),
        "{at}"
    );
    assert!(
        op["object"]["spec"]["template"]["spec"]["containers"][0]
            .get("image")
            .is_none(),
        "a stand-in knows only what the patch sets: {op}"
    );
    assert!(!d.cache.exists(), "an offline run made the cache folder");
    assert_home_untouched(&d);
}

#[test]
fn budgets_exceeded_say_which_and_the_run_goes_on() {
    let (base, _hits) = serve_manifest();
    let d = dirs();
    let url = format!("{base}/operator.yaml");
    let missing = format!("{base}/other.yaml");
    let repo = repo_listing(&d.root, &[&url, &missing]);

    let out = inventory(
        &repo,
        &d.home,
        &d.cache,
        true,
        &["--remote", "--remote-max-fetches", "1"],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "remote resource '{missing}' is not fetched: remote fetch budget exceeded: more than 1 remote entries"
        )),
        "{err}"
    );
    assert!(object(&out, "Deployment", "ext-postgres-operator").is_some());

    let out = inventory(
        &repo,
        &d.home,
        &d.root.join("cache2"),
        true,
        &["--remote", "--remote-max-bytes", "10"],
    );
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("remote resource '{url}' is not fetched: fetching {url} failed: the file is larger than the 10 bytes left in the budget")),
        "{err}"
    );
    assert!(
        err.contains(&format!("remote resource '{missing}' is not fetched: fetching {missing} failed: HTTP status 404 Not Found")),
        "{err}"
    );
    assert_home_untouched(&d);
}

/// A bare repository `NAME.git` under `root`: `files` committed and
/// tagged v1.0.0, then `later` (file, from, to) committed on its default
/// branch, so that only the tag gives the files as written.
pub(crate) fn tagged_bare_repo(
    root: &Path,
    name: &str,
    files: &[(&str, &str)],
    later: (&str, &str, &str),
) -> PathBuf {
    let work = root.join(name);
    for (rel, text) in files {
        let path = work.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    common::git(&work, &["init", "-q"]);
    common::git(&work, &["add", "-A"]);
    common::git(&work, &["commit", "-q", "-m", "v1"]);
    common::git(&work, &["tag", "v1.0.0"]);
    common::edit(&work, later.0, later.1, later.2);
    common::git(&work, &["commit", "-q", "-am", "later"]);
    let bare = format!("{name}.git");
    common::git(root, &["clone", "-q", "--bare", name, &bare]);
    root.join(bare)
}

#[test]
fn git_folder_is_fetched_from_a_local_repository_at_its_ref() {
    if !common::git_available() {
        return;
    }
    let d = dirs();
    let bare = tagged_bare_repo(
        &d.root,
        "upstream",
        &[
            (
                "deploy/kustomization.yaml",
                "resources:\n  - operator.yaml\ncommonLabels:\n  app.kubernetes.io/part-of: upstream\n",
            ),
            ("deploy/operator.yaml", OPERATOR),
        ],
        ("deploy/operator.yaml", "2.4.0", "9.9.9"),
    );
    let entry = format!("file://{}//deploy?ref=v1.0.0", bare.display());
    let repo = repo_listing(&d.root, &[&entry]);

    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let repo_url = format!("file://{}", bare.display());
    assert!(
        err.contains(&format!("remote: {repo_url} at v1.0.0: fetched")),
        "{err}"
    );
    let op = object(&out, "Deployment", "ext-postgres-operator")
        .expect("the Deployment of the remote folder");
    let file = format!("{repo_url}//deploy/operator.yaml?ref=v1.0.0");
    assert_eq!(op["file"], file.as_str(), "{op}");
    let image = &op["object"]["spec"]["template"]["spec"]["containers"][0]["image"];
    assert_eq!(
        image, "movetokube/postgres-operator:2.4.0",
        "the tag's file, not the branch's"
    );
    assert_eq!(
        op["object"]["metadata"]["labels"]["app.kubernetes.io/part-of"], "upstream",
        "the remote kustomization was built"
    );
    assert_eq!(
        op["provenance"]["spec.template.spec.containers[0].image"]["at"],
        format!("{file}:14:18").as_str()
    );

    let again = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    assert!(stderr(&again).contains(&format!("remote: {repo_url} at v1.0.0: from the cache")));

    let refused = inventory(&repo, &d.home, &d.root.join("cache2"), false, &["--remote"]);
    assert!(
        stderr(&refused).contains("is not fetched: only https is fetched"),
        "{}",
        stderr(&refused)
    );
    assert_home_untouched(&d);
}

/// A lint (`-v -o json`) of `repo` with `args`, `HOME` at `home`.
fn lint(repo: &Path, home: &Path, args: &[&str]) -> Output {
    Command::new(common::BIN)
        .arg(repo)
        .args(["-v", "-o", "json", "--fail-on", "never"])
        .args(args)
        .env("HOME", home)
        .env("HOMELAB_LINT_REMOTE_LOCAL", "1")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOMELAB_LINT_REMOTE")
        .env_remove("HOMELAB_LINT_REMOTE_CACHE")
        .env_remove("HOMELAB_LINT_CONFIG")
        .output()
        .unwrap()
}

#[test]
fn a_config_file_the_user_names_turns_fetching_on_the_repositorys_own_does_not() {
    let (base, hits) = serve_manifest();
    let d = dirs();
    let url = format!("{base}/operator.yaml");
    let repo = repo_listing(&d.root, &[&url]);
    let text = format!(
        "remote:\n  enabled: true\n  cache: {}\n  maxFetches: 3\n  budget: 1m\n",
        d.cache.display()
    );
    let mine = d.root.join("mine.yaml");
    std::fs::write(&mine, &text).unwrap();

    let out = lint(&repo, &d.home, &["--config", mine.to_str().unwrap()]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("remote: {url}: fetched")), "{err}");
    assert_eq!(hits.load(Ordering::SeqCst), 1);

    std::fs::write(repo.join(".homelab-lint.yaml"), &text).unwrap();
    let out = lint(&repo, &d.home, &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("remote.enabled is not honoured in the repository's own configuration"),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "remote resource '{url}' is not fetched: it is a manifest file"
        )),
        "{err}"
    );
    assert_eq!(
        hits.load(Ordering::SeqCst),
        1,
        "the repository's config made a fetch"
    );
    assert_home_untouched(&d);
}

#[test]
fn a_fix_for_a_value_in_a_fetched_manifest_is_display_only() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "testdata/rules/authentik-cache-on-sync-replicated-postgres/fires/cnpg-ceph-block-pool-size-three",
    );
    let database = std::fs::read_to_string(fixture.join("database.yaml")).unwrap();
    let addr = support::serve::spawn(move |_req: hyper::Request<hyper::body::Incoming>| {
        let body = database.clone();
        async move { hyper::Response::new(http_body_util::Full::new(hyper::body::Bytes::from(body))) }
    });
    let d = dirs();
    let url = format!("http://{addr}/database.yaml");
    let repo = repo_listing(&d.root, &[]);
    std::fs::write(
        repo.join("clusters/home/apps.yaml"),
        "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec: {interval: 1h, path: ./apps/db, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
",
    )
    .unwrap();
    let app = repo.join("apps/db");
    std::fs::create_dir_all(&app).unwrap();
    for f in ["storageclass.yaml", "helmrelease.yaml"] {
        std::fs::copy(fixture.join(f), app.join(f)).unwrap();
    }
    std::fs::write(
        app.join("kustomization.yaml"),
        format!("resources:\n  - {url}\n  - storageclass.yaml\n  - helmrelease.yaml\n"),
    )
    .unwrap();

    let cache = d.cache.to_str().unwrap().to_string();
    let out = lint(&repo, &d.home, &["--remote", "--remote-cache", &cache]);
    let report = common::report(&out);
    let finding = report
        .findings
        .iter()
        .find(|f| f.rule == "authentik-cache-on-sync-replicated-postgres")
        .unwrap_or_else(|| panic!("no finding: {}", stderr(&out)));
    assert!(
        finding.location.path.starts_with(&url),
        "{:?}",
        finding.location
    );
    let fix = finding.fix.as_ref().expect("a fix");
    assert!(fix.edits.is_empty(), "{fix:?}");
    assert!(
        fix.notes[0].contains(&format!(
            "the value is written in {url}, which the repository only lists"
        )),
        "{fix:?}"
    );
    assert_home_untouched(&d);
}

/// An upstream repository whose `deploy` folder is a kustomization with
/// what a remote base may hold: a resource, a component from a sibling
/// folder, a ConfigMap generator reading a file and an env file, and a
/// patch file. Returns the bare repository `upstream.git` under `root`.
fn upstream_base(root: &Path) -> PathBuf {
    let work = root.join("upstream");
    let write = |rel: &str, text: &str| {
        let path = work.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "deploy/kustomization.yaml",
        "resources:
  - operator.yaml
components:
  - ../components/metrics
configMapGenerator:
  - name: operator-config
    files:
      - settings.conf
    envs:
      - operator.env
patches:
  - path: replicas.yaml
",
    );
    write("deploy/operator.yaml", OPERATOR);
    write("deploy/settings.conf", "max_connections=100\n");
    write("deploy/operator.env", "POSTGRES_DEFAULT_DATABASE=app\n");
    write(
        "deploy/replicas.yaml",
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: ext-postgres-operator
spec:
  replicas: 2
",
    );
    write(
        "components/metrics/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - service.yaml
",
    );
    write(
        "components/metrics/service.yaml",
        "apiVersion: v1
kind: Service
metadata:
  name: operator-metrics
spec:
  ports:
    - port: 8080
",
    );
    // A component another repository applies to its own objects.
    write(
        "components/tier/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
  - service.yaml
patches:
  - path: tier.yaml
    target:
      kind: Deployment
",
    );
    write(
        "components/tier/service.yaml",
        &std::fs::read_to_string(work.join("components/metrics/service.yaml")).unwrap(),
    );
    write(
        "components/tier/tier.yaml",
        "apiVersion: apps/v1
kind: Deployment
metadata:
  name: any
  labels:
    tier: backend
",
    );
    common::git(&work, &["init", "-q"]);
    common::git(&work, &["add", "-A"]);
    common::git(&work, &["commit", "-q", "-m", "v1"]);
    common::git(&work, &["tag", "v1.0.0"]);
    common::git(root, &["clone", "-q", "--bare", "upstream", "upstream.git"]);
    root.join("upstream.git")
}

/// Serves the git repositories under `dir` over git's smart HTTP
/// protocol, through `git http-backend` as CGI; returns the base URL.
fn serve_git(dir: PathBuf) -> String {
    use http_body_util::BodyExt;
    let addr = support::serve::spawn(move |req: hyper::Request<hyper::body::Incoming>| {
        let dir = dir.clone();
        async move {
            let (parts, body) = req.into_parts();
            let body = body
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            let header = |name: &str| {
                parts
                    .headers
                    .get(name)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string()
            };
            let mut cgi = Command::new("git")
                .arg("http-backend")
                .env("GIT_PROJECT_ROOT", &dir)
                .env("GIT_HTTP_EXPORT_ALL", "1")
                .env("PATH_INFO", parts.uri.path())
                .env("QUERY_STRING", parts.uri.query().unwrap_or(""))
                .env("REQUEST_METHOD", parts.method.as_str())
                .env("CONTENT_TYPE", header("content-type"))
                .env("CONTENT_LENGTH", body.len().to_string())
                .env("HTTP_CONTENT_ENCODING", header("content-encoding"))
                .env("GIT_PROTOCOL", header("git-protocol"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = cgi.stdin.take().unwrap();
            let writer = std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(&body);
            });
            let out = cgi.wait_with_output().unwrap();
            writer.join().unwrap();
            // CGI: headers, a blank line, the body.
            let split = out
                .stdout
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|i| (i, 4))
                .or_else(|| {
                    out.stdout
                        .windows(2)
                        .position(|w| w == b"\n\n")
                        .map(|i| (i, 2))
                })
                .unwrap_or((out.stdout.len(), 0));
            let head = String::from_utf8_lossy(&out.stdout[..split.0]).into_owned();
            let mut response = hyper::Response::builder();
            for line in head.lines() {
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                let value = value.trim();
                if name.eq_ignore_ascii_case("status") {
                    let code = value.split(' ').next().unwrap_or("200");
                    response = response.status(code.parse::<u16>().unwrap_or(500));
                } else {
                    response = response.header(name.trim(), value);
                }
            }
            let rest = out.stdout[(split.0 + split.1).min(out.stdout.len())..].to_vec();
            response
                .body(http_body_util::Full::new(hyper::body::Bytes::from(rest)))
                .unwrap()
        }
    });
    format!("http://{addr}")
}

/// What a render of the remote base must hold: the patch, the generator
/// and the component applied, each value at its remote file.
fn assert_remote_base_built(out: &Output, repo_url: &str) {
    let err = stderr(out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("remote: {repo_url} at v1.0.0: fetched")),
        "{err}"
    );
    let name = |rel: &str| format!("{repo_url}//{rel}?ref=v1.0.0");
    let op = object(out, "Deployment", "ext-postgres-operator")
        .unwrap_or_else(|| panic!("the remote Deployment: {err}"));
    assert_eq!(op["object"]["spec"]["replicas"], 2, "{op}");
    assert_eq!(
        op["provenance"]["spec.replicas"]["at"],
        format!("{}:6:13", name("deploy/replicas.yaml")).as_str(),
        "{op}"
    );
    let steps: Vec<(String, String)> = op["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["kind"].as_str().unwrap().into(),
                s["detail"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        steps.contains(&("patch".into(), name("deploy/replicas.yaml"))),
        "a remote step names its remote file: {steps:?}"
    );

    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let config = json["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| {
            o["kind"] == "ConfigMap"
                && o["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("operator-config-"))
        })
        .unwrap_or_else(|| panic!("the generated ConfigMap: {err}"));
    assert_eq!(config["namespace"], "databases");
    assert_eq!(
        config["object"]["data"]["settings.conf"],
        "max_connections=100\n"
    );
    assert_eq!(config["object"]["data"]["POSTGRES_DEFAULT_DATABASE"], "app");
    assert_eq!(config["file"], name("deploy/kustomization.yaml").as_str());

    let service = object(out, "Service", "operator-metrics")
        .unwrap_or_else(|| panic!("the component's Service: {err}"));
    assert_eq!(
        service["file"],
        name("components/metrics/service.yaml").as_str()
    );
    assert_eq!(service["namespace"], "databases");
    assert!(
        service["chain"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kind"] == "component" && s["detail"] == name("components/metrics").as_str()),
        "{service}"
    );
}

#[test]
fn a_remote_base_from_a_local_git_remote_builds_its_component_generator_and_patch() {
    if !common::git_available() {
        return;
    }
    let d = dirs();
    let bare = upstream_base(&d.root);
    let repo_url = format!("file://{}", bare.display());
    let entry = format!("{repo_url}//deploy?ref=v1.0.0");
    let repo = repo_listing(&d.root, &[&entry]);
    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    assert_remote_base_built(&out, &repo_url);
    assert_home_untouched(&d);
}

#[test]
fn a_remote_base_over_http_builds_its_component_generator_and_patch() {
    if !common::git_available() {
        return;
    }
    let d = dirs();
    upstream_base(&d.root);
    let base = serve_git(d.root.clone());
    let repo_url = format!("{base}/upstream.git");
    let entry = format!("{repo_url}//deploy?ref=v1.0.0");
    let repo = repo_listing(&d.root, &[&entry]);
    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    assert_remote_base_built(&out, &repo_url);

    // Without the tests' allowance, plain http is refused before git runs.
    let refused = inventory(&repo, &d.home, &d.root.join("cache2"), false, &["--remote"]);
    assert!(
        stderr(&refused).contains(&format!(
            "remote resource '{entry}' is not fetched: plain http is not fetched, only https"
        )),
        "{}",
        stderr(&refused)
    );
    assert_home_untouched(&d);
}

#[test]
fn offline_a_remote_base_says_what_it_names_and_that_remote_would_fetch_it() {
    let d = dirs();
    let entry = "https://github.com/movetokube/postgres-operator//deploy?ref=2.4.0";
    let repo = repo_listing(&d.root, &[entry]);
    let out = inventory(&repo, &d.home, &d.cache, false, &[]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "apps/operator/kustomization.yaml:5:5: remote resource '{entry}' is not fetched: it \
             is git repository https://github.com/movetokube/postgres-operator, folder deploy, at \
             ref 2.4.0; remote entries are fetched only with --remote"
        )),
        "{err}"
    );
    assert!(
        object(&out, "Service", "operator-metrics").is_none(),
        "nothing of the remote base is made up offline"
    );
    assert!(!d.cache.exists(), "an offline run made the cache folder");
    assert_home_untouched(&d);
}

/// The app kustomization of [`repo_listing`], listing `components` too.
fn with_components(repo: &Path, components: &[&str]) {
    let path = repo.join("apps/operator/kustomization.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("\ncomponents:\n");
    for c in components {
        text.push_str(&format!("  - {c}\n"));
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_remote_component_changes_the_objects_of_the_kustomization_that_lists_it() {
    if !common::git_available() {
        return;
    }
    let d = dirs();
    let bare = upstream_base(&d.root);
    let repo_url = format!("file://{}", bare.display());
    let entry = format!("{repo_url}//components/tier?ref=v1.0.0");
    let repo = repo_listing(&d.root, &["operator.yaml"]);
    std::fs::write(repo.join("apps/operator/operator.yaml"), OPERATOR).unwrap();
    with_components(&repo, &[&entry]);

    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    let name = |rel: &str| format!("{repo_url}//{rel}?ref=v1.0.0");
    let op = object(&out, "Deployment", "ext-postgres-operator").expect("the local Deployment");
    assert_eq!(op["file"], "apps/operator/operator.yaml", "{op}");
    assert_eq!(
        op["object"]["metadata"]["labels"]["tier"], "backend",
        "{op}"
    );
    assert_eq!(
        op["provenance"]["metadata.labels.tier"]["at"],
        format!("{}:6:11", name("components/tier/tier.yaml")).as_str(),
        "{op}"
    );
    // The local patch still applies, at its own line.
    assert_eq!(
        op["object"]["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"],
        "main-rw.databases.svc:5432"
    );
    let service = object(&out, "Service", "operator-metrics").expect("the component's Service");
    assert_eq!(
        service["file"],
        name("components/tier/service.yaml").as_str()
    );
    assert_eq!(service["namespace"], "databases");

    // Offline, the component is a gap that names it.
    let offline = inventory(&repo, &d.home, &d.root.join("cache2"), false, &[]);
    let err = stderr(&offline);
    assert!(
        err.contains(&format!(
            "remote component '{entry}' is not fetched: it is git repository {repo_url}, folder \
             components/tier, at ref v1.0.0; remote entries are fetched only with --remote"
        )),
        "{err}"
    );
    let op = object(&offline, "Deployment", "ext-postgres-operator").unwrap();
    assert!(op["object"]["metadata"].get("labels").is_none(), "{op}");
    assert_home_untouched(&d);
}
