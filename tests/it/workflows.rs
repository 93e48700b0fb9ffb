//! Every workflow and `action.yml` through the linters GitHub Actions
//! users trust: actionlint (with shellcheck on the `run:` scripts) on each
//! workflow, zizmor's security audit on the workflows and the action, and
//! shellcheck on the action's own `run:` scripts, which actionlint does
//! not read (it checks workflows only). The tools come from PyPI,
//! pinned, through `scripts/install-pypi-tools` into target/tools/.
//! Each check is also shown to fail on a broken file.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use homelab_lint::yaml::{FileId, Limits, Node, parse_documents};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// target/tools/NAME/bin/NAME when it runs, else skip (fail under CI).
fn tool(name: &str) -> Option<PathBuf> {
    let path = root().join(format!("target/tools/{name}/bin/{name}"));
    let runs = Command::new(&path)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !runs {
        common::skip_or_fail(&format!(
            "{name} is missing (run scripts/install-pypi-tools {name})"
        ));
        return None;
    }
    Some(path)
}

fn workflows() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(".github/workflows"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 2, "{files:?}");
    files
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn actionlint(actionlint: &Path, shellcheck: &Path, files: &[PathBuf]) -> Output {
    Command::new(actionlint)
        .arg(format!("-shellcheck={}", shellcheck.display()))
        .arg("-pyflakes=")
        .arg("-no-color")
        .args(files)
        .current_dir(root())
        .output()
        .unwrap()
}

fn zizmor(zizmor: &Path, files: &[PathBuf]) -> Output {
    Command::new(zizmor)
        .args(["--offline", "--no-progress", "--config"])
        .arg(root().join(".github/zizmor.yml"))
        .args(files)
        .current_dir(root())
        .output()
        .unwrap()
}

#[test]
fn actionlint_passes_every_workflow_and_catches_a_broken_one() {
    let (Some(lint), Some(sc)) = (tool("actionlint"), tool("shellcheck")) else {
        return;
    };
    let out = actionlint(&lint, &sc, &workflows());
    assert!(out.status.success(), "{}", text(&out));

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yml");
    std::fs::write(
        &bad,
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo ${{ matrix.nothing }} $undefined_var\n",
    )
    .unwrap();
    let out = actionlint(&lint, &sc, &[bad]);
    assert!(!out.status.success(), "{}", text(&out));
}

#[test]
fn zizmor_passes_workflows_and_the_action_and_catches_an_injection() {
    let Some(z) = tool("zizmor") else {
        return;
    };
    let mut files = workflows();
    files.push(root().join("action.yml"));
    let out = zizmor(&z, &files);
    assert!(out.status.success(), "{}", text(&out));

    let dir = tempfile::tempdir().unwrap();
    let workflows = dir.path().join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    let bad = workflows.join("bad.yml");
    std::fs::write(
        &bad,
        "on: pull_request_target\npermissions: {}\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n      - run: echo \"${{ github.event.pull_request.title }}\"\n",
    )
    .unwrap();
    let out = zizmor(&z, &[bad]);
    assert!(!out.status.success(), "{}", text(&out));
}

/// Each `run:` script of action.yml, as bash.
fn action_scripts() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("action.yml")).unwrap();
    let docs = parse_documents(&text, FileId(0), &Limits::default()).unwrap();
    docs[0]
        .path(&["runs", "steps"])
        .and_then(Node::as_seq)
        .unwrap()
        .iter()
        .filter_map(|s| {
            let name = s.str_at(&["name"]).unwrap_or("?").to_string();
            s.str_at(&["run"]).map(|r| (name, r.to_string()))
        })
        .collect()
}

fn shellcheck(sc: &Path, script: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("step.sh");
    std::fs::write(&file, script).unwrap();
    Command::new(sc)
        .args(["--shell=bash", "--severity=style"])
        .arg(&file)
        .output()
        .unwrap()
}

#[test]
fn shellcheck_passes_the_actions_run_scripts_and_catches_a_bad_one() {
    let Some(sc) = tool("shellcheck") else {
        return;
    };
    let scripts = action_scripts();
    assert!(scripts.len() >= 3, "{scripts:?}");
    for (name, script) in &scripts {
        let out = shellcheck(&sc, script);
        assert!(out.status.success(), "step {name:?}:\n{}", text(&out));
    }
    let out = shellcheck(&sc, "rm -rf $DIR/*\n");
    assert!(!out.status.success(), "{}", text(&out));
}
