//! `.pre-commit-hooks.yaml` run by the real pre-commit tool (PyPI;
//! `scripts/install-pre-commit` puts it into target/tools/pre-commit):
//! `pre-commit try-repo` with the `homelab-lint-system` hook fails on a
//! copy of the example repo and passes on the same repo once fixed. The
//! `homelab-lint` hook (`language: rust`) runs the same entry after pre-
//! commit built the crate with `cargo install`, which takes minutes on a
//! 2-core machine; it is not run here.

mod common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-homelab_lint");
const HOOK: &str = "homelab-lint-system";

fn pre_commit() -> Option<PathBuf> {
    let local =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/pre-commit/bin/pre-commit");
    let candidates = [local, PathBuf::from("pre-commit")];
    let found = candidates.into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        common::skip_or_fail("pre-commit is missing (run scripts/install-pre-commit)");
    }
    found
}

fn copy_dir(from: &Path, to: &Path) {
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

/// A git repository with the project's `.pre-commit-hooks.yaml`
/// committed, which is all `try-repo` needs for `language: system`.
fn hooks_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("hooks");
    std::fs::create_dir(&repo).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
        repo.join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    common::git(&repo, &["init", "-q"]);
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-q", "-m", "hooks"]);
    repo
}

/// The example repo as a git repository, edited by `fix`.
fn gitops_repo(dir: &Path, name: &str, fix: impl Fn(&Path)) -> PathBuf {
    let repo = dir.join(name);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/example-repo"),
        &repo,
    );
    fix(&repo);
    common::git(&repo, &["init", "-q"]);
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-q", "-m", "init"]);
    repo
}

/// PATH with the plugin binary first.
fn path_with_plugin(dir: &Path) -> OsString {
    let bin_dir = dir.join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    std::fs::copy(BIN, bin_dir.join("kubectl-homelab_lint")).unwrap();
    let mut paths = vec![bin_dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

fn try_repo(tool: &Path, dir: &Path, hooks: &Path, target: &Path, path: &OsString) -> Output {
    Command::new(tool)
        .current_dir(target)
        .args(["try-repo"])
        .arg(hooks)
        .args([HOOK, "--all-files", "--verbose"])
        .env("PATH", path)
        // pre-commit's cache of hook repositories, away from the user's.
        .env("PRE_COMMIT_HOME", dir.join("cache"))
        .env("NO_COLOR", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn try_repo_fails_on_the_example_repo_and_passes_once_it_is_fixed() {
    let Some(tool) = pre_commit() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hooks = hooks_repo(dir.path());
    let path = path_with_plugin(dir.path());

    let example = gitops_repo(dir.path(), "example", |_| {});
    let out = try_repo(&tool, dir.path(), &hooks, &example, &path);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("Failed"), "{shown}");
    assert!(
        shown.contains("authentik-cache-on-sync-replicated-postgres"),
        "{shown}"
    );

    // The fixes the two rules ask for: synchronous_commit off for this
    // database, and connections closed after each request.
    let fixed = gitops_repo(dir.path(), "fixed", |repo| {
        let release = repo.join("apps/authentik/helmrelease.yaml");
        let text = std::fs::read_to_string(&release).unwrap();
        let needle = "value: \"600\"";
        assert!(text.contains(needle), "{text}");
        std::fs::write(&release, text.replacen(needle, "value: \"0\"", 1)).unwrap();
        let db = repo.join("apps/authentik/database.yaml");
        let text = std::fs::read_to_string(&db).unwrap();
        let needle = "      max_connections: \"200\"\n";
        assert!(text.contains(needle), "{text}");
        std::fs::write(
            &db,
            text.replacen(
                needle,
                "      max_connections: \"200\"\n      synchronous_commit: \"off\"\n",
                1,
            ),
        )
        .unwrap();
    });
    let out = try_repo(&tool, dir.path(), &hooks, &fixed, &path);
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains("Passed"), "{shown}");
}

#[test]
fn hooks_file_declares_both_hooks_with_the_plugin_entry() {
    use homelab_lint::yaml::{FileId, Limits, Node, parse_documents};
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
    )
    .unwrap();
    let docs = parse_documents(&text, FileId(0), &Limits::default()).unwrap();
    let hooks = docs[0].as_seq().unwrap();
    let ids: Vec<&str> = hooks.iter().filter_map(|h| h.str_at(&["id"])).collect();
    assert_eq!(ids, ["homelab-lint", HOOK]);
    for hook in hooks {
        for key in ["id", "name", "entry", "language"] {
            assert!(hook.str_at(&[key]).is_some(), "{key} missing in {hook:?}");
        }
        assert_eq!(hook.str_at(&["entry"]), Some("kubectl-homelab_lint"));
        // The whole repository is linted, not the files pre-commit passes.
        assert_eq!(
            hook.get("pass_filenames").and_then(Node::as_bool_lenient),
            Some(false)
        );
    }
}
