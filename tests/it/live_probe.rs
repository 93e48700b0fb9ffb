//! Probes through the Kubernetes API: a live lint of the fixture cluster
//! (testdata/cluster, the founding incident) against the fake API server,
//! whose `pods/portforward` leads to a real throwaway Postgres standing in
//! for the Zalando primary `security/auth-postgres-0`. The credentials
//! come from the operator's Secret in the fixture, whose password is the
//! planted one that must appear in no output.

use crate::common;
use crate::fake_api;
use crate::support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use common::pg::{self, PgServer};
use fake_api::{FakeApi, Faults, Fixture, Forward};
use homelab_lint::report::json::Finding;
use homelab_lint::rules::Severity;

const PLANTED: &str = "Planted-Pa55word-7c1e";
const FOUNDING: &str = "authentik-cache-on-sync-replicated-postgres";
const PRIMARY: &str = "security/auth-postgres-0";

fn fixture() -> Fixture {
    Fixture::from_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster"))
}

/// A server with the role and database the Zalando Secret names, the
/// role authenticating with the planted password: on slow storage (fsync
/// delayed `slow_fsync_us`), or on fast storage (tmpfs) for 0.
fn database(slow_fsync_us: u64) -> PgServer {
    let server = match slow_fsync_us {
        0 => PgServer::start_fast(),
        us => PgServer::start(us),
    };
    server.psql(&format!("CREATE ROLE authentik LOGIN PASSWORD '{PLANTED}'"));
    server.psql("CREATE DATABASE authentik OWNER authentik");
    server
}

fn forwarding_to(server: &PgServer, drop_after: Option<Duration>) -> Faults {
    let mut faults = Faults::default();
    faults.port_forward.insert(
        PRIMARY.into(),
        Forward {
            target: ([127, 0, 0, 1], server.port).into(),
            drop_after,
        },
    );
    faults
}

fn lint(api: &FakeApi, extra: &[&str]) -> (Output, Finding) {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.kubeconfig(dir.path());
    let out = std::process::Command::new(common::BIN)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["-o", "json"])
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.contains(PLANTED) && !stderr.contains(PLANTED),
        "the planted password was printed"
    );
    let founding = common::finding(&out, FOUNDING);
    (out, founding)
}

fn number(f: &Finding, key: &str) -> f64 {
    common::evidence(f, key)
        .parse()
        .unwrap_or_else(|e| panic!("{key} ({e}) in {f:#?}"))
}

fn verdict(f: &Finding) -> &str {
    common::evidence(f, "probe.verdict")
}

#[test]
fn founding_finding_is_confirmed_through_the_port_forward() {
    if !pg::available() {
        return;
    }
    let server = database(8_000);
    // The verdict is measured (p50 >= 2 ms and 3x slower than without the
    // flush wait), through a tunnel that a loaded machine slows down.
    let mut run = None;
    common::measure_twice(|| {
        let api = FakeApi::start(fixture(), forwarding_to(&server, None));
        let (out, f) = lint(&api, &["-vv"]);
        assert_eq!(verdict(&f), "confirmed", "{f:#?}");
        let p50 = number(&f, "probe.commit.p50_ms");
        assert!(p50 >= 8.0, "{f:#?}");
        assert!(number(&f, "probe.commit_off.p50_ms") <= p50 / 3.0, "{f:#?}");
        run = Some((api, out, f));
    });
    let (api, out, f) = run.unwrap();
    assert_eq!(out.status.code(), Some(1), "{f:#?}");
    assert_eq!(f.severity, Severity::Warning);
    let target = common::evidence(&f, "probe.target");
    assert_eq!(
        target,
        "authentik@pod security/auth-postgres-0:5432/authentik (port-forward)"
    );
    // The keepalive finding binds only the app: it is measured on the
    // database the founding finding names, in the same probe run.
    let keepalive = common::finding(&out, "authentik-persistent-connections-without-keepalives");
    assert_eq!(verdict(&keepalive), "confirmed", "{keepalive:#?}");
    assert_eq!(common::evidence(&keepalive, "probe.target"), target);
    // One Secret read by name, when the probe needed it; never a list.
    let requests = api.requests();
    let secret_reads: Vec<_> = requests.iter().filter(|r| r.contains("secrets")).collect();
    assert_eq!(
        secret_reads.len(),
        1,
        "{secret_reads:?} (requests: {requests:?})"
    );
    assert!(
        secret_reads[0].contains(
            "/namespaces/security/secrets/authentik.auth-postgres.credentials.postgresql.acid.zalan.do"
        ),
        "{secret_reads:?}"
    );
    assert!(
        requests
            .iter()
            .any(|r| r.contains("/pods/auth-postgres-0/portforward")),
        "{requests:?}"
    );
    server.assert_no_probe_session();
}

#[test]
fn without_slow_storage_the_founding_finding_is_not_confirmed() {
    if !pg::available() {
        return;
    }
    let server = database(0);
    let api = FakeApi::start(fixture(), forwarding_to(&server, None));
    let (_, f) = lint(&api, &[]);
    assert_eq!(verdict(&f), "not confirmed", "{f:#?}");
    // Refuted: info, evidence kept.
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    // On tmpfs a flush is free: a commit costs what it costs without the
    // flush wait, however slow a loaded machine makes both.
    let (on, off) = (
        number(&f, "probe.commit.p50_ms"),
        number(&f, "probe.commit_off.p50_ms"),
    );
    assert!(on < 2.0 || on < 3.0 * off, "{f:#?}");
    server.assert_no_probe_session();
}

#[test]
fn port_forward_dropped_mid_probe_is_inconclusive_within_budget() {
    if !pg::available() {
        return;
    }
    let server = database(8_000);
    // Each connection's port-forward is cut 150 ms after it opens: the
    // connection tries pass, the commit series does not.
    let api = FakeApi::start(
        fixture(),
        forwarding_to(&server, Some(Duration::from_millis(150))),
    );
    let started = Instant::now();
    let (_, f) = lint(&api, &["--probe-budget", "2s"]);
    let took = started.elapsed();
    assert_eq!(verdict(&f), "inconclusive", "{f:#?}");
    assert_eq!(
        f.severity,
        Severity::Warning,
        "an unmeasured finding stands: {f:#?}"
    );
    let notes = f.notes.join("\n");
    assert!(notes.contains("the probe failed"), "{notes}");
    assert!(
        !notes.contains("budget"),
        "ended by the drop, not the budget: {notes}"
    );
    assert!(took < Duration::from_secs(8), "took {took:?}");
    server.assert_no_probe_session();
}

#[test]
fn forbidden_port_forward_is_inconclusive_with_the_reason() {
    if !pg::available() {
        return;
    }
    let server = database(0);
    let mut faults = forwarding_to(&server, None);
    faults.forbidden.push("pods/portforward".into());
    let api = FakeApi::start(fixture(), faults);
    let (_, f) = lint(&api, &[]);
    assert_eq!(verdict(&f), "inconclusive", "{f:#?}");
    let notes = f.notes.join("\n");
    assert!(
        notes.contains("cannot port-forward to pod security/auth-postgres-0: forbidden"),
        "{notes}"
    );
}

#[test]
fn no_probe_reads_no_secret_and_skips() {
    if !pg::available() {
        return;
    }
    let server = database(0);
    let api = FakeApi::start(fixture(), forwarding_to(&server, None));
    let (_, f) = lint(&api, &["--no-probe"]);
    assert_eq!(verdict(&f), "skipped", "{f:#?}");
    let requests = api.requests();
    assert!(
        !requests
            .iter()
            .any(|r| r.contains("secrets") || r.contains("portforward")),
        "{requests:?}"
    );
}

/// An app behind a Service: answers `GET /api/v3/core/applications/` with
/// the right bearer token, counting what it answered.
fn start_app(
    token: &'static str,
) -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let served = std::sync::Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    let addr = support::serve::spawn(move |req: hyper::Request<hyper::body::Incoming>| {
        let count = count.clone();
        async move {
            let authorized = req
                .headers()
                .get("authorization")
                .is_some_and(|v| v == format!("Bearer {token}").as_str());
            let ok = authorized && req.uri().path() == "/api/v3/core/applications/";
            if ok {
                count.fetch_add(1, Ordering::SeqCst);
            }
            hyper::Response::builder()
                .status(if ok { 200 } else { 403 })
                .header("content-type", "application/json")
                .body(http_body_util::Full::new(hyper::body::Bytes::from_static(
                    b"{\"results\": []}",
                )))
                .unwrap()
        }
    });
    (addr, served)
}

#[test]
fn http_probe_reaches_a_service_pod_through_the_api() {
    const TOKEN: &str = "probe-token-5b1d";
    let (app, served) = start_app(TOKEN);
    let mut faults = Faults::default();
    faults.port_forward.insert(
        "security/authentik-server-7d9f8b6c5d-x2x9q".into(),
        Forward {
            target: app,
            drop_after: None,
        },
    );
    let api = FakeApi::start(fixture(), faults);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.kubeconfig(dir.path());
    let out = std::process::Command::new(common::BIN)
        .args(["probe", "http", "--service", "security/authentik-server"])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--requests", "4", "-o", "json"])
        .env("HOMELAB_LINT_TOKEN", TOKEN)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains(TOKEN) && !stderr.contains(TOKEN));
    let report: homelab_lint::probe::http::Report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a probe report ({e}): {stdout}"));
    assert_eq!(report.sequential.samples_ms.len(), 4);
    assert_eq!(report.parallel.samples_ms.len(), 4);
    assert_eq!(
        report.target,
        "security/authentik-server/api/v3/core/applications/ \
         (port-forward to pod security/authentik-server-7d9f8b6c5d-x2x9q:9000 of Service authentik-server)"
    );
    // The warm-up and both series went through the port-forward.
    assert_eq!(served.load(std::sync::atomic::Ordering::SeqCst), 9);
    let forwards = api
        .requests()
        .iter()
        .filter(|r| {
            r.contains("/pods/authentik-server-7d9f8b6c5d-x2x9q/portforward")
                && r.contains("ports=9000")
        })
        .count();
    assert!(forwards >= 1, "{:?}", api.requests());

    // A Service that selects no running pod: a clear error, exit 2.
    let out = std::process::Command::new(common::BIN)
        .args([
            "probe",
            "http",
            "--service",
            "security/auth-postgres",
            "--service-port",
            "80",
        ])
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("Service security/auth-postgres has no port 80"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn probe_postgres_database_measures_the_primary_through_the_api() {
    if !pg::available() {
        return;
    }
    let server = database(8_000);
    let api = FakeApi::start(fixture(), forwarding_to(&server, None));
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = api.kubeconfig(dir.path());
    let probe = |database: &str, extra: &[&str]| {
        std::process::Command::new(common::BIN)
            .args(["probe", "postgres", "--database", database])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(extra)
            .env_remove("HOMELAB_LINT_PG_DSN")
            .output()
            .unwrap()
    };
    let out = probe("security/auth-postgres", &["-o", "json"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains(PLANTED) && !stderr.contains(PLANTED));
    let report: homelab_lint::probe::postgres::Report = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not a probe report ({e}): {stdout}"));
    assert_eq!(
        report.target,
        "authentik@pod security/auth-postgres-0:5432/authentik (port-forward)"
    );
    assert!(report.effective.p50_ms >= 8.0, "{report:#?}");
    assert_eq!(report.synchronous_commit, "on");
    server.assert_no_probe_session();

    // A name no operator declares: a clear error, exit 2.
    let out = probe("security/nope", &[]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .contains("no Postgres cluster security/nope of Zalando, CloudNativePG or Crunchy PGO"),
        "{stderr}"
    );
}
