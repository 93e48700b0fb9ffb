//! Remote kustomize entries (`https://…/crd.yaml`,
//! `github.com/org/repo/folder?ref=v1`, `git::https://…`), fetched only
//! when the user asks (`--remote`): over https, without credentials,
//! within a count, size and time budget, through a cache keyed by URL and
//! ref under the user's cache directory. Every fetch is a line of `-v`.
//! Without `--remote`, a remote entry is a gap that says what it names.

mod git;
mod http;
mod spec;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use sha2::{Digest, Sha256};

pub use spec::{Entry, parse};

/// Where the files of a fetched git folder come from: each is named
/// `<repo>//<path>?ref=<ref>`, kustomize's own form of a remote entry, so
/// that no file of another repository passes for one of this one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    pub repo: String,
    pub reference: Option<String>,
}

impl Checkout {
    /// The name of the checkout's file (or folder) at `rel`.
    pub fn name(&self, rel: &str) -> String {
        match &self.reference {
            Some(r) => format!("{}//{rel}?ref={r}", self.repo),
            None => format!("{}//{rel}", self.repo),
        }
    }
}

/// What the user allows a run to fetch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// Where fetched entries are kept; default `$XDG_CACHE_HOME/homelab-lint`
    /// (else `~/.cache/homelab-lint`), as kustomize keeps its clones.
    pub cache_dir: Option<PathBuf>,
    /// Remote entries one run may fetch or take from the cache.
    pub max_fetches: usize,
    /// Bytes all remote entries of a run may hold in all.
    pub max_bytes: u64,
    /// Wall-clock time all fetches of a run may take.
    pub budget: Duration,
    /// How long a cached entry is used before it is fetched again.
    pub max_age: Duration,
    /// For tests only: also plain `http://` to a loopback address and
    /// git's `file://` transport (`HOMELAB_LINT_REMOTE_LOCAL=1`; see
    /// SECURITY.md). A repository cannot set it.
    pub allow_local: bool,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            cache_dir: None,
            max_fetches: 50,
            max_bytes: 64 << 20,
            budget: Duration::from_secs(120),
            max_age: Duration::from_secs(24 * 3600),
            // The tests' allowance is the environment's, never a flag or
            // a configuration key: no repository can set it.
            allow_local: std::env::var_os("HOMELAB_LINT_REMOTE_LOCAL").is_some_and(|v| v == "1"),
        }
    }
}

/// Why a remote entry was not fetched.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The entry is not one this tool fetches (ssh, plain http, …).
    #[error("{reason}")]
    Refused { reason: String },
    /// A budget of the run is spent.
    #[error("remote fetch budget exceeded: {what}")]
    Budget { what: String },
    /// The server or git failed.
    #[error("fetching {url} failed: {message}")]
    Failed { url: String, message: String },
    /// The cache directory could not be used.
    #[error("cache {path}: {message}")]
    Cache { path: PathBuf, message: String },
}

/// A fetched entry, as read from the cache.
#[derive(Clone, Debug)]
pub enum Fetched {
    /// A file's bytes as served: what reads it says whether it must be
    /// text (a manifest, a patch) or may be any bytes (a generator's
    /// file, which kustomize puts in `binaryData`).
    File { bytes: Arc<[u8]> },
    /// The checkout of a repository; the entry's folder is below it.
    Tree { dir: PathBuf },
}

/// The fetches of one run: budgets spent, entries fetched, the log.
pub struct Fetcher {
    settings: Settings,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    started: Option<Instant>,
    fetches: usize,
    bytes: u64,
    done: HashMap<(String, String), Result<Fetched, FetchError>>,
    log: Vec<String>,
}

impl Fetcher {
    pub fn new(settings: Settings) -> Fetcher {
        Fetcher {
            settings,
            state: Mutex::default(),
        }
    }

    /// What was fetched or taken from the cache, one line each, in order.
    pub fn log(&self) -> Vec<String> {
        self.lock().log.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The entry from the cache, else fetched into it; an entry asked for
    /// again in the run gives the same answer without counting twice.
    pub fn fetch(&self, entry: &Entry) -> Result<Fetched, FetchError> {
        let key = entry.key();
        let mut state = self.lock();
        if let Some(done) = state.done.get(&key) {
            return done.clone();
        }
        let result = self.fetch_new(entry, &mut state);
        let (url, reference) = &key;
        let at = match reference.as_str() {
            "" => url.clone(),
            r => format!("{url} at {r}"),
        };
        let line = match &result {
            Ok((_, true)) => format!("remote: {at}: from the cache"),
            Ok((_, false)) => format!("remote: {at}: fetched"),
            Err(e) => format!("remote: {at}: not fetched: {e}"),
        };
        state
            .log
            .push(crate::yaml::without_credentials(&line).into_owned());
        let result = result.map(|(f, _)| f);
        state.done.insert(key, result.clone());
        result
    }

    /// The entry and whether it came from the cache.
    fn fetch_new(&self, entry: &Entry, state: &mut State) -> Result<(Fetched, bool), FetchError> {
        self.allowed(entry)?;
        let s = &self.settings;
        if state.fetches >= s.max_fetches {
            return Err(FetchError::Budget {
                what: format!("more than {} remote entries", s.max_fetches),
            });
        }
        state.fetches += 1;
        let slot = self.slot(entry)?;
        let fresh = std::fs::metadata(&slot)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age <= s.max_age);
        let bytes_left = s.max_bytes.saturating_sub(state.bytes);
        let over = |size: u64| {
            (size > bytes_left).then(|| FetchError::Budget {
                what: format!("more than {} bytes of remote entries in all", s.max_bytes),
            })
        };
        if !fresh {
            let started = *state.started.get_or_insert_with(Instant::now);
            let time_left = s.budget.saturating_sub(started.elapsed());
            if time_left.is_zero() {
                return Err(FetchError::Budget {
                    what: format!(
                        "fetches took more than {}",
                        humantime::format_duration(s.budget)
                    ),
                });
            }
            let budget = Budget {
                bytes: bytes_left,
                time: time_left,
                allow_local: s.allow_local,
            };
            let staging = staging_dir(&slot)?;
            let fetched = match entry {
                Entry::File { url } => http::fetch(url, &budget)
                    .and_then(|body| write(&staging.path().join("file"), &body)),
                Entry::Git {
                    repo, reference, ..
                } => git::fetch(repo, reference.as_deref(), staging.path(), &budget),
            };
            fetched.map_err(|message| FetchError::Failed {
                url: entry.key().0,
                message,
            })?;
            let _ = std::fs::remove_dir_all(&slot);
            std::fs::rename(staging.keep(), &slot).map_err(|e| cache_error(&slot, e))?;
        }
        let fetched = match entry {
            Entry::File { .. } => {
                let bytes = std::fs::read(slot.join("file")).map_err(|e| cache_error(&slot, e))?;
                if let Some(e) = over(bytes.len() as u64) {
                    return Err(e);
                }
                state.bytes += bytes.len() as u64;
                Fetched::File {
                    bytes: bytes.into(),
                }
            }
            Entry::Git { .. } => {
                let size = tree_size(&slot);
                if let Some(e) = over(size) {
                    return Err(e);
                }
                state.bytes += size;
                Fetched::Tree { dir: slot.clone() }
            }
        };
        Ok((fetched, fresh))
    }

    /// Refuses what the settings do not allow: a URL with anything
    /// before `@` (`user:password@`, a token as the user, a placeholder
    /// such as `${TOKEN}@` that git or reqwest would send as it is),
    /// since this tool sends no credentials, and anything but https,
    /// unless the test-only setting allows loopback http and local git.
    fn allowed(&self, entry: &Entry) -> Result<(), FetchError> {
        let url = entry.key().0;
        let authority = url
            .split_once("://")
            .and_then(|(_, rest)| rest.split(['/', '\\', '?', '#']).next());
        if authority.is_some_and(|a| a.contains('@')) {
            return Err(FetchError::Refused {
                reason: "its URL holds credentials (before '@'), and remote entries are \
                         fetched without credentials"
                    .into(),
            });
        }
        let local = self.settings.allow_local;
        let refused = match (entry.scheme(), entry) {
            ("https", _) => return Ok(()),
            ("http", _) if local && http::is_loopback(&entry.key().0) => return Ok(()),
            ("file", Entry::Git { .. }) if local => return Ok(()),
            ("http", _) => "plain http is not fetched, only https",
            (_, _) => "only https is fetched",
        };
        Err(FetchError::Refused {
            reason: refused.into(),
        })
    }

    /// The cache folder of an entry: keyed by the URL and the ref.
    fn slot(&self, entry: &Entry) -> Result<PathBuf, FetchError> {
        let root = match &self.settings.cache_dir {
            Some(dir) => dir.clone(),
            None => default_cache_dir().ok_or_else(|| FetchError::Cache {
                path: PathBuf::from("$XDG_CACHE_HOME"),
                message: "neither XDG_CACHE_HOME nor HOME is set: give a cache directory".into(),
            })?,
        };
        let (url, reference) = entry.key();
        let kind = match entry {
            Entry::File { .. } => "file",
            Entry::Git { .. } => "git",
        };
        let digest = Sha256::digest(format!("{kind}\0{url}\0{reference}"));
        let name: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let dir = root.join("remote-v1");
        std::fs::create_dir_all(&dir).map_err(|e| cache_error(&dir, e))?;
        Ok(dir.join(name))
    }
}

/// A fetch's limits: what is left of the run's budgets.
pub(crate) struct Budget {
    pub bytes: u64,
    pub time: Duration,
    pub allow_local: bool,
}

/// kustomize's cache root, for this tool (api/internal/git/cloner.go
/// `gitCacheRootDir`): `$XDG_CACHE_HOME/homelab-lint`, else
/// `$HOME/.cache/homelab-lint`.
fn default_cache_dir() -> Option<PathBuf> {
    let set = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    set("XDG_CACHE_HOME")
        .map(|d| d.join("homelab-lint"))
        .or_else(|| set("HOME").map(|h| h.join(".cache/homelab-lint")))
}

/// A temporary folder beside the entry's slot, renamed into place once
/// the fetch is whole (a fetch cut short leaves no half entry).
fn staging_dir(slot: &Path) -> Result<tempfile::TempDir, FetchError> {
    let parent = slot.parent().unwrap_or(slot);
    tempfile::Builder::new()
        .prefix(".fetch-")
        .tempdir_in(parent)
        .map_err(|e| cache_error(parent, e))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn cache_error(path: &Path, e: std::io::Error) -> FetchError {
    FetchError::Cache {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

/// Bytes of the regular files of a checkout, git's own folder aside.
fn tree_size(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}
