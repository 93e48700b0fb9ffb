//! Finding the YAML files of a repository.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::Issue;
use super::PathMap;
use super::confine::{Refused, Root};
use super::disk::{Disk, Kind, Met};
use super::ignored::Ignored;

/// What a walk found: the YAML files, sorted, the entries it could not
/// list, and the second paths to what it had already met.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub paths: Vec<PathBuf>,
    pub issues: Vec<Issue>,
    pub aliases: Vec<Alias>,
}

/// A second path to a file or directory the walk met first at `first`:
/// not entered or read again. Not a problem of the repository (an Ansible
/// collection links its task files to each other), so it is a skipped
/// entry with its reason, not an issue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias {
    pub path: PathBuf,
    pub first: PathBuf,
    pub dir: bool,
    /// How the two paths lead to one entry.
    pub how: Linked,
}

/// Which of an [`Alias`]'s two paths goes through a symlink. The walk
/// meets paths in name order, so the first may be the link and the
/// second the entry itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linked {
    /// The second path is itself a symlink.
    Second,
    /// The second path lies under a symlinked directory.
    SecondUnder,
    /// The second path is the entry's own; the first went through a
    /// symlink.
    First,
    /// Neither: two names of one file (a hard link).
    Neither,
}

impl Alias {
    pub fn reason(&self) -> String {
        let what = if self.dir { "directory" } else { "file" };
        let first = self.first.display();
        let how = match self.how {
            Linked::Second => format!("a symlink to the same {what} as {first}"),
            Linked::SecondUnder => {
                format!("the same {what} as {first}, reached again through a symlinked directory")
            }
            Linked::First => format!("the {what} that {first} reaches through a symlink"),
            Linked::Neither => format!("the same {what} as {first} (a hard link)"),
        };
        format!("{how}: read once, as {first}")
    }
}

/// Every `.yaml`/`.yml` file below `root`, repo-relative and sorted, plus
/// an issue per entry that could not be read (a symlink loop, a directory
/// without permission, a symlink that leaves the repository: reported
/// where it is and not entered). Hidden directories (`.git`, `.github`)
/// hold no manifests Flux applies, so they are not entered.
///
/// Each directory and file is visited once, by its identity (device and
/// inode): a second path to it through a symlink is an [`Alias`] naming
/// the first, and is not entered or listed. Symlinks that stay in the
/// repository can otherwise form a DAG whose paths double per level (two
/// links in each of 20 directories: a million paths to one file) or make
/// one large file count a hundred times.
pub fn yaml_files(root: &Path) -> Listing {
    yaml_files_except(root, &Ignored::default())
}

/// [`yaml_files`] without what git ignores (not entered either).
pub fn yaml_files_except(root: &Path, ignored: &Ignored) -> Listing {
    let mut paths = Vec::new();
    let mut linked = false;
    let (issues, aliases) = walk(
        root,
        ignored,
        |_, _| {},
        |rel, plain| {
            linked |= !plain;
            paths.push(rel.to_path_buf());
            true
        },
    );
    if linked {
        paths.sort();
    }
    Listing {
        paths,
        issues,
        aliases,
    }
}

/// Calls `each` with the files of [`yaml_files`], in its order, until it
/// returns false: what looks for one file does not list the rest.
pub fn each_yaml_file(root: &Path, mut each: impl FnMut(&Path) -> bool) {
    walk(root, &Ignored::default(), |_, _| {}, |rel, _| each(rel));
}

/// How many files the walk hands to a reader at once.
const READ_AT_ONCE: usize = 64;

/// [`yaml_files`] of `disk`'s root without what git ignores (not entered
/// either), with each file read by `read` on the rayon pool while the
/// walk goes on, and what it gave, in the listing's order: listing
/// 122,000 files at 100k objects took 0.8 s of one core before the first
/// read. Each directory the walk lists whole is handed to `disk`, whose
/// builds then ask it of its entries without listing it again (at 100k
/// objects the second listing of 40,000 directories was a fifth of the
/// main thread). `read` is told whether the file is a regular one
/// reached from the root through real directories only, what `disk`'s
/// listings would tell of it (see [`Disk::read_walked`]): asking them
/// would list again the directories the walk is still in.
pub fn yaml_files_reading<T: Send>(
    disk: &Disk,
    read: impl Fn(&Path, bool) -> T + Sync,
) -> (Listing, Vec<T>) {
    let done = std::sync::Mutex::new(Vec::new());
    let ((issues, aliases), linked) = rayon::scope(|s| {
        let (read, done) = (&read, &done);
        let mut batch = Vec::with_capacity(READ_AT_ONCE);
        let mut handed = 0;
        let mut linked = false;
        let mut hand_over = |batch: Vec<(PathBuf, bool)>| {
            let number = handed;
            handed += 1;
            s.spawn(move |_| {
                let batch: Vec<(PathBuf, T)> = batch
                    .into_iter()
                    .map(|(rel, plain)| {
                        let got = read(&rel, plain);
                        (rel, got)
                    })
                    .collect();
                done.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((number, batch));
            })
        };
        let listed = |dir, entries| disk.listed(dir, entries);
        let walked = walk(disk.top(), disk.ignored(), listed, |rel, plain| {
            linked |= !plain;
            batch.push((rel.to_path_buf(), plain));
            if batch.len() == READ_AT_ONCE {
                hand_over(std::mem::replace(
                    &mut batch,
                    Vec::with_capacity(READ_AT_ONCE),
                ));
            }
            true
        });
        if !batch.is_empty() {
            hand_over(batch);
        }
        (walked, linked)
    });
    let mut batches = done.into_inner().unwrap_or_else(|p| p.into_inner());
    // Back in the walk's order: it lists each directory sorted by name,
    // depth first, which is the paths' order (see [`walk`]). Put together
    // as the readers finished, they took a full sort (85 M instructions
    // of syn10k's main thread, against 7 M).
    batches.sort_unstable_by_key(|(number, _)| *number);
    let mut read: Vec<(PathBuf, T)> = batches.into_iter().flat_map(|(_, b)| b).collect();
    if linked {
        // Each file is met once (a second path to it is an alias).
        read.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    let (paths, read) = read.into_iter().unzip();
    let listing = Listing {
        paths,
        issues,
        aliases,
    };
    (listing, read)
}

/// Each directory being walked that is reached from the root through
/// real directories only, with its entries so far, by depth; `None` for
/// one reached through a symlink, or whose listing the walk could not
/// complete.
type Listings = Vec<Option<(PathBuf, Met)>>;

/// The walk of [`yaml_files`]: each file to `found` until it returns
/// false, with whether it is a regular file reached through real
/// directories only, each directory listed whole to `listed`; returns
/// the issues and the aliases.
///
/// Each directory's entries are met sorted by name, a directory's own
/// entries right after it: in the order of their paths (`Path`'s, by
/// components), so the files `found` is told are sorted while all are
/// plain, and its callers sort only when one is not (a symlink is met
/// after the real entries beside it, whatever its name). A sort that
/// finds them in order still compared each pair of paths by their
/// components, 0.8 M instructions of joryirving__home-ops' main thread.
fn walk(
    root: &Path,
    ignored: &Ignored,
    mut listed: impl FnMut(PathBuf, Met),
    mut found: impl FnMut(&Path, bool) -> bool,
) -> (Vec<Issue>, Vec<Alias>) {
    let mut issues = Vec::new();
    let mut aliases = Vec::new();
    // Each identity's first path, and whether it went through a symlink.
    let mut seen: PathMap<(u64, u64), (PathBuf, bool)> = PathMap::default();
    let mut devices = Vec::new();
    let confined = Root::new(root);
    let mut listings: Listings = vec![Some((PathBuf::new(), Met::new()))];
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        // Real entries before the symlinks beside them, so that a file or
        // directory met twice is read under its own name when it sits
        // beside its link; the listing is sorted by path after.
        .sort_by(|a, b| (a.path_is_symlink(), name_of(a)).cmp(&(b.path_is_symlink(), name_of(b))))
        .into_iter();
    while let Some(entry) = walker.next() {
        let depth = match &entry {
            Ok(e) => e.depth(),
            Err(err) => err.depth(),
        };
        if depth == 0 && entry.is_err() {
            listings[0] = None;
        } else if depth > 0 {
            // The walk has left every directory deeper than this entry's:
            // their listings are whole.
            for (dir, entries) in listings.drain(depth..).flatten() {
                listed(dir, entries);
            }
            note_entry(&mut listings, depth, &entry);
        }
        // Not entered or listed: hidden entries and what git ignores.
        if let Ok(e) = &entry
            && e.depth() > 0
            && (name_of(e).as_bytes().starts_with(b".")
                || ignored.covers(below(root, e.path()).unwrap_or(e.path())))
        {
            if e.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if let Ok(e) = &entry
            && e.path_is_symlink()
            && let Err(refused @ Refused::Outside { .. }) = confined.resolve(e.path())
        {
            let rel = below(root, e.path()).unwrap_or(e.path());
            issues.push(Issue::file(rel, refused.to_string()));
            if e.file_type().is_dir() {
                walker.skip_current_dir();
            }
            continue;
        }
        if let Ok(e) = &entry
            && (e.file_type().is_dir() || is_yaml_name(name_of(e)))
            && let Some(id) = identity(e, &mut devices)
        {
            let rel = below(root, e.path()).unwrap_or(e.path());
            // The frame of the directory the entry is in is `None` when
            // that directory was reached through a symlink.
            let under_link = e.depth() > 0 && listings.last().is_none_or(Option::is_none);
            let linked = e.path_is_symlink() || under_link;
            if let Some((first, first_linked)) = seen.get(&id) {
                let dir = e.file_type().is_dir();
                if dir {
                    walker.skip_current_dir();
                }
                let how = if e.path_is_symlink() {
                    Linked::Second
                } else if under_link {
                    Linked::SecondUnder
                } else if *first_linked {
                    Linked::First
                } else {
                    Linked::Neither
                };
                aliases.push(Alias {
                    path: rel.to_path_buf(),
                    first: first.clone(),
                    dir,
                    how,
                });
                continue;
            }
            seen.insert(id, (rel.to_path_buf(), linked));
            if e.depth() > 0 && e.file_type().is_dir() {
                let plain = !e.path_is_symlink() && listings.last().is_some_and(Option::is_some);
                listings.push(plain.then(|| (rel.to_path_buf(), Met::new())));
            }
        }
        match entry {
            // Not only regular files: a FIFO or device named `*.yaml` is
            // refused by type when read, with the reason, not skipped.
            Ok(e) if !e.file_type().is_dir() && is_yaml_name(name_of(&e)) => {
                // What the listing of its directory, if it is one, says.
                let plain = !e.path_is_symlink()
                    && e.file_type().is_file()
                    && listings.last().is_some_and(Option::is_some);
                if let Some(rel) = below(root, e.path())
                    && !found(rel, plain)
                {
                    // The directories being walked are not listed whole.
                    return (issues, aliases);
                }
            }
            Ok(_) => {}
            Err(err) => {
                let path = err
                    .path()
                    .and_then(|p| p.strip_prefix(root).ok())
                    .unwrap_or(Path::new(""))
                    .to_path_buf();
                let message = if err.loop_ancestor().is_some() {
                    "symlink loop: this directory links back to one of its parents".to_string()
                } else {
                    err.io_error()
                        .map(|e| e.to_string())
                        .unwrap_or_else(|| err.to_string())
                };
                issues.push(Issue::file(&path, message));
            }
        }
    }
    for (dir, entries) in listings.into_iter().flatten() {
        listed(dir, entries);
    }
    (issues, aliases)
}

/// The device and inode of a directory or file the walk met, which tell
/// a second path to it. A directory's (and anything reached through a
/// symlink) come from a stat, and the device of each directory is kept
/// by depth in `devices`; a file's own entry gives its inode, on its
/// directory's device, so that no file is looked up by path once more
/// (a path lookup per file was a tenth of the walk's time). The one
/// place the two differ is a file that is itself a mount point, whose
/// entry names the file it covers: a bind mount of a single file into
/// the repository, then read as a copy rather than told as an alias.
fn identity(e: &walkdir::DirEntry, devices: &mut Vec<u64>) -> Option<(u64, u64)> {
    use walkdir::DirEntryExt;
    if !e.file_type().is_dir()
        && !e.path_is_symlink()
        && let Some(&dev) = devices.get(e.depth().wrapping_sub(1))
    {
        return Some((dev, e.ino()));
    }
    let dir = e.file_type().is_dir();
    if dir {
        // Entries below a directory that could not be stat'ed are.
        devices.truncate(e.depth());
    }
    let meta = e.metadata().ok()?;
    if dir {
        devices.push(meta.dev());
    }
    Some((meta.dev(), meta.ino()))
}

/// Puts `entry` in the listing of the directory it is in, by its own type
/// (a symlink as a link, as [`Disk`] lists it). A symlink the walk could
/// not follow (dangling, a loop) is still a link there; any other entry
/// it could not read leaves that listing to be made again when asked.
fn note_entry(listings: &mut Listings, depth: usize, entry: &walkdir::Result<walkdir::DirEntry>) {
    // The directory's frame, or the gap of one the walk did not enter.
    listings.resize_with(depth, || None);
    let noted = match entry {
        Ok(e) if e.path_is_symlink() => Some((name_of(e), Kind::Link)),
        Ok(e) if e.file_type().is_dir() => Some((name_of(e), Kind::Dir)),
        Ok(e) if e.file_type().is_file() => Some((name_of(e), Kind::File)),
        Ok(e) => Some((name_of(e), Kind::Other)),
        Err(err) => unfollowed_link(err, depth).map(|name| (name, Kind::Link)),
    };
    let parent = &mut listings[depth - 1];
    match (noted, parent.as_mut()) {
        (Some((name, kind)), Some((_, entries))) => {
            entries.push((name.to_os_string(), kind));
        }
        (None, _) => *parent = None,
        (Some(_), None) => {}
    }
}

/// The name of the symlink at `depth` that `err` failed to follow.
fn unfollowed_link(err: &walkdir::Error, depth: usize) -> Option<&std::ffi::OsStr> {
    let path = err.path().filter(|_| err.depth() == depth)?;
    let meta = std::fs::symlink_metadata(path).ok()?;
    meta.file_type().is_symlink().then_some(path.file_name()?)
}

/// `path` below `root`, as `path.strip_prefix(root)` gives it. The
/// walk's paths are `root` with names joined on, so what follows `root`'s
/// bytes is the answer, found without parsing both paths into components
/// for every entry (three times for each YAML file: a tenth of the lint's
/// main thread on a 10,000-object repository).
fn below<'p>(root: &Path, path: &'p Path) -> Option<&'p Path> {
    use std::os::unix::ffi::OsStrExt;
    let root = root.as_os_str().as_bytes();
    match path.as_os_str().as_bytes().strip_prefix(root) {
        Some(rest) if rest.is_empty() || rest[0] == b'/' || root.ends_with(b"/") => {
            let slashes = rest.iter().take_while(|&&b| b == b'/').count();
            Some(Path::new(std::ffi::OsStr::from_bytes(&rest[slashes..])))
        }
        _ => path
            .strip_prefix(Path::new(std::ffi::OsStr::from_bytes(root)))
            .ok(),
    }
}

pub fn is_yaml(path: &Path) -> bool {
    path.file_name().is_some_and(is_yaml_name)
}

/// Whether a file named `name` has the extension `yaml` or `yml` as
/// `Path::extension` reads one: after the last `.`, with something
/// before it (`.yaml` is a hidden file with no extension).
fn is_yaml_name(name: &OsStr) -> bool {
    let name = name.as_bytes();
    (name.len() > 5 && name.ends_with(b".yaml")) || (name.len() > 4 && name.ends_with(b".yml"))
}

/// An entry's name, as `DirEntry::file_name` gives it. Below the root the
/// walk joined the name onto its directory's path, so it is what follows
/// the last `/`: `file_name` parses the path into components from the
/// back, and the sort of each directory asks it for both entries of every
/// pair it compares (2.9 M instructions of joryirving__home-ops).
fn name_of(e: &walkdir::DirEntry) -> &OsStr {
    if e.depth() == 0 {
        return e.file_name();
    }
    let path = e.path().as_os_str().as_bytes();
    OsStr::from_bytes(&path[memchr::memrchr(b'/', path).map_or(0, |i| i + 1)..])
}

#[cfg(test)]
mod tests {
    use super::super::disk::tests::{
        answers_as_the_disk_does, every_kind_of_entry, held_and_fresh,
    };
    use super::*;

    /// A walked path below its root is cut as `strip_prefix` cuts it,
    /// whichever way the root is written.
    #[test]
    fn a_path_below_the_root_is_what_strip_prefix_gives() {
        for root in ["repo", "repo/", "./repo", "/abs/repo", "/", "."] {
            for name in ["a.yaml", "apps/b.yml", ".hidden/c.yaml"] {
                let path = Path::new(root).join(name);
                let want = path.strip_prefix(root).ok();
                assert_eq!(below(Path::new(root), &path), want, "{root} {name}");
            }
            assert_eq!(below(Path::new(root), Path::new(root)), Some(Path::new("")));
        }
        assert_eq!(below(Path::new("repo"), Path::new("repository/a")), None);
        assert_eq!(below(Path::new("repo"), Path::new("other/a")), None);
    }

    /// A name is a YAML file's exactly when `Path::extension` says so.
    #[test]
    fn a_yaml_name_is_what_its_extension_says() {
        for name in [
            "a.yaml",
            "a.yml",
            ".yaml",
            ".yml",
            "..yaml",
            "..yml",
            "a..yaml",
            "yaml",
            "a.yaml.bak",
            "a.YAML",
            "a.",
            ".",
            "..",
            "a.xyaml",
            "ayaml",
            "a.yamll",
        ] {
            let by_extension = matches!(
                Path::new(name).extension().and_then(|e| e.to_str()),
                Some("yaml" | "yml")
            );
            assert_eq!(is_yaml_name(OsStr::new(name)), by_extension, "{name}");
        }
    }

    /// Every walked entry's name, read from its path's bytes, is the one
    /// `file_name` gives, whichever way the root is written.
    #[test]
    fn an_entry_name_is_its_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path());
        let mut slashed = root.clone().into_os_string();
        slashed.push("/");
        for root in [
            root.clone(),
            PathBuf::from(slashed),
            root.join("apps/../apps"),
        ] {
            let mut seen = 0;
            for e in walkdir::WalkDir::new(&root)
                .follow_links(true)
                .into_iter()
                .flatten()
            {
                assert_eq!(name_of(&e), e.file_name(), "{}", e.path().display());
                seen += 1;
            }
            assert!(seen > 5, "{seen} entries");
        }
    }

    /// The walk hands the disk every real directory it lists whole, each as
    /// the disk would list it, and the disk still answers every question
    /// as the disk itself does.
    #[test]
    fn the_walk_lists_for_the_disk_as_the_disk_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path());
        let disk = Disk::new(&root, usize::MAX);
        yaml_files_reading(&disk, |_, _| ());
        // `db` is entered under its own name, before `alias`, its link.
        for dir in ["", "apps", "apps/cfg", "apps/db"] {
            let (held, fresh) = held_and_fresh(&disk, &root, dir);
            assert_eq!(held, Some(fresh), "{dir:?} as the walk listed it");
        }
        assert_eq!(held_and_fresh(&disk, &root, "apps/alias").0, None);
        answers_as_the_disk_does(&disk, &root);
    }

    /// The walk tells its reader that a file is a regular one reached
    /// through real directories only when the disk's listings would, and
    /// a read told so reads what the disk's own read does.
    #[test]
    fn the_walk_tells_a_plain_file_as_the_listings_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path());
        let fifo = std::ffi::CString::new(root.join("apps/pipe.yaml").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        let disk = Disk::new(&root, usize::MAX);
        let (listing, told) = yaml_files_reading(&disk, |rel, plain| {
            let read = disk.read_walked(rel, 9, plain);
            (plain, format!("{read:?}"))
        });
        let plain: Vec<bool> = told.iter().map(|(plain, _)| *plain).collect();
        assert_eq!(
            listing.paths,
            [
                "apps/cfg/cm.yaml",
                "apps/db/kustomization.yaml",
                "apps/pipe.yaml"
            ]
            .map(PathBuf::from)
        );
        assert_eq!(plain, [true, true, false]);
        for (rel, (_, read)) in listing.paths.iter().zip(&told) {
            assert_eq!(*read, format!("{:?}", disk.read(rel, 9)), "{rel:?}");
        }
        answers_as_the_disk_does(&disk, &root);
    }

    /// The listing is in the paths' order, whether the walk met them in
    /// it (names that order otherwise as bytes than as components: `a/`
    /// before `a-c`, `a.yaml`) or not (a link is met after the real
    /// entries beside it).
    #[test]
    fn the_listing_is_in_the_paths_order() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        for d in ["a", "a-c", "a.d", "b"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
            std::fs::write(root.join(d).join("x.yaml"), "a: 1\n").unwrap();
        }
        for f in ["a.yaml", "a-c.yaml", "a0.yaml", "b/a.yaml"] {
            std::fs::write(root.join(f), "a: 1\n").unwrap();
        }
        let sorted = |paths: &[PathBuf]| {
            let mut s = paths.to_vec();
            s.sort();
            s
        };
        let read = |root: &Path| {
            let disk = Disk::new(root, usize::MAX);
            yaml_files_reading(&disk, |_, _| ()).0.paths
        };
        let plain = read(&root);
        assert_eq!(plain.len(), 8);
        assert_eq!(plain, sorted(&plain));
        assert_eq!(yaml_files(&root).paths, plain);
        // Hidden folders are not entered: the links are the first paths
        // to what they name.
        for d in [".f", ".g"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
            std::fs::write(root.join(d).join("x.yaml"), "a: 1\n").unwrap();
        }
        std::os::unix::fs::symlink(".f/x.yaml", root.join("0.yaml")).unwrap();
        std::os::unix::fs::symlink(".g", root.join("0")).unwrap();
        let linked = read(&root);
        assert_eq!(linked[..2], ["0/x.yaml", "0.yaml"].map(PathBuf::from));
        assert_eq!(linked.len(), 10, "{linked:?}");
        assert_eq!(linked, sorted(&linked));
        assert_eq!(yaml_files(&root).paths, linked);
    }
}
