//! `--pushgateway URL` against the real Prometheus Pushgateway (Debian's
//! `prometheus-pushgateway`, started here on 127.0.0.1): the run's
//! metrics show on the Pushgateway's own `/metrics`, a second push
//! replaces the group, and a failed push says where, without the
//! password of the URL.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// A Pushgateway on a free loopback port, stopped on drop.
struct Pushgateway {
    child: Child,
    port: u16,
    _storage: tempfile::TempDir,
}

impl Drop for Pushgateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn pushgateway_binary() -> Option<&'static str> {
    let found = ["/usr/bin/prometheus-pushgateway", "prometheus-pushgateway"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        common::skip_or_fail(
            "prometheus-pushgateway is missing (apt-get install prometheus-pushgateway)",
        );
    }
    found
}

/// GET `path` on 127.0.0.1:`port`: the status code and body, or None
/// when nothing answers.
fn get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let (head, body) = response.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

fn start() -> Option<Pushgateway> {
    let binary = pushgateway_binary()?;
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let storage = tempfile::tempdir().unwrap();
    let child = Command::new(binary)
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .arg(format!(
            "--persistence.file={}",
            storage.path().join("metrics").display()
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let gateway = Pushgateway {
        child,
        port,
        _storage: storage,
    };
    // Ready when /-/ready answers 200; give up after about 30 s.
    for _ in 0..300 {
        if get(port, "/-/ready").is_some_and(|(status, _)| status == 200) {
            return Some(gateway);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the Pushgateway on 127.0.0.1:{port} did not become ready");
}

/// A lint of `repo` that pushes its metrics to `url`.
fn lint_pushing(repo: &Path, url: &str) -> Output {
    let repo = repo.to_str().unwrap();
    let args = [
        repo,
        "--format",
        "json",
        "--fail-on",
        "never",
        "--pushgateway",
        url,
    ];
    common::lint(Path::new("."), &args)
}

/// The value of the pushed `homelab_lint_findings` sample of `rule` on
/// the Pushgateway's /metrics (which adds the job and instance labels).
fn findings_on_gateway(metrics: &str, rule: &str) -> Option<u64> {
    metrics
        .lines()
        .filter(|l| l.starts_with("homelab_lint_findings{"))
        .filter(|l| l.contains("job=\"homelab-lint\"") && l.contains(&format!("rule=\"{rule}\"")))
        .find_map(|l| l.rsplit(' ').next()?.parse().ok())
}

const CACHE_RULE: &str = "authentik-cache-on-sync-replicated-postgres";

#[test]
fn pushed_metrics_show_on_the_pushgateway_and_a_second_push_replaces_them() {
    let Some(gateway) = start() else {
        return;
    };
    let url = format!("http://127.0.0.1:{}", gateway.port);
    let out = lint_pushing(&common::example_repo(), &url);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (status, metrics) = get(gateway.port, "/metrics").unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        findings_on_gateway(&metrics, CACHE_RULE),
        Some(1),
        "{metrics}"
    );
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("push_time_seconds{") && l.contains("job=\"homelab-lint\"")),
        "the Pushgateway records the push: {metrics}"
    );
    assert!(
        metrics.contains("homelab_lint_last_run_timestamp_seconds{"),
        "{metrics}"
    );

    // A repository without the finding: the rule's count goes back to 0
    // rather than keeping the old 1 (PUT replaces the whole group).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: empty\n",
    )
    .unwrap();
    let fixed = dir.path();
    let out = lint_pushing(fixed, &url);
    assert_eq!(out.status.code(), Some(0));
    let (_, metrics) = get(gateway.port, "/metrics").unwrap();
    assert_eq!(
        findings_on_gateway(&metrics, CACHE_RULE),
        Some(0),
        "{metrics}"
    );
}

#[test]
fn a_failed_push_names_the_gateway_without_its_password_and_exits_2() {
    // A port where nothing listens: bound, then released.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = lint_pushing(
        &common::example_repo(),
        &format!("http://lint:s3cret@127.0.0.1:{port}/"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot push metrics to"), "{err}");
    assert!(err.contains(&format!("127.0.0.1:{port}")), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    // The report itself was still written.
    assert!(String::from_utf8_lossy(&out.stdout).contains(CACHE_RULE));
}
