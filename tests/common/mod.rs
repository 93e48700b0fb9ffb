//! Shared test helpers.
#![allow(dead_code)] // each test binary uses a different subset

use std::path::{Path, PathBuf};

/// Whether we run under CI, where a missing tool or corpus is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Skips the calling test loudly, or fails it under CI.
pub fn skip_or_fail(what: &str) {
    if in_ci() {
        panic!("CI=true and {what}: this test cannot be skipped in CI");
    }
    eprintln!("SKIPPED: {what}");
}

/// The read-only corpus of real GitOps repos, `../shared/corpus`.
pub fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        skip_or_fail("../shared/corpus is missing");
        None
    }
}

/// Each repository folder of the corpus, sorted.
pub fn corpus_repos() -> Vec<PathBuf> {
    let Some(dir) = corpus() else {
        return Vec::new();
    };
    let mut repos: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    repos
}
