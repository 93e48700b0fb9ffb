//! `--base` loads the base commit reusing what the working tree's load
//! parsed and built (src/source/reuse.rs). The reused load must be the
//! load from scratch, exactly: on every corpus repository and on the
//! roots fixtures, with one HelmRelease edited (most builds reused), and
//! with files added, removed and edited at once (file ids shift, so
//! reuse must notice and build afresh), the objects with every span,
//! the problems, fates, renders, the source map and the findings of a
//! lint are compared.

mod common;

use std::path::{Path, PathBuf};

use homelab_lint::model::Model;
use homelab_lint::source::repo::{self, Repo};
use homelab_lint::source::reuse::Lent;
use homelab_lint::source::{Files, git};
use homelab_lint::yaml::{FileId, Limits};

/// Everything a load produced, spans included, in a comparable form.
fn everything(repo: &Repo, rules: &[homelab_lint::rules::Rule]) -> Vec<String> {
    let mut out = vec![
        format!("{:?}", repo.objects),
        format!("{:?}", repo.issues),
        format!("{:?}", repo.skipped),
        format!("{:?}", repo.fates),
        format!("{:?}", repo.flux),
        format!("{:?}", repo.coverage),
        format!("{:?}", repo.local_sources),
    ];
    let mut inputs: Vec<String> = repo.files.inputs.iter().map(|i| format!("{i:?}")).collect();
    inputs.sort();
    out.push(format!("{inputs:?}"));
    let mut built: Vec<_> = repo.files.built_dirs.iter().collect();
    built.sort();
    out.push(format!("{built:?}"));
    let sources = &repo.files.sources;
    out.extend((0..sources.len()).map(|i| {
        let f = sources.get(FileId(i as u32));
        format!("file {i}: {} {:?}", f.path.display(), f.text)
    }));
    let lint = homelab_lint::rules::lint(&Model::new(repo), rules);
    out.push(format!("{:?}", lint.findings));
    out.push(format!("{:?}", lint.issues));
    out
}

fn commit_all(dir: &Path) {
    common::git(dir, &["init", "-q"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "base"]);
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || e.file_type().unwrap().is_symlink() {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The base commit of `dir` loaded with what a recorded load of the
/// working tree lends, and loaded from scratch; with the number of
/// builds reused.
fn base_twice(dir: &Path) -> (Repo, Repo, usize) {
    let mut head = repo::load_files(Files::new(dir, Limits::default()).recording());
    let lent = Lent::of(&mut head.files).expect("the load recorded");
    let tree = || git::checkout(dir, "HEAD").unwrap().tree;
    let mut reused =
        repo::load_files(Files::in_commit(dir, tree(), Limits::default()).borrowing(lent));
    let builds = reused.files.take_lent().unwrap().reused_builds;
    let fresh = repo::load_files(Files::in_commit(dir, tree(), Limits::default()));
    (reused, fresh, builds)
}

fn assert_same(name: &str, reused: &Repo, fresh: &Repo) {
    let rules = homelab_lint::pipeline::load_rules(&[]).unwrap();
    let (a, b) = (everything(reused, &rules), everything(fresh, &rules));
    assert_eq!(a.len(), b.len(), "{name}: the source maps differ in length");
    for (a, b) in a.iter().zip(&b) {
        if a != b {
            let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y);
            let at = at.unwrap_or(a.len().min(b.len()));
            let near = |t: &str| {
                let bytes = &t.as_bytes()[at.saturating_sub(120)..(at + 120).min(t.len())];
                String::from_utf8_lossy(bytes).to_string()
            };
            panic!(
                "{name}: the reused base load differs from the fresh one:\n  reused: …{}…\n  fresh:  …{}…",
                near(a),
                near(b)
            );
        }
    }
}

fn cases() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = common::corpus_repos()
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), p))
        .collect();
    let roots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots");
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(roots)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    fixtures.sort();
    out.extend(fixtures.into_iter().map(|p| {
        (
            format!("roots/{}", p.file_name().unwrap().to_string_lossy()),
            p,
        )
    }));
    out
}

#[test]
fn one_helmrelease_edited_reuses_the_other_builds_and_loads_as_from_scratch() {
    if !common::git_available() {
        return;
    }
    let mut reused_somewhere = false;
    for (name, src) in cases() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        common::copy_dir(&src, &dir);
        commit_all(&dir);
        let files = yaml_files(&dir);
        let Some(edited) = files
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n == "helmrelease.yaml"))
            .or(files.first())
        else {
            continue;
        };
        // A value changes: the objects of its build must differ.
        let text = std::fs::read_to_string(edited).unwrap();
        let changed = text.replacen("interval: ", "interval: 7", 1);
        std::fs::write(edited, format!("{changed}\n# edited\n")).unwrap();
        let (reused, fresh, builds) = base_twice(&dir);
        assert_same(&name, &reused, &fresh);
        reused_somewhere |= builds > 0;
    }
    assert!(
        reused_somewhere,
        "no build was reused anywhere: the test compares nothing incremental"
    );
}

#[test]
fn files_added_removed_and_edited_load_as_from_scratch() {
    if !common::git_available() {
        return;
    }
    // The fixtures and the smallest corpus repository: reuse is mostly
    // refused here, and a fresh build is what the first test already
    // compares on every repository.
    let all = cases();
    let smallest = all
        .iter()
        .filter(|(name, _)| !name.starts_with("roots/"))
        .min_by_key(|(_, p)| yaml_files(p).len())
        .cloned();
    let few = all
        .into_iter()
        .filter(|(name, _)| name.starts_with("roots/"));
    for (name, src) in few.chain(smallest) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        common::copy_dir(&src, &dir);
        commit_all(&dir);
        let files = yaml_files(&dir);
        if files.len() < 3 {
            continue;
        }
        // Removed in the working tree: a file the base commit still has.
        std::fs::remove_file(&files[files.len() - 1]).unwrap();
        // Edited: a kustomization or resource the base reads differently.
        let edited = &files[files.len() / 3];
        let mut text = b"# edited\n".to_vec();
        text.extend(std::fs::read(edited).unwrap());
        std::fs::write(edited, text).unwrap();
        // Added in a directory sorted first: every later file id shifts.
        let added = dir.join("aaa-added");
        std::fs::create_dir_all(&added).unwrap();
        std::fs::write(
            added.join("configmap.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\ndata:\n  a: b\n",
        )
        .unwrap();
        let (reused, fresh, _) = base_twice(&dir);
        assert_same(&name, &reused, &fresh);
    }
}
