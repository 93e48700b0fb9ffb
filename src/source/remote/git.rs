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
    within_budget(dir, budget, deadline)?;
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

/// Files a checkout may hold. A remote kustomize folder comes from a
/// repository of a few thousand files; git's checkout holds an index
/// entry per file in memory before it writes any, and a tree that lists
/// one tree ten times, eight levels deep (a few hundred bytes fetched),
/// names 10^8 files: `git checkout` grew by 28 MB a second until the
/// time budget ended it.
const MAX_FILES: u64 = 100_000;

/// Refuses a fetched commit whose checkout would hold more than
/// [`MAX_FILES`] files or more bytes than the budget has left, from its
/// listing (`git ls-tree -r -l`), read as git writes it and stopped at
/// the first entry past either, before anything is checked out.
fn within_budget(dir: &Path, budget: &Budget, deadline: Instant) -> Result<(), String> {
    use std::io::BufRead;
    let mut cmd = no_credentials(
        crate::source::git::command(dir).map_err(|e| e.to_string())?,
        dir,
        budget.allow_local,
    );
    cmd.args(["ls-tree", "-r", "-l", "-z", "--full-tree", "FETCH_HEAD"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("cannot run git: {e}"))?;
    let Some(stdout) = child.stdout.take() else {
        return Err("git ls-tree has no output pipe".into());
    };
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut over = None;
    for record in std::io::BufReader::new(stdout).split(0) {
        let Ok(record) = record else { break };
        // `<mode> <type> <object> <size>\t<path>`; a submodule's size is `-`.
        let meta = record.split(|b| *b == b'\t').next().unwrap_or_default();
        let size = std::str::from_utf8(meta)
            .ok()
            .and_then(|m| m.split_whitespace().nth(3))
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        files += 1;
        bytes = bytes.saturating_add(size);
        over = if files > MAX_FILES {
            Some(format!(
                "the checkout would hold more than {MAX_FILES} files"
            ))
        } else if bytes > budget.bytes {
            Some(format!(
                "the checkout would hold more than the {} bytes left in the budget",
                budget.bytes
            ))
        } else if Instant::now() >= deadline {
            Some("the time budget ran out".to_string())
        } else {
            None
        };
        if over.is_some() {
            break;
        }
    }
    let _ = child.kill();
    let status = child.wait().map_err(|e| e.to_string())?;
    match over {
        Some(why) => Err(why),
        None if status.success() => Ok(()),
        None => Err(format!("git ls-tree exited with {status}")),
    }
}

/// One git command in `dir`, killed at the deadline.
fn run(dir: &Path, budget: &Budget, deadline: Instant, args: &[&str]) -> Result<(), String> {
    let mut cmd = no_credentials(
        crate::source::git::command(dir).map_err(|e| e.to_string())?,
        dir,
        budget.allow_local,
    );
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
