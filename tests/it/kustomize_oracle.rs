//! Renders every kustomization in the shared corpus with both `kubectl
//! kustomize` and our builder and compares the objects. Every directory
//! that differs must be listed, with its reason, in
//! testdata/kustomize-oracle.yaml.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use homelab_lint::source::Files;
use homelab_lint::source::kustomize;
use homelab_lint::yaml::{FileId, Limits, Node, parse_documents};
use serde_json::Value as J;

type Key = (String, String, String, String);

fn key_of(j: &J) -> Key {
    let s = |p: &[&str]| {
        let mut cur = j;
        for k in p {
            cur = cur.get(k).unwrap_or(&J::Null);
        }
        cur.as_str().unwrap_or("").to_string()
    };
    (
        s(&["apiVersion"]),
        s(&["kind"]),
        s(&["metadata", "namespace"]),
        s(&["metadata", "name"]),
    )
}

fn by_key(objs: impl Iterator<Item = J>) -> BTreeMap<Key, J> {
    objs.map(|j| (key_of(&j), j)).collect()
}

/// The first place two JSON values differ, for a one-line reason.
fn first_diff(a: &J, b: &J, path: &mut String) -> Option<String> {
    match (a, b) {
        (J::Object(x), J::Object(y)) => {
            for (k, v) in x {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                let d = match y.get(k) {
                    Some(w) => first_diff(v, w, path),
                    None => Some(format!("{path}: only in ours")),
                };
                if d.is_some() {
                    return d;
                }
                path.truncate(len);
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| format!("{path}.{k}: only in kubectl"))
        }
        (J::Array(x), J::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                if let Some(d) = first_diff(v, w, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        _ if a == b => None,
        // kustomize writes its output through JSON, where 1.0 and 1 are the
        // same number.
        (J::Number(x), J::Number(y)) if x.as_f64() == y.as_f64() => None,
        _ => {
            let short = |v: &J| {
                let s = v.to_string();
                if s.chars().count() > 80 {
                    format!("{}...", s.chars().take(80).collect::<String>())
                } else {
                    s
                }
            };
            Some(format!("{path}: ours {} vs kubectl {}", short(a), short(b)))
        }
    }
}

fn kustomization_dirs(corpus: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(corpus)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy();
        if !matches!(
            name.as_ref(),
            "kustomization.yaml" | "kustomization.yml" | "Kustomization"
        ) {
            continue;
        }
        let Some(dir) = entry.path().parent() else {
            continue;
        };
        let Ok(rel) = dir.strip_prefix(corpus) else {
            continue;
        };
        let mut parts = rel.components();
        let Some(repo) = parts.next() else { continue };
        let repo = corpus.join(repo.as_os_str());
        let inner: PathBuf = parts.collect();
        if !out
            .iter()
            .any(|(r, d): &(PathBuf, PathBuf)| *r == repo && *d == inner)
        {
            out.push((repo, inner));
        }
    }
    out
}

fn kubectl(dir: &Path, unrestricted: bool) -> Result<String, String> {
    let mut cmd = Command::new("kubectl");
    cmd.arg("kustomize").arg(dir);
    if unrestricted {
        cmd.arg("--load-restrictor=LoadRestrictionsNone");
    }
    let out = cmd.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        String::from_utf8(out.stdout).map_err(|e| e.to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn kustomize_matches_kubectl_on_corpus() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    if !common::kubectl_available() {
        return;
    }
    let filter = std::env::var("KUSTOMIZE_ORACLE_FILTER").unwrap_or_default();
    let dirs: Vec<(PathBuf, PathBuf)> = kustomization_dirs(&corpus)
        .into_iter()
        .filter(|(r, d)| r.join(d).to_string_lossy().contains(&filter))
        .collect();

    let queue = Mutex::new(dirs.iter().enumerate().collect::<Vec<_>>());
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let next = queue.lock().unwrap().pop();
                    let Some((i, (repo, dir))) = next else { break };
                    let plain = kubectl(&repo.join(dir), false);
                    // Flux builds without kubectl's "files only below the
                    // kustomization" rule; those directories are compared
                    // with build_flux_path against the unrestricted kubectl.
                    let flux = match &plain {
                        Err(e) if e.contains("security; file") => {
                            Some(kubectl(&repo.join(dir), true))
                        }
                        _ => None,
                    };
                    results.lock().unwrap().push((i, plain, flux));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _, _)| *i);

    let (mut total, mut same) = (0, 0);
    let (mut flux_total, mut flux_same) = (0, 0);
    let (mut kubectl_failed, mut both_failed) = (0, 0);
    let mut failures = Vec::new();
    for (i, plain, flux) in results {
        let (repo, dir) = &dirs[i];
        let label = format!(
            "{}/{}",
            repo.file_name().unwrap_or_default().to_string_lossy(),
            dir.display()
        );
        let mut files = Files::new(repo.clone(), Default::default());
        if plain.is_err() {
            // kubectl refuses this directory; so should we.
            kubectl_failed += 1;
            match kustomize::build(&mut files, dir) {
                Err(_) => both_failed += 1,
                Ok(_) => failures.push((
                    label.clone(),
                    "kubectl fails but our build succeeds".to_string(),
                )),
            }
        }
        let (text, ours, is_flux) = match (plain, flux) {
            (Ok(text), _) => (text, kustomize::build(&mut files, dir), false),
            (Err(_), Some(Ok(text))) => {
                // kubectl rendered it all: an entry we left out is a difference.
                let ours =
                    kustomize::build_flux_path(&mut files, dir, &kustomize::FluxInputs::default())
                        .and_then(|b| match b.gaps.into_iter().next() {
                            Some(gap) => Err(gap),
                            None => Ok(b.objects),
                        });
                (text, ours, true)
            }
            _ => continue,
        };
        if is_flux {
            flux_total += 1;
        } else {
            total += 1;
        }
        match compare(&text, ours) {
            None if is_flux => flux_same += 1,
            None => same += 1,
            Some(r) if is_flux => failures.push((label, format!("(flux mode) {r}"))),
            Some(r) => failures.push((label, r)),
        }
    }
    eprintln!("kustomize oracle: {same} of {total} directories match kubectl");
    eprintln!(
        "kustomize oracle (flux mode, kubectl --load-restrictor=LoadRestrictionsNone): {flux_same} of {flux_total} match"
    );
    eprintln!(
        "kustomize oracle: we also fail on {both_failed} of the {kubectl_failed} directories kubectl fails on"
    );
    assert!(total > 0, "no directory rendered with kubectl");
    if filter.is_empty() {
        check_expected_differences(&failures);
    } else {
        for f in &failures {
            eprintln!("DIFF {}: {}", f.0, f.1);
        }
    }
}

/// Every difference must be a listed one, and every listed one must still
/// be seen.
fn check_expected_differences(found: &[(String, String)]) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize-oracle.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = parse_documents(&text, FileId(0), &Limits::default())
        .unwrap()
        .remove(0);
    let expected: BTreeMap<String, String> = doc
        .get("differences")
        .and_then(Node::as_seq)
        .expect("differences: a list")
        .iter()
        .map(|d| {
            let dir = d.str_at(&["dir"]).expect("each difference has a dir");
            let why = d.str_at(&["why"]).unwrap_or("");
            assert!(!why.trim().is_empty(), "{dir}: no reason given");
            (dir.to_string(), why.to_string())
        })
        .collect();
    let mut problems = Vec::new();
    for (dir, what) in found {
        if !expected.contains_key(dir) {
            problems.push(format!("new difference {dir}: {what}"));
        }
    }
    for dir in expected.keys() {
        if !found.iter().any(|(d, _)| d == dir) {
            problems.push(format!("listed difference is gone: {dir}"));
        }
    }
    for (dir, what) in found {
        eprintln!(
            "DIFF {dir}: {what} (listed: {})",
            expected.get(dir).map_or("no", |_| "yes")
        );
    }
    assert!(
        problems.is_empty(),
        "update testdata/kustomize-oracle.yaml:\n{}",
        problems.join("\n")
    );
}

type Rendered = Result<Vec<homelab_lint::source::Object>, homelab_lint::source::Issue>;

/// Why our rendering differs from kubectl's output, if it does.
fn compare(kubectl_out: &str, ours: Rendered) -> Option<String> {
    let theirs = match parse_documents(kubectl_out, FileId(0), &Limits::default()) {
        Ok(docs) => by_key(docs.iter().filter(|d| !d.is_null()).map(Node::to_json)),
        Err(e) => return Some(format!("cannot parse kubectl output: {}", e.message)),
    };
    let ours = match ours {
        Ok(objs) => by_key(objs.iter().map(|o| o.root.to_json())),
        Err(e) => return Some(format!("our build failed: {e}")),
    };
    if ours.keys().ne(theirs.keys()) {
        let missing: Vec<_> = theirs.keys().filter(|k| !ours.contains_key(*k)).collect();
        let extra: Vec<_> = ours.keys().filter(|k| !theirs.contains_key(*k)).collect();
        return Some(format!(
            "objects differ: missing {missing:?}, extra {extra:?}"
        ));
    }
    ours.iter().find_map(|(k, a)| {
        let mut path = String::new();
        first_diff(a, &theirs[k], &mut path).map(|d| format!("{}/{}: {d}", k.1, k.3))
    })
}
