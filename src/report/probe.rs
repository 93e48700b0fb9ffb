//! A live probe run alone (`probe postgres|http`), as a table for people:
//! the Postgres commit probe before and after, the HTTP probe's latencies.

use std::fmt::Write as _;

use crate::probe::{Stats, postgres};

/// The HTTP probe as a table: sequential latencies and parallel wall time.
pub fn http_table(r: &crate::probe::http::Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "HTTP probe: GET {} (TLS {})\n",
        r.target,
        if r.target.starts_with("https:") {
            if r.tls_verified {
                "verified"
            } else {
                "NOT verified"
            }
        } else {
            "none"
        }
    );
    let _ = writeln!(
        out,
        "  {:<24} {:>9} {:>9} {:>9} {:>9} {:>8}",
        "latency (ms)", "avg", "p50", "p99", "max", "requests"
    );
    for (label, s) in [("sequential", &r.sequential), ("parallel", &r.parallel)] {
        let _ = writeln!(
            out,
            "  {label:<24} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>8}",
            s.avg_ms,
            s.p50_ms,
            s.p99_ms,
            s.max_ms,
            s.samples_ms.len()
        );
    }
    let _ = write!(
        out,
        "  parallel wall time: {:.2} ms for {} requests\n  \
         (after one untimed warm-up request: {:.2} ms); probe took {:.0} ms",
        r.parallel_wall_ms,
        r.parallel.samples_ms.len(),
        r.warmup_ms,
        r.elapsed_ms
    );
    out
}

fn row(out: &mut String, label: &str, s: &Stats) {
    let _ = writeln!(
        out,
        "  {label:<40} {:>9.2} {:>9.2} {:>9.2} {:>8}",
        s.p50_ms,
        s.p95_ms,
        s.max_ms,
        s.samples_ms.len()
    );
}

/// The commit probe as a before/after table, then the settings.
pub fn postgres_table(r: &postgres::Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Postgres commit probe: {} (PostgreSQL {}; {})",
        r.target,
        r.server_version,
        r.tls
            .as_deref()
            .map_or("no TLS".to_string(), |v| format!("TLS {v}"))
    );
    let method = match &r.method {
        postgres::Method::EmitMessage => {
            "pg_logical_emit_message(true, …) per transaction".to_string()
        }
        postgres::Method::TempTable { reason } => {
            format!("CREATE TEMP TABLE … ON COMMIT DROP per transaction (emit function: {reason})")
        }
    };
    let _ = writeln!(out, "  method: {method}; no user table written\n");
    let _ = writeln!(
        out,
        "  {:<40} {:>9} {:>9} {:>9} {:>8}",
        "commit latency (ms)", "p50", "p95", "max", "samples"
    );
    row(
        &mut out,
        &format!("synchronous_commit = {} (server)", r.synchronous_commit),
        &r.effective,
    );
    row(&mut out, "synchronous_commit = local (SET LOCAL)", &r.local);
    row(&mut out, "synchronous_commit = off (SET LOCAL)", &r.off);
    match r.ratio {
        Some(x) => {
            let _ = writeln!(out, "  ratio (p50): {x:.1}x");
        }
        None => {
            let _ = writeln!(out, "  ratio (p50): n/a");
        }
    }
    let _ = writeln!(
        out,
        "  wait (p50): {} (standby wait = {} - local; local flush = local - off)",
        r.attribution.summary(),
        r.synchronous_commit
    );
    let _ = writeln!(
        out,
        "\n  connect: p50 {:.2} ms, max {:.2} ms over {} tries",
        r.connect.p50_ms,
        r.connect.max_ms,
        r.connect.samples_ms.len()
    );
    let _ = writeln!(out, "\n  {:<26} {:<14} source", "setting", "value");
    for s in &r.settings {
        let value = if s.value.is_empty() { "''" } else { &s.value };
        let _ = writeln!(out, "  {:<26} {:<14} {}", s.name, value, s.source);
    }
    for d in &r.db_role_settings {
        let _ = writeln!(
            out,
            "  ALTER {} SET synchronous_commit = {}",
            match (&d.database, &d.role) {
                (Some(db), Some(role)) => format!("ROLE {role} IN DATABASE {db}"),
                (Some(db), None) => format!("DATABASE {db}"),
                (None, Some(role)) => format!("ROLE {role}"),
                (None, None) => "(all)".into(),
            },
            d.value
        );
    }
    for n in &r.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    let _ = write!(out, "  probe took {:.0} ms", r.elapsed_ms);
    out
}
