//! Hostile input: each bad file gives a clear error of its own, within
//! bounded time and memory, and the rest of the repo still loads.

use crate::common;
use crate::support;

use std::path::Path;

use support::limited::{inventory, run_linter};

fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

const GOOD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: survivor\n  namespace: default\ndata:\n  a: b\n";

fn flux_ks(name: &str, path: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  path: {path}\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
}

fn hostile_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "good/configmap.yaml", GOOD);

    let mut bomb = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..12 {
        bomb.push_str(&format!(
            "l{i}: &l{i} [{}]\n",
            vec![format!("*l{}", i - 1); 10].join(", ")
        ));
    }
    write(root, "bad/alias-bomb.yaml", bomb);
    write(
        root,
        "bad/deep.yaml",
        format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000)),
    );
    write(
        root,
        "bad/deep-block.yaml",
        format!("{}x\n", "- ".repeat(10_000)),
    );
    write(
        root,
        "bad/not-utf8.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \xff\xfe\n",
    );

    // Symlink loop: a directory that links back to its parent.
    std::fs::create_dir_all(root.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", root.join("loop/again")).unwrap();

    // Kustomization cycle: a includes b includes a, reached from Flux.
    write(root, "cycle/a/kustomization.yaml", "resources:\n  - ../b\n");
    write(root, "cycle/b/kustomization.yaml", "resources:\n  - ../a\n");
    write(root, "flux/cycle.yaml", flux_ks("cycle", "./cycle/a"));
    write(root, "flux/good.yaml", flux_ks("good", "./good"));
    dir
}

#[test]
fn hostile_inputs_fail_alone_within_bounds() {
    let dir = hostile_repo();
    let inv = inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    assert!(!inv.issue("bad/alias-bomb.yaml", "alias").contains(":0:0:"));
    inv.issue("bad/deep.yaml", "");
    inv.issue("bad/deep-block.yaml", "nesting");
    assert!(
        inv.issue("bad/not-utf8.yaml", "utf-8")
            .starts_with("bad/not-utf8.yaml:4:")
    );
    inv.issue("loop/again", "loop");
    inv.issue("cycle/", "cycle");
    // Every problem is also on stderr for people.
    assert!(
        inv.run.stderr.contains("bad/alias-bomb.yaml"),
        "{}",
        inv.run.stderr
    );
}

/// The second hostile suite: sizes and shapes rather than YAML tricks.
#[test]
fn huge_binary_unreadable_and_self_referencing_inputs_fail_alone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "good/configmap.yaml", GOOD);
    // 100 MB: refused by size before it is read.
    let big = std::fs::File::create(root.join("huge.yaml")).unwrap();
    big.set_len(100 * 1024 * 1024).unwrap();
    // Binary content with a .yaml name.
    write(
        root,
        "binary.yaml",
        (0u8..=255).cycle().take(64 * 1024).collect::<Vec<u8>>(),
    );
    // A name that cannot be read: a link to nowhere.
    std::os::unix::fs::symlink("/nonexistent/target.yaml", root.join("dangling.yaml")).unwrap();
    // One line of 2 MB, and 5,000 documents in one file: valid, just big.
    write(
        root,
        "long-line.yaml",
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: long, namespace: default}}\ndata:\n  k: {}\n",
            "x".repeat(2 << 20)
        ),
    );
    let many: String = (0..5000)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}, namespace: default}}\n"))
        .collect();
    write(root, "many.yaml", many);
    // Variables that refer to themselves: Flux substitutes once, so
    // neither loops.
    write(
        root,
        "flux/self.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: self, namespace: flux-system}\nspec:\n  path: ./selfref\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substitute:\n      A: ${A}\n      B: ${B:=${B}}\n",
    );
    write(
        root,
        "selfref/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: selfref, namespace: default}\ndata:\n  a: ${A}\n  b: ${B}\n",
    );

    let inv = inventory(root);
    inv.assert_loaded(&["survivor", "long", "cm-0", "cm-4999", "selfref"]);
    inv.issue("huge.yaml", "over the limit");
    inv.issue("binary.yaml", "utf-8");
    inv.issue("dangling.yaml", "no such file");
}

const FILE_SECRET: &str = "TOPSECRET-FILE-4242";
const ENV_SECRET: &str = "TOPSECRET-ENV-4242";

/// The example repo in `dir/repo`, with symlinks that lead out of it:
/// a file holding a known secret and `/proc/self/environ`, read as YAML
/// files, as a directory of objects, and through a `configMapGenerator`
/// whose ConfigMap Flux substitutes into the HelmRelease.
fn leaky_repo(dir: &Path) -> std::path::PathBuf {
    let outside = dir.join("outside");
    write(
        &outside,
        "secret.yaml",
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: outside-object\n  namespace: default\ndata:\n  token: {FILE_SECRET}\n"
        ),
    );
    write(&outside, "secret.txt", format!("{FILE_SECRET}\n"));
    let repo = dir.join("repo");
    common::copy_dir(&common::example_repo(), &repo);
    let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, repo.join(at)).unwrap();
    link("../outside/secret.yaml", "leak.yaml");
    link("/proc/self/environ", "environ.yaml");
    link("../outside", "linked");
    link("../../../outside/secret.txt", "clusters/home/domain");
    link("/proc/self/environ", "clusters/home/environ");
    write(
        &repo,
        "clusters/home/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - ./flux-system\n  - ./cluster-settings.yaml\n  - ./infrastructure.yaml\n  - ./apps.yaml\n  - ../../linked\nconfigMapGenerator:\n  - name: leak-settings\n    namespace: flux-system\n    options: {disableNameSuffixHash: true}\n    files:\n      - CLUSTER_DOMAIN=domain\n      - ENVIRON=environ\n",
    );
    common::edit(
        &repo,
        "clusters/home/apps.yaml",
        "        name: cluster-settings",
        "        name: cluster-settings\n      - kind: ConfigMap\n        name: leak-settings",
    );
    repo
}

#[test]
fn symlinks_out_of_the_repository_leak_nothing_in_any_output() {
    let dir = tempfile::tempdir().unwrap();
    let repo = leaky_repo(dir.path());
    let root = repo.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut cmd = support::limited::linter();
        cmd.args(args).env("HOMELAB_HOSTILE_MARKER", ENV_SECRET);
        support::limited::run_limited(cmd, support::limited::Limits::default())
    };
    let mut outputs = Vec::new();
    for format in ["human", "json", "sarif", "github"] {
        let out = run(&[root, "--no-probe", "--format", format, "-v"]);
        assert!(
            out.code() == Some(0) || out.code() == Some(1),
            "{format}: {}",
            out.stderr
        );
        outputs.push((format!("lint --format {format}"), out));
    }
    for extra in [&[][..], &["--provenance"][..]] {
        let out = run(&[&["inventory", "-v", root], extra].concat());
        assert!(out.status.success(), "{}", out.stderr);
        outputs.push((format!("inventory {extra:?}"), out));
    }
    for (what, out) in &outputs {
        for secret in [FILE_SECRET, ENV_SECRET] {
            assert!(
                !out.stdout_text().contains(secret) && !out.stderr.contains(secret),
                "{what} prints {secret}:\n{}\n{}",
                out.stdout_text(),
                out.stderr
            );
        }
    }
    let inv = support::limited::Inventory {
        json: outputs.last().unwrap().1.json(),
        run: run(&["inventory", root]),
    };
    // The repository still loads; nothing from outside it does.
    inv.assert_loaded(&["authentik", "cluster-settings"]);
    assert!(
        !inv.names().iter().any(|n| n == "outside-object"),
        "{:?}",
        inv.names()
    );
    for at in ["leak.yaml", "environ.yaml", "linked"] {
        assert!(inv.issue(at, "outside the repository").contains("not read"));
    }
    inv.issue("clusters/home/kustomization.yaml", "outside the repository");
    // The human report said so too.
    assert!(
        outputs[0]
            .1
            .stderr
            .contains("environ.yaml: links outside the repository (to /proc/self/environ)"),
        "{}",
        outputs[0].1.stderr
    );
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a plain system call on a valid C string.
    assert_eq!(
        unsafe { libc::mkfifo(c.as_ptr(), 0o644) },
        0,
        "mkfifo {path:?}"
    );
}

/// FIFOs and devices where files are expected: refused by type with the
/// reason (a FIFO would block the open, `/dev/zero` never ends), and the
/// rest of the repository still loads; what the user named is an error.
#[test]
fn special_files_are_refused_by_type_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    write(&repo, "good/configmap.yaml", GOOD);
    mkfifo(&repo.join("pipe.yaml"));
    let inv = inventory(&repo);
    inv.assert_loaded(&["survivor"]);
    inv.issue("pipe.yaml", "named pipe (FIFO), not a regular file");

    let root = repo.to_str().unwrap();
    let lint =
        |extra: &[&str]| run_linter(&[&[root, "--no-probe", "--format", "json"], extra].concat());
    // The repository's config file as a FIFO, then as /dev/zero (outside
    // the repository, so not read at all).
    mkfifo(&repo.join(".homelab-lint.yaml"));
    let out = lint(&[]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains(".homelab-lint.yaml: is a named pipe (FIFO)"),
        "{}",
        out.stderr
    );
    std::fs::remove_file(repo.join(".homelab-lint.yaml")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", repo.join(".homelab-lint.yaml")).unwrap();
    let out = lint(&[]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("links outside the repository (to /dev/zero)"),
        "{}",
        out.stderr
    );
    std::fs::remove_file(repo.join(".homelab-lint.yaml")).unwrap();

    // Named by the user: a config file that is a device or missing, a
    // rules directory with a FIFO or that does not exist.
    let out = lint(&["--config", "/dev/zero"]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("/dev/zero: is a character device"),
        "{}",
        out.stderr
    );
    let missing = dir.path().join("nonexistent.yaml");
    let out = lint(&["--config", missing.to_str().unwrap()]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("nonexistent.yaml: No such file"),
        "{}",
        out.stderr
    );
    let rules = dir.path().join("rules");
    std::fs::create_dir(&rules).unwrap();
    mkfifo(&rules.join("blocking.yaml"));
    let out = lint(&["--rules", rules.to_str().unwrap()]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("blocking.yaml: is a named pipe (FIFO)"),
        "{}",
        out.stderr
    );
    let out = lint(&["--rules", dir.path().join("no-rules").to_str().unwrap()]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot read rules directory"),
        "{}",
        out.stderr
    );
    // Without them, the same repository lints.
    assert_eq!(lint(&[]).code(), Some(0));

    // probe --ca of a FIFO: refused at once, not blocked past the budget.
    let ca = dir.path().join("ca.pem");
    mkfifo(&ca);
    let out = run_linter(&[
        "probe",
        "postgres",
        "--dsn",
        "host=127.0.0.1 port=1 user=x sslmode=require",
        "--ca",
        ca.to_str().unwrap(),
    ]);
    assert_eq!(out.code(), Some(2), "{}", out.stderr);
    assert!(
        out.stderr.contains("cannot read CA file") && out.stderr.contains("named pipe (FIFO)"),
        "{}",
        out.stderr
    );

    // A snapshot that is a device or a FIFO: refused by type, not said
    // to be missing (it was "no such file or directory").
    for (snapshot, why) in [
        ("/dev/zero", "/dev/zero: is a character device"),
        (ca.to_str().unwrap(), "ca.pem: is a named pipe (FIFO)"),
    ] {
        let out = lint(&["--snapshot", snapshot]);
        assert!(out.stderr.contains(why), "{snapshot}: {}", out.stderr);
    }
}

/// Every file below `dir` with its bytes, to compare before and after.
fn tree(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file())
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect();
    out.sort();
    out
}

fn fix(repo: &Path, extra: &[&str]) -> support::limited::Run {
    let root = repo.to_str().unwrap();
    let out = run_linter(&[&[root, "--no-probe", "--fix", "--unsafe-fixes"], extra].concat());
    assert!(matches!(out.code(), Some(0 | 1)), "{}", out.stderr);
    out
}

/// `--fix` writes only regular files of the repository, not through a
/// symlink (inside the repository or out of it), never a `--snapshot`
/// input; owner, mode and hard links stay.
#[test]
fn fix_writes_nothing_through_symlinks_or_into_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let example = common::example_repo();

    // The app's directory is a symlink to a directory of the repository:
    // found and linted, but the fix is refused with the reason.
    let repo = dir.path().join("linked");
    common::copy_dir(&example, &repo);
    std::fs::rename(repo.join("apps/authentik"), repo.join("shared-authentik")).unwrap();
    std::os::unix::fs::symlink("../shared-authentik", repo.join("apps/authentik")).unwrap();
    let before = tree(&repo);
    let out = fix(&repo, &[]);
    assert!(
        out.stderr.contains(
            "not fixed: apps/authentik/database.yaml: reached through the symlink apps/authentik"
        ),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("wrote "), "{}", out.stderr);
    assert_eq!(tree(&repo), before);

    // A file symlink: refused, the link stays a link.
    let repo = dir.path().join("file-link");
    common::copy_dir(&example, &repo);
    std::fs::rename(
        repo.join("apps/authentik/database.yaml"),
        repo.join("database.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(
        "../../database.yaml",
        repo.join("apps/authentik/database.yaml"),
    )
    .unwrap();
    let out = fix(&repo, &[]);
    assert!(
        out.stderr
            .contains("not fixed: apps/authentik/database.yaml: is a symlink"),
        "{}",
        out.stderr
    );
    // The other file is fixed.
    assert!(
        out.stderr.contains("wrote apps/authentik/helmrelease.yaml"),
        "{}",
        out.stderr
    );
    assert!(
        std::fs::symlink_metadata(repo.join("apps/authentik/database.yaml"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // Outside the repository, through a directory symlink: not loaded,
    // so nothing to fix there; the outside copy is untouched.
    let repo = dir.path().join("outside-link");
    let outside = dir.path().join("outside");
    common::copy_dir(&example, &repo);
    std::fs::rename(repo.join("apps/authentik"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, repo.join("apps/authentik")).unwrap();
    let before = tree(&outside);
    fix(&repo, &[]);
    assert_eq!(tree(&outside), before);

    // A snapshot of the cluster next to a plain copy: only the
    // repository's files change; owner, mode and a hard link stay.
    let repo = dir.path().join("plain");
    common::copy_dir(&example, &repo);
    let snapshot = dir.path().join("snapshot");
    common::copy_dir(&example.join("../cluster"), &snapshot);
    let db = repo.join("apps/authentik/database.yaml");
    let linked = dir.path().join("hardlink.yaml");
    std::fs::hard_link(&db, &linked).unwrap();
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o640)).unwrap();
    let hr = repo.join("apps/authentik/helmrelease.yaml");
    // Another owner, when this test may give one (as root).
    let _ = std::os::unix::fs::chown(&hr, Some(4321), Some(4321));
    let hr_owner = std::fs::metadata(&hr).unwrap().uid();
    let snap_before = tree(&snapshot);
    let out = fix(&repo, &["--snapshot", snapshot.to_str().unwrap()]);
    assert!(
        out.stderr.contains("wrote apps/authentik/database.yaml"),
        "{}",
        out.stderr
    );
    assert_eq!(tree(&snapshot), snap_before, "the snapshot was rewritten");
    let meta = std::fs::metadata(&db).unwrap();
    assert_eq!(meta.mode() & 0o777, 0o640);
    assert_eq!(meta.nlink(), 2, "the hard link was broken");
    assert_eq!(std::fs::read(&db).unwrap(), std::fs::read(&linked).unwrap());
    assert!(
        String::from_utf8(std::fs::read(&db).unwrap())
            .unwrap()
            .contains("synchronous_commit")
    );
    assert_eq!(std::fs::metadata(&hr).unwrap().uid(), hr_owner);
}

/// Terminal escape sequences in values and file names are shown, not
/// obeyed, in human and GitHub output.
#[test]
fn control_characters_from_the_repository_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    common::copy_dir(&common::example_repo(), &repo);
    // A comment on a finding's line (clear screen, window title, C1
    // CSI), and a file name that fails to parse.
    common::edit(
        &repo,
        "apps/authentik/helmrelease.yaml",
        "value: \"600\"",
        "value: \"600\" # \u{1b}[2J\u{1b}]0;owned\u{7}\u{9b}2J Keep",
    );
    write(&repo, "bad-\u{1b}[31m.yaml", "a: [\n");
    let root = repo.to_str().unwrap();
    for format in ["human", "github"] {
        let out = run_linter(&[root, "--no-probe", "--format", format]);
        assert_eq!(out.code(), Some(1), "{format}: {}", out.stderr);
        assert!(
            out.stdout_text().contains("keepalive"),
            "{format}: {}",
            out.stdout_text()
        );
        let all = format!("{}{}", out.stdout_text(), out.stderr);
        assert!(
            !all.contains('\u{1b}') && !all.contains('\u{9b}') && !all.contains('\u{7}'),
            "{format}: raw control character in {all}"
        );
        if format == "human" {
            assert!(
                all.contains("# \\x1b[2J\\x1b]0;owned\\x07\\u{9b}2J Keep"),
                "{all}"
            );
        }
        assert!(
            out.stderr.contains("bad-\\x1b[31m.yaml"),
            "{format}: {}",
            out.stderr
        );
    }
}
