//! The language server (`server`) driven by real LSP clients, on a git
//! copy of a corpus repository made here.
//!
//! The pytest-lsp plugin over pygls's client (PyPI; scripts/install-pypi-tools
//! puts it into target/tools/pytest-lsp) runs tests/lsp/test_server.py:
//! open, diagnostics, an edit that removes the finding and one that brings
//! it back, hover and go-to-definition on a variable, definition of a
//! dependency and a source, a suppression applied and linted again, a
//! malformed buffer, files deleted under the server, a file nothing
//! applies, edits and disk changes after which the diagnostics are a fresh
//! lint's, a file git ignores made while it runs, a file reached through
//! a symlinked folder, a variable in another's default and one in a
//! comment, a long value's hover, keystrokes sent as small incremental
//! edits; on a copy of joryirving__home-ops, a place rendered more ways
//! than a hover lists; and on the bundled example, a safe fix applied and
//! an unsafe one marked, both kept to a CRLF file's line breaks, and a
//! suppression written in another file that says where.
//!
//! Neovim's built-in client (Debian's `neovim`, headless) runs
//! tests/lsp/neovim.lua: open, the finding's diagnostic, hover on its
//! variable, its suppression applied and the finding gone. The Neovim
//! set-ups of docs/editors.md run as written, each in a Neovim it is for
//! (Debian's 0.7; 0.11 from PyPI, scripts/install-pypi-tools neovim).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common;

const REPO: &str = "buroa__k8s-gitops";
const CLUSTER: &str = "kubernetes/apps/databases/cloudnative-pg/cluster/cluster.yaml";
const RULE: &str = "postgres-replicas-on-replicated-storage";

/// A git repository of one commit holding a copy of `from`, at `to`.
fn git_copy(from: &Path, to: &Path) -> PathBuf {
    common::copy_dir(from, to);
    common::git(to, &["init", "-q"]);
    common::git(to, &["add", "-A"]);
    common::git(to, &["commit", "-q", "-m", "corpus"]);
    to.to_path_buf()
}

/// The corpus repository's git copy under `tmp`; `None` (skipped loudly)
/// without the corpus or git.
fn corpus_copy(tmp: &Path) -> Option<PathBuf> {
    let corpus = common::corpus()?;
    if !common::git_available() {
        return None;
    }
    Some(git_copy(&corpus.join(REPO), &tmp.join("repo")))
}

#[test]
fn an_editor_gets_findings_hover_definitions_and_actions() {
    let pytest = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/pytest-lsp/bin/pytest");
    if !pytest.is_file() {
        common::skip_or_fail("pytest-lsp is missing (run scripts/install-pypi-tools pytest-lsp)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(repo) = corpus_copy(tmp.path()) else {
        return;
    };
    // The bundled example's fixes: one safe, one unsafe.
    let example = git_copy(&common::example_repo(), &tmp.path().join("example"));
    // Objects named from a Secret's values, which no text the editor
    // shows may hold.
    let secret_src = tmp.path().join("secret-src");
    crate::hostile_secret::secret_named_objects(&secret_src);
    let secret = git_copy(&secret_src, &tmp.path().join("secret"));
    // A component many Flux Kustomizations render, each with its own
    // variables.
    let wide = git_copy(
        &common::corpus().unwrap().join("joryirving__home-ops"),
        &tmp.path().join("wide"),
    );
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp");
    let out = Command::new(&pytest)
        .arg(&tests)
        .args(["-q", "-p", "no:cacheprovider"])
        .env("HOMELAB_LINT_BIN", common::BIN)
        .env("LSP_REPO", &repo)
        .env("LSP_EXAMPLE_REPO", &example)
        .env("LSP_SECRET_REPO", &secret)
        .env("LSP_WIDE_REPO", &wide)
        .env("LSP_PLANTED", crate::hostile_secret::PLANTED)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "pytest-lsp failed:\n{text}");
    assert!(text.contains(" passed"), "{text}");
    assert!(!text.contains("skipped"), "{text}");
}

#[test]
fn neovim_gets_the_finding_its_hover_and_its_suppression() {
    if !common::runs(
        "nvim",
        &["--version"],
        "nvim is not on PATH (Debian: apt-get install neovim)",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(repo) = corpus_copy(tmp.path()) else {
        return;
    };
    // Neovim's own files (log, shada, swap) stay in the temporary
    // directory, not in the user's.
    let home = tmp.path().join("nvim-home");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/neovim.lua");
    let mut nvim = Command::new("nvim");
    nvim.args(["--headless", "-u", "NONE", "-i", "NONE", "-n", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("HOMELAB_LINT_BIN", common::BIN)
        .env("LSP_FILE", repo.join(CLUSTER))
        .env("LSP_RULE", RULE)
        .current_dir(&repo);
    home_in(&mut nvim, &home);
    let out = nvim.output().unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "Neovim's client failed:\n{text}");
    assert!(
        text.contains("the finding, its hover and its suppression held"),
        "{text}"
    );
}

/// Neovim's home and XDG folders in `home`: no user configuration is read.
fn home_in(command: &mut Command, home: &Path) {
    for var in [
        "HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_CACHE_HOME",
    ] {
        command.env(var, home);
    }
}

/// The Lua of the set-up under `heading` in docs/editors.md.
fn set_up(heading: &str) -> String {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/editors.md"))
            .unwrap();
    let after = &docs[docs
        .find(heading)
        .unwrap_or_else(|| panic!("no {heading:?}"))..];
    let code = &after[after.find("```lua\n").unwrap() + 7..];
    code[..code.find("```").unwrap()].to_string()
}

#[test]
fn the_neovim_set_ups_of_the_docs_work_as_written() {
    let current = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/neovim/bin/nvim");
    if !current.is_file() {
        common::skip_or_fail("Neovim 0.11 is missing (run scripts/install-pypi-tools neovim)");
        return;
    }
    if !common::runs(
        "nvim",
        &["--version"],
        "nvim is not on PATH (Debian: apt-get install neovim)",
    ) {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(repo) = corpus_copy(tmp.path()) else {
        return;
    };
    // The binary under the name the set-ups start, first on PATH.
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(common::BIN, bin.join("kubectl-homelab_lint")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp/neovim_setup.lua");
    let cluster = Path::new(CLUSTER);
    for (nvim, heading) in [
        (current.as_path(), "Neovim 0.11 and later"),
        (current.as_path(), "Neovim 0.8 to 0.10"),
        (Path::new("nvim"), "Neovim 0.7 (Debian"),
    ] {
        let init = tmp.path().join("init.lua");
        std::fs::write(&init, set_up(heading)).unwrap();
        let home = tmp.path().join("nvim-home");
        // Opened as a user in the file's parent folder types it.
        let folder = cluster.parent().unwrap().parent().unwrap();
        let mut command = Command::new(nvim);
        command
            .args(["--headless", "-u"])
            .arg(&init)
            .args(["-i", "NONE", "-n", "-c"])
            .arg(format!("luafile {}", script.display()))
            .env("PATH", &path)
            .env("LSP_FILE", cluster.strip_prefix(folder).unwrap())
            .env("LSP_RULE", RULE)
            .current_dir(repo.join(folder));
        home_in(&mut command, &home);
        let out = command.output().unwrap();
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{heading}: {text}");
        assert!(text.contains("the finding came"), "{heading}: {text}");
    }
}

/// The exit status the Language Server Protocol asks for ("exit"
/// notification): 0 after a `shutdown` request, 1 when the editor sends
/// `exit` without one.
#[test]
fn exit_without_shutdown_is_status_one() {
    use std::io::Write;
    let frame = |body: serde_json::Value| {
        let text = body.to_string();
        format!("Content-Length: {}\r\n\r\n{text}", text.len())
    };
    let initialize = frame(serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"capabilities": {}, "processId": null, "rootUri": null}
    }));
    let initialized = frame(serde_json::json!({
        "jsonrpc": "2.0", "method": "initialized", "params": {}
    }));
    let shutdown = frame(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    let exit = frame(serde_json::json!({"jsonrpc": "2.0", "method": "exit"}));
    for (session, status) in [
        (vec![&initialize, &initialized, &shutdown, &exit], 0),
        (vec![&initialize, &initialized, &exit], 1),
    ] {
        let mut child = Command::new(common::BIN)
            .arg("server")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for message in &session {
            stdin.write_all(message.as_bytes()).unwrap();
        }
        // Closed, so that a server that went on reading would end too.
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(status),
            "{} messages",
            session.len()
        );
    }
}
