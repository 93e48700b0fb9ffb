//! The binary as a kubectl plugin: put on PATH as `kubectl-homelab_lint`,
//! the real `kubectl` lists it and runs it as `kubectl homelab-lint`.
//! Also: completion scripts and the man page generate from the binary.

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::BIN;

/// A directory holding only the plugin, and a PATH with it first.
fn plugin_path() -> (tempfile::TempDir, OsString) {
    let dir = tempfile::tempdir().unwrap();
    let plugin = dir.path().join("kubectl-homelab_lint");
    // A link, not a copy: see tests/it/github_action.rs (ETXTBSY).
    std::os::unix::fs::symlink(BIN, &plugin).unwrap();
    let mut paths = vec![dir.path().to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    (dir, std::env::join_paths(paths).unwrap())
}

fn kubectl(path: &OsString, args: &[&str]) -> Output {
    Command::new("kubectl")
        .args(args)
        .env("PATH", path)
        // No cluster is needed; keep kubectl away from the user's config.
        .env("KUBECONFIG", "/dev/null")
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
fn kubectl_plugin_list_shows_the_binary_on_path() {
    if !common::kubectl_available() {
        return;
    }
    let (dir, path) = plugin_path();
    let out = kubectl(&path, &["plugin", "list"]);
    let shown = text(&out);
    let expected = dir.path().join("kubectl-homelab_lint");
    assert!(
        shown
            .lines()
            .any(|l| Path::new(l.trim()) == expected.as_path()),
        "kubectl plugin list does not show {}:\n{shown}",
        expected.display()
    );
    // kubectl warns about plugins it cannot run or that shadow others.
    assert!(
        !shown.contains(&format!(
            "{} identified as a kubectl plugin, but it is not executable",
            expected.display()
        )),
        "{shown}"
    );
}

#[test]
fn kubectl_homelab_lint_version_and_help_run_the_plugin() {
    if !common::kubectl_available() {
        return;
    }
    let (_dir, path) = plugin_path();
    let out = kubectl(&path, &["homelab-lint", "--version"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("kubectl-homelab_lint {}", env!("CARGO_PKG_VERSION"))
    );
    // Usage is shown the way users type it.
    let out = kubectl(&path, &["homelab-lint", "--help"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Usage: kubectl homelab-lint"),
        "{}",
        text(&out)
    );
}

#[test]
fn kubectl_homelab_lint_lints_the_example_with_kubectl_style_output_flag() {
    if !common::kubectl_available() {
        return;
    }
    let (_dir, path) = plugin_path();
    let out = kubectl(&path, &["homelab-lint", "--example", "-o", "json"]);
    // Findings at warning level: exit 1 passes through kubectl.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let rules = common::rules(&out);
    assert!(
        rules
            .iter()
            .any(|r| r == "authentik-cache-on-sync-replicated-postgres"),
        "{rules:?}"
    );
}

/// kubectl's plugin completion: with `kubectl_complete-homelab_lint` on
/// PATH, `kubectl __complete homelab-lint …` (what the shell's kubectl
/// completion runs on TAB) answers with the plugin's flags and values.
#[test]
fn kubectl_completes_the_plugin_through_kubectl_complete() {
    if !common::kubectl_available() {
        return;
    }
    let (dir, path) = plugin_path();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/kubectl_complete-homelab_lint");
    std::fs::copy(&script, dir.path().join("kubectl_complete-homelab_lint")).unwrap();
    let out = kubectl(&path, &["__complete", "homelab-lint", "--fo"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l.starts_with("--format\t")),
        "{}",
        text(&out)
    );
    assert!(stdout.lines().any(|l| l == ":4"), "{}", text(&out));
    let out = kubectl(&path, &["__complete", "homelab-lint", "--format", "sa"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().next(), Some("sarif"), "{}", text(&out));
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

#[test]
fn completions_generate_for_every_shell_and_bash_accepts_the_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out));
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(script.contains("kubectl-homelab_lint"), "{shell}");
        assert!(script.contains("fail-on"), "{shell}");
    }
    let out = run(&["completions", "nushell-or-so"]);
    assert_eq!(out.status.code(), Some(2));

    // bash parses the script and registers the completion function.
    if !common::bash_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script: PathBuf = dir.path().join("completion.bash");
    std::fs::write(&script, run(&["completions", "bash"]).stdout).unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p kubectl-homelab_lint",
            script.display()
        ))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("kubectl-homelab_lint"));
}

#[test]
fn man_page_generates_and_man_renders_it() {
    let out = run(&["man"]);
    assert!(out.status.success(), "{}", text(&out));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH kubectl-homelab_lint 1"), "{page}");
    for flag in ["fail\\-on", "\\-\\-base", "completions", "inventory"] {
        assert!(page.contains(flag), "{flag} missing from the man page");
    }
    // Render with man(1) where it is installed: the page must be valid roff.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("kubectl-homelab_lint.1");
    std::fs::write(&file, &page).unwrap();
    match Command::new("man")
        .arg("-l")
        .arg(&file)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
    {
        Ok(out) if out.status.success() => {
            let rendered = String::from_utf8_lossy(&out.stdout);
            assert!(
                rendered.contains("fail-on") || rendered.contains("fail‐on"),
                "{rendered}"
            );
        }
        // man is not part of the test's requirements (minimal images lack it).
        _ => eprintln!("note: man(1) is not available; the roff is checked textually only"),
    }
}
