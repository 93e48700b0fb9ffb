//! The Authentik stand-in of `scripts/demo`: answers
//! `GET /api/v3/core/applications/` after upserting one cache row, as
//! Authentik 2025.10 does (tests/support/cache_server.rs, shared with the
//! tests so the demo runs the server they check). In a package of its own
//! (stand-in/Cargo.toml), never shipped.
//!
//!     CACHE_SERVER_DSN='host=… user=… password=…' CACHE_SERVER_TOKEN=… \
//!         cargo run -p homelab-lint-stand-in -- [--listen 127.0.0.1:0]
//!
//! The DSN and token come from the environment, not the command line,
//! where other users of the machine could read them. Prints
//! `listening on URL` once ready; runs until killed.

#[path = "../../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut listen = "127.0.0.1:0".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next()) {
            ("--listen", Some(addr)) => listen = addr,
            _ => {
                eprintln!(
                    "usage: cache_server [--listen ADDR] (env CACHE_SERVER_DSN, CACHE_SERVER_TOKEN)"
                );
                return ExitCode::from(2);
            }
        }
    }
    let (Ok(dsn), Ok(token)) = (
        std::env::var("CACHE_SERVER_DSN"),
        std::env::var("CACHE_SERVER_TOKEN"),
    ) else {
        eprintln!("cache_server: set CACHE_SERVER_DSN and CACHE_SERVER_TOKEN");
        return ExitCode::from(2);
    };
    let addr = match listen.parse() {
        Ok(addr) => addr,
        Err(e) => {
            eprintln!("cache_server: --listen {listen}: {e}");
            return ExitCode::from(2);
        }
    };
    let app = match support::cache_server::CacheApp::start_on(addr, dsn, token) {
        Ok(app) => app,
        Err(e) => {
            eprintln!("cache_server: {e}");
            return ExitCode::FAILURE;
        }
    };
    // The demo script waits for this line, so it must not sit in a buffer.
    let mut out = std::io::stdout();
    let _ = writeln!(out, "listening on {}", app.url());
    let _ = out.flush();
    loop {
        std::thread::park();
    }
}
