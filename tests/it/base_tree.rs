//! `--base` reads the base commit from git's object store (`git ls-tree`
//! and one `git cat-file --batch`), not from files on disk. A commit of
//! each corpus repository loads exactly as its files on disk do, and a
//! fixture with symlinks in and out of the tree, a subdirectory and a
//! submodule-free kustomization walk keeps the disk loader's answers.

use crate::common;

use std::path::Path;

use homelab_lint::source::repo::{self, Repo};
use homelab_lint::source::{Files, commit_tree, git};

/// What a load found, in a form two loads can be compared by.
fn summary(repo: &Repo) -> Vec<String> {
    let mut out: Vec<String> = repo.objects.iter().map(|o| o.id()).collect();
    out.extend(repo.issues.iter().map(|i| format!("issue {i}")));
    out.extend(
        repo.skipped
            .iter()
            .map(|s| format!("skipped {}: {}", s.path.display(), s.reason)),
    );
    out.extend(
        repo.fates
            .iter()
            .map(|f| format!("fate {}: {:?}", f.path.display(), f.fate)),
    );
    out.push(format!("{:?}", repo.coverage));
    out
}

fn from_commit(dir: &Path) -> Repo {
    let checkout = commit_tree::checkout(dir, "HEAD").unwrap();
    repo::load_files(Files::in_commit(dir, checkout.tree, Default::default()))
}

fn commit_all(dir: &Path) {
    common::git(dir, &["init", "-q"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "base"]);
}

#[test]
fn every_corpus_repository_loads_from_its_commit_as_from_disk() {
    if !common::git_available() {
        return;
    }
    let repos = common::corpus_repos();
    if repos.is_empty() {
        return;
    }
    for corpus in repos {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        common::copy_dir(&corpus, &dir);
        commit_all(&dir);
        let disk = summary(&repo::load(&dir, Default::default()));
        let commit = summary(&from_commit(&dir));
        let name = corpus.file_name().unwrap().to_string_lossy().to_string();
        assert!(disk.len() > 10, "{name}: too little loaded to compare");
        let only_disk: Vec<_> = disk.iter().filter(|l| !commit.contains(l)).collect();
        let only_commit: Vec<_> = commit.iter().filter(|l| !disk.contains(l)).collect();
        assert!(
            only_disk.is_empty() && only_commit.is_empty(),
            "{name}: disk only {only_disk:#?}\ncommit only {only_commit:#?}"
        );
        assert_eq!(disk, commit, "{name}: same entries in another order");
    }
}

#[test]
fn symlinks_and_a_subdirectory_resolve_as_on_disk() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let top = tmp.path().join("repo");
    let dir = top.join("kubernetes");
    let write = |rel: &str, text: &str| {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    let cm = |name: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: a\n")
    };
    write(
        "apps/a/kustomization.yaml",
        "resources:\n  - cm.yaml\n  - linked.yaml\n  - shared\n",
    );
    write("apps/a/cm.yaml", &cm("one"));
    write("common/two.yaml", &cm("two"));
    // A directory without a kustomization: Flux's generator lists it.
    write("apps/a/shared/three.yaml", &cm("three"));
    write("apps/a/shared/nested/four.yml", &cm("four"));
    write("apps/b/kustomization.yaml", "resources:\n  - leak.yaml\n");
    std::fs::write(tmp.path().join("outside.yaml"), cm("outside")).unwrap();
    std::os::unix::fs::symlink("../../common/two.yaml", dir.join("apps/a/linked.yaml")).unwrap();
    std::os::unix::fs::symlink("../../../../outside.yaml", dir.join("apps/b/leak.yaml")).unwrap();
    std::os::unix::fs::symlink("apps/a", dir.join("alias")).unwrap();
    // Outside the linted directory: not listed, not read.
    std::fs::write(top.join("README.yaml"), cm("readme")).unwrap();
    commit_all(&top);

    let disk = repo::load(&dir, Default::default());
    let commit = from_commit(&dir);
    let ids = |r: &Repo| {
        let mut v: Vec<String> = r.objects.iter().map(|o| o.id()).collect();
        v.sort();
        v.dedup();
        v
    };
    for name in ["one", "two", "three", "four"] {
        assert!(
            ids(&commit).contains(&format!("ConfigMap/a/{name}")),
            "{name} missing: {:?}",
            ids(&commit)
        );
    }
    assert!(!ids(&commit).iter().any(|i| i.contains("readme")));
    assert!(
        !ids(&commit).iter().any(|i| i.contains("outside")),
        "a link out of the tree was followed"
    );
    let leak = |r: &Repo| {
        r.issues
            .iter()
            .map(|i| i.to_string())
            .find(|i| i.contains("links outside the repository"))
    };
    assert!(leak(&commit).is_some(), "{:?}", commit.issues);
    assert_eq!(ids(&disk), ids(&commit));
    assert_eq!(leak(&disk), leak(&commit));
}

#[test]
fn an_unknown_reference_is_an_error_that_names_it() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.yaml"), "a: 1\n").unwrap();
    commit_all(tmp.path());
    let err = commit_tree::checkout(tmp.path(), "no-such-branch")
        .err()
        .expect("an unknown branch is an error");
    assert!(err.to_string().contains("no-such-branch"), "{err}");
}

#[test]
fn the_base_is_the_working_tree_only_when_no_file_below_differs() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kubernetes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a.yaml"), "a: 1\n").unwrap();
    std::fs::write(tmp.path().join("README.md"), "x\n").unwrap();
    commit_all(tmp.path());
    let head = commit_tree::checkout(&dir, "HEAD").unwrap().commit;
    assert!(git::unchanged_since(&dir, &head));
    std::fs::write(tmp.path().join("README.md"), "changed outside\n").unwrap();
    assert!(git::unchanged_since(&dir, &head), "a change elsewhere");
    std::fs::write(dir.join("a.yaml"), "a: 2\n").unwrap();
    assert!(!git::unchanged_since(&dir, &head), "a changed file");
    common::git(tmp.path(), &["checkout", "-q", "--", "kubernetes"]);
    assert!(git::unchanged_since(&dir, &head));
    std::fs::write(dir.join("new.yaml"), "b: 1\n").unwrap();
    assert!(!git::unchanged_since(&dir, &head), "an untracked file");
    std::fs::remove_file(dir.join("new.yaml")).unwrap();
    std::fs::remove_file(dir.join("a.yaml")).unwrap();
    assert!(!git::unchanged_since(&dir, &head), "a deleted file");
}

/// `changed_since` leaves untracked files out once a tracked file
/// differs; what it lists must still hold every path of the commit whose
/// working-tree file is not the commit's (the base load shares the
/// working tree's text of the others), an untracked one included.
#[test]
fn a_file_of_the_commit_that_is_untracked_is_changed() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("a.yaml"), "a: 1\n").unwrap();
    std::fs::write(dir.join("b.yaml"), "b: 1\n").unwrap();
    commit_all(dir);
    let head = commit_tree::checkout(dir, "HEAD").unwrap().commit;
    common::git(dir, &["rm", "-q", "--cached", "b.yaml"]);
    std::fs::write(dir.join("b.yaml"), "b: 2\n").unwrap();
    std::fs::write(dir.join("a.yaml"), "a: 2\n").unwrap();
    let changed = git::changed_since(dir, &head).unwrap();
    assert!(changed.contains(Path::new("a.yaml")), "{changed:?}");
    assert!(changed.contains(Path::new("b.yaml")), "{changed:?}");
}
