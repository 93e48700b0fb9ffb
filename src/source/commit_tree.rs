//! A commit's files read from git's object store, never written to disk:
//! the tree is listed once (`git ls-tree -r -z`, without `-l`: sizes
//! would open every blob; a blob over the size limit is refused when its
//! header says so, and skipped unread) and blobs are read
//! through one long-running `git cat-file --batch`, only when the loader
//! asks for them (every YAML file at once, then the few other files a
//! kustomization names). Paths are resolved as the disk loader resolves
//! them: symlinks (mode 120000, the blob is the link text) are followed
//! within the tree and refused when they leave it.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use super::confine::Refused;
use super::git::{self, Commit, GitError};
use super::join_within;

/// One entry of the listed tree.
#[derive(Debug, Clone)]
enum Entry {
    /// A file (mode 100644 or 100755) or a symlink (mode 120000).
    Blob { oid: String, link: bool },
    /// A submodule's commit (mode 160000): its files are not in this tree.
    Submodule,
}

/// A commit's files below the directory that corresponds to the linted
/// one (which may be a subdirectory of the repository).
pub struct Checkout {
    pub tree: Tree,
    /// The full commit id.
    pub commit: String,
}

/// Opens the tree of `reference` (a commit, branch or tag of the
/// repository that contains `dir`) below `dir`.
pub fn checkout(dir: &Path, reference: &str) -> Result<Checkout, GitError> {
    let commit = git::resolve(dir, reference)?;
    Ok(Checkout {
        tree: commit.tree()?,
        commit: commit.id,
    })
}

impl Commit {
    /// Lists the commit's tree below the directory (see [`Tree::open`]).
    pub fn tree(&self) -> Result<Tree, GitError> {
        Tree::open(&self.top, &self.id, &self.prefix).map_err(|e| GitError::Extract {
            reference: self.reference.clone(),
            detail: e.to_string(),
        })
    }
}

/// The files of one commit below one directory of the repository.
pub struct Tree {
    /// By path relative to the listed directory, `/`-separated: looked up
    /// by every question a build asks, so hashed, not ordered.
    entries: HashMap<String, Entry>,
    /// Each directory's entries by name, each with whether it is a directory.
    dirs: HashMap<String, BTreeMap<String, bool>>,
    /// The YAML files outside hidden directories, in path order.
    yaml: Vec<PathBuf>,
    /// Whether any entry is a symlink: without one, a path resolves to itself.
    links: bool,
    batch: Mutex<Batch>,
}

/// Entries a listing may hold below the linted directory: ten times the
/// largest repository the linter is sized for. Two tree objects of a few
/// kilobytes each, one listing the other a thousand times, name a million
/// files, and the listing held about 300 bytes of memory for each.
const MAX_ENTRIES: usize = 1_000_000;

/// Bytes of listing read (each record as git writes it): a path may be
/// 4 KB long, and a million of those would hold gigabytes.
const MAX_LISTING_BYTES: usize = 256 << 20;

/// A tree's entries and directories, read as git lists them.
struct Listed {
    entries: HashMap<String, Entry>,
    dirs: HashMap<String, BTreeMap<String, bool>>,
    links: bool,
}

impl Listed {
    /// Reads `listing` record by record, one per path as `parse` reads
    /// it, below `prefix`; stopped, with why, at the first record past
    /// [`MAX_ENTRIES`] or [`MAX_LISTING_BYTES`].
    fn read(
        listing: impl BufRead,
        parse: fn(&[u8]) -> Option<(Entry, &str)>,
        prefix: &str,
    ) -> Result<Listed, String> {
        let strip = prefix.trim_end_matches('/');
        let mut entries = HashMap::new();
        let mut dirs: HashMap<String, BTreeMap<String, bool>> =
            HashMap::from([(String::new(), BTreeMap::new())]);
        let mut links = false;
        let mut bytes = 0usize;
        for record in listing.split(0) {
            let record = record.map_err(|e| format!("cannot read git's listing: {e}"))?;
            bytes += record.len() + 1;
            if bytes > MAX_LISTING_BYTES {
                return Err(format!(
                    "its listing is longer than {MAX_LISTING_BYTES} bytes; it is not read"
                ));
            }
            if record.is_empty() {
                continue;
            }
            let Some((meta, path)) = parse(&record) else {
                continue;
            };
            let Some(rel) = below(path, strip) else {
                continue;
            };
            if entries.len() == MAX_ENTRIES {
                return Err(format!(
                    "it lists more than {MAX_ENTRIES} files below the linted directory; it is not read"
                ));
            }
            // Each ancestor is listed in its parent, up to the top; the
            // first one already listed has its own ancestors listed. The
            // latest entry of a name says whether it is a directory (a
            // hostile tree may hold a file and a directory of one name).
            let (mut child, mut is_dir) = (rel, false);
            loop {
                let (parent, name) = child.rsplit_once('/').unwrap_or(("", child));
                let listing = match dirs.get_mut(parent) {
                    Some(listing) => listing,
                    None => dirs.entry(parent.to_string()).or_default(),
                };
                if let Some(known) = listing.get_mut(name) {
                    *known = is_dir;
                    break;
                }
                listing.insert(name.to_string(), is_dir);
                if parent.is_empty() {
                    break;
                }
                (child, is_dir) = (parent, true);
            }
            links |= matches!(meta, Entry::Blob { link: true, .. });
            entries.insert(rel.to_string(), meta);
        }
        Ok(Listed {
            entries,
            dirs,
            links,
        })
    }
}

/// The `git cat-file --batch` process.
struct Batch {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Drop for Batch {
    fn drop(&mut self) {
        // The process ends when its input closes; reap it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Symlink hops before a path is refused, as Linux's MAXSYMLINKS.
const MAX_LINKS: usize = 40;

/// Bytes of a path, and of a symlink's target, past which a path is
/// refused, as Linux's PATH_MAX (the terminating NUL included): a commit
/// may hold a link blob of any size, which no checkout could create, and
/// each step of a resolution hashes the path so far.
const PATH_MAX: usize = 4096;

fn not_found() -> Refused {
    Refused::Io(std::io::Error::from_raw_os_error(libc::ENOENT))
}

fn name_too_long() -> Refused {
    Refused::Io(std::io::Error::from_raw_os_error(libc::ENAMETOOLONG))
}

impl Tree {
    /// Lists `commit`'s tree below `prefix` (relative to `top`, the
    /// repository's top level; `""` for all of it) and starts the blob reader.
    pub fn open(top: &Path, commit: &str, prefix: &str) -> std::io::Result<Tree> {
        let mut ls = git::command(top).map_err(std::io::Error::other)?;
        ls.args(["ls-tree", "-r", "-z", "--full-tree", commit]);
        if !prefix.is_empty() {
            ls.arg("--").arg(prefix);
        }
        Tree::of_listing(top, "ls-tree", &mut ls, parse_record, prefix)
    }

    /// The files of the index below `prefix` (`--staged`, a pre-commit hook): what the
    /// next commit holds, whatever the working tree holds beside it. Git
    /// reads the index `GIT_INDEX_FILE` names, as it does for a hook that
    /// `git commit -a` or `git commit <paths>` runs on a temporary index.
    pub fn open_index(top: &Path, prefix: &str) -> std::io::Result<Tree> {
        let mut ls = git::command(top).map_err(std::io::Error::other)?;
        ls.args(["ls-files", "--stage", "-z"]);
        if !prefix.is_empty() {
            ls.arg("--").arg(prefix);
        }
        Tree::of_listing(top, "ls-files", &mut ls, parse_index_record, prefix)
    }

    /// The tree `ls` (the git `what`) lists, one record per path as `parse`
    /// reads it, below `prefix`.
    fn of_listing(
        top: &Path,
        what: &str,
        ls: &mut Command,
        parse: fn(&[u8]) -> Option<(Entry, &str)>,
        prefix: &str,
    ) -> std::io::Result<Tree> {
        let mut child = ls
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(std::io::Error::other("git has no output pipes"));
        };
        let child = git::Watched::new(child);
        // One record may be as long as a path in a tree object can be:
        // reading stops at the budget, not at the record's end.
        let capped = BufReader::new(stdout).take(MAX_LISTING_BYTES as u64 + 1);
        let listed = Listed::read(capped, parse, prefix);
        if listed.is_err() {
            // Stopped before the end: git would write the rest.
            child.kill();
        }
        let mut why = String::new();
        let _ = stderr.read_to_string(&mut why);
        let status = child.wait(top, what).map_err(std::io::Error::other)?;
        let Listed {
            entries,
            dirs,
            links,
        } = match listed {
            Err(over) => return Err(std::io::Error::other(over)),
            Ok(_) if !status.success() => {
                return Err(std::io::Error::other(why.trim().to_string()));
            }
            Ok(listed) => listed,
        };
        let mut yaml: Vec<PathBuf> = entries
            .iter()
            .filter(|(path, entry)| {
                matches!(entry, Entry::Blob { .. })
                    && super::walk::is_yaml(Path::new(path))
                    && !path.split('/').any(|c| c.starts_with('.'))
            })
            .map(|(path, _)| PathBuf::from(path))
            .collect();
        yaml.sort();
        let mut child = git::command(top)
            .map_err(std::io::Error::other)?
            .args(["cat-file", "--batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other("git cat-file has no pipes"));
        };
        Ok(Tree {
            entries,
            dirs,
            yaml,
            links,
            batch: Mutex::new(Batch {
                child,
                stdin,
                stdout: BufReader::new(stdout),
            }),
        })
    }

    /// `rel` with every symlink on the way followed, refused when that
    /// leaves the tree: the key of its entry.
    fn resolve(&self, rel: &Path) -> Result<String, Refused> {
        // Every build's question comes here: the usual path is its own key.
        if !self.links
            && let Some(key) = rel.to_str().filter(|p| plain_key(p))
        {
            return Ok(key.to_string());
        }
        // Entries are UTF-8 (see `parse_record`): another name is none of them.
        let parts: Vec<&str> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(part) => Some(part.to_str()),
                _ => None,
            })
            .collect::<Option<_>>()
            .ok_or_else(not_found)?;
        if !self.links {
            let mut key = String::with_capacity(rel.as_os_str().len());
            for part in parts {
                if !key.is_empty() {
                    key.push('/');
                }
                key.push_str(part);
            }
            return Ok(key);
        }
        let mut rest: Vec<String> = parts.iter().rev().map(|p| p.to_string()).collect();
        let mut done = String::new();
        let mut hops = 0;
        while let Some(next) = rest.pop() {
            if !done.is_empty() {
                done.push('/');
            }
            done.push_str(&next);
            if done.len() >= PATH_MAX {
                return Err(name_too_long());
            }
            let Some(Entry::Blob {
                oid, link: true, ..
            }) = self.entries.get(&done)
            else {
                continue;
            };
            hops += 1;
            if hops > MAX_LINKS {
                return Err(Refused::Io(std::io::Error::from_raw_os_error(libc::ELOOP)));
            }
            let target = match self.blob(oid, PATH_MAX - 1) {
                Err(Refused::TooBig { .. }) => return Err(name_too_long()),
                read => String::from_utf8_lossy(&read?).into_owned(),
            };
            let outside = || Refused::Outside {
                shown: PathBuf::from(&target),
            };
            if target.starts_with('/') {
                return Err(outside());
            }
            let dir = Path::new(&done).parent().unwrap_or(Path::new(""));
            let joined = join_within(dir, &target).ok_or_else(outside)?;
            // The link's target takes its place; resolution starts over
            // from the top, as the kernel does for a relative link.
            rest.extend(
                joined
                    .components()
                    .rev()
                    .filter_map(|c| c.as_os_str().to_str().map(str::to_string)),
            );
            done = String::new();
        }
        Ok(done)
    }

    pub fn is_dir(&self, rel: &Path) -> bool {
        self.resolve(rel).is_ok_and(|p| self.dirs.contains_key(&p))
    }

    pub fn is_file(&self, rel: &Path) -> bool {
        self.resolve(rel)
            .is_ok_and(|p| matches!(self.entries.get(&p), Some(Entry::Blob { .. })))
    }

    /// Whether `rel` names a file of the tree itself, no symlink on the
    /// way: a path git compares with the working tree as it is named.
    pub fn is_plain_file(&self, rel: &Path) -> bool {
        rel.to_str()
            .and_then(|key| self.entries.get(key))
            .is_some_and(|e| matches!(e, Entry::Blob { link: false, .. }))
            && self
                .resolve(rel)
                .is_ok_and(|p| rel.to_str() == Some(p.as_str()))
    }

    /// Why `rel` is not the tree's, when it resolves outside it.
    pub fn outside(&self, rel: &Path) -> Option<Refused> {
        match self.resolve(rel) {
            Err(e @ Refused::Outside { .. }) => Some(e),
            _ => None,
        }
    }

    /// The bytes of a file of the tree, at most `limit` of them.
    pub fn read(&self, rel: &Path, limit: usize) -> Result<Vec<u8>, Refused> {
        let path = self.resolve(rel)?;
        match self.entries.get(&path) {
            Some(Entry::Blob { oid, .. }) => self.blob(oid, limit),
            Some(Entry::Submodule) => Err(Refused::NotRegular("git submodule")),
            None if self.dirs.contains_key(&path) => Err(Refused::NotRegular("directory")),
            None => Err(not_found()),
        }
    }

    /// Many files at once: the requests are written while the answers are
    /// read, so that neither pipe fills up.
    pub fn read_many(&self, rels: &[PathBuf], limit: usize) -> Vec<Result<Vec<u8>, Refused>> {
        let mut wanted = Vec::new();
        let mut results: Vec<Option<Result<Vec<u8>, Refused>>> = Vec::with_capacity(rels.len());
        for rel in rels {
            match self.resolve(rel).map(|p| self.entries.get(&p)) {
                Ok(Some(Entry::Blob { oid, .. })) => {
                    wanted.push(oid.clone());
                    results.push(None);
                }
                _ => results.push(Some(self.read(rel, limit))),
            }
        }
        let mut batch = self.batch.lock().unwrap_or_else(|p| p.into_inner());
        let Batch { stdin, stdout, .. } = &mut *batch;
        let blobs: Vec<Result<Vec<u8>, Refused>> = std::thread::scope(|s| {
            let writer = s.spawn(|| -> std::io::Result<()> {
                for oid in &wanted {
                    writeln!(stdin, "{oid}")?;
                }
                stdin.flush()
            });
            let read: Vec<_> = wanted
                .iter()
                .map(|oid| read_answer(stdout, oid, limit))
                .collect();
            let _ = writer.join();
            read
        });
        let mut blobs = blobs.into_iter();
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| blobs.next().unwrap_or_else(|| Err(not_found()))))
            .collect()
    }

    fn blob(&self, oid: &str, limit: usize) -> Result<Vec<u8>, Refused> {
        let mut batch = self.batch.lock().unwrap_or_else(|p| p.into_inner());
        let Batch { stdin, stdout, .. } = &mut *batch;
        writeln!(stdin, "{oid}")?;
        stdin.flush()?;
        read_answer(stdout, oid, limit)
    }

    /// Every YAML file of the tree outside hidden directories, in path
    /// order, as [`super::walk::yaml_files`] lists them on disk.
    pub fn yaml_files(&self) -> Vec<PathBuf> {
        self.yaml.clone()
    }

    /// The entries directly in directory `rel` (resolved), sorted by name,
    /// each with whether it is a directory (a symlink is not).
    pub fn list_dir(&self, rel: &Path) -> Result<Vec<(PathBuf, bool)>, Refused> {
        let dir = self.resolve(rel)?;
        let listing = self.dirs.get(&dir).ok_or_else(not_found)?;
        Ok(listing
            .iter()
            .map(|(name, is_dir)| (rel.join(name), *is_dir))
            .collect())
    }
}

/// One `ls-tree -z` record: `<mode> SP <type> SP <oid> TAB <path>`.
fn parse_record(record: &[u8]) -> Option<(Entry, &str)> {
    let text = std::str::from_utf8(record).ok()?;
    let (meta, path) = text.split_once('\t')?;
    let mut fields = meta.split_whitespace();
    let (mode, kind, oid) = (fields.next()?, fields.next()?, fields.next()?);
    let entry = match (mode, kind) {
        ("160000", _) => Entry::Submodule,
        (_, "blob") => Entry::Blob {
            oid: oid.to_string(),
            link: mode == "120000",
        },
        _ => return None,
    };
    Some((entry, path))
}

/// One `ls-files --stage -z` record: `<mode> SP <oid> SP <stage> TAB
/// <path>`. An unmerged path has a record per stage; the last listed is
/// kept (pre-commit refuses to run while a path is unmerged).
fn parse_index_record(record: &[u8]) -> Option<(Entry, &str)> {
    let text = std::str::from_utf8(record).ok()?;
    let (meta, path) = text.split_once('\t')?;
    let mut fields = meta.split_whitespace();
    let (mode, oid) = (fields.next()?, fields.next()?);
    let entry = match mode {
        "160000" => Entry::Submodule,
        _ => Entry::Blob {
            oid: oid.to_string(),
            link: mode == "120000",
        },
    };
    Some((entry, path))
}

/// `path` relative to the directory `strip` (`""`: the top), as
/// [`Path::strip_prefix`] takes it off, component by component: `None`
/// when it is not below. Git writes paths `/`-separated, with no empty,
/// `.` or `..` component (see [`plain_key`]); others are compared as
/// paths.
fn below<'p>(path: &'p str, strip: &str) -> Option<&'p str> {
    if !plain_key(path) || !(strip.is_empty() || plain_key(strip)) {
        return Path::new(path).strip_prefix(strip).ok()?.to_str();
    }
    if strip.is_empty() {
        return Some(path);
    }
    match path.strip_prefix(strip)? {
        "" => Some(""),
        rest => rest.strip_prefix('/'),
    }
}

/// Whether `path` is its own key: `/`-separated names, none empty, `.`
/// or `..` (what [`Tree::resolve`] makes of it when no symlink is on the
/// way).
fn plain_key(path: &str) -> bool {
    !path.is_empty()
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// One answer of `cat-file --batch`: `<oid> SP <type> SP <size> LF`, the
/// contents, LF; or `<oid> SP missing LF`. Contents over `limit` bytes
/// are refused, and skipped without being held.
fn read_answer(
    out: &mut BufReader<ChildStdout>,
    oid: &str,
    limit: usize,
) -> Result<Vec<u8>, Refused> {
    let mut header = String::new();
    out.read_line(&mut header)?;
    let size = match header.trim_end().split(' ').collect::<Vec<_>>()[..] {
        [_, _, size] => size
            .parse::<usize>()
            .map_err(|_| std::io::Error::other(format!("git cat-file: bad header {header:?}")))?,
        _ => {
            return Err(Refused::Io(std::io::Error::other(format!(
                "git cat-file has no object {oid}: {}",
                header.trim_end()
            ))));
        }
    };
    if size > limit {
        std::io::copy(&mut out.take(size as u64 + 1), &mut std::io::sink())?;
        return Err(Refused::TooBig {
            len: Some(size as u64),
            limit,
        });
    }
    let mut bytes = vec![0; size + 1];
    out.read_exact(&mut bytes)?;
    bytes.pop();
    Ok(bytes)
}
