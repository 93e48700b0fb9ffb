//! The git questions of a lint: which commit a reference names, what
//! differs from it, what git ignores, asked through the `git` CLI
//! ([`command`]); the tree of a commit is read in
//! [`super::commit_tree`]. Nothing is written, and the working tree,
//! index and worktree list are left alone.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// Why a commit's tree could not be read.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started.
    #[error("cannot run git: {0}")]
    Spawn(#[source] std::io::Error),
    /// The directory is not inside a git work tree.
    #[error("{path} is not inside a git repository: {stderr}")]
    NotARepo { path: PathBuf, stderr: String },
    /// The reference names no commit.
    #[error("{reference:?} is not a commit of {path}: {stderr}")]
    BadRef {
        path: PathBuf,
        reference: String,
        stderr: String,
    },
    /// Listing the commit's tree or starting the blob reader failed.
    #[error("cannot read the tree of {reference}: {detail}")]
    Extract { reference: String, detail: String },
    /// A git process ran past [`BUDGET`] and was killed.
    #[error(
        "git {what} in {path} did not end within {secs} s and was stopped: a file git reads \
         may be a FIFO or a terminal, which makes it wait for ever (an `include.path` of the \
         repository's git configuration, its index)",
        secs = BUDGET.as_secs()
    )]
    TimedOut { what: String, path: PathBuf },
}

/// How long one git process may run. Each question a lint asks git is
/// answered in milliseconds (about 2 ms each on joryirving__home-ops);
/// a repository's `.git/config` is untrusted and can make git wait with
/// no end (an `include.path` naming a FIFO or `/dev/tty` blocks git's
/// reading of its configuration), which stalled `--base` and every lint
/// of such a repository until it was killed.
pub const BUDGET: Duration = Duration::from_secs(20);

/// A git process whose output is read as it comes, killed once past
/// [`BUDGET`] from its start: a read of its output that would wait for
/// ever ends at end of file instead.
pub(crate) struct Watched {
    child: std::sync::Arc<std::sync::Mutex<std::process::Child>>,
    /// Dropped when the process has ended: the watchdog then stops.
    ended: Option<std::sync::mpsc::Sender<()>>,
    killed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Watched {
    pub(crate) fn new(child: std::process::Child) -> Watched {
        use std::sync::atomic::Ordering;
        let child = std::sync::Arc::new(std::sync::Mutex::new(child));
        let killed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (ended, rx) = std::sync::mpsc::channel::<()>();
        let (watched, flag) = (child.clone(), killed.clone());
        std::thread::spawn(move || {
            if rx.recv_timeout(BUDGET) == Err(std::sync::mpsc::RecvTimeoutError::Timeout)
                && let Ok(mut child) = watched.lock()
            {
                flag.store(true, Ordering::Relaxed);
                let _ = child.kill();
            }
        });
        Watched {
            child,
            ended: Some(ended),
            killed,
        }
    }

    /// Stops the process before its end (its output is not wanted).
    pub(crate) fn kill(&self) {
        if let Ok(mut child) = self.child.lock() {
            let _ = child.kill();
        }
    }

    /// The process's exit status once it ends (its output read to the
    /// end or [`Watched::kill`] called); `Err` when the watchdog stopped
    /// it, naming the git `what` in `dir`. The lock is taken per look,
    /// never across a wait, so that the watchdog can always kill.
    pub(crate) fn wait(mut self, dir: &Path, what: &str) -> Result<ExitStatus, GitError> {
        use std::sync::atomic::Ordering;
        let status = loop {
            let polled = self.child.lock().map(|mut c| c.try_wait());
            match polled {
                Ok(Ok(Some(status))) => break status,
                Ok(Ok(None)) => std::thread::sleep(Duration::from_millis(1)),
                Ok(Err(e)) => return Err(GitError::Spawn(e)),
                Err(_) => return Err(GitError::Spawn(std::io::Error::other("lock poisoned"))),
            }
        };
        self.ended.take();
        if self.killed.load(Ordering::Relaxed) {
            return Err(GitError::TimedOut {
                what: what.to_string(),
                path: dir.to_path_buf(),
            });
        }
        Ok(status)
    }
}

/// Runs `cmd`, the git `what` in `dir`, to its end, its output gathered;
/// killed once past [`BUDGET`]. The pipes are read on threads that hand
/// over what they read at end of file (when git exits), so waiting costs
/// no polling.
fn bounded(mut cmd: Command, dir: &Path, what: &str) -> Result<Output, GitError> {
    use std::io::Read;
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(GitError::Spawn)?;
    let (tx, rx) = std::sync::mpsc::channel();
    let pipes: [Option<Box<dyn Read + Send>>; 2] = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ];
    for (i, pipe) in pipes.into_iter().enumerate() {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut read = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut read);
            }
            let _ = tx.send((i, read));
        });
    }
    let deadline = Instant::now() + BUDGET;
    let mut texts = [Vec::new(), Vec::new()];
    for _ in 0..2 {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((i, read)) => texts[i] = read,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(GitError::TimedOut {
                    what: what.to_string(),
                    path: dir.to_path_buf(),
                });
            }
        }
    }
    let status = child.wait().map_err(GitError::Spawn)?;
    let [stdout, stderr] = texts;
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// `git -C dir`, running none of the commands a repository's
/// configuration may name for a read-only question (its `.git/config` is
/// as untrusted as its files): `core.fsmonitor` off; no hook (`git diff`
/// writes the index when it finds a file's timestamps changed and its
/// bytes not, builtin/diff.c `refresh_index_quietly`, and writing the
/// index runs `post-index-change` from `core.hooksPath`, which may name a
/// folder of the repository itself); and every configured
/// clean, smudge or process filter emptied, which git reads as no filter
/// (a `required` one then fails the command, and the caller goes on
/// without git's answer). `diff` also gets `--no-ext-diff --no-textconv`
/// where it is run. Given on the command line and in GIT_CONFIG_*, the
/// settings hold for the git processes git starts (submodules) too; see
/// SECURITY.md.
///
/// `Err` when reading the configuration for the filters did not end
/// within [`BUDGET`]: any git process in `dir` would wait as long.
pub(crate) fn command(dir: &Path) -> Result<Command, GitError> {
    let mut cmd = Command::new("git");
    // `/dev/null/<hook>` is no file: git finds no hook to run.
    cmd.args([
        "-c",
        "core.fsmonitor=false",
        "-c",
        "core.hooksPath=/dev/null",
    ]);
    let keys: Vec<String> = filter_drivers(dir)?
        .iter()
        .flat_map(|d| ["clean", "smudge", "process"].map(|k| format!("filter.{d}.{k}")))
        .collect();
    // Environment pairs, not `-c`: a driver's name may hold `=`.
    cmd.env("GIT_CONFIG_COUNT", keys.len().to_string());
    for (i, key) in keys.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), key)
            .env(format!("GIT_CONFIG_VALUE_{i}"), "");
    }
    cmd.arg("-C").arg(dir).stdin(Stdio::null());
    Ok(cmd)
}

/// The filter drivers `dir`'s configuration defines a command for; none
/// when git cannot tell (outside a repository), `Err` when it did not
/// answer within [`BUDGET`].
fn filter_drivers(dir: &Path) -> Result<Vec<String>, GitError> {
    let mut cmd = Command::new("git");
    cmd.args(["-c", "core.fsmonitor=false", "-C"])
        .arg(dir)
        .args(["config", "--null", "--name-only", "--get-regexp"])
        .arg(r"^filter\..*\.(clean|smudge|process)$")
        .stdin(Stdio::null());
    let out = match bounded(cmd, dir, "config") {
        Ok(out) => out,
        Err(e @ GitError::TimedOut { .. }) => return Err(e),
        Err(_) => return Ok(Vec::new()),
    };
    let mut drivers: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter_map(|key| {
            let key = std::str::from_utf8(key).ok()?;
            let (name, _) = key.strip_prefix("filter.")?.rsplit_once('.')?;
            Some(name.to_string())
        })
        .collect();
    drivers.sort();
    drivers.dedup();
    Ok(drivers)
}

fn git(dir: &Path, args: &[&str]) -> Result<(bool, String, String), GitError> {
    let mut cmd = command(dir)?;
    cmd.args(args);
    let out = bounded(cmd, dir, args.first().copied().unwrap_or_default())?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).trim_end().to_string(),
        String::from_utf8_lossy(&out.stderr).trim().to_string(),
    ))
}

/// A commit of the repository that contains a directory, and where that
/// directory is in it.
#[derive(Clone)]
pub struct Commit {
    /// The full commit id.
    pub id: String,
    pub(super) reference: String,
    /// The repository's top level, and the directory relative to it.
    pub(super) top: PathBuf,
    pub(super) prefix: String,
}

impl Commit {
    /// Another commit of the same repository, found from this one (its
    /// merge-base with the commit under test).
    pub fn at(self, id: String) -> Commit {
        Commit { id, ..self }
    }
}

/// Resolves `reference` (a commit, branch or tag of the repository that
/// contains `dir`) to a commit, without reading its tree: one `git
/// rev-parse` finds the top level, the prefix and the commit (each git
/// process a `--base` run starts costs about 2 ms).
pub fn resolve(dir: &Path, reference: &str) -> Result<Commit, GitError> {
    let bad_ref = |stderr: String| GitError::BadRef {
        path: dir.to_path_buf(),
        reference: reference.to_string(),
        stderr,
    };
    let not_a_repo = |stderr: String| GitError::NotARepo {
        path: dir.to_path_buf(),
        stderr,
    };
    let located = ["rev-parse", "--show-toplevel", "--show-prefix"];
    // A leading dash would be read as an option.
    if reference.starts_with('-') || reference.is_empty() {
        let (ok, _, stderr) = git(dir, &located)?;
        return Err(if ok {
            bad_ref("not a reference".into())
        } else {
            not_a_repo(stderr)
        });
    }
    let spec = format!("{reference}^{{commit}}");
    let verify = ["--verify", "--quiet", "--end-of-options", &spec];
    let (ok, out, stderr) = git(dir, &[&located[..], &verify[..]].concat())?;
    // Three lines: the top level, the prefix (empty at the top level) and
    // the commit. rev-parse prints the first two before it looks the
    // reference up, and nothing outside a work tree.
    let mut lines = out.splitn(3, '\n');
    let (top, prefix, commit) = (lines.next(), lines.next(), lines.next());
    let Some(top) = top.filter(|t| !t.is_empty()) else {
        return Err(not_a_repo(stderr));
    };
    let commit = commit.filter(|c| ok && !c.is_empty()).ok_or_else(|| {
        bad_ref(if stderr.is_empty() {
            "unknown revision".into()
        } else {
            stderr
        })
    })?;
    Ok(Commit {
        id: commit.to_string(),
        reference: reference.to_string(),
        top: PathBuf::from(top),
        prefix: prefix.unwrap_or("").trim().to_string(),
    })
}

/// The paths below `dir` (relative to it) that are not as `commit` has
/// them: tracked files the working tree changes, adds or deletes (`git
/// diff` compares the working tree with the commit, after git's own clean
/// filters and stat cache; without rename detection, which would name
/// only the new path), or, when there is none, every file untracked and
/// not ignored (the loader leaves ignored files out, see [`ignored`]). Empty only when every file is as the commit has
/// it. Untracked files are not asked for once a tracked one differs (a
/// process of 8 ms CPU on joryirving__home-ops, a fifth of what `--base`
/// spends in git): the base is then loaded from the commit, and an
/// untracked file is not in its tree, or `git diff` names it (a path of
/// the commit missing from the index is deleted), so it is no file
/// whose text [`reuse::sharing_unchanged`](super::reuse::sharing_unchanged)
/// could share. `None` when git cannot tell.
pub fn changed_since(dir: &Path, commit: &str) -> Option<HashSet<PathBuf>> {
    let changed: HashSet<PathBuf> = listed(
        dir,
        &[
            "diff",
            "--name-only",
            "-z",
            "--relative",
            "--no-renames",
            "--no-ext-diff",
            "--no-textconv",
            commit,
            "--",
            ".",
        ],
    )?
    .into_iter()
    .collect();
    if !changed.is_empty() {
        return Some(changed);
    }
    Some(
        listed(
            dir,
            &[
                "ls-files",
                "--others",
                "--exclude-standard",
                "-z",
                "--",
                ".",
            ],
        )?
        .into_iter()
        .collect(),
    )
}

/// Whether every file below `dir` is as `commit` has it (see
/// [`changed_since`]). Then a lint of the commit is the lint of the
/// working tree.
pub fn unchanged_since(dir: &Path, commit: &str) -> bool {
    changed_since(dir, commit).is_some_and(|changed| changed.is_empty())
}

/// The commit a lint of a git work tree saw, for SARIF's
/// `versionControlProvenance`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The `origin` remote as an absolute URI, without credentials.
    pub repository_uri: String,
    /// The full id of `HEAD`.
    pub revision: String,
    /// The branch checked out; `None` on a detached `HEAD`.
    pub branch: Option<String>,
}

/// The provenance of the work tree that holds `dir`: `None` outside git,
/// without an `origin` remote, or before the first commit.
pub fn provenance(dir: &Path) -> Option<Provenance> {
    let run = |args: &[&str]| match git(dir, args) {
        Ok((true, out, _)) if !out.is_empty() => Some(out),
        _ => None,
    };
    let remote = run(&["remote", "get-url", "origin"])?;
    Some(Provenance {
        repository_uri: remote_uri(&remote)?,
        revision: run(&["rev-parse", "--verify", "--quiet", "HEAD"])?,
        branch: run(&["symbolic-ref", "--short", "--quiet", "HEAD"]),
    })
}

/// A remote URL as an absolute URI: scp-like `git@host:owner/repo.git`
/// becomes `ssh://git@host/owner/repo.git` (git's own reading of that
/// form, see git-clone(1) "GIT URLS"); a password or token in the user
/// part is dropped, never printed. A local path is no URI: `None`.
fn remote_uri(remote: &str) -> Option<String> {
    if let Some((scheme, rest)) = remote.split_once("://") {
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = match authority.rsplit_once('@') {
            // `user:token@host`: only the user name is kept for ssh, nothing for http(s).
            Some((_, host)) if scheme.starts_with("http") => host.to_string(),
            Some((user, host)) => format!("{}@{host}", user.split(':').next().unwrap_or("")),
            None => authority.to_string(),
        };
        return Some(format!("{scheme}://{host}/{path}"));
    }
    // scp-like syntax: a colon before any slash.
    let (host, path) = remote.split_once(':')?;
    if host.contains('/') || host.is_empty() {
        return None;
    }
    Some(format!("ssh://{host}/{}", path.trim_start_matches('/')))
}

/// The top level of the git work tree that holds `dir`, found as git
/// finds it: the nearest ancestor with a `.git` directory or file (a
/// worktree or submodule has a `.git` file). Read from the file system,
/// without running git, since every lint asks.
pub fn top_level(dir: &Path) -> Option<PathBuf> {
    let abs = dir.canonicalize().ok()?;
    abs.ancestors()
        .find(|a| a.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The merge-base of two commits (as `git diff A...B` compares with):
/// `None` when they share no history.
pub fn merge_base(top: &Path, a: &str, b: &str) -> Result<Option<String>, GitError> {
    let (ok, out, stderr) = git(top, &["merge-base", "--end-of-options", a, b])?;
    match (ok, out.lines().next()) {
        (true, Some(id)) if !id.is_empty() => Ok(Some(id.to_string())),
        // Exit 1 with nothing said: no common ancestor.
        _ if stderr.is_empty() => Ok(None),
        _ => Err(GitError::Extract {
            reference: format!("{a}...{b}"),
            detail: stderr,
        }),
    }
}

/// Whether the clone is shallow: its history stops short, so two
/// commits may share history it does not hold.
pub fn is_shallow(top: &Path) -> bool {
    matches!(git(top, &["rev-parse", "--is-shallow-repository"]), Ok((true, out, _)) if out == "true")
}

/// Whether the repository has a commit checked out (not before the first
/// commit, or on an orphan branch).
pub fn has_head(top: &Path) -> bool {
    matches!(
        git(top, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]),
        Ok((true, _, _))
    )
}

/// The paths below `dir` (relative to it) that git ignores (`.gitignore`,
/// `.git/info/exclude`, `core.excludesFile`) and does not track; a wholly
/// ignored directory is one entry. Flux gets
/// the repository from git, so it never sees them. Empty when git cannot
/// tell; `Err` when it did not end within [`BUDGET`].
pub fn ignored(dir: &Path) -> Result<Vec<PathBuf>, GitError> {
    Ok(listed_bounded(
        dir,
        &[
            "ls-files",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
            "-z",
        ],
    )?
    .unwrap_or_default()
    .into_iter()
    .map(|p| {
        // A directory ends with `/`: the path without it.
        p.components().collect()
    })
    .collect())
}

/// What a lint reads besides the working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// The index (`--staged`): what the next commit holds.
    Index,
    /// A commit's tree (`--ref`).
    Commit(String),
}

/// The paths below `dir` (relative to it) that differ between `base` and
/// what `held` holds, without rename detection (see [`changed_since`]);
/// `None` when git cannot tell.
pub fn changed_between(dir: &Path, base: &str, held: &Held) -> Option<HashSet<PathBuf>> {
    let mut args = vec![
        "diff",
        "--name-only",
        "-z",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
    ];
    match held {
        Held::Index => args.extend(["--cached", base]),
        Held::Commit(c) => args.extend([base, c.as_str()]),
    }
    args.push("--");
    Some(listed(dir, &args)?.into_iter().collect())
}

/// The paths git prints NUL-separated; `None` when it fails or does not
/// end within [`BUDGET`].
fn listed(dir: &Path, args: &[&str]) -> Option<Vec<PathBuf>> {
    listed_bounded(dir, args).ok().flatten()
}

/// [`listed`], `Err` when git did not end within [`BUDGET`].
fn listed_bounded(dir: &Path, args: &[&str]) -> Result<Option<Vec<PathBuf>>, GitError> {
    let mut cmd = command(dir)?;
    cmd.args(args);
    let out = match bounded(cmd, dir, args.first().copied().unwrap_or_default()) {
        Ok(out) => out,
        Err(e @ GitError::TimedOut { .. }) => return Err(e),
        Err(_) => return Ok(None),
    };
    Ok(out.status.success().then(|| {
        out.stdout
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(OsStr::from_bytes(p)))
            .collect()
    }))
}

#[cfg(test)]
mod shown_tests {
    use super::*;

    #[test]
    fn remotes_become_absolute_uris_without_credentials() {
        assert_eq!(
            remote_uri("git@github.com:onedr0p/home-ops.git").as_deref(),
            Some("ssh://git@github.com/onedr0p/home-ops.git")
        );
        assert_eq!(
            remote_uri("https://x-access-token:ghs_secret@github.com/o/r.git").as_deref(),
            Some("https://github.com/o/r.git")
        );
        assert_eq!(
            remote_uri("ssh://git:pw@git.example.com:2222/o/r").as_deref(),
            Some("ssh://git@git.example.com:2222/o/r")
        );
        assert_eq!(remote_uri("/srv/git/home-ops.git"), None);
        assert_eq!(remote_uri("../home-ops"), None);
    }

    #[test]
    fn the_top_level_is_the_nearest_folder_with_git() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("kubernetes/apps")).unwrap();
        assert_eq!(top_level(&dir.path().join("kubernetes")), None);
        std::fs::write(dir.path().join(".git"), "gitdir: elsewhere\n").unwrap();
        let top = Some(dir.path().canonicalize().unwrap());
        assert_eq!(top_level(&dir.path().join("kubernetes/apps")), top);
        assert_eq!(top_level(dir.path()), top);
    }
}
