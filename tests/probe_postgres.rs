//! The Postgres commit probe against throwaway servers (tests/common/pg.rs),
//! with fsync slowed by an LD_PRELOAD shim to stand in for replicated storage.

mod common;

use common::pg::{self, PgServer};

/// One WAL-writing transaction that touches no table, as the probe runs it.
const EMIT_SCRIPT: &str =
    "BEGIN;\nSELECT pg_logical_emit_message(true, 'homelab-lint', 'bench');\nCOMMIT;\n";

#[test]
fn harness_slow_fsync_makes_commits_slow() {
    if !pg::available() {
        return;
    }
    let server = PgServer::start(8_000);
    let on = server.pgbench(EMIT_SCRIPT, 40, None);
    let off = server.pgbench(EMIT_SCRIPT, 40, Some("-c synchronous_commit=off"));
    eprintln!("pgbench emit-message commit latency: on {on:.2} ms, off {off:.2} ms");
    assert!(on >= 8.0, "commits should wait for the 8 ms fsync: {on} ms");
    assert!(off <= 2.0, "commits without flush wait: {off} ms");
}
