//! The language server (`server`) driven by a real LSP client: the
//! pytest-lsp plugin over pygls's client (PyPI; scripts/install-pypi-tools
//! puts it into target/tools/pytest-lsp) runs tests/lsp/test_server.py
//! against the binary, on a git copy of a corpus repository made here:
//! open, diagnostics, an edit that removes the finding and one that brings
//! it back, hover and go-to-definition on a variable, definition of a
//! dependency and a source, a suppression applied and linted again, a
//! malformed buffer, files deleted under the server, a file nothing
//! applies; and on the bundled example, a safe fix applied and an unsafe
//! one marked.

use std::path::Path;
use std::process::Command;

use crate::common;

const REPO: &str = "buroa__k8s-gitops";

#[test]
fn an_editor_gets_findings_hover_definitions_and_actions() {
    let pytest = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/pytest-lsp/bin/pytest");
    if !pytest.is_file() {
        common::skip_or_fail("pytest-lsp is missing (run scripts/install-pypi-tools pytest-lsp)");
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    common::copy_dir(&corpus.join(REPO), &repo);
    common::git(&repo, &["init", "-q"]);
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-q", "-m", "corpus"]);
    // The bundled example's fixes: one safe, one unsafe.
    let example = tmp.path().join("example");
    common::copy_dir(&common::example_repo(), &example);
    common::git(&example, &["init", "-q"]);
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lsp");
    let out = Command::new(&pytest)
        .arg(&tests)
        .args(["-q", "-p", "no:cacheprovider"])
        .env("HOMELAB_LINT_BIN", common::BIN)
        .env("LSP_REPO", &repo)
        .env("LSP_EXAMPLE_REPO", &example)
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
