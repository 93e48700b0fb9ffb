//! Servers shared by the test binaries and by `examples/cache_server.rs`
//! (which `scripts/demo` runs), so the demo exercises the very server the
//! tests check. Include with `mod support;` from a test, or with
//! `#[path = "../tests/support/mod.rs"] mod support;` from an example.
#![allow(dead_code)] // each user needs a different subset

pub mod cache_server;
pub mod limited;
pub mod serve;
