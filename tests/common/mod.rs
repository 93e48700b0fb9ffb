//! Shared test helpers.
#![allow(dead_code)] // each test binary uses a different subset

pub mod pg;

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

/// Runs git in `dir` with a fixed identity and no signing; panics with
/// git's stderr on failure.
pub fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Renovate",
            "-c",
            "user.email=bot@example.com",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Whether `git` runs; skips loudly (fails under CI) when not.
pub fn git_available() -> bool {
    let ok = std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip_or_fail("git is not on PATH");
    }
    ok
}

/// Copies a directory tree.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Replaces the first `from` in a file of `repo`, which must contain it.
pub fn edit(repo: &Path, file: &str, from: &str, to: &str) {
    let path = repo.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// The bundled example repo, `testdata/example-repo`.
pub fn example_repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/example-repo")
}

/// The example repo as a git repository with two commits: Authentik at
/// `base`, then a Renovate-style bump to `head`. `prepare` edits the tree
/// before the first commit. Returns the temporary directory and the repo.
pub fn bump_fixture(
    base: &str,
    head: &str,
    prepare: impl Fn(&Path),
) -> (tempfile::TempDir, PathBuf) {
    const HELMRELEASE: &str = "apps/authentik/helmrelease.yaml";
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("gitops");
    copy_dir(&example_repo(), &repo);
    prepare(&repo);
    edit(
        &repo,
        HELMRELEASE,
        "version: 2025.10.1",
        &format!("version: {base}"),
    );
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "base"]);
    edit(
        &repo,
        HELMRELEASE,
        &format!("version: {base}"),
        &format!("version: {head}"),
    );
    git(
        &repo,
        &[
            "commit",
            "-q",
            "-am",
            &format!("fix(helm): update chart authentik to {head}"),
        ],
    );
    (dir, repo)
}

/// `(rule, path)` of every finding of a JSON report, sorted.
pub fn rules_and_paths(out: &std::process::Output) -> Vec<(String, String)> {
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let mut found: Vec<(String, String)> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["location"]["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    found.sort();
    found
}
