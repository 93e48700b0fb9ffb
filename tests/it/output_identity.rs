//! The output stays byte-identical while the code under it changes (work
//! on speed or structure must not move a single byte): every corpus
//! folder, the example repo and every fixture repo is run through the
//! binary (`-o json -v`: exit status, report and the skipped-file list;
//! `inventory --provenance`: every rendered object with where each value
//! was written), and the sha256 and length of each output are compared
//! with `testdata/golden/outputs.tsv`.
//!
//! A change that moves the output on purpose regenerates the file with
//! `UPDATE_GOLDEN=1 cargo test --test it output_identity::`; the diff of that
//! file then shows which runs moved. Each regeneration also keeps the full
//! outputs under the cargo scratch directory, so a later failure on the
//! same machine shows a readable diff against them, not only two hashes.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/golden/outputs.tsv");
/// Full outputs of the last regeneration on this machine, for diffs.
const KEPT: &str = concat!(env!("CARGO_TARGET_TMPDIR"), "/golden-outputs");

/// One repository to run: its name in the golden file, the directory
/// given as PATH, and extra arguments.
struct Case {
    name: String,
    dir: PathBuf,
    extra: Vec<String>,
}

/// Every corpus folder, the example repo, the fix fixtures and the rule
/// fixtures. A rule fixture with `head/` is linted on `head/` alone (its
/// `--base` run needs a git history, which tests/it/rule_fixtures.rs builds);
/// one with `repo/` and `cluster/` is linted with `--snapshot cluster/`.
fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<Case> = common::corpus_repos()
        .into_iter()
        .map(|dir| Case {
            name: format!("corpus/{}", dir.file_name().unwrap().to_string_lossy()),
            dir,
            extra: Vec::new(),
        })
        .collect();
    cases.push(Case {
        name: "example-repo".into(),
        dir: common::example_repo(),
        extra: Vec::new(),
    });
    for dir in subdirs(&root.join("testdata/fixes")) {
        cases.push(Case {
            name: relative(root, &dir),
            dir,
            extra: Vec::new(),
        });
    }
    for rule in subdirs(&root.join("testdata/rules")) {
        for kind in subdirs(&rule) {
            for case in subdirs(&kind) {
                let name = relative(root, &case);
                let (dir, extra) = if case.join("head").is_dir() {
                    (case.join("head"), Vec::new())
                } else if case.join("repo").is_dir() {
                    let cluster = case.join("cluster").to_string_lossy().into_owned();
                    (case.join("repo"), vec!["--snapshot".to_string(), cluster])
                } else {
                    (case, Vec::new())
                };
                cases.push(Case { name, dir, extra });
            }
        }
    }
    cases
}

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

fn relative(root: &Path, dir: &Path) -> String {
    dir.strip_prefix(root)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// `(what, bytes)` of each output of one case.
fn outputs(case: &Case) -> Vec<(&'static str, Vec<u8>)> {
    let run = |args: &[&str]| {
        Command::new(common::BIN)
            .args(args)
            .args(&case.extra)
            .arg(&case.dir)
            .env_remove("HOMELAB_LINT_OUTPUT")
            .output()
            .unwrap()
    };
    let lint = run(&["-o", "json", "-v", "--color", "never", "--no-probe"]);
    let mut lint_bytes = format!("exit {:?}\n", lint.status.code()).into_bytes();
    lint_bytes.extend_from_slice(&lint.stdout);
    let inventory = run(&["inventory", "--provenance", "-o", "json"]);
    vec![
        ("lint", checkout_independent(case, lint_bytes)),
        ("lint-stderr", checkout_independent(case, lint.stderr)),
        ("inventory", checkout_independent(case, inventory.stdout)),
    ]
}

/// The outputs name the directory given as PATH (inventory's `root`), and
/// the checkout lives somewhere else in every clone (CI clones it afresh):
/// that prefix is replaced by a fixed token before hashing.
fn checkout_independent(case: &Case, bytes: Vec<u8>) -> Vec<u8> {
    let text = String::from_utf8_lossy(&bytes);
    let dir = case.dir.to_string_lossy();
    let checkout = env!("CARGO_MANIFEST_DIR");
    text.replace(dir.as_ref(), "<PATH>")
        .replace(checkout, "<CHECKOUT>")
        .into_bytes()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn kept_path(case: &str, what: &str) -> PathBuf {
    Path::new(KEPT).join(format!("{}.{what}", case.replace('/', "__")))
}

#[test]
fn output_is_byte_identical_to_the_golden_hashes() {
    let cases = cases();
    if !cases.iter().any(|c| c.name.starts_with("corpus/")) {
        // The corpus is missing: corpus_repos() has skipped loudly (or
        // failed under CI); the fixtures alone would leave most untested.
        return;
    }
    // Two workers: the machine has two cores, and each run is a process.
    let next = Mutex::new(0usize);
    let results: Mutex<BTreeMap<(String, &'static str), Vec<u8>>> = Mutex::default();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let i = {
                        let mut n = next.lock().unwrap();
                        *n += 1;
                        *n - 1
                    };
                    let Some(case) = cases.get(i) else { break };
                    for (what, bytes) in outputs(case) {
                        results
                            .lock()
                            .unwrap()
                            .insert((case.name.clone(), what), bytes);
                    }
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let table: String = results
        .iter()
        .map(|((case, what), bytes)| {
            format!("{case}\t{what}\t{}\t{}\n", bytes.len(), sha256(bytes))
        })
        .collect();
    if std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(Path::new(GOLDEN).parent().unwrap()).unwrap();
        std::fs::write(GOLDEN, &table).unwrap();
        let _ = std::fs::remove_dir_all(KEPT);
        std::fs::create_dir_all(KEPT).unwrap();
        for ((case, what), bytes) in &results {
            std::fs::write(kept_path(case, what), bytes).unwrap();
        }
        return;
    }
    let golden = std::fs::read_to_string(GOLDEN)
        .unwrap_or_else(|e| panic!("{GOLDEN}: {e} (UPDATE_GOLDEN=1 writes it)"));
    let expected: BTreeMap<(&str, &str), &str> = golden
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            Some(((f.next()?, f.next()?), f.next()?))
        })
        .collect();
    let mut problems = Vec::new();
    for ((case, what), bytes) in &results {
        let now = format!("{}\t{}", bytes.len(), sha256(bytes));
        match expected.get(&(case.as_str(), *what)) {
            None => problems.push(format!("{case} {what}: not in the golden file")),
            Some(was) if *was != now => problems.push(differs(case, what, was, bytes)),
            Some(_) => {}
        }
    }
    for (case, what) in expected.keys() {
        if !results.contains_key(&(case.to_string(), *what)) {
            problems.push(format!("{case} {what}: in the golden file, no longer run"));
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} outputs differ from {GOLDEN} (UPDATE_GOLDEN=1 regenerates it when the change is meant):\n{}",
        problems.len(),
        results.len(),
        problems.join("\n")
    );
}

/// What differs: a unified diff against the kept output of the last
/// regeneration when that is the golden one, else the two hashes.
fn differs(case: &str, what: &str, was: &str, now: &[u8]) -> String {
    let head = format!("{case} {what}: was {was}, now {} bytes", now.len());
    let Ok(kept) = std::fs::read(kept_path(case, what)) else {
        return format!("{head} (no kept output here to diff against)");
    };
    if format!("{}\t{}", kept.len(), sha256(&kept)) != was {
        return format!("{head} (the kept output is not the golden one)");
    }
    let (old, new) = (String::from_utf8_lossy(&kept), String::from_utf8_lossy(now));
    let diff = similar::TextDiff::from_lines(old.as_ref(), new.as_ref());
    let text = diff.unified_diff().context_radius(2).to_string();
    let shown: String = text.lines().take(60).map(|l| format!("  {l}\n")).collect();
    format!("{head}\n{shown}")
}
