//! `.pre-commit-hooks.yaml` run by the real pre-commit tool (PyPI;
//! `scripts/install-pre-commit` puts it into target/tools/pre-commit):
//! `pre-commit try-repo` with the `homelab-lint-system` hook fails on a
//! copy of the example repo and passes on the same repo once fixed; the
//! `homelab-lint` hook (`language: python`) installs the wheel that
//! `scripts/wheel` built (maturin, `bindings = "bin"`; .ci/run names its
//! directory in HOMELAB_LINT_WHEEL_DIR) through the root pyproject.toml,
//! offline (`pip --no-index --find-links`), and runs it; the same wheel
//! installs into a fresh virtualenv with its binary on the venv's PATH.

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::BIN;
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

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A git repository with the project's `.pre-commit-hooks.yaml` and the
/// root pyproject.toml committed: what `try-repo` installs a hook from.
fn hooks_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("hooks");
    std::fs::create_dir(&repo).unwrap();
    // The hooks file and the package `language: python` installs.
    for file in [".pre-commit-hooks.yaml", "pyproject.toml"] {
        std::fs::copy(root().join(file), repo.join(file)).unwrap();
    }
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
    // A link, not a copy: see tests/it/github_action.rs (ETXTBSY).
    std::os::unix::fs::symlink(BIN, bin_dir.join("kubectl-homelab_lint")).unwrap();
    let mut paths = vec![bin_dir];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Authentik's connections closed after each request: the keepalive
/// finding gone, the cache finding still there.
const KEEPALIVE_OFF: (&str, &str) = ("value: \"600\"", "value: \"0\"");

fn edit(repo: &Path, file: &str, (from, to): (&str, &str)) {
    let path = repo.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{text}");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
}

/// `git commit` in `repo` with the hook installed from `hooks`.
fn commit(repo: &Path, dir: &Path, path: &OsString, message: &str) -> Output {
    common::git(repo, &["add", "-A"]);
    Command::new("git")
        .current_dir(repo)
        .args(["commit", "-q", "-m", message])
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", dir.join("cache"))
        .env("NO_COLOR", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap()
}

/// The hook judges the change, as a hook must: on a repository that
/// already has a finding, an unrelated commit passes; a commit that adds
/// a finding fails, and the output is one line per new finding.
#[test]
fn the_hook_passes_an_unrelated_commit_and_fails_one_that_adds_a_finding() {
    let Some(tool) = pre_commit() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hooks = hooks_repo(dir.path());
    let path = path_with_plugin(dir.path());
    let repo = gitops_repo(dir.path(), "home-ops", |repo| {
        edit(repo, "apps/authentik/helmrelease.yaml", KEEPALIVE_OFF);
    });
    let rev = String::from_utf8(
        Command::new("git")
            .current_dir(&hooks)
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    std::fs::write(
        repo.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n  - repo: {}\n    rev: {}\n    hooks:\n      - id: {HOOK}\n",
            hooks.display(),
            rev.trim()
        ),
    )
    .unwrap();
    let install = Command::new(&tool)
        .current_dir(&repo)
        .arg("install")
        .env("PRE_COMMIT_HOME", dir.path().join("cache"))
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", text(&install));
    // The whole repository has a finding (the cache one) at HEAD.
    let whole = Command::new(BIN)
        .arg(&repo)
        .args(["-o", "concise"])
        .output()
        .unwrap();
    assert_eq!(whole.status.code(), Some(1), "{}", text(&whole));

    std::fs::write(
        repo.join("apps/authentik/namespace-note.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: note\n  namespace: security\n",
    )
    .unwrap();
    let out = commit(&repo, dir.path(), &path, "an unrelated change");
    assert!(out.status.success(), "{}", text(&out));

    edit(
        &repo,
        "apps/authentik/helmrelease.yaml",
        (KEEPALIVE_OFF.1, KEEPALIVE_OFF.0),
    );
    let out = commit(&repo, dir.path(), &path, "connections kept open");
    let shown = text(&out);
    assert!(!out.status.success(), "{shown}");
    let lines: Vec<&str> = shown
        .lines()
        .filter(|l| l.contains("authentik-persistent-connections-without-keepalives"))
        .collect();
    assert_eq!(lines.len(), 1, "{shown}");
    assert!(
        lines[0].starts_with("apps/authentik/helmrelease.yaml:")
            && lines[0].contains(": warning authentik-persistent-connections-without-keepalives: "),
        "{shown}"
    );
    // The finding that was there before is not reported again.
    assert!(
        !shown.contains("authentik-cache-on-sync-replicated-postgres"),
        "{shown}"
    );
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
    let languages: Vec<&str> = hooks
        .iter()
        .filter_map(|h| h.str_at(&["language"]))
        .collect();
    // No `language: rust`: its cargo install took over 30 minutes here.
    assert_eq!(languages, ["python", "system"]);
    for hook in hooks {
        for key in ["id", "name", "entry", "language"] {
            assert!(hook.str_at(&[key]).is_some(), "{key} missing in {hook:?}");
        }
        assert_eq!(hook.str_at(&["entry"]), Some("kubectl-homelab_lint"));
        // The whole repository is linted; the files pre-commit passes
        // only tell a commit from --all-files, and any file may matter.
        assert_eq!(
            hook.get("pass_filenames").and_then(Node::as_bool_lenient),
            Some(true)
        );
        assert_eq!(
            hook.get("always_run").and_then(Node::as_bool_lenient),
            Some(true)
        );
        assert!(hook.get("files").is_none(), "{hook:?}");
        let args: Vec<&str> = hook
            .get("args")
            .and_then(Node::as_seq)
            .unwrap()
            .iter()
            .filter_map(|a| a.as_str())
            .collect();
        assert_eq!(args, ["--pre-commit", "--output", "concise"]);
    }
}

/// The directory of the wheel built by scripts/wheel (with the setuptools
/// wheel beside it), or None after skipping (failing under CI).
fn wheel_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("HOMELAB_LINT_WHEEL_DIR").map(PathBuf::from);
    let found = dir.filter(|d| {
        std::fs::read_dir(d).is_ok_and(|mut entries| {
            entries.any(|e| {
                e.is_ok_and(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    name.starts_with("homelab_lint-") && name.ends_with(".whl")
                })
            })
        })
    });
    if found.is_none() {
        common::skip_or_fail(
            "HOMELAB_LINT_WHEEL_DIR names no homelab_lint wheel (.ci/run sets it after scripts/wheel)",
        );
    }
    found
}

/// PATH without any kubectl-homelab_lint: the hook must bring its own.
fn path_without_plugin() -> OsString {
    let paths = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .filter(|p| !p.join("kubectl-homelab_lint").exists())
        .collect::<Vec<_>>();
    std::env::join_paths(paths).unwrap()
}

#[test]
fn the_wheel_installs_into_a_fresh_venv_with_the_plugin_binary() {
    let Some(wheels) = wheel_dir() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let venv = dir.path().join("venv");
    let made = Command::new("python3")
        .arg("-m")
        .arg("venv")
        .arg(&venv)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made));
    let install = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--no-index",
            "--disable-pip-version-check",
            "--find-links",
        ])
        .arg(&wheels)
        .arg(format!("homelab-lint=={}", env!("CARGO_PKG_VERSION")))
        .output()
        .unwrap();
    assert!(install.status.success(), "{}", text(&install));
    let version = Command::new(venv.join("bin/kubectl-homelab_lint"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")),
        "{}",
        text(&version)
    );
    let lint = Command::new(venv.join("bin/kubectl-homelab_lint"))
        .args(["--example", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(lint.status.code(), Some(1), "{}", text(&lint));
}

#[test]
fn python_hook_installs_the_wheel_and_fails_on_a_new_finding() {
    let (Some(tool), Some(wheels)) = (pre_commit(), wheel_dir()) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hooks = hooks_repo(dir.path());
    // The hook judges the change against HEAD: the keepalive finding is
    // new in the staged tree.
    let example = gitops_repo(dir.path(), "example", |repo| {
        edit(repo, "apps/authentik/helmrelease.yaml", KEEPALIVE_OFF);
    });
    edit(
        &example,
        "apps/authentik/helmrelease.yaml",
        (KEEPALIVE_OFF.1, KEEPALIVE_OFF.0),
    );
    common::git(&example, &["add", "-A"]);
    let path = path_without_plugin();
    let run = |target: &Path| {
        let mut cmd = Command::new(&tool);
        cmd.current_dir(target)
            .arg("try-repo")
            .arg(&hooks)
            .args(["homelab-lint", "--all-files", "--verbose"])
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", dir.path().join("cache"))
            .env("NO_COLOR", "1")
            // pip inside pre-commit: the wheel under test, nothing from an index.
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", &wheels)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
        cmd.output().unwrap()
    };
    let out = run(&example);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(shown.contains("Failed"), "{shown}");
    assert!(
        shown.contains("authentik-persistent-connections-without-keepalives"),
        "{shown}"
    );
    // No kubectl-homelab_lint was on PATH: it came from the wheel, which
    // pip found only in the wheel directory (no index).
    assert!(shown.contains("- hook id: homelab-lint\n"), "{shown}");
}

#[test]
fn hook_package_pins_the_wheel_of_this_version() {
    let text = std::fs::read_to_string(root().join("pyproject.toml")).unwrap();
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        text.contains(&format!("\nversion = \"{version}\"\n")),
        "pyproject.toml's version is not {version}"
    );
    assert!(
        text.contains(&format!("dependencies = [\"homelab-lint=={version}\"]")),
        "pyproject.toml does not pin homelab-lint=={version}"
    );
    let wheel = std::fs::read_to_string(root().join("python/pyproject.toml")).unwrap();
    assert!(wheel.contains("bindings = \"bin\""), "{wheel}");
    assert!(wheel.contains("name = \"homelab-lint\""), "{wheel}");
}

/// How a hook is run: the system hook with the plugin binary on PATH, or
/// the `language: python` hook with the wheel (and no binary on PATH).
struct Hook {
    id: &'static str,
    path: OsString,
    wheels: Option<PathBuf>,
}

/// Both hooks, where they can run here (the python hook needs the wheel
/// scripts/wheel builds: skipped loudly without it, failed under CI).
fn both_hooks(dir: &Path) -> Vec<Hook> {
    let mut hooks = vec![Hook {
        id: HOOK,
        path: path_with_plugin(dir),
        wheels: None,
    }];
    if let Some(wheels) = wheel_dir() {
        hooks.push(Hook {
            id: "homelab-lint",
            path: path_without_plugin(),
            wheels: Some(wheels),
        });
    }
    hooks
}

/// `pre-commit try-repo <hooks> <hook> <args>` in `repo`: the hook run
/// as pre-commit runs it (staged files without arguments).
fn try_repo(
    tool: &Path,
    hooks: &Path,
    hook: &Hook,
    repo: &Path,
    dir: &Path,
    args: &[&str],
) -> Output {
    let mut cmd = Command::new(tool);
    cmd.current_dir(repo)
        .arg("try-repo")
        .arg(hooks)
        .arg(hook.id)
        .args(args)
        .arg("--verbose")
        .env("PATH", &hook.path)
        .env("PRE_COMMIT_HOME", dir.join("cache"))
        .env("NO_COLOR", "1")
        .env_remove("PRE_COMMIT_FROM_REF")
        .env_remove("PRE_COMMIT_TO_REF");
    if let Some(wheels) = &hook.wheels {
        cmd.env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", wheels)
            .env("PIP_DISABLE_PIP_VERSION_CHECK", "1");
    }
    cmd.output().unwrap()
}

fn head(repo: &Path) -> String {
    let out = Command::new("git")
        .current_dir(repo)
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

const KEEPALIVE: &str = "authentik-persistent-connections-without-keepalives";
const HELMRELEASE: &str = "apps/authentik/helmrelease.yaml";

/// Every pre-commit mode, with both hooks: a staged change (an unrelated
/// one passes beside an existing finding, a new finding fails, an
/// untracked file does not count), `--all-files` (an existing finding
/// fails, as pre-commit.ci runs it) and `--from-ref/--to-ref` (a range
/// that adds a finding fails; one that adds none passes).
#[test]
fn both_hooks_judge_each_pre_commit_mode() {
    let Some(tool) = pre_commit() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hooks = hooks_repo(dir.path());
    for hook in both_hooks(dir.path()) {
        let id = hook.id;
        let repo = gitops_repo(dir.path(), &format!("modes-{id}"), |repo| {
            edit(repo, HELMRELEASE, KEEPALIVE_OFF);
        });
        let first = head(&repo);
        let run = |args: &[&str]| try_repo(&tool, &hooks, &hook, &repo, dir.path(), args);
        // Staged: an unrelated change passes beside the cache finding.
        std::fs::write(
            repo.join("apps/authentik/note.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: note\n  namespace: security\n",
        )
        .unwrap();
        common::git(&repo, &["add", "-A"]);
        let out = run(&[]);
        assert!(out.status.success(), "{id}: {}", text(&out));
        assert!(
            text(&out).contains("pre-commit: a commit"),
            "{id}: {}",
            text(&out)
        );
        // --all-files: the existing finding fails the run.
        let out = run(&["--all-files"]);
        assert_eq!(out.status.code(), Some(1), "{id}: {}", text(&out));
        assert!(
            text(&out).contains("authentik-cache"),
            "{id}: {}",
            text(&out)
        );
        common::git(&repo, &["commit", "-q", "-m", "note"]);
        let unrelated = head(&repo);
        // Staged: a new finding fails, once.
        edit(&repo, HELMRELEASE, (KEEPALIVE_OFF.1, KEEPALIVE_OFF.0));
        common::git(&repo, &["add", "-A"]);
        let out = run(&[]);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(1), "{id}: {shown}");
        assert_eq!(shown.matches(KEEPALIVE).count(), 1, "{id}: {shown}");
        assert!(!shown.contains("authentik-cache"), "{id}: {shown}");
        common::git(&repo, &["commit", "-q", "-m", "keep connections"]);
        let bumped = head(&repo);
        // A range: the one that adds the finding fails, the other passes.
        let out = run(&["--from-ref", &first, "--to-ref", &bumped]);
        assert_eq!(out.status.code(), Some(1), "{id}: {}", text(&out));
        assert!(text(&out).contains(KEEPALIVE), "{id}: {}", text(&out));
        let out = run(&["--from-ref", &first, "--to-ref", &unrelated]);
        assert!(out.status.success(), "{id}: {}", text(&out));
        // An untracked file does not count: the kustomization that lists
        // it is staged, the file is not, so the commit's build fails.
        std::fs::write(
            repo.join("apps/authentik/extra.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\n  namespace: security\n",
        )
        .unwrap();
        edit(
            &repo,
            "apps/authentik/kustomization.yaml",
            (
                "  - ./helmrelease.yaml",
                "  - ./helmrelease.yaml\n  - ./extra.yaml",
            ),
        );
        common::git(&repo, &["add", "apps/authentik/kustomization.yaml"]);
        let out = run(&[]);
        assert_eq!(out.status.code(), Some(1), "{id}: {}", text(&out));
        assert!(
            text(&out).contains("flux-kustomization-build-fails"),
            "{id}: {}",
            text(&out)
        );
    }
}

/// A commit that only deletes a configMapGenerator's input (no YAML file
/// changes) runs the hooks, which report the build failure Flux will hit;
/// and the first commit of a new repository is judged whole, not refused.
#[test]
fn both_hooks_catch_a_deleted_generator_input_and_judge_a_first_commit() {
    let Some(tool) = pre_commit() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let hooks = hooks_repo(dir.path());
    for hook in both_hooks(dir.path()) {
        let id = hook.id;
        // The first commit: nothing to compare with, every finding is new.
        let repo = dir.path().join(format!("first-{id}"));
        copy_dir(&root().join("testdata/example-repo"), &repo);
        std::fs::write(repo.join("apps/authentik/settings.conf"), "a=b\n").unwrap();
        edit(
            &repo,
            "apps/authentik/kustomization.yaml",
            (
                "  - ./helmrelease.yaml",
                "  - ./helmrelease.yaml\nconfigMapGenerator:\n  - name: settings\n    namespace: security\n    files: [settings.conf]",
            ),
        );
        common::git(&repo, &["init", "-q"]);
        common::git(&repo, &["add", "-A"]);
        let out = try_repo(&tool, &hooks, &hook, &repo, dir.path(), &[]);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(1), "{id}: {shown}");
        assert!(shown.contains("every finding is new"), "{id}: {shown}");
        assert!(shown.contains("authentik-cache"), "{id}: {shown}");
        common::git(&repo, &["commit", "-q", "-m", "first"]);
        // Only the generator's input deleted.
        common::git(&repo, &["rm", "-q", "apps/authentik/settings.conf"]);
        let out = try_repo(&tool, &hooks, &hook, &repo, dir.path(), &[]);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(1), "{id}: {shown}");
        assert!(
            shown.contains("flux-kustomization-build-fails"),
            "{id}: {shown}"
        );
    }
}
