//! A folder of a remote git repository, fetched as kustomize fetches it
//! (api/internal/git/cloner.go `ClonerUsingGitExec`: `init`, `fetch
//! --depth=1 origin REF`, `checkout FETCH_HEAD`), through
//! [`crate::source::git::command`], with no credentials: credential
//! helpers emptied, no prompt, no system or global configuration, and
//! `HOME` set to the fetch's own folder so that no `~/.netrc` is read.
//! Only the https transport is allowed (`protocol.allow=never`), and
//! git's `file` and (to a loopback address) `http` transports too when
//! the test-only setting asks for it.
//! Submodules are not fetched.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use super::Budget;

/// Fetches `reference` (default: the remote's HEAD) of `repo` into `dir`.
pub(super) fn fetch(
    repo: &str,
    reference: Option<&str>,
    dir: &Path,
    budget: &Budget,
) -> Result<(), String> {
    let deadline = Instant::now() + budget.time;
    run(dir, budget, deadline, &["init", "-q"])?;
    run(
        dir,
        budget,
        deadline,
        &[
            "fetch",
            "-q",
            "--depth=1",
            "--no-tags",
            repo,
            reference.unwrap_or("HEAD"),
        ],
    )?;
    run(dir, budget, deadline, &["checkout", "-q", "FETCH_HEAD"])?;
    let size = super::tree_size(dir);
    if size > budget.bytes {
        return Err(format!(
            "the checkout holds {size} bytes, more than the {} left in the budget",
            budget.bytes
        ));
    }
    Ok(())
}

/// One git command in `dir`, killed at the deadline.
fn run(dir: &Path, budget: &Budget, deadline: Instant, args: &[&str]) -> Result<(), String> {
    let mut cmd = no_credentials(crate::source::git::command(dir), dir, budget.allow_local);
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    let mut stderr = child.stderr.take();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stderr.as_mut() {
            let _ = s.take(64 * 1024).read_to_string(&mut text);
        }
        text
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break Err("the time budget ran out".to_string());
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => break Err(e.to_string()),
        }
    };
    let text = reader.join().unwrap_or_default();
    match status? {
        s if s.success() => Ok(()),
        s => Err(format!(
            "git {} exited with {s}: {}",
            args[0],
            text.trim().lines().last().unwrap_or("")
        )),
    }
}

/// `cmd` with nothing that could lend it credentials or another transport.
fn no_credentials(mut cmd: Command, dir: &Path, allow_local: bool) -> Command {
    cmd.args(["-c", "credential.helper=", "-c", "core.askPass="])
        .args([
            "-c",
            "protocol.allow=never",
            "-c",
            "protocol.https.allow=always",
        ]);
    if allow_local {
        // The fetcher lets through plain http to a loopback address only;
        // no redirect may take git elsewhere.
        cmd.args([
            "-c",
            "protocol.file.allow=always",
            "-c",
            "protocol.http.allow=always",
            "-c",
            "http.followRedirects=false",
        ]);
    }
    for var in [
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_PROXY_COMMAND",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir);
    cmd
}
