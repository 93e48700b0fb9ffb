//! Symlinks that stay inside the repository: each directory and file is
//! read once, by its identity, however many paths lead to it.

use crate::support;

use std::os::unix::fs::symlink;
use std::path::Path;

use support::limited::inventory;

fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

const CONFIGMAP: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: once\n  namespace: default\ndata:\n  a: b\n";

/// `d{i}/l` and `d{i}/r` both link to `d{i+1}`: 2^depth paths to the one
/// file in the last directory. 20 levels did not end in 120 s when each
/// path was walked and loaded; one object, and a skipped entry naming the
/// first path per second path (a repository's own symlinks are no problem
/// of it: no issue).
#[test]
fn a_dag_of_directory_symlinks_is_walked_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let depth = 20;
    for i in 0..depth {
        std::fs::create_dir_all(root.join(format!("d{i}"))).unwrap();
        for side in ["l", "r"] {
            symlink(format!("../d{}", i + 1), root.join(format!("d{i}/{side}"))).unwrap();
        }
    }
    write(root, &format!("d{depth}/cm.yaml"), CONFIGMAP);
    let inv = inventory(root);
    assert_eq!(inv.names(), ["once"], "{:#?}", inv.issues());
    inv.skipped("d0/r", "a symlink to the same directory as d0/l");
    assert_eq!(inv.issues(), Vec::<String>::new());
}

/// A hundred links to one 10 MB manifest read it once (they took 2.35 GB,
/// each parsed as a file of its own).
#[test]
fn links_to_one_large_file_read_it_once() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let value = "x".repeat(10 << 20);
    write(root, "big/cm.yaml", format!("{CONFIGMAP}  big: {value}\n"));
    std::fs::create_dir_all(root.join("links")).unwrap();
    for i in 0..100 {
        symlink("../big/cm.yaml", root.join(format!("links/{i:03}.yaml"))).unwrap();
    }
    let inv = inventory(root);
    assert_eq!(inv.names(), ["once"], "{:#?}", inv.issues());
    inv.skipped(
        "links/000.yaml",
        "a symlink to the same file as big/cm.yaml",
    );
    assert_eq!(inv.issues(), Vec::<String>::new());
}

/// Ten files of 1 MB each under a read budget of 3.5 MB: three are read,
/// each of the others is an issue saying the run's budget was reached,
/// and the small file read first is still linted.
#[test]
fn reads_past_the_run_budget_are_refused_with_an_issue() {
    use homelab_lint::source::{Files, Limits, repo};
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(root, "a/cm.yaml", CONFIGMAP);
    let value = "x".repeat(1 << 20);
    for i in 0..10 {
        write(
            root,
            &format!("b/big{i}.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big{i}}}\ndata:\n  v: {value}\n"
            ),
        );
    }
    let limits = Limits {
        max_read_bytes: 3 << 20 | 1 << 19,
        ..Limits::default()
    };
    let loaded = repo::load_files(Files::new(root, limits));
    let names: Vec<&str> = loaded.objects.iter().map(|o| o.name()).collect();
    assert!(names.contains(&"once"), "{names:?}");
    let read = names.len() - 1;
    let refused: Vec<String> = loaded
        .issues
        .iter()
        .map(|i| i.to_string())
        .filter(|i| {
            i.contains(
                "not read: the files read before it reached the run's budget of 3670016 bytes",
            )
        })
        .collect();
    // Three fit; reads on other threads may each pass the budget by one
    // file (the check is before each read).
    assert!((3..=8).contains(&read), "{names:?}");
    assert_eq!(read + refused.len(), 10, "{:#?}", loaded.issues);
}

/// Two names of one file (a hard link), in two directories: the file is
/// read once, under the name met first, and `-v` says why the other is
/// skipped. The walk tells them apart by the inode in each directory
/// entry, without a stat of its own per file.
#[test]
fn hard_links_are_read_once_and_listed_with_v() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(root, "apps/a/cm.yaml", CONFIGMAP);
    std::fs::create_dir_all(root.join("apps/b")).unwrap();
    std::fs::hard_link(root.join("apps/a/cm.yaml"), root.join("apps/b/same.yaml")).unwrap();
    write(
        root,
        "apps/b/other.yaml",
        CONFIGMAP.replace("name: ", "name: other-"),
    );
    let dir = root.to_str().unwrap();

    let verbose = support::limited::run_linter(&["--no-probe", "-v", dir]);
    assert_eq!(verbose.code(), Some(0), "{}", verbose.stderr);
    let line = "skipped: apps/b/same.yaml: the same file as apps/a/cm.yaml (a hard link): read once, as apps/a/cm.yaml";
    assert!(
        verbose.stderr.contains(line),
        "no {line:?} in:\n{}",
        verbose.stderr
    );
    assert!(
        !verbose.stderr.contains("skipped: apps/b/other.yaml"),
        "{}",
        verbose.stderr
    );
}

/// A repository's own symlinks (an Ansible collection links task files to
/// each other) are not problems: the lint warns of none and passes, and
/// `-v` lists each second path as skipped, naming the path read and which
/// of the two is the link (here a link named before its target: the
/// target is still read under its own name).
#[test]
fn symlinks_inside_the_repository_are_listed_with_v_not_warned() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(root, "apps/cm.yaml", CONFIGMAP);
    write(
        root,
        "ansible/tasks/Debian.yml",
        "- name: install\n  apt: {name: x}\n",
    );
    symlink("Debian.yml", root.join("ansible/tasks/Ubuntu.yml")).unwrap();
    symlink("Debian.yml", root.join("ansible/tasks/Alpine.yml")).unwrap();
    symlink("tasks", root.join("ansible/more")).unwrap();
    // Met before its target, in an earlier directory: the target is the
    // second path, and says so.
    std::fs::create_dir_all(root.join("aaa")).unwrap();
    symlink("../ansible/tasks/Debian.yml", root.join("aaa/Debian.yml")).unwrap();
    let dir = root.to_str().unwrap();

    let plain = support::limited::run_linter(&["--no-probe", dir]);
    assert_eq!(plain.code(), Some(0), "{}", plain.stderr);
    assert!(
        !plain.stderr.contains("warning"),
        "a warning for the repository's own symlinks:\n{}",
        plain.stderr
    );

    let verbose = support::limited::run_linter(&["--no-probe", "-v", dir]);
    for line in [
        "skipped: ansible/tasks/Debian.yml: the file that aaa/Debian.yml reaches through a symlink: read once, as aaa/Debian.yml",
        "skipped: ansible/tasks/Ubuntu.yml: a symlink to the same file as aaa/Debian.yml: read once, as aaa/Debian.yml",
        "skipped: ansible/tasks/Alpine.yml: a symlink to the same file as aaa/Debian.yml: read once, as aaa/Debian.yml",
        "skipped: ansible/more: a symlink to the same directory as ansible/tasks: read once, as ansible/tasks",
    ] {
        assert!(
            verbose.stderr.contains(line),
            "no {line:?} in:\n{}",
            verbose.stderr
        );
    }
}
