//! A commit's files read from git's object store, never written to disk:
//! the tree is listed once (`git ls-tree -r -l -z`) and blobs are read
//! through one long-running `git cat-file --batch`, only when the loader
//! asks for them (every YAML file at once, then the few other files a
//! kustomization names). Paths are resolved as the disk loader resolves
//! them: symlinks (mode 120000, the blob is the link text) are followed
//! within the tree and refused when they leave it.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;

use super::confine::Refused;
use super::join_within;

/// One entry of the listed tree.
#[derive(Debug, Clone)]
enum Entry {
    /// A file (mode 100644 or 100755) or a symlink (mode 120000).
    Blob { oid: String, size: u64, link: bool },
    /// A submodule's commit (mode 160000): its files are not in this tree.
    Submodule,
}

/// The files of one commit below one directory of the repository.
pub struct Tree {
    /// Paths relative to the listed directory.
    entries: BTreeMap<PathBuf, Entry>,
    dirs: BTreeSet<PathBuf>,
    batch: Mutex<Batch>,
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

fn not_found() -> Refused {
    Refused::Io(std::io::Error::from_raw_os_error(libc::ENOENT))
}

impl Tree {
    /// Lists `commit`'s tree below `prefix` (relative to `top`, the
    /// repository's top level; `""` for all of it) and starts the blob reader.
    pub fn open(top: &Path, commit: &str, prefix: &str) -> std::io::Result<Tree> {
        let mut ls = Command::new("git");
        ls.arg("-C")
            .arg(top)
            .args(["ls-tree", "-r", "-l", "-z", "--full-tree", commit]);
        if !prefix.is_empty() {
            ls.arg("--").arg(prefix);
        }
        let out = ls.stdin(Stdio::null()).output()?;
        if !out.status.success() {
            return Err(std::io::Error::other(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        let strip = Path::new(prefix.trim_end_matches('/'));
        let mut entries = BTreeMap::new();
        let mut dirs = BTreeSet::from([PathBuf::new()]);
        for record in out.stdout.split(|b| *b == 0).filter(|r| !r.is_empty()) {
            let Some((meta, path)) = parse_record(record) else {
                continue;
            };
            let Ok(rel) = Path::new(&path).strip_prefix(strip) else {
                continue;
            };
            for dir in rel.ancestors().skip(1) {
                dirs.insert(dir.to_path_buf());
            }
            entries.insert(rel.to_path_buf(), meta);
        }
        let mut child = Command::new("git")
            .arg("-C")
            .arg(top)
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
            batch: Mutex::new(Batch {
                child,
                stdin,
                stdout: BufReader::new(stdout),
            }),
        })
    }

    /// `rel` with every symlink on the way followed, refused when that
    /// leaves the tree.
    fn resolve(&self, rel: &Path) -> Result<PathBuf, Refused> {
        let mut done = PathBuf::new();
        let mut rest: Vec<PathBuf> = rel
            .components()
            .rev()
            .filter(|c| matches!(c, Component::Normal(_)))
            .map(|c| PathBuf::from(c.as_os_str()))
            .collect();
        let mut hops = 0;
        while let Some(next) = rest.pop() {
            let here = done.join(&next);
            let Some(Entry::Blob {
                oid, link: true, ..
            }) = self.entries.get(&here)
            else {
                done = here;
                continue;
            };
            hops += 1;
            if hops > MAX_LINKS {
                return Err(Refused::Io(std::io::Error::from_raw_os_error(libc::ELOOP)));
            }
            let target = String::from_utf8_lossy(&self.blob(oid)?).into_owned();
            let outside = || Refused::Outside {
                shown: PathBuf::from(&target),
            };
            if target.starts_with('/') {
                return Err(outside());
            }
            let joined = join_within(&done, &target).ok_or_else(outside)?;
            // The link's target takes its place; resolution starts over
            // from the top, as the kernel does for a relative link.
            rest.extend(
                joined
                    .components()
                    .rev()
                    .map(|c| PathBuf::from(c.as_os_str())),
            );
            done = PathBuf::new();
        }
        Ok(done)
    }

    pub fn is_dir(&self, rel: &Path) -> bool {
        self.resolve(rel).is_ok_and(|p| self.dirs.contains(&p))
    }

    pub fn is_file(&self, rel: &Path) -> bool {
        self.resolve(rel)
            .is_ok_and(|p| matches!(self.entries.get(&p), Some(Entry::Blob { .. })))
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
            Some(Entry::Blob { size, .. }) if *size > limit as u64 => Err(Refused::TooBig {
                len: Some(*size),
                limit,
            }),
            Some(Entry::Blob { oid, .. }) => self.blob(oid),
            Some(Entry::Submodule) => Err(Refused::NotRegular("git submodule")),
            None if self.dirs.contains(&path) => Err(Refused::NotRegular("directory")),
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
                Ok(Some(Entry::Blob { oid, size, .. })) if *size <= limit as u64 => {
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
                .map(|oid| read_answer(stdout, oid).map_err(Refused::Io))
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

    fn blob(&self, oid: &str) -> Result<Vec<u8>, Refused> {
        let mut batch = self.batch.lock().unwrap_or_else(|p| p.into_inner());
        let Batch { stdin, stdout, .. } = &mut *batch;
        writeln!(stdin, "{oid}")?;
        stdin.flush()?;
        Ok(read_answer(stdout, oid)?)
    }

    /// Every YAML file of the tree outside hidden directories, in path
    /// order, as [`super::walk::yaml_files`] lists them on disk.
    pub fn yaml_files(&self) -> Vec<PathBuf> {
        self.entries
            .iter()
            .filter(|(path, entry)| {
                matches!(entry, Entry::Blob { .. })
                    && super::walk::is_yaml(path)
                    && !path
                        .components()
                        .any(|c| c.as_os_str().to_string_lossy().starts_with('.'))
            })
            .map(|(path, _)| path.clone())
            .collect()
    }

    /// The entries directly in directory `rel` (resolved), sorted by name,
    /// each with whether it is a directory (a symlink is not).
    pub fn list_dir(&self, rel: &Path) -> Result<Vec<(PathBuf, bool)>, Refused> {
        let dir = self.resolve(rel)?;
        if !self.dirs.contains(&dir) {
            return Err(not_found());
        }
        let child = |p: &Path| p.parent() == Some(dir.as_path()) && p != dir;
        let mut out: Vec<(PathBuf, bool)> = self
            .dirs
            .iter()
            .filter(|p| child(p))
            .map(|p| (p.clone(), true))
            .chain(
                self.entries
                    .keys()
                    .filter(|p| child(p))
                    .map(|p| (p.clone(), false)),
            )
            .map(|(p, is_dir)| (rel.join(p.file_name().unwrap_or_default()), is_dir))
            .collect();
        out.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()));
        Ok(out)
    }
}

/// One `ls-tree -l -z` record: `<mode> SP <type> SP <oid> SP+ <size> TAB <path>`.
fn parse_record(record: &[u8]) -> Option<(Entry, String)> {
    let text = std::str::from_utf8(record).ok()?;
    let (meta, path) = text.split_once('\t')?;
    let mut fields = meta.split_whitespace();
    let (mode, kind, oid) = (fields.next()?, fields.next()?, fields.next()?);
    let size = fields.next()?.parse().unwrap_or(0);
    let entry = match (mode, kind) {
        ("160000", _) => Entry::Submodule,
        (_, "blob") => Entry::Blob {
            oid: oid.to_string(),
            size,
            link: mode == "120000",
        },
        _ => return None,
    };
    Some((entry, path.to_string()))
}

/// One answer of `cat-file --batch`: `<oid> SP <type> SP <size> LF`, the
/// contents, LF; or `<oid> SP missing LF`.
fn read_answer(out: &mut BufReader<ChildStdout>, oid: &str) -> std::io::Result<Vec<u8>> {
    let mut header = String::new();
    out.read_line(&mut header)?;
    let size = match header.trim_end().split(' ').collect::<Vec<_>>()[..] {
        [_, _, size] => size
            .parse::<usize>()
            .map_err(|_| std::io::Error::other(format!("git cat-file: bad header {header:?}")))?,
        _ => {
            return Err(std::io::Error::other(format!(
                "git cat-file has no object {oid}: {}",
                header.trim_end()
            )));
        }
    };
    let mut bytes = vec![0; size + 1];
    out.read_exact(&mut bytes)?;
    bytes.pop();
    Ok(bytes)
}
