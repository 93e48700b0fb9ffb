//! Servers shared by the test binaries and by `stand-in/src/main.rs`
//! (which `scripts/demo` runs), so the demo exercises the very server the
//! tests check. Include with `mod support;` from a test, or with
//! `#[path = "../../tests/support/mod.rs"] mod support;` from the stand-in.
#![allow(dead_code)] // each user needs a different subset

pub mod cache_server;
// Test binaries only: it names the linter binary, which the stand-in does not see.
#[cfg(test)]
pub mod limited;
pub mod serve;
