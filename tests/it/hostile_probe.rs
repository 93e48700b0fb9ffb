//! Hostile probe targets, each probed by the real binary as a
//! subprocess under the memory, CPU and wall-clock limits of
//! tests/support/limited.rs: a clear error, no unbounded growth, and no
//! part of a secret in any message.

use crate::common;
use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;

use homelab_lint::probe::postgres::Method;
use support::limited;

/// An HTTP server on 127.0.0.1 that answers every request with 200 and a
/// chunked body that never ends (until the client goes away).
fn endless_body_server() -> std::net::SocketAddr {
    endless_answer("200 OK", "")
}

/// An HTTP server on 127.0.0.1 that answers every request with `status`
/// and a chunked body, `first` and then `x` without end.
fn endless_answer(status: &'static str, first: &'static str) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            std::thread::spawn(move || {
                let mut request = Vec::new();
                let mut byte = [0u8; 1];
                while !request.ends_with(b"\r\n\r\n") {
                    match stream.read(&mut byte) {
                        Ok(1) => request.push(byte[0]),
                        _ => return,
                    }
                }
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"
                );
                let chunk0 = format!("{:x}\r\n{first}\r\n", first.len());
                if stream.write_all(head.as_bytes()).is_err()
                    || (!first.is_empty() && stream.write_all(chunk0.as_bytes()).is_err())
                {
                    return;
                }
                let data = vec![b'x'; 64 * 1024];
                let mut chunk = format!("{:x}\r\n", data.len()).into_bytes();
                chunk.extend_from_slice(&data);
                chunk.extend_from_slice(b"\r\n");
                while stream.write_all(&chunk).is_ok() {}
            });
        }
    });
    addr
}

/// A Pushgateway that answers 500 with an endless body: the error says
/// what it began with, on one line, and the run ends (it took 2.6 GB and
/// aborted, and the body's newline put a `::error::` line on stderr).
#[test]
fn an_endless_pushgateway_error_body_is_capped_and_kept_on_one_line() {
    let addr = endless_answer("500 Internal Server Error", "bad push\n::error::forged\n");
    let mut cmd = limited::linter();
    cmd.arg("--pushgateway")
        .arg(format!("http://{addr}"))
        .arg(common::example_repo());
    let run = limited::run_limited(cmd, limited::Limits::default());
    assert_eq!(run.code(), Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("answered 500 Internal Server Error: bad push\\x0a"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.lines().any(|l| l.trim_start().starts_with("::")),
        "{}",
        run.stderr
    );
}

/// A Pushgateway URL with a password that does not parse (a port out of
/// range, a bad IPv6 host, a bad percent-escape in the host): the error
/// echoed it whole, password included.
#[test]
fn a_pushgateway_url_that_does_not_parse_shows_no_password() {
    for url in [
        "http://push:Hunter2pw@127.0.0.1:99999/x",
        "http://push:Hunter2pw@[::1/x",
        "https://push:Hunter2pw@h%ZZost/",
    ] {
        let mut cmd = limited::linter();
        cmd.arg("--pushgateway")
            .arg(url)
            .arg(common::example_repo());
        let run = limited::run_limited(cmd, limited::Limits::default());
        assert_eq!(run.code(), Some(2), "{url}: {}", run.stderr);
        assert!(run.stderr.contains("is not a URL"), "{}", run.stderr);
        assert!(!run.stderr.contains("Hunter2"), "{}", run.stderr);
        assert!(!run.stdout_text().contains("Hunter2"));
    }
}

/// A Kubernetes API server whose answer never ends: the request fails
/// past the cap, read as it streams (it took 2.6 GB and aborted within
/// 5 s, before the request timeout).
#[test]
fn an_endless_kubernetes_api_response_is_capped() {
    let addr = endless_answer("200 OK", "");
    let tmp = tempfile::tempdir().unwrap();
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n  - name: fake\n    cluster:\n      server: http://{addr}\ncontexts:\n  - name: fake\n    context:\n      cluster: fake\n      user: fake\ncurrent-context: fake\nusers:\n  - name: fake\n    user:\n      token: fake-token\n"
        ),
    )
    .unwrap();
    let mut cmd = limited::linter();
    cmd.arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg(common::example_repo());
    let run = limited::run_limited(cmd, limited::Limits::default());
    assert!(
        run.stderr.contains("is over 268435456 bytes"),
        "{:?}\n{}",
        run.code(),
        run.stderr
    );
}

#[test]
fn an_endless_http_body_is_read_up_to_the_cap_not_buffered() {
    let addr = endless_body_server();
    let url = format!("http://{addr}/api/v3/core/applications/");
    let mut cmd = limited::linter();
    cmd.args(["probe", "http", "--requests", "1", "--url", &url]);
    // 1 GiB of address space is far below what buffering the body for
    // the probe's 60 s budget would take at loopback speed.
    let run = limited::run_limited(
        cmd,
        limited::Limits {
            address_space: 1 << 30,
            ..limited::Limits::default()
        },
    );
    assert_eq!(run.code(), Some(2), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the response body is over 16777216 bytes"),
        "{}",
        run.stderr
    );
}

/// A key=value DSN whose password lacks its `=`: the parser's reason
/// quoted the character where `=` was expected, the password's first.
#[test]
fn a_dsn_missing_an_equals_sign_shows_no_character_of_the_password() {
    let mut cmd = limited::linter();
    cmd.args([
        "probe",
        "postgres",
        "--budget",
        "5s",
        "--dsn",
        "host=127.0.0.1 port=1 user=app password Qs3cret",
    ]);
    let run = limited::run_limited(cmd, limited::Limits::default());
    let out = format!("{}{}", run.stdout_text(), run.stderr);
    assert_eq!(run.code(), Some(2), "{out}");
    assert!(out.contains("expected `=`"), "{out}");
    assert!(!out.contains('Q'), "{out}");
}

#[test]
fn a_dsn_whose_password_holds_an_unescaped_at_is_never_echoed() {
    const PASSWORD_PARTS: [&str; 5] = ["s3cr", "cr@t", "@t/p", "t/pw", "tpw"];
    for dsn in [
        "postgres://app:s3cr@t/pw@127.0.0.1:1/db",
        "postgres://app:s3cr@tpw@127.0.0.1:1/db",
        "postgresql://app:s3cr@t/pw@127.0.0.1:1/db?sslmode=disable",
    ] {
        for via_env in [false, true] {
            let mut cmd = limited::linter();
            cmd.args(["probe", "postgres", "--budget", "5s"]);
            if via_env {
                cmd.env("HOMELAB_LINT_PROBE_DSN", dsn);
            } else {
                cmd.args(["--dsn", dsn]);
            }
            let run = limited::run_limited(cmd, limited::Limits::default());
            let out = format!("{}{}", run.stdout_text(), run.stderr);
            assert_eq!(run.code(), Some(2), "{dsn}: {out}");
            assert!(out.contains("unescaped '@'"), "{dsn}: {out}");
            for part in PASSWORD_PARTS {
                assert!(!out.contains(part), "{dsn}: {part:?} shown in {out}");
            }
        }
    }
    // Escaped, it is accepted: the error is then about the connection,
    // and names the target without the password.
    let mut cmd = limited::linter();
    cmd.args([
        "probe",
        "postgres",
        "--budget",
        "5s",
        "--dsn",
        "postgres://app:s3cr%40t%2Fpw@127.0.0.1:1/db",
    ]);
    let run = limited::run_limited(cmd, limited::Limits::default());
    let out = format!("{}{}", run.stdout_text(), run.stderr);
    assert_eq!(run.code(), Some(2), "{out}");
    assert!(out.contains("app@127.0.0.1:1/db"), "{out}");
    for part in PASSWORD_PARTS {
        assert!(!out.contains(part), "{part:?} shown in {out}");
    }
}

#[test]
fn with_a_logical_replication_slot_the_commit_probe_sends_it_nothing() {
    if !common::pg::available() {
        return;
    }
    let server = common::pg::PgServer::start_fast();
    server.psql("ALTER SYSTEM SET wal_level = logical");
    server.restart();
    server.psql("SELECT pg_create_logical_replication_slot('consumer', 'test_decoding')");
    let mut cmd = limited::linter();
    cmd.args([
        "probe",
        "postgres",
        "--budget",
        "20s",
        "--output",
        "json",
        "--dsn",
        &server.dsn("postgres"),
    ]);
    let run = limited::run_limited(cmd, limited::Limits::default());
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    let report: homelab_lint::probe::postgres::Report = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("not a probe report ({e}): {}", run.stdout_text()));
    let Method::TempTable { reason } = &report.method else {
        panic!("not the temp table method: {report:#?}");
    };
    assert!(
        reason.starts_with("1 logical replication slot(s) exist"),
        "{reason}"
    );
    // What the slot's consumer would receive: transactions, no message.
    let changes = server.psql(
        "SELECT count(*) FROM pg_logical_slot_peek_changes('consumer', NULL, NULL) WHERE data LIKE 'message:%'",
    );
    assert_eq!(changes.trim(), "0", "messages reached the slot");
}
