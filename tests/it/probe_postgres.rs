//! The Postgres commit probe against throwaway servers (tests/common/pg.rs),
//! with fsync slowed by an LD_PRELOAD shim to stand in for replicated storage.

use crate::common;

use common::pg::{self, PgServer};

/// One WAL-writing transaction that touches no table, as the probe runs it.
const EMIT_SCRIPT: &str =
    "BEGIN;\nSELECT pg_logical_emit_message(true, 'homelab-lint', 'bench');\nCOMMIT;\n";

/// The slowness the tests inject into one flush (`PgServer::start(8_000)`,
/// a standby's in the replication tests).
const INJECTED_MS: f64 = 8.0;

#[test]
fn harness_slow_fsync_makes_commits_slow() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(8_000);
    common::measure_twice(|| {
        let on = server.pgbench(EMIT_SCRIPT, 40, None);
        let off = server.pgbench(EMIT_SCRIPT, 40, Some("-c synchronous_commit=off"));
        eprintln!("pgbench emit-message commit latency: on {on:.2} ms, off {off:.2} ms");
        assert!(on >= 8.0, "commits should wait for the 8 ms fsync: {on} ms");
        // Additive, not a ratio: load slows both series alike, so a ratio
        // margin fails on a loaded machine while half the injected flush
        // still separates them.
        assert!(
            off + INJECTED_MS / 2.0 <= on,
            "commits without flush wait: {off} ms"
        );
    });
}

use std::time::{Duration, Instant};

use homelab_lint::probe::postgres::{self as probe, APPLICATION_NAME, Method, Options, ProbeError};
use homelab_lint::report::json::{Finding, Report};
use homelab_lint::rules::Severity;

fn options(dsn: String) -> Options {
    Options {
        target: homelab_lint::probe::postgres::Target::Dsn(dsn),
        ..Options::default()
    }
}

/// Rows written to user tables so far, and their count.
fn user_table_writes(server: &PgServer) -> String {
    server.psql(
        "SELECT count(*) || ' tables, ' || COALESCE(sum(n_tup_ins + n_tup_upd + n_tup_del), 0) \
         || ' rows written' FROM pg_stat_user_tables",
    )
}

/// A user table with some rows, so that "no writes" is checked against a
/// table that exists. Returns once the statistics count the two rows: a
/// session's counts reach pg_stat_user_tables when it ends, a moment
/// after psql returns.
fn seed_user_table(server: &PgServer) -> String {
    server.psql("CREATE TABLE app_cache (k text PRIMARY KEY, v text)");
    server.psql("INSERT INTO app_cache VALUES ('a', '1'), ('b', '2')");
    let seeded = "1 tables, 2 rows written";
    let start = Instant::now();
    loop {
        let writes = user_table_writes(server);
        if writes == seeded {
            return writes;
        }
        // Only bounds a hang: the counts land within milliseconds.
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the statistics never counted the seed: {writes}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until the probe's sessions have ended, then checks over a second
/// that no count of a user table moves from `before`. A session's counts
/// land when it ends; the second covers that flush on a loaded machine.
fn assert_no_user_table_writes(server: &PgServer, before: &str) {
    server.assert_no_probe_session();
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        assert_eq!(
            user_table_writes(server),
            before,
            "the probe wrote to a user table"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn commit_probe_with_8ms_fsync_matches_pgbench() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(8_000);
    let before = seed_user_table(&server);
    let mut report = None;
    common::measure_twice(|| {
        let start = Instant::now();
        let r = probe::run_blocking(&options(server.dsn("postgres"))).expect("probe");
        let wall = start.elapsed();
        let bench = server.pgbench(EMIT_SCRIPT, 40, None);
        check_against_pgbench(&r, bench, wall);
        report = Some(r);
    });
    let report = report.unwrap();
    assert_eq!(report.method, Method::EmitMessage);
    assert_eq!(report.synchronous_commit, "on");
    assert_eq!(report.connect.samples_ms.len(), 3);
    let fsync = report.setting("fsync").expect("fsync read");
    assert_eq!(
        (fsync.value.as_str(), fsync.source.as_str()),
        ("on", "default")
    );
    assert!(report.setting("full_page_writes").is_some());
    assert!(report.setting("tcp_keepalives_idle").is_some());
    assert_no_user_table_writes(&server, &before);
}

/// The probe's median commit waits for the 8 ms flush as pgbench's
/// average does (40% apart at most: pgbench's average takes the slow
/// outliers of a loaded machine; a probe that missed the flush would be
/// 90% off), the series without flush wait is 4x faster, and the probe
/// kept to its 2 s budget (with a second for starting and stopping it; a
/// probe ignoring it would take minutes on a stalled server).
fn check_against_pgbench(report: &probe::Report, bench: f64, wall: Duration) {
    eprintln!(
        "probe: sync {} p50 {:.2} p95 {:.2} max {:.2} ms ({} samples); off p50 {:.2} p95 {:.2} max {:.2} ms; \
         ratio {:.1}; connect p50 {:.2} ms; wall {wall:?}; pgbench {bench:.2} ms",
        report.synchronous_commit,
        report.effective.p50_ms,
        report.effective.p95_ms,
        report.effective.max_ms,
        report.effective.samples_ms.len(),
        report.off.p50_ms,
        report.off.p95_ms,
        report.off.max_ms,
        report.ratio.unwrap_or(0.0),
        report.connect.p50_ms,
    );
    assert_eq!(report.effective.samples_ms.len(), 20, "{:?}", report.notes);
    assert!(report.effective.p50_ms >= 8.0, "{report:?}");
    assert!(
        report.off.p50_ms + INJECTED_MS / 2.0 <= report.effective.p50_ms,
        "{report:?}"
    );
    assert!(report.ratio.unwrap_or(0.0) > 1.0, "{report:?}");
    let diff = (report.effective.p50_ms - bench).abs() / bench;
    assert!(
        diff <= 0.4,
        "probe p50 {:.2} ms vs pgbench {bench:.2} ms: {:.0}% apart",
        report.effective.p50_ms,
        diff * 100.0
    );
    assert!(wall <= Duration::from_secs(3), "{wall:?}");
}

#[test]
fn reports_where_synchronous_commit_is_set() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(8_000);
    server.psql("ALTER DATABASE postgres SET synchronous_commit = off");
    let report = probe::run_blocking(&options(server.dsn("postgres"))).expect("probe");
    assert_eq!(report.synchronous_commit, "off");
    let s = report.setting("synchronous_commit").unwrap();
    assert_eq!((s.value.as_str(), s.source.as_str()), ("off", "database"));
    assert_eq!(
        report.db_role_settings.len(),
        1,
        "{:?}",
        report.db_role_settings
    );
    let d = &report.db_role_settings[0];
    assert_eq!(
        (d.database.as_deref(), d.role.as_deref(), d.value.as_str()),
        (Some("postgres"), None, "off")
    );
    // Off at the database: no commit waits for the 8 ms flush.
    assert!(report.effective.p50_ms < 8.0, "{report:?}");
    server.assert_no_probe_session();
}

#[test]
fn revoked_emit_function_falls_back_to_a_temp_table() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(8_000);
    server.psql("CREATE ROLE app LOGIN");
    server.psql(
        "REVOKE EXECUTE ON FUNCTION pg_logical_emit_message(boolean, text, text) FROM PUBLIC",
    );
    let before = seed_user_table(&server);
    common::measure_twice(|| {
        let report = probe::run_blocking(&options(server.dsn("app"))).expect("probe");
        eprintln!(
            "fallback: on p50 {:.2} ms, off p50 {:.2} ms, {:?}",
            report.effective.p50_ms, report.off.p50_ms, report.method
        );
        match &report.method {
            Method::TempTable { reason } => {
                assert!(reason.contains("permission denied"), "{reason}")
            }
            other => panic!("expected the fallback, got {other:?}"),
        }
        assert!(report.effective.p50_ms >= 8.0, "{report:?}");
        assert!(
            report.off.p50_ms + INJECTED_MS / 2.0 <= report.effective.p50_ms,
            "{report:?}"
        );
    });
    assert_no_user_table_writes(&server, &before);
}

#[test]
fn server_down_is_a_connect_error_within_budget() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let mut server = PgServer::start(0);
    let dsn = server.dsn("postgres");
    server.stop();
    let start = Instant::now();
    let err = probe::run_blocking(&options(dsn)).unwrap_err();
    // A refused connection fails at once; the 2 s budget bounds it.
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert!(matches!(err, ProbeError::Connect { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("cannot connect to postgres@127.0.0.1:"),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "{text}");
}

#[test]
fn wrong_password_is_an_auth_error_without_the_password() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(0);
    // The budget is also the connect timeout: on a loaded machine a scram
    // exchange can take longer than the default 2 s, which would turn the
    // auth error this test is about into a budget error.
    let generous = |dsn| Options {
        budget: Duration::from_secs(60),
        ..options(dsn)
    };
    let dsn = format!("{} password=not-the-password", server.dsn(pg::PW_USER));
    let err = probe::run_blocking(&generous(dsn)).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ProbeError::Auth { .. }), "{err:?}");
    assert!(text.contains("password authentication failed"), "{text}");
    assert!(!text.contains("not-the-password"), "{text}");
    // The right password works.
    let dsn = format!("{} password={}", server.dsn(pg::PW_USER), pg::PW_PASSWORD);
    probe::run_blocking(&generous(dsn)).expect("probe with the right password");
    server.assert_no_probe_session();
}

#[test]
fn server_stalling_mid_probe_ends_within_budget() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(8_000);
    let opts = Options {
        samples: 1000,
        ..options(server.dsn("postgres"))
    };
    let start = Instant::now();
    let handle = std::thread::spawn(move || probe::run_blocking(&opts));
    // Find the probe's backend once it is timing commits, and freeze it.
    let pid = loop {
        std::thread::sleep(Duration::from_millis(100));
        let pid = server.psql(&format!(
            "SELECT pid FROM pg_stat_activity WHERE application_name = '{APPLICATION_NAME}' \
             AND query LIKE '%emit_message%' LIMIT 1"
        ));
        if !pid.is_empty() {
            break pid;
        }
        assert!(
            !handle.is_finished(),
            "the probe ended before its session was seen: {:?}",
            handle.join()
        );
    };
    let stop = std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap();
    assert!(stop.success());
    let result = handle.join().unwrap();
    let wall = start.elapsed();
    let _ = std::process::Command::new("kill")
        .args(["-CONT", &pid])
        .status();
    let err = result.expect_err("a frozen backend cannot finish the probe");
    eprintln!("stall: {err} after {wall:?}");
    // The 2 s budget, and a second for starting and stopping on a loaded
    // machine; without the budget the frozen backend would hold it forever.
    assert!(wall < Duration::from_secs(3), "{wall:?}");
    match &err {
        ProbeError::Budget { stage, .. } => assert!(stage.contains("timing commits"), "{stage}"),
        other => panic!("expected a budget error, got {other:?}"),
    }
    server.assert_no_probe_session();
}

fn plugin() -> std::process::Command {
    std::process::Command::new(common::BIN)
}

#[test]
fn cli_prints_a_before_after_table_without_the_password() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(8_000);
    let dsn = server.password_url();
    let out = plugin()
        .args(["probe", "postgres", "--samples", "10", "--budget", "2s"])
        .env("HOMELAB_LINT_PG_DSN", &dsn)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("synchronous_commit = on (server)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("synchronous_commit = off (SET LOCAL)"),
        "{stdout}"
    );
    assert!(stdout.contains("ratio (p50):"), "{stdout}");
    assert!(stdout.contains(&format!(
        "{}@127.0.0.1:{}/postgres",
        pg::PW_USER,
        server.port
    )));
    assert!(!stdout.contains(pg::PW_PASSWORD) && !stderr.contains(pg::PW_PASSWORD));

    let json = plugin()
        .args(["probe", "postgres", "-o", "json", "--dsn", &dsn])
        .output()
        .unwrap();
    assert!(json.status.success());
    let report: probe::Report = serde_json::from_slice(&json.stdout).unwrap();
    assert!(report.effective.p50_ms >= 8.0, "{report:#?}");
    assert!(!String::from_utf8_lossy(&json.stdout).contains(pg::PW_PASSWORD));

    // A wrong password: exit 2, a reason, and neither password echoed.
    let bad = dsn.replace(pg::PW_PASSWORD, "wrong-secret");
    let out = plugin()
        .args(["probe", "postgres", "--dsn", &bad])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("authentication failed"), "{stderr}");
    assert!(!stderr.contains("wrong-secret"), "{stderr}");
    server.assert_no_probe_session();
}

/// The finding of `rule` in a JSON report.
fn finding_of(stdout: &[u8], rule: &str) -> Finding {
    Report::from_json(stdout)
        .expect("JSON report")
        .findings
        .into_iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| panic!("a finding of {rule}"))
}

/// Everything a finding says (message, evidence, notes, fix), as JSON.
fn said(f: &Finding) -> String {
    serde_json::to_string(f).expect("a finding serializes")
}

/// `probe.verdict` and the other probe evidence of the founding finding.
fn founding_evidence(stdout: &[u8]) -> Finding {
    finding_of(stdout, "authentik-cache-on-sync-replicated-postgres")
}

const KEEPALIVE_RULE: &str = "authentik-persistent-connections-without-keepalives";

#[test]
fn lint_with_probe_dsn_confirms_or_refutes_the_founding_finding() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(8_000);
    let dsn = server.password_url();
    let lint = |dsn: &str| {
        plugin()
            .args(["--example", "-o", "json", "--probe-dsn", dsn])
            .output()
            .unwrap()
    };
    let out = lint(&dsn);
    assert_eq!(out.status.code(), Some(1));
    let f = founding_evidence(&out.stdout);
    eprintln!("{:?}", f.evidence);
    assert_eq!(common::evidence(&f, "probe.verdict"), "confirmed", "{f:#?}");
    assert_eq!(
        common::evidence(&f, "probe.synchronous_commit"),
        "on (source: default)"
    );
    let p50: f64 = common::evidence(&f, "probe.commit.p50_ms").parse().unwrap();
    assert!(p50 >= 8.0, "{f:#?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(pg::PW_PASSWORD));
    // The same probe judges the keepalive finding: the server's default
    // keepalive idle time is the kernel's two hours.
    let k = finding_of(&out.stdout, KEEPALIVE_RULE);
    assert_eq!(common::evidence(&k, "probe.verdict"), "confirmed", "{k:#?}");
    assert_eq!(k.severity, Severity::Warning);

    server.psql("ALTER DATABASE postgres SET synchronous_commit = off");
    server.psql("ALTER DATABASE postgres SET tcp_keepalives_idle = 60");
    let out = lint(&dsn);
    let f = founding_evidence(&out.stdout);
    assert_eq!(
        common::evidence(&f, "probe.verdict"),
        "not confirmed",
        "{f:#?}"
    );
    // Refuted: reported as info, with its evidence kept.
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert!(f.evidence.contains_key("probe.commit.p50_ms"), "{f:#?}");
    let k = finding_of(&out.stdout, KEEPALIVE_RULE);
    assert_eq!(
        common::evidence(&k, "probe.verdict"),
        "not confirmed",
        "{k:#?}"
    );
    assert_eq!(
        common::evidence(&k, "probe.tcp_keepalives_idle"),
        "60s (source: database)"
    );
    assert_eq!(
        common::evidence(&f, "probe.synchronous_commit"),
        "off (source: database)"
    );
    let notes = said(&f);
    assert!(
        notes.contains("already runs synchronous_commit=off"),
        "{f:#?}"
    );

    // An unreachable server leaves the finding standing, with the reason.
    let down = format!("host=127.0.0.1 port={} user=postgres", server.port + 1);
    let out = lint(&down);
    assert_eq!(out.status.code(), Some(1));
    let f = founding_evidence(&out.stdout);
    assert_eq!(
        common::evidence(&f, "probe.verdict"),
        "inconclusive",
        "{f:#?}"
    );
    assert!(
        said(&f).contains("inconclusive: the probe failed: cannot connect"),
        "{f:#?}"
    );
    // Findings of rules without a probe carry no probe evidence.
    for other in Report::from_json(&out.stdout).unwrap().findings {
        if other.rule != "authentik-cache-on-sync-replicated-postgres"
            && other.rule != KEEPALIVE_RULE
        {
            assert!(!other.evidence.contains_key("probe.verdict"), "{other:#?}");
        }
    }
    // --no-probe: skipped, and nothing connects.
    let out = plugin()
        .args([
            "--example",
            "-o",
            "json",
            "--no-probe",
            "--probe-dsn",
            &down,
        ])
        .output()
        .unwrap();
    let f = founding_evidence(&out.stdout);
    assert_eq!(common::evidence(&f, "probe.verdict"), "skipped", "{f:#?}");
    assert!(said(&f).contains("--no-probe"), "{f:#?}");
    server.assert_no_probe_session();
}

#[test]
fn tls_is_verified_unless_told_otherwise() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start_with(0, true);
    let dsn = format!("{} sslmode=require", server.dsn("postgres"));
    // The test CA is not trusted by default: a clear reason, with the way out.
    let err = probe::run_blocking(&options(dsn.clone())).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, ProbeError::Connect { .. }), "{err:?}");
    assert!(
        text.contains("certificate") && text.contains("--ca"),
        "{text}"
    );
    // Trusting the CA: verified TLS 1.3.
    let report = probe::run_blocking(&Options {
        ca_file: Some(server.ca_file()),
        ..options(dsn.clone())
    })
    .expect("probe with the CA");
    assert_eq!(report.tls.as_deref(), Some("TLSv1.3"));
    // Without verification.
    let report = probe::run_blocking(&Options {
        insecure: true,
        ..options(dsn)
    })
    .expect("probe without verification");
    assert!(report.tls.is_some());
    // sslmode=disable: plain.
    let plain = format!("{} sslmode=disable", server.dsn("postgres"));
    let report = probe::run_blocking(&options(plain)).expect("plain probe");
    assert_eq!(report.tls, None);
    server.assert_no_probe_session();
}

#[test]
fn very_slow_storage_cuts_the_series_instead_of_failing() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start(150_000);
    let start = Instant::now();
    let report = probe::run_blocking(&options(server.dsn("postgres"))).expect("probe");
    let wall = start.elapsed();
    // 20 commits of 150 ms would take 3 s: the 2 s budget cuts the series.
    eprintln!(
        "150 ms fsync: {} samples, p50 {:.1} ms; off {} samples; notes {:?}; wall {wall:?}",
        report.effective.samples_ms.len(),
        report.effective.p50_ms,
        report.off.samples_ms.len(),
        report.notes
    );
    assert!(wall < Duration::from_millis(2900), "{wall:?}");
    assert!(report.effective.samples_ms.len() < 20);
    assert!(report.effective.p50_ms >= 150.0);
    assert!(
        report.notes.iter().any(|n| n.contains("cut to")),
        "{:?}",
        report.notes
    );
    // The three levels are timed in rounds: the budget cuts them alike
    // (the cut round leaves its last levels one sample short).
    let n = report.effective.samples_ms.len();
    for other in [&report.local, &report.off] {
        assert!((n - 1..=n).contains(&other.samples_ms.len()), "{report:?}");
    }
    server.assert_no_probe_session();
}

const SYNC_RULE: &str = "authentik-cache-on-synchronously-replicated-postgres";

/// joryirving's Authentik runs on CNPG with a
/// synchronous standby. A real primary on fast storage with a real
/// streaming standby whose flush takes 8 ms: every commit on the primary
/// waits for the standby, and the probe confirms the finding. Authentik's
/// database at synchronous_commit = local refutes it (commits then wait
/// for no standby, whatever the local flush costs), and so does off.
#[test]
fn synchronous_standby_confirms_the_synchronous_replication_finding() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let Some(corpus) = common::corpus() else {
        return;
    };
    let (primary, _standby) = PgServer::sync_pair(8_000);
    let dsn = primary.password_url();
    let lint = || {
        plugin()
            .arg(corpus.join("joryirving__home-ops"))
            .args(["-o", "json", "--probe-dsn", &dsn])
            .output()
            .unwrap()
    };
    // The verdict is a measurement: a loaded machine may miss it once.
    let mut confirmed = None;
    common::measure_twice(|| {
        let out = lint();
        let f = finding_of(&out.stdout, SYNC_RULE);
        assert_eq!(common::evidence(&f, "probe.verdict"), "confirmed", "{f:#?}");
        confirmed = Some((out, f));
    });
    let (out, f) = confirmed.unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert_eq!(
        common::evidence(&f, "probe.synchronous_standby_names"),
        "* (source: configuration file)",
        "{f:#?}"
    );
    let p50: f64 = common::evidence(&f, "probe.commit.p50_ms").parse().unwrap();
    assert!(p50 >= 8.0, "{f:#?}");
    assert!(said(&f).contains("the standby wait dominates"), "{f:#?}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(pg::PW_PASSWORD));

    // Remedies: commits stop waiting for the standby.
    primary.psql("ALTER DATABASE postgres SET synchronous_commit = local");
    let f = finding_of(&lint().stdout, SYNC_RULE);
    assert_eq!(
        common::evidence(&f, "probe.verdict"),
        "not confirmed",
        "{f:#?}"
    );
    assert_eq!(
        common::evidence(&f, "probe.standby_wait_ms"),
        "0.00",
        "{f:#?}"
    );
    assert!(said(&f).contains("the standby wait is small"), "{f:#?}");
    primary.psql("ALTER DATABASE postgres SET synchronous_commit = off");
    let f = finding_of(&lint().stdout, SYNC_RULE);
    assert_refuted_by_off_in_the_database(&f);
    primary.assert_no_probe_session();
}

/// A remedy in bootstrap SQL (CNPG postInitApplicationSQL)
/// makes the finding info, since the repository cannot show whether it
/// ran; the probe, which reads the session's value (pg_db_role_setting
/// applies at connect), decides: a server without it confirms and the
/// finding is a warning again; one with it refutes.
#[test]
fn probe_decides_a_remedy_that_ran_only_at_bootstrap() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let (server, _standby) = PgServer::sync_pair(8_000);
    let dsn = server.dsn("postgres");
    let lint =
        |args: &[&str]| lint_sync_fixture("cnpg-post-init-application-sql-alter-database", args);
    let f = finding_of(&lint(&["--no-probe"]).stdout, SYNC_RULE);
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert!(
        said(&f).contains("runs once, when the cluster is created"),
        "{f:#?}"
    );

    let f = finding_of(&lint(&["--probe-dsn", &dsn]).stdout, SYNC_RULE);
    assert_eq!(common::evidence(&f, "probe.verdict"), "confirmed", "{f:#?}");
    assert_eq!(f.severity, Severity::Warning, "{f:#?}");
    assert!(
        said(&f).contains("is not in effect on the probed server"),
        "{f:#?}"
    );

    server.psql("ALTER DATABASE postgres SET synchronous_commit = off");
    let f = finding_of(&lint(&["--probe-dsn", &dsn]).stdout, SYNC_RULE);
    assert_refuted_by_off_in_the_database(&f);
    server.assert_no_probe_session();
}

/// A finding the probe refuted because the database runs
/// synchronous_commit = off: info, its evidence naming where the value
/// comes from.
fn assert_refuted_by_off_in_the_database(f: &Finding) {
    assert_eq!(
        common::evidence(f, "probe.verdict"),
        "not confirmed",
        "{f:#?}"
    );
    assert_eq!(f.severity, Severity::Info, "{f:#?}");
    assert_eq!(
        common::evidence(f, "probe.synchronous_commit"),
        "off (source: database)",
        "{f:#?}"
    );
}

/// A JSON lint of a fires/ fixture of the synchronous-replication rule.
fn lint_sync_fixture(name: &str, args: &[&str]) -> std::process::Output {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/rules")
        .join(SYNC_RULE)
        .join("fires")
        .join(name);
    plugin()
        .arg(fixture)
        .args(["-o", "json"])
        .args(args)
        .output()
        .unwrap()
}

/// What a probe may not change: the per-database and per-role settings
/// and the synchronous_commit a new session gets.
fn settings_state(server: &PgServer) -> String {
    server.psql(
        "SELECT current_setting('synchronous_commit') || '; ' || \
         COALESCE((SELECT string_agg(setdatabase || '/' || setrole || '=' || \
         array_to_string(setconfig, ','), ' ' ORDER BY 1) FROM pg_db_role_setting), '')",
    )
}

/// One probe of `dsn`, which must find `dominant` the larger part of the
/// wait: `((larger part, ms), (smaller part, ms))`.
fn attributed(dsn: &str, dominant: &str) -> ((&'static str, f64), (&'static str, f64)) {
    let r = probe::run_blocking(&options(dsn.to_string())).expect("probe");
    let a = r.attribution;
    eprintln!(
        "on {:.2} local {:.2} off {:.2} ms; {}",
        r.effective.p50_ms,
        r.local.p50_ms,
        r.off.p50_ms,
        a.summary()
    );
    assert!(
        a.summary().starts_with(&format!("{dominant} dominates")),
        "{r:?}"
    );
    let (standby, local) = (
        ("standby wait", a.standby_wait_ms),
        ("local flush", a.local_flush_ms),
    );
    if standby.1 >= local.1 {
        (standby, local)
    } else {
        (local, standby)
    }
}

/// With a synchronous standby whose flush takes 8 ms and a
/// primary on tmpfs, the probe puts the wait on the standby (the
/// effective series against `SET LOCAL synchronous_commit = local`), by
/// more than half the injected delay; the synchronous-replication finding
/// is confirmed by that part, and the probe leaves the settings as found.
#[test]
fn a_slow_synchronous_standby_is_attributed_the_wait() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let (primary, _standby) = PgServer::sync_pair((INJECTED_MS * 1000.0) as u64);
    let before = settings_state(&primary);
    common::measure_twice(|| {
        let (slow, fast) = attributed(&primary.dsn("postgres"), "the standby wait");
        assert_eq!((slow.0, fast.0), ("standby wait", "local flush"));
        assert!(slow.1 >= fast.1 + INJECTED_MS / 2.0, "{slow:?} {fast:?}");
    });
    common::measure_twice(|| {
        let f = finding_of(
            &lint_sync_fixture(
                "cnpg-min-sync-replicas",
                &["--probe-dsn", &primary.dsn("postgres")],
            )
            .stdout,
            SYNC_RULE,
        );
        assert_eq!(common::evidence(&f, "probe.verdict"), "confirmed", "{f:#?}");
        assert!(
            said(&f).contains("each commit waits for a synchronous standby"),
            "{f:#?}"
        );
    });
    primary.assert_no_probe_session();
    assert_eq!(settings_state(&primary), before);
}

/// No standby and a local flush of 8 ms (the fsync shim): the
/// probe puts the wait on the local flush, by more than half the injected
/// delay. The synchronous-replication finding, whose cause is the
/// standby, is then not confirmed (and reported as info), while the
/// storage finding of the same server is confirmed by the local flush.
#[test]
fn a_slow_local_flush_is_not_blamed_on_a_standby() {
    let Some(_serial) = pg::ready() else {
        return;
    };
    let server = PgServer::start((INJECTED_MS * 1000.0) as u64);
    let before = settings_state(&server);
    let dsn = server.dsn("postgres");
    common::measure_twice(|| {
        let (slow, fast) = attributed(&dsn, "the local flush");
        assert_eq!((slow.0, fast.0), ("local flush", "standby wait"));
        assert!(slow.1 >= fast.1 + INJECTED_MS / 2.0, "{slow:?} {fast:?}");
    });
    common::measure_twice(|| {
        let f = finding_of(
            &lint_sync_fixture("cnpg-min-sync-replicas", &["--probe-dsn", &dsn]).stdout,
            SYNC_RULE,
        );
        assert_eq!(
            common::evidence(&f, "probe.verdict"),
            "not confirmed",
            "{f:#?}"
        );
        assert_eq!(f.severity, Severity::Info, "{f:#?}");
        // No standby names: the standby wait is 0 by definition.
        assert_eq!(
            common::evidence(&f, "probe.standby_wait_ms"),
            "0.00",
            "{f:#?}"
        );
        assert!(said(&f).contains("the standby wait is small"), "{f:#?}");
        let out = plugin()
            .args(["--example", "-o", "json", "--probe-dsn", &dsn])
            .output()
            .unwrap();
        let f = founding_evidence(&out.stdout);
        assert_eq!(common::evidence(&f, "probe.verdict"), "confirmed", "{f:#?}");
        assert!(
            said(&f).contains("each commit waits for the local WAL flush"),
            "{f:#?}"
        );
    });
    server.assert_no_probe_session();
    assert_eq!(settings_state(&server), before);
}
