//! A hostile base commit (`--base`): a commit's tree is read from git's
//! object store, where a pull request can put what no checkout could
//! hold (a symlink blob of any size, entries named `..`), besides links
//! out of the tree and submodules. Each case ends within the limits of
//! tests/support/limited.rs, reads nothing outside the tree, and the
//! working tree is still linted.

use crate::common;
use crate::support;

use std::path::Path;

use homelab_lint::source::repo::{self, Repo};
use homelab_lint::source::{Files, Limits, commit_tree, git};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn cm(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\n")
}

/// Runs git in `dir` with its stdin, returning stdout (trimmed).
fn git_out(dir: &Path, args: &[&str], stdin: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Adds a symlink entry whose target is `target` to the index, as git
/// stores it (mode 120000, the blob is the target), whether or not a
/// file system could hold it.
fn stage_link(dir: &Path, at: &str, target: &[u8]) {
    let oid = git_out(dir, &["hash-object", "-w", "--stdin"], target);
    common::git(
        dir,
        &[
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("120000,{oid},{at}"),
        ],
    );
}

/// Lints `dir` with `--base HEAD~1` under the limits: it must end
/// cleanly, having linted the base.
fn lint_against_parent(dir: &Path) {
    let run = support::limited::run_linter(&[
        dir.to_str().unwrap(),
        "--no-probe",
        "--base",
        "HEAD~1",
        "-v",
    ]);
    assert!(run.code() == Some(0), "{:?}\n{}", run.status, run.stderr);
    assert!(
        run.stderr.contains("base HEAD~1 ("),
        "the base was not linted:\n{}",
        run.stderr
    );
}

fn from_commit(dir: &Path, reference: &str) -> Repo {
    let checkout = commit_tree::checkout(dir, reference).unwrap();
    repo::load_files(Files::in_commit(dir, checkout.tree, Default::default()))
}

/// A symlink blob of 800 KB (`a/a/a/…`): no file system holds a link
/// target over PATH_MAX, and resolving it component by component hashed
/// the path so far at each of 400,000 steps (over 60 s of CPU, then 2.5
/// GB). Refused as the kernel refuses such a path.
#[test]
fn a_base_commit_with_a_huge_symlink_is_refused_within_bounds() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "apps/good.yaml", &cm("survivor"));
    common::git(dir, &["init", "-q"]);
    common::git(dir, &["add", "-A"]);
    stage_link(dir, "apps/huge.yaml", "a/".repeat(400_000).as_bytes());
    common::git(dir, &["commit", "-q", "-m", "hostile base"]);
    // The working tree drops them (no checkout could make them).
    common::git(dir, &["rm", "-q", "--cached", "apps/huge.yaml"]);
    common::git(dir, &["commit", "-q", "-m", "head"]);

    lint_against_parent(dir);

    let base = from_commit(dir, "HEAD~1");
    let issues: Vec<String> = base.issues.iter().map(|i| i.to_string()).collect();
    assert!(
        issues
            .iter()
            .any(|i| i.starts_with("apps/huge.yaml") && i.contains("File name too long")),
        "{issues:#?}"
    );
    assert!(base.objects.iter().any(|o| o.name() == "survivor"));
}

/// A base commit holding a symlink (any: it turns on link resolution)
/// and a kustomization that lists a 600 KB resource path: resolving it
/// hashed the path so far at each of its 300,000 components. Refused at
/// PATH_MAX as the kernel refuses it, and the base is linted.
#[test]
fn a_base_commit_listing_a_huge_path_beside_a_symlink_is_linted_within_bounds() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(dir, "apps/good.yaml", &cm("survivor"));
    write(
        dir,
        "flux/long.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: long, namespace: flux-system}\nspec:\n  path: ./long\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    write(
        dir,
        "long/kustomization.yaml",
        &format!(
            "resources:\n  - alias.yaml\n  - {}x.yaml\n",
            "a/".repeat(300_000)
        ),
    );
    write(dir, "long/cm.yaml", &cm("long-cm"));
    std::os::unix::fs::symlink("cm.yaml", dir.join("long/alias.yaml")).unwrap();
    common::git(dir, &["init", "-q"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "hostile base"]);
    write(
        dir,
        "long/kustomization.yaml",
        "resources:\n  - alias.yaml\n",
    );
    common::git(dir, &["commit", "-q", "-a", "-m", "head"]);

    lint_against_parent(dir);
    let base = from_commit(dir, "HEAD~1");
    assert!(base.objects.iter().any(|o| o.name() == "survivor"));
}

/// The base commit of `dir` (HEAD) loaded borrowing what a recorded load
/// of the working tree lends, as `--base HEAD` loads it, and from scratch.
fn base_reused_and_fresh(dir: &Path, limits: Limits) -> (Repo, Repo) {
    use homelab_lint::source::reuse::{self, Lent};
    let mut head = repo::load_files(reuse::recording(Files::new(dir, limits)));
    let lent = Lent::of(&mut head.files).expect("the load recorded");
    let checkout = commit_tree::checkout(dir, "HEAD").unwrap();
    let changed = git::changed_since(dir, &checkout.commit).unwrap();
    let files = reuse::borrowing(Files::in_commit(dir, checkout.tree, limits), lent);
    let borrowing = reuse::sharing_unchanged(files, &changed);
    let reused = repo::load_files(borrowing);
    let fresh = repo::load_files(Files::in_commit(
        dir,
        commit_tree::checkout(dir, "HEAD").unwrap().tree,
        limits,
    ));
    (reused, fresh)
}

/// A base commit whose first build spends the load's build budget
/// (`max_kustomize_run_builds`) on a chain of components: a build after
/// it that the working tree lends was reused without spending any, so
/// the base got past the budget and loaded what a fresh load stops.
#[test]
fn a_base_commit_cannot_spend_past_the_run_build_budget_through_reused_builds() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (name, path) in [("a", "./a"), ("b", "./b")] {
        write(
            dir,
            &format!("flux/{name}.yaml"),
            &format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n"
            ),
        );
    }
    write(dir, "b/kustomization.yaml", "resources: [cm.yaml]\n");
    write(dir, "b/cm.yaml", &cm("b-cm"));
    write(dir, "a/cm.yaml", &cm("a-cm"));
    // In the base, `a` goes through six directories.
    write(
        dir,
        "a/kustomization.yaml",
        "resources: [cm.yaml]\ncomponents: [c1]\n",
    );
    for i in 1..=5 {
        let next = match i {
            5 => String::new(),
            _ => format!("components: [../c{}]\n", i + 1),
        };
        write(
            dir,
            &format!("a/c{i}/kustomization.yaml"),
            &format!("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n{next}"),
        );
    }
    common::git(dir, &["init", "-q"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "base"]);
    // The working tree's `a` goes through one: both builds fit there.
    write(dir, "a/kustomization.yaml", "resources: [cm.yaml]\n");
    let limits = Limits {
        kustomize: homelab_lint::source::kustomize::Limits {
            max_run_builds: 4,
            ..Default::default()
        },
        ..Limits::default()
    };
    let (reused, fresh) = base_reused_and_fresh(dir, limits);
    let shown = |r: &Repo| {
        let mut names: Vec<String> = r.objects.iter().map(|o| o.id()).collect();
        names.sort();
        let issues: Vec<String> = r.issues.iter().map(|i| i.to_string()).collect();
        (names, issues)
    };
    let (reused, fresh) = (shown(&reused), shown(&fresh));
    assert!(
        fresh
            .1
            .iter()
            .any(|i| i.contains("kustomize build budget exceeded")),
        "the base spends the budget: {fresh:#?}"
    );
    assert_eq!(reused, fresh, "reuse loaded past the budget");
}

/// The repository's own `.git/config` names commands: an fsmonitor hook,
/// and a clean and a smudge filter that `.gitattributes` puts every file
/// through. `--base` asks git what changed since the base and reads the
/// base's tree; none of them runs (they did, through `git diff`).
#[test]
fn base_runs_no_command_the_repository_configures() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_commits(tmp.path());
    let ran = tmp.path().join("ran");
    let hook = tmp.path().join("hook.sh");
    std::fs::write(
        &hook,
        format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\ncat\n", ran.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    let hook = hook.display().to_string();
    for (key, value) in [
        ("core.fsmonitor", hook.as_str()),
        ("filter.evil=x.clean", hook.as_str()),
        ("filter.evil=x.smudge", hook.as_str()),
        ("filter.plain.process", hook.as_str()),
    ] {
        common::git(&dir, &["config", key, value]);
    }
    write(
        &dir,
        ".gitattributes",
        "* filter=evil=x\n*.yaml filter=plain\n",
    );
    // A working-tree change git must compare through the filters.
    write(&dir, "apps/a.yaml", &format!("{}  # edited\n", cm("a")));
    lint_against_parent(&dir);
    assert!(
        !ran.exists(),
        "a configured command ran:\n{}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
}

/// Hooks the repository's configuration points at: `git diff` against
/// the base refreshes the index when a tracked file's timestamps changed
/// but not its bytes (builtin/diff.c `refresh_index_quietly`), and
/// writing the index runs the `post-index-change` hook from
/// `core.hooksPath`, here a folder of the repository itself. No hook runs.
#[test]
fn base_runs_no_hook_the_repository_configures() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = two_commits(tmp.path());
    let ran = tmp.path().join("ran");
    use std::os::unix::fs::PermissionsExt;
    for hook in [
        "post-index-change",
        "reference-transaction",
        "post-checkout",
    ] {
        let at = dir.join("hooks").join(hook);
        write(
            &dir,
            &format!("hooks/{hook}"),
            &format!("#!/bin/sh\necho \"$0 $*\" >> '{}'\n", ran.display()),
        );
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    common::git(&dir, &["config", "core.hooksPath", "hooks"]);
    // The same bytes with another modification time: stat-dirty, so
    // git diff reads it, finds it unchanged and refreshes the index.
    let a = std::fs::File::options()
        .write(true)
        .open(dir.join("apps/a.yaml"))
        .unwrap();
    a.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30))
        .unwrap();
    drop(a);
    lint_against_parent(&dir);
    assert!(
        !ran.exists(),
        "a configured hook ran:\n{}",
        std::fs::read_to_string(&ran).unwrap_or_default()
    );
}

/// A commit whose two tree objects (a few kilobytes, one listing the
/// other ten thousand times, each a thousand files) name ten million
/// files: its listing was read whole, then kept, about 300 bytes of
/// memory and 20 µs a file (3 GB and 220 s for the debug build). The
/// listing is read as git writes it and refused at a million files.
#[test]
fn a_commit_listing_ten_million_files_is_refused_while_listed() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    common::git(dir, &["init", "-q"]);
    let blob = git_out(dir, &["hash-object", "-w", "--stdin"], cm("x").as_bytes());
    let tree = |entries: Vec<String>| git_out(dir, &["mktree", "-z"], entries.concat().as_bytes());
    let files = tree(
        (0..1000)
            .map(|i| format!("100644 blob {blob}\tf{i}.txt\0"))
            .collect(),
    );
    let dirs = tree(
        (0..10_000)
            .map(|i| format!("040000 tree {files}\td{i}\0"))
            .collect(),
    );
    let commit = git_out(
        dir,
        &[
            "-c",
            "user.name=a",
            "-c",
            "user.email=a@example.com",
            "commit-tree",
            &dirs,
            "-m",
            "huge",
        ],
        b"",
    );
    let run =
        support::limited::run_linter(&[dir.to_str().unwrap(), "--no-probe", "--ref", &commit]);
    assert_eq!(run.code(), Some(2), "{:?}\n{}", run.status, run.stderr);
    assert!(
        run.stderr
            .contains("it lists more than 1000000 files below the linted directory"),
        "{}",
        run.stderr
    );
}

/// Lints `dir` with `args` under the limits, with a wall of a few git
/// budgets: the run must end with an error naming the git `what` that
/// was stopped and the budget.
fn assert_git_stopped(dir: &Path, args: &[&str], what: &str) {
    let mut cmd = support::limited::linter();
    cmd.arg(dir).args(args);
    let run = support::limited::run_limited(
        cmd,
        support::limited::Limits {
            // Past the git budget of one process, with room for a loaded
            // machine; the run ends on the first one stopped.
            wall: git::BUDGET * 4,
            ..support::limited::Limits::default()
        },
    );
    assert_eq!(run.code(), Some(2), "{}", run.stderr);
    let budget = format!("within {} s", git::BUDGET.as_secs());
    assert!(
        run.stderr.contains(&format!("git {what} in")) && run.stderr.contains(&budget),
        "{}",
        run.stderr
    );
}

/// A repository in `tmp` with one commit.
fn one_commit(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("repo");
    write(&dir, "apps/a.yaml", &cm("a"));
    common::git(&dir, &["init", "-q"]);
    common::git(&dir, &["add", "-A"]);
    common::git(&dir, &["commit", "-q", "-m", "base"]);
    dir
}

/// A repository in `tmp` with two commits, the second adding a file.
fn two_commits(tmp: &Path) -> std::path::PathBuf {
    let dir = one_commit(tmp);
    write(&dir, "apps/b.yaml", &cm("b"));
    common::git(&dir, &["add", "-A"]);
    common::git(&dir, &["commit", "-q", "-m", "head"]);
    dir
}

/// A committed repository in `tmp`, and a FIFO beside it.
fn repo_and_fifo(tmp: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = one_commit(tmp);
    let fifo = tmp.join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    (dir, fifo)
}

/// A `.git/config` that includes a FIFO: git opens it to read its
/// configuration and waits for a writer that never comes, and `--base`
/// waited with it for ever. Each git process has a time budget; the run
/// ends with an error that names git and the budget.
#[test]
fn a_git_configuration_including_a_fifo_ends_the_run_with_an_error() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (dir, fifo) = repo_and_fifo(tmp.path());
    let config = dir.join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!("[include]\n\tpath = {}\n", fifo.display()));
    std::fs::write(&config, text).unwrap();
    assert_git_stopped(&dir, &["--no-probe", "--base", "HEAD"], "config");
}

/// An index that is a FIFO: `--staged` lists it with `git ls-files`,
/// whose output is read as it comes, and waited for ever.
#[test]
fn a_git_index_that_is_a_fifo_ends_a_staged_run_with_an_error() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (dir, fifo) = repo_and_fifo(tmp.path());
    std::fs::rename(&fifo, dir.join(".git/index")).unwrap();
    assert_git_stopped(&dir, &["--no-probe", "--staged"], "ls-files");
}
