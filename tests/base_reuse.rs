//! `--base` loads the base commit reusing what the working tree's load
//! parsed and built (src/source/reuse.rs). The reused load must be the
//! load from scratch, exactly: on every corpus repository and on the
//! roots fixtures, with one HelmRelease edited (most builds reused), and
//! with files added, removed and edited at once (file ids shift, so
//! reuse must notice and build afresh), the objects with every span,
//! the problems, fates, renders, the source map and the findings of a
//! lint are compared. As `--base` does, the base load reads the working
//! tree's texts of the files git says are unchanged instead of their blobs.

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
    base_twice_with(dir, Limits::default())
}

fn base_twice_with(dir: &Path, limits: Limits) -> (Repo, Repo, usize) {
    let mut head = repo::load_files(Files::new(dir, limits).recording());
    let lent = Lent::of(&mut head.files).expect("the load recorded");
    let mut reused = repo::load_files(borrowing(dir, limits, lent));
    let builds = reused.files.take_lent().unwrap().reused_builds;
    let fresh = repo::load_files(Files::in_commit(dir, tree(dir), limits));
    (reused, fresh, builds)
}

fn tree(dir: &Path) -> homelab_lint::source::commit_tree::Tree {
    git::checkout(dir, "HEAD").unwrap().tree
}

/// The files of `dir`'s HEAD as the base load of `--base HEAD` reads them.
fn borrowing(dir: &Path, limits: Limits, lent: Lent) -> Files {
    let head = git::checkout(dir, "HEAD").unwrap().commit;
    let changed = git::changed_since(dir, &head).expect("git lists the changes");
    Files::in_commit(dir, tree(dir), limits)
        .borrowing(lent)
        .sharing_unchanged(&changed)
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

/// git names a change by the path it tracks: a file reached through a
/// symlinked directory is read from the commit when its target changed,
/// though no change names the path through the link; a blob over the
/// size limit is refused unread, as on disk, whether or not it changed.
#[test]
fn a_path_through_a_symlink_and_blobs_over_the_limit_load_as_from_scratch() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let cm = |value: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: {value}\n")
    };
    let padded = format!("{}{}", "# padding\n".repeat(500), cm("big"));
    write("apps/real/configmap.yaml", &cm("one"));
    write("apps/big/huge.yaml", &padded);
    write("apps/big/shrinks.yaml", &padded);
    std::os::unix::fs::symlink("real", dir.join("apps/link")).unwrap();
    commit_all(&dir);
    write("apps/real/configmap.yaml", &cm("two"));
    write("apps/big/shrinks.yaml", &cm("small"));
    let limits = Limits {
        max_bytes: 4096,
        ..Limits::default()
    };
    let (reused, fresh, _) = base_twice_with(&dir, limits);
    assert_same("symlink and limits", &reused, &fresh);
    for name in ["huge.yaml", "shrinks.yaml"] {
        assert!(
            reused
                .issues
                .iter()
                .any(|i| i.path.ends_with(name) && i.message.contains("over the limit")),
            "{name} is over the limit in the commit: {:?}",
            reused.issues
        );
    }
    // The working tree's load has read the file through the link too, as
    // a kustomization naming it would: its text there is the changed one.
    let mut head = repo::load_files(Files::new(&dir, limits).recording());
    let (_, text) = head
        .files
        .text(Path::new("apps/link/configmap.yaml"))
        .unwrap();
    assert!(text.contains("a: two"));
    let mut files = borrowing(&dir, limits, Lent::of(&mut head.files).unwrap());
    for path in ["apps/link/configmap.yaml", "apps/real/configmap.yaml"] {
        let (_, text) = files.text(Path::new(path)).unwrap();
        assert!(
            text.contains("a: one"),
            "{path} is read as committed: {text}"
        );
    }
}
