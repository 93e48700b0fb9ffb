//! Servers shared by the integration tests (`tests/it`) and by
//! `stand-in/src/main.rs` (which `scripts/demo` runs), so the demo
//! exercises the very server the tests check. The stand-in includes it
//! with `#[path = "../../tests/support/mod.rs"] mod support;`.
#![allow(dead_code)] // the stand-in uses only the cache server

pub mod cache_server;
// The tests only: it names the linter binary, which the stand-in does not see.
#[cfg(test)]
pub mod limited;
pub mod serve;
