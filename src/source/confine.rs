//! Reading files a hostile repository names: only below the repository
//! root once symlinks are followed (Flux confines a build to its source
//! root: fluxcd/pkg `kustomize/filesys` `MakeFsOnDiskSecure`), only
//! regular files by type (no FIFO, device or socket), and never more bytes
//! than the budget, counted as they are read: `/proc` files report size 0
//! and grow without end.

use std::fmt;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Why a file was not read.
#[derive(Debug)]
pub enum Refused {
    Io(std::io::Error),
    /// The path resolves outside the root; `shown` is the symlink text
    /// (what the repository wrote) or the resolved path.
    Outside {
        shown: PathBuf,
    },
    /// Not a regular file: what it is instead.
    NotRegular(&'static str),
    /// More bytes than the limit; `len` when the size was known up front.
    TooBig {
        len: Option<u64>,
        limit: usize,
    },
    /// The run has read its budget of bytes
    /// (`source::Limits::max_read_bytes`).
    OverBudget {
        budget: usize,
    },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Io(e) => write!(f, "{e}"),
            Refused::Outside { shown } => write!(
                f,
                "links outside the repository (to {}); it is not read, as Flux confines a build to its source root",
                shown.display()
            ),
            Refused::NotRegular(kind) => {
                write!(f, "is a {kind}, not a regular file; it is not read")
            }
            Refused::TooBig {
                len: Some(len),
                limit,
            } => write!(f, "file is {len} bytes, over the limit of {limit} bytes"),
            Refused::TooBig { len: None, limit } => {
                write!(f, "file holds over the limit of {limit} bytes")
            }
            Refused::OverBudget { budget } => write!(
                f,
                "not read: the files read before it reached the run's budget of {budget} bytes"
            ),
        }
    }
}

impl From<std::io::Error> for Refused {
    fn from(e: std::io::Error) -> Self {
        Refused::Io(e)
    }
}

/// A repository root, resolved once, that paths are checked against.
#[derive(Clone, Debug)]
pub struct Root {
    canonical: PathBuf,
}

impl Root {
    pub fn new(root: &Path) -> Root {
        Root {
            canonical: std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf()),
        }
    }

    /// `abs` with every symlink followed, refused when that leaves the
    /// root. A missing file is an I/O error (the caller words it).
    pub fn resolve(&self, abs: &Path) -> Result<PathBuf, Refused> {
        let resolved = std::fs::canonicalize(abs)?;
        if resolved.starts_with(&self.canonical) {
            Ok(resolved)
        } else {
            let shown = std::fs::read_link(abs).unwrap_or(resolved);
            Err(Refused::Outside { shown })
        }
    }

    /// Whether `abs` exists and resolves outside the root.
    pub fn leaves(&self, abs: &Path) -> bool {
        matches!(self.resolve(abs), Err(Refused::Outside { .. }))
    }

    /// [`read_regular`] of `abs` once it is known to stay in the root.
    pub fn read(&self, abs: &Path, limit: usize) -> Result<Vec<u8>, Refused> {
        read_regular(&self.resolve(abs)?, limit)
    }
}

/// What a file that is not a regular file is, in words.
pub fn kind_name(kind: std::fs::FileType) -> &'static str {
    if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "named pipe (FIFO)"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// The bytes of a regular file, at most `limit` of them. The type is
/// checked on the opened descriptor, not the name (nothing can swap the
/// file in between), and the open does not block on a FIFO.
pub fn read_regular(path: &Path, limit: usize) -> Result<Vec<u8>, Refused> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    let kind = meta.file_type();
    if !kind.is_file() {
        return Err(Refused::NotRegular(kind_name(kind)));
    }
    if meta.len() > limit as u64 {
        return Err(Refused::TooBig {
            len: Some(meta.len()),
            limit,
        });
    }
    // A file that gives exactly the size fstat told, when asked for one
    // byte more, has been read whole: `read_to_end` into the size would
    // ask again to be told 0 (a second read syscall for every file of
    // the repo). The read goes to memory not zeroed first: zeroing every
    // file's buffer was half a percent of a joryirving__home-ops lint.
    let len = meta.len() as usize;
    let mut bytes = Vec::<u8>::with_capacity(len + 1);
    let got = loop {
        // SAFETY: the kernel writes at most `capacity` bytes at the
        // pointer, all within the vector's allocation, and says how many.
        let n = unsafe {
            libc::read(
                file.as_raw_fd(),
                bytes.as_mut_ptr().cast(),
                bytes.capacity(),
            )
        };
        match usize::try_from(n) {
            Ok(n) => break n,
            Err(_) => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e.into());
                }
            }
        }
    };
    // SAFETY: the read above initialised the first `got` bytes.
    unsafe { bytes.set_len(got) };
    if got != len {
        // Grown or shrunk since the fstat, a size fstat does not tell
        // (/proc), or a read that stopped short (FUSE and network file
        // systems may): read on to the end.
        file.take((limit + 1 - got) as u64)
            .read_to_end(&mut bytes)?;
    }
    if bytes.len() > limit {
        return Err(Refused::TooBig { len: None, limit });
    }
    Ok(bytes)
}

/// `base.join(rel)`, made at its final size: `join` copies `base` to a
/// buffer of `base`'s length and then grows it for `rel`, a reallocation
/// that cost more than the join itself (1,100 instructions a read of
/// joryirving__home-ops' files, joined onto the root `.`).
pub fn joined(base: &Path, rel: impl AsRef<Path>) -> PathBuf {
    let rel = rel.as_ref();
    let mut out = PathBuf::with_capacity(base.as_os_str().len() + 1 + rel.as_os_str().len());
    out.push(base);
    out.push(rel);
    out
}

/// Joins `rel` onto repo-relative directory `base`, folding `.` and `..`.
/// Fails when the result would leave the repository.
///
/// By bytes, as `Path::components` would split them (empty parts and `.`
/// skipped): every kustomize entry and Flux path is joined here, and
/// building the joined path, its components and the result one push at a
/// time was 6 % of the serial render at 10k objects.
pub fn join_within(base: &Path, rel: &str) -> Option<PathBuf> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    if base.has_root() || rel.starts_with('/') {
        return None;
    }
    let (base, rel) = (base.as_os_str().as_bytes(), rel.as_bytes());
    // Built in place in one pass, a `..` cutting the last part off: parts
    // kept in a vector and joined afterwards were most of a join's cost.
    let mut out = Vec::with_capacity(base.len() + 1 + rel.len());
    for part in base.split(|b| *b == b'/').chain(rel.split(|b| *b == b'/')) {
        match part {
            b"" | b"." => {}
            b".." => {
                if out.is_empty() {
                    return None;
                }
                let cut = out.iter().rposition(|b| *b == b'/').unwrap_or(0);
                out.truncate(cut);
            }
            part => {
                if !out.is_empty() {
                    out.push(b'/');
                }
                out.extend_from_slice(part);
            }
        }
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(out)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_join_folds_as_path_components_do() {
        // What the join meant before it went by bytes.
        let by_components = |base: &Path, rel: &str| {
            let mut out: Vec<std::path::Component> = Vec::new();
            let joined = base.join(rel);
            for c in joined.components() {
                match c {
                    std::path::Component::CurDir => {}
                    std::path::Component::ParentDir => {
                        out.pop()?;
                    }
                    std::path::Component::Normal(_) => out.push(c),
                    _ => return None,
                }
            }
            Some(out.iter().collect::<PathBuf>())
        };
        let bases = [
            "", ".", "a", "a/b", "a//b/", "./a/./b", "/abs", "a/..", "a/../..", "a/.b/..c",
        ];
        let rels = [
            "",
            ".",
            "./",
            "..",
            "../",
            "b",
            "./b/./c",
            "b//c/",
            "../x",
            "../../x",
            "/etc",
            "x/../../y",
            "...",
            "a.b/..c",
            "./../a/b/..",
            "c/d.yaml",
            ".c/..d/.../e",
            "c/../../d/..",
            "c//d/",
        ];
        for base in bases {
            for rel in rels {
                let base = Path::new(base);
                assert_eq!(
                    join_within(base, rel),
                    by_components(base, rel),
                    "{base:?} + {rel:?}"
                );
            }
        }
    }

    #[test]
    fn special_files_are_refused_by_type_and_reads_are_capped() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.yaml");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        assert!(matches!(
            read_regular(&fifo, 10),
            Err(Refused::NotRegular("named pipe (FIFO)"))
        ));
        assert!(matches!(
            read_regular(Path::new("/dev/zero"), 10),
            Err(Refused::NotRegular("character device"))
        ));
        // Size 0 by metadata, more by reading.
        assert!(matches!(
            read_regular(Path::new("/proc/self/environ"), 1),
            Err(Refused::TooBig { len: None, .. })
        ));
        // Read whole after a first read past the size metadata gives.
        let environ = Path::new("/proc/self/environ");
        assert_eq!(
            read_regular(environ, 1 << 20).unwrap(),
            std::fs::read(environ).unwrap()
        );
        std::fs::write(dir.path().join("ok"), "abc").unwrap();
        assert_eq!(read_regular(&dir.path().join("ok"), 3).unwrap(), b"abc");
        assert!(matches!(
            read_regular(&dir.path().join("ok"), 2),
            Err(Refused::TooBig { len: Some(3), .. })
        ));
        std::fs::write(dir.path().join("empty"), "").unwrap();
        assert_eq!(read_regular(&dir.path().join("empty"), 0).unwrap(), b"");
    }

    #[test]
    fn links_out_of_the_root_are_refused_with_their_text() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(dir.path().join("secret"), "s3cret").unwrap();
        std::os::unix::fs::symlink("../secret", root.join("leak")).unwrap();
        std::fs::write(root.join("in"), "x").unwrap();
        std::os::unix::fs::symlink("in", root.join("alias")).unwrap();
        let r = Root::new(&root);
        let err = r.read(&root.join("leak"), 100).unwrap_err();
        assert_eq!(
            err.to_string(),
            "links outside the repository (to ../secret); it is not read, as Flux confines a build to its source root"
        );
        assert!(r.leaves(&root.join("leak")));
        assert_eq!(r.read(&root.join("alias"), 100).unwrap(), b"x");
        assert!(!r.leaves(&root.join("missing")));
    }
}
