//! Shared test helpers.

pub mod pg;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use homelab_lint::report::json::{Finding, Report};

/// The linter binary cargo built for these tests.
pub const BIN: &str = env!("CARGO_BIN_EXE_kubectl-homelab_lint");

/// A Flux root at `clusters/home`: the GitRepository and the Flux
/// Kustomization `flux-system` that applies that folder.
pub const FLUX_ROOT: &str = "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1h, url: https://example.com/home-ops, ref: {branch: main}}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec: {interval: 1h, path: ./clusters/home, prune: true, sourceRef: {kind: GitRepository, name: flux-system}}
";

/// Whether we run under CI, where a missing tool or corpus is a failure.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Where skips are recorded, one `binary::test<TAB>what it needs` line
/// each: `target/tmp/skipped-tests.tsv` (cargo's scratch directory for
/// integration tests, under CARGO_TARGET_DIR when that is set).
/// `scripts/test` empties it before a run and counts it in its summary.
pub const SKIP_LOG: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/skipped-tests.tsv");

/// Skips the calling test loudly, or fails it under CI. `what` says what
/// is missing and how to get it. The test harness captures `eprintln!`
/// (a skipped test would look like a pass), so the line goes to the real
/// stderr and into [`SKIP_LOG`].
pub fn skip_or_fail(what: &str) {
    if in_ci() {
        panic!("CI=true and {what}: this test cannot be skipped in CI");
    }
    let test = current_test();
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {what}");
    // One write of one short line to a file opened for appending, so lines
    // of tests that skip at the same time do not interleave.
    let recorded = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(SKIP_LOG)
        .and_then(|mut f| f.write_all(format!("{test}\t{what}\n").as_bytes()));
    if let Err(e) = recorded {
        let _ = writeln!(
            std::io::stderr(),
            "(could not record the skip in {SKIP_LOG}: {e})"
        );
    }
}

/// Runs a check that measures, and runs it once more if it fails: on a
/// loaded machine one unlucky series can miss a margin that the next one
/// meets, while a real regression misses it twice. The first failure's
/// message stays in the test's captured output; a line on the real stderr
/// says that the check ran again.
pub fn measure_twice(mut check: impl FnMut()) {
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut check));
    if first.is_err() {
        let _ = writeln!(
            std::io::stderr(),
            "{}: a measurement missed its margin; measuring again",
            current_test()
        );
        check();
    }
}

/// `binary::test` of the running test: the harness names each test's
/// thread after the test, and cargo names test executables `NAME-HASH`.
fn current_test() -> String {
    let exe = std::env::current_exe().ok();
    let binary = exe
        .as_deref()
        .and_then(Path::file_stem)
        .and_then(|s| s.to_str())
        .map(|s| s.rsplit_once('-').map_or(s, |(name, _hash)| name))
        .unwrap_or("?");
    let thread = std::thread::current();
    format!("{binary}::{}", thread.name().unwrap_or("?"))
}

/// The read-only corpus of real GitOps repos, `../shared/corpus`.
pub fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        skip_or_fail("../shared/corpus is missing (the eight GitOps repos beside this checkout)");
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

/// Whether `program args` runs and succeeds; skips the calling test
/// loudly (fails it under CI) with `what` when not.
pub fn runs(program: &str, args: &[&str], what: &str) -> bool {
    let ok = std::process::Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip_or_fail(what);
    }
    ok
}

/// Whether `git` runs; skips loudly (fails under CI) when not.
pub fn git_available() -> bool {
    runs("git", &["--version"], "git is not on PATH")
}

/// Whether `kubectl` runs; skips loudly (fails under CI) when not.
pub fn kubectl_available() -> bool {
    runs(
        "kubectl",
        &["version", "--client"],
        "kubectl (1.27+, with kustomize v5) is not on PATH",
    )
}

/// Whether `bash` runs; skips loudly (fails under CI) when not.
pub fn bash_available() -> bool {
    runs("bash", &["--version"], "bash is not on PATH")
}

/// Whether `openssl` runs; skips loudly (fails under CI) when not.
pub fn openssl_available() -> bool {
    runs("openssl", &["version"], "openssl is not on PATH")
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

/// The linter binary run from `dir` with `args`: no colour, and no
/// kubeconfig from the environment (a test that wants a cluster names
/// it).
pub fn lint(dir: &Path, args: &[&str]) -> Output {
    std::process::Command::new(BIN)
        .current_dir(dir)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .output()
        .expect("run the linter binary")
}

/// The rule of every finding of a JSON report, sorted.
pub fn rules(out: &Output) -> Vec<String> {
    let mut rules: Vec<String> = report(out).findings.into_iter().map(|f| f.rule).collect();
    rules.sort();
    rules
}

/// The JSON report (`-o json`) on a run's stdout, typed; panics with the
/// run's stdout and stderr when it is not one.
pub fn report(out: &Output) -> Report {
    Report::from_json(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not a JSON report ({e}): {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// `(rule, path)` of every finding of a JSON report, sorted.
pub fn rules_and_paths(out: &Output) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = report(out)
        .findings
        .into_iter()
        .map(|f| (f.rule, f.location.path))
        .collect();
    found.sort();
    found
}

/// The first finding of `rule` in a JSON report on a run's stdout;
/// panics with the run's stdout and stderr when there is none.
pub fn finding(out: &Output, rule: &str) -> Finding {
    report(out)
        .findings
        .into_iter()
        .find(|f| f.rule == rule)
        .unwrap_or_else(|| {
            panic!(
                "no {rule} finding: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

/// The evidence `key` of finding `f`; panics, showing the finding, when
/// it has none.
pub fn evidence<'f>(f: &'f Finding, key: &str) -> &'f str {
    f.evidence
        .get(key)
        .unwrap_or_else(|| panic!("no evidence {key} in {f:#?}"))
}
