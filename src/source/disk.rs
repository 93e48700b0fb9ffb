//! The disk below a repository root, each directory listed once. A
//! kustomize build asks of a dozen candidate paths whether each is a file
//! or a directory (the kustomization file names, every resource, patch and
//! generator input), and every read checks that the path stays in the
//! root; asked of the disk, that is a stat plus a symlink resolution (a
//! `readlink` per path component) per question: on joryirving__home-ops
//! 50,000 `readlink` and 5,500 `stat` calls, a tenth of the run. One
//! listing of a directory answers for all its entries, and a path reached
//! through real directories only cannot leave the root; a path with a
//! symlink on the way is still resolved on the disk, as before.

use std::cmp::Ordering as Order;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::confine::{Refused, Root, joined, read_regular};
use super::ignored::Ignored;
use super::{PathKey, PathKeyMap, PathKeySet};

pub struct Disk {
    /// The root as given, which paths are joined onto.
    top: PathBuf,
    root: Root,
    /// Directories by repo-relative path, listed on first use.
    listings: Arc<DiskListings>,
    /// Bytes read so far, against `budget`.
    spent: AtomicUsize,
    /// Bytes all the reads may take (`source::Limits::max_read_bytes`).
    budget: usize,
    /// What git ignores: not there, as Flux never gets it.
    ignored: Ignored,
    /// The directories the forgotten listings held, reached through real
    /// directories only: a rule asks of every Flux Kustomization whether
    /// its path is one, and listing each one's parent again took 0.6 s at
    /// 100k objects, where the paths alone are a fifth of the listings.
    kept_dirs: Mutex<PathKeySet>,
}

/// An entry's own type, as the directory listing gives it (a symlink is
/// not followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    File,
    Dir,
    Link,
    /// A FIFO, socket or device.
    Other,
}

/// A directory's entries as a walk or a listing meets them, in any order.
pub(super) type Met = Vec<(OsString, Kind)>;

/// A directory's entries, sorted by name, the names in one buffer. The
/// listings are held through the load, and a map of owned names took
/// about 100 bytes an entry (25 MB at 100k objects, where the peak is);
/// this takes the name's bytes and 8.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Entries {
    /// The names one after another, in byte order.
    names: Box<[u8]>,
    /// Where each name ends in `names`, and its entry's kind.
    ends: Box<[(u32, Kind)]>,
}

impl Entries {
    /// `None` when the names are too long in all to be indexed (4 GiB):
    /// the directory is then asked of the disk instead.
    fn new(mut met: Met) -> Option<Entries> {
        met.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut names = Vec::with_capacity(met.iter().map(|(name, _)| name.len()).sum());
        let mut ends = Vec::with_capacity(met.len());
        for (name, kind) in met {
            names.extend_from_slice(name.as_bytes());
            ends.push((u32::try_from(names.len()).ok()?, kind));
        }
        Some(Entries {
            names: names.into(),
            ends: ends.into(),
        })
    }

    fn name(&self, i: usize) -> &OsStr {
        let start = i
            .checked_sub(1)
            .map_or(0, |before| self.ends[before].0 as usize);
        OsStr::from_bytes(&self.names[start..self.ends[i].0 as usize])
    }

    fn get(&self, name: &OsStr) -> Option<Kind> {
        let (mut low, mut high) = (0, self.ends.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match self.name(mid).cmp(name) {
                Order::Less => low = mid + 1,
                Order::Greater => high = mid,
                Order::Equal => return Some(self.ends[mid].1),
            }
        }
        None
    }

    fn iter(&self) -> impl Iterator<Item = (&OsStr, Kind)> {
        (0..self.ends.len()).map(|i| (self.name(i), self.ends[i].1))
    }
}

/// The directories listed so far, by repo-relative path: kept from one
/// load to the next by an editor that is told of every change on disk
/// (a reused build's check asks of every file it read whether it is one,
/// and listing each directory again was most of that).
#[derive(Default)]
pub struct DiskListings(Mutex<PathKeyMap<Listing>>);

impl DiskListings {
    /// Forgets what a change on disk at `rel` may have changed: the
    /// listing of its folder (an entry's type) and, for a folder, those
    /// below it.
    pub fn forget(&self, rel: &Path) {
        let parent = rel.parent().unwrap_or(Path::new(""));
        let mut listings = self.0.lock().unwrap_or_else(|p| p.into_inner());
        listings.retain(|dir, _| **dir != *parent && !dir.starts_with(rel));
    }
}

#[derive(Clone)]
enum Listing {
    /// A directory reached from the root through real directories only.
    Plain(Arc<Entries>),
    /// Reached through a symlink, or not listable: ask the disk.
    Unknown,
}

/// What the listings tell of a path without following a symlink: `None`
/// when they cannot, `Some(None)` when nothing is there.
type Found = Option<Option<Kind>>;

impl Disk {
    /// The disk below `top`, reads held to `budget` bytes in all.
    pub fn new(top: &Path, budget: usize) -> Disk {
        Disk {
            top: top.to_path_buf(),
            root: Root::new(top),
            listings: Arc::default(),
            spent: AtomicUsize::new(0),
            budget,
            ignored: Ignored::default(),
            kept_dirs: Mutex::default(),
        }
    }

    /// Lists directories into `listings` (and takes those it holds).
    pub fn share_listings(&mut self, listings: Arc<DiskListings>) {
        self.listings = listings;
    }

    /// Forgets the directories listed so far unless another load keeps
    /// them (an editor's, for its next load): once a load's builds are
    /// done, they would be held to the end of the run for no one (about
    /// 20 MB at 100k objects). Only the paths of the directories they
    /// held are kept; anything else asked of later is listed again.
    pub fn forget_unshared_listings(&self) {
        if Arc::strong_count(&self.listings) == 1 {
            let mut listings = self.listings.0.lock().unwrap_or_else(|p| p.into_inner());
            let forgotten = std::mem::take(&mut *listings);
            let mut kept = self.kept_dirs.lock().unwrap_or_else(|p| p.into_inner());
            for (dir, listing) in forgotten {
                let Listing::Plain(entries) = listing else {
                    continue;
                };
                kept.extend(
                    entries
                        .iter()
                        .filter(|(_, kind)| *kind == Kind::Dir)
                        .map(|(name, _)| PathKey::from(joined(&dir, name))),
                );
            }
        }
    }

    /// The same disk with what git ignores left out.
    pub fn ignoring(self, ignored: Ignored) -> Disk {
        Disk { ignored, ..self }
    }

    pub fn ignored(&self) -> &Ignored {
        &self.ignored
    }

    /// The root as given.
    pub fn top(&self) -> &Path {
        &self.top
    }

    /// Takes the listing of directory `rel`, reached from the root through
    /// real directories only, from a walk that listed it whole.
    pub(super) fn listed(&self, rel: PathBuf, met: Met) {
        let mut listings = self.listings.0.lock().unwrap_or_else(|p| p.into_inner());
        listings
            .entry(PathKey::from(rel))
            .or_insert_with(|| match Entries::new(met) {
                Some(entries) => Listing::Plain(Arc::new(entries)),
                None => Listing::Unknown,
            });
    }

    /// A directory of the repository: not one a symlink leads to outside it.
    pub fn is_dir(&self, rel: &Path) -> bool {
        if self.ignored.covers(rel) {
            return false;
        }
        let kept = self.kept_dirs.lock().unwrap_or_else(|p| p.into_inner());
        if kept.contains(&PathKey::of(rel)) {
            return true;
        }
        drop(kept);
        match self.find(rel) {
            Some(kind) => kind == Some(Kind::Dir),
            None => {
                let abs = joined(&self.top, rel);
                abs.is_dir() && !self.root.leaves(&abs)
            }
        }
    }

    /// A regular file of the repository: not one a symlink leads to outside it.
    pub fn is_file(&self, rel: &Path) -> bool {
        if self.ignored.covers(rel) {
            return false;
        }
        match self.find(rel) {
            Some(kind) => kind == Some(Kind::File),
            None => {
                let abs = joined(&self.top, rel);
                abs.is_file() && !self.root.leaves(&abs)
            }
        }
    }

    /// Why `rel` is refused when it resolves outside the root.
    pub fn outside(&self, rel: &Path) -> Option<Refused> {
        if self.ignored.covers(rel) {
            return None;
        }
        match self.find(rel) {
            Some(_) => None,
            None => self.root.resolve(&joined(&self.top, rel)).err(),
        }
    }

    /// What the listings tell of `rel` (an ignored path is not there),
    /// for a caller with several questions about one path: the answers
    /// of [`Disk::outside`], [`Disk::is_file`] and [`Disk::is_dir`] when
    /// it is `Some`.
    pub(super) fn listed_kind(&self, rel: &Path) -> Found {
        if self.ignored.covers(rel) {
            return Some(None);
        }
        self.find(rel)
    }

    /// Whether each of `names` (plain file names) is a regular file of
    /// the repository in directory `dir`, from one lookup of its listing
    /// (as [`Disk::is_file`] of each joined path would answer); `None` for
    /// a name the listings cannot tell of, or for all when `dir` is not a
    /// plain relative path (then the joined path's parent is not `dir`).
    pub(super) fn files_in(&self, dir: &Path, names: &[&str]) -> Vec<Option<bool>> {
        let bytes = dir.as_os_str().as_bytes();
        let entries = match bytes.starts_with(b"/") || bytes.ends_with(b"/") {
            true => None,
            false => self.listing(dir),
        };
        let Some(entries) = entries else {
            return vec![None; names.len()];
        };
        names
            .iter()
            .map(|name| match entries.get(OsStr::new(name)) {
                Some(Kind::Link) => None,
                Some(Kind::File) => {
                    Some(self.ignored.is_empty() || !self.ignored.covers(&dir.join(name)))
                }
                _ => Some(false),
            })
            .collect()
    }

    /// The bytes of a regular file that stays in the root.
    /// Within the run's budget: reads in parallel may pass it by one file
    /// each.
    pub fn read(&self, rel: &Path, limit: usize) -> Result<Vec<u8>, Refused> {
        self.read_as(rel, limit, || self.find(rel) == Some(Some(Kind::File)))
    }

    /// [`Disk::read`] of a file a walk of this disk met, told by the walk
    /// whether it is a regular file reached from the root through real
    /// directories only (`plain`), as the listings would tell.
    pub(super) fn read_walked(
        &self,
        rel: &Path,
        limit: usize,
        plain: bool,
    ) -> Result<Vec<u8>, Refused> {
        self.read_as(rel, limit, || plain)
    }

    /// A read of `rel`, the file opened as it is when `plain()` (a regular
    /// file that cannot leave the root), else resolved first.
    fn read_as(
        &self,
        rel: &Path,
        limit: usize,
        plain: impl FnOnce() -> bool,
    ) -> Result<Vec<u8>, Refused> {
        if self.ignored.covers(rel) {
            return Err(Refused::Io(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "ignored by git: Flux never gets it",
            )));
        }
        let abs = joined(&self.top, rel);
        let left = self
            .budget
            .saturating_sub(self.spent.load(Ordering::Relaxed));
        let read = match plain() {
            true => read_regular(&abs, limit.min(left)),
            false => self.root.read(&abs, limit.min(left)),
        };
        match read {
            // Over the budget, and not over the file limit itself.
            Err(Refused::TooBig { len, .. })
                if left < limit && len.is_none_or(|l| l <= limit as u64) =>
            {
                Err(Refused::OverBudget {
                    budget: self.budget,
                })
            }
            Ok(bytes) => {
                self.spent.fetch_add(bytes.len(), Ordering::Relaxed);
                crate::alloc::read_in(bytes.len());
                Ok(bytes)
            }
            other => other,
        }
    }

    fn find(&self, rel: &Path) -> Found {
        let (parent, name) = parent_and_name(rel)?;
        let entries = self.listing(parent)?;
        match entries.get(name) {
            Some(Kind::Link) => None,
            kind => Some(kind),
        }
    }

    /// The entries of directory `rel`, when it is reached through real
    /// directories only; `None` otherwise, or when something on the way is
    /// not a directory (then the caller asks the disk, which words it).
    fn listing(&self, rel: &Path) -> Option<Arc<Entries>> {
        let mut listings = self.listings.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(listing) = listings.get(&PathKey::of(rel)) {
            return match listing {
                Listing::Plain(entries) => Some(entries.clone()),
                Listing::Unknown => None,
            };
        }
        let mut dir = PathBuf::new();
        let mut entries = self.list(&mut listings, &dir);
        for c in rel.components() {
            let Component::Normal(name) = c else {
                return None;
            };
            let plain = entries
                .as_ref()
                .is_some_and(|e| e.get(name) == Some(Kind::Dir));
            dir.push(name);
            if !plain {
                // Nothing below it is reached through real directories
                // either. Noting each deeper prefix would copy the path
                // once per component: a kustomization listing a 600 KB
                // path took 2.5 GB and minutes.
                listings.insert(PathKey::from(dir), Listing::Unknown);
                listings.insert(PathKey::from(rel), Listing::Unknown);
                return None;
            }
            entries = self.list(&mut listings, &dir);
        }
        entries
    }

    fn list(&self, listings: &mut PathKeyMap<Listing>, dir: &Path) -> Option<Arc<Entries>> {
        let listing = match listings.get(&PathKey::of(dir)) {
            Some(listing) => listing.clone(),
            None => {
                let listing = match list_dir(&joined(&self.top, dir)) {
                    Ok(entries) => Listing::Plain(Arc::new(entries)),
                    Err(_) => Listing::Unknown,
                };
                listings.insert(PathKey::from(dir), listing.clone());
                listing
            }
        };
        match listing {
            Listing::Plain(entries) => Some(entries),
            Listing::Unknown => None,
        }
    }
}

fn list_dir(abs: &Path) -> std::io::Result<Entries> {
    let mut met = Met::new();
    for entry in std::fs::read_dir(abs)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let kind = if kind.is_symlink() {
            Kind::Link
        } else if kind.is_dir() {
            Kind::Dir
        } else if kind.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        met.push((entry.file_name(), kind));
    }
    Entries::new(met).ok_or_else(|| std::io::Error::other("names too long to index"))
}

/// `rel.parent()` and `rel.file_name()`, cut at the last `/` when that
/// is what std gives (a plain relative path, the usual question): std
/// parses components from both ends, half of what the disk's answer cost
/// when an editor replays a build's questions.
fn parent_and_name(rel: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let bytes = rel.as_os_str().as_bytes();
    let (parent, name) = match bytes.iter().rposition(|&b| b == b'/') {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (&b""[..], bytes),
    };
    let plain =
        !bytes.starts_with(b"/") && !matches!(name, b"" | b"." | b"..") && !parent.ends_with(b"/");
    if plain {
        return Some((
            Path::new(OsStr::from_bytes(parent)),
            OsStr::from_bytes(name),
        ));
    }
    let name = rel.file_name()?;
    Some((rel.parent()?, name))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_path_is_cut_into_parent_and_name_as_std_cuts_it() {
        for rel in [
            "",
            ".",
            "..",
            "/",
            "x",
            "x.yaml",
            "a/b",
            "a/b/c.yaml",
            "./x",
            "../x",
            "a/./b",
            "a/../b",
            "a/.",
            "a/..",
            "a/b/",
            "a//b",
            "a///b",
            "/x",
            "//x",
            "/a/b",
            "./",
            ".x",
            "a/.x",
            "a/..x",
            "a/b/./",
            "a/ b",
        ] {
            let rel = Path::new(rel);
            let std = rel.file_name().and_then(|n| Some((rel.parent()?, n)));
            assert_eq!(parent_and_name(rel), std, "{rel:?}");
        }
    }

    /// What the disk itself answers, one stat and resolution per question.
    fn asked_of_the_disk(root: &Path, rel: &Path) -> (bool, bool, bool) {
        let confined = Root::new(root);
        let abs = root.join(rel);
        (
            abs.is_file() && !confined.leaves(&abs),
            abs.is_dir() && !confined.leaves(&abs),
            matches!(confined.resolve(&abs), Err(Refused::Outside { .. })),
        )
    }

    /// A repository under `dir` with every kind of entry the listings must
    /// answer for: symlinks to a directory, to a file, out of the
    /// repository and to nothing, a FIFO, hidden entries.
    pub(in crate::source) fn every_kind_of_entry(dir: &Path) -> std::path::PathBuf {
        let root = dir.join("repo");
        std::fs::create_dir_all(root.join("apps/db")).unwrap();
        std::fs::create_dir(dir.join("elsewhere")).unwrap();
        std::fs::write(dir.join("elsewhere/secret.yaml"), "s").unwrap();
        std::fs::write(root.join("apps/db/kustomization.yaml"), "k").unwrap();
        symlink("db", root.join("apps/alias")).unwrap();
        symlink("db/kustomization.yaml", root.join("apps/file-link")).unwrap();
        symlink("../../elsewhere", root.join("apps/out")).unwrap();
        symlink("missing", root.join("apps/dangling")).unwrap();
        let fifo = std::ffi::CString::new(root.join("apps/fifo").to_str().unwrap()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        // A second real directory the walk enters.
        std::fs::create_dir(root.join("apps/cfg")).unwrap();
        std::fs::write(root.join("apps/cfg/cm.yaml"), "c").unwrap();
        // Hidden entries: not walked into, but in the listings all the same.
        std::fs::create_dir(root.join(".hidden")).unwrap();
        std::fs::write(root.join("apps/.sops.yaml"), "s").unwrap();
        root
    }

    /// The listing `disk` holds for `dir` (`None` when it holds none, or
    /// only that it could not list it), and what listing it afresh gives.
    pub(in crate::source) fn held_and_fresh(
        disk: &Disk,
        root: &Path,
        dir: &str,
    ) -> (Option<Entries>, Entries) {
        let held = match disk
            .listings
            .0
            .lock()
            .unwrap()
            .get(&PathKey::of(Path::new(dir)))
        {
            Some(Listing::Plain(entries)) => Some((**entries).clone()),
            _ => None,
        };
        (held, list_dir(&root.join(dir)).unwrap())
    }

    /// Every question of [`every_kind_of_entry`]'s repository answered by
    /// `disk` as the disk itself answers it.
    pub(in crate::source) fn answers_as_the_disk_does(disk: &Disk, root: &Path) {
        for rel in [
            "",
            "apps",
            "apps/db",
            "apps/db/kustomization.yaml",
            "apps/db/kustomization.yml",
            "apps/db/kustomization.yaml/x",
            "apps/alias",
            "apps/alias/kustomization.yaml",
            "apps/file-link",
            "apps/out",
            "apps/out/secret.yaml",
            "apps/dangling",
            "apps/fifo",
            "apps/missing/kustomization.yaml",
            "apps/./db/kustomization.yaml",
            "apps/../apps/db",
        ] {
            let rel = Path::new(rel);
            let (file, dir, outside) = asked_of_the_disk(root, rel);
            assert_eq!(disk.is_file(rel), file, "is_file {rel:?}");
            assert_eq!(disk.is_dir(rel), dir, "is_dir {rel:?}");
            assert_eq!(
                disk.outside(rel)
                    .is_some_and(|e| matches!(e, Refused::Outside { .. })),
                outside,
                "outside {rel:?}"
            );
        }
        assert_eq!(
            disk.read(Path::new("apps/alias/kustomization.yaml"), 9)
                .unwrap(),
            b"k"
        );
        assert!(matches!(
            disk.read(Path::new("apps/out/secret.yaml"), 9),
            Err(Refused::Outside { .. })
        ));
        assert!(matches!(
            disk.read(Path::new("apps/fifo"), 9),
            Err(Refused::NotRegular(_))
        ));
    }

    #[test]
    fn listings_answer_as_the_disk_does() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path());
        answers_as_the_disk_does(&Disk::new(&root, usize::MAX), &root);
    }

    /// A load's own listings go when it is done, and questions asked
    /// after are answered from the disk again; listings an editor keeps
    /// for its next load stay.
    #[test]
    fn only_listings_no_later_load_keeps_are_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path());
        let own = Disk::new(&root, usize::MAX);
        answers_as_the_disk_does(&own, &root);
        own.forget_unshared_listings();
        assert_eq!(held_and_fresh(&own, &root, "apps/db").0, None);
        answers_as_the_disk_does(&own, &root);

        let kept = Arc::new(DiskListings::default());
        let mut shared = Disk::new(&root, usize::MAX);
        shared.share_listings(kept.clone());
        answers_as_the_disk_does(&shared, &root);
        shared.forget_unshared_listings();
        let (held, fresh) = held_and_fresh(&shared, &root, "apps/db");
        assert_eq!(held, Some(fresh));
    }

    /// A folder the forgotten listings held is still known for one: asking
    /// whether it is a directory lists its parent no more.
    #[test]
    fn a_forgotten_listing_leaves_its_directories_known() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path());
        let own = Disk::new(&root, usize::MAX);
        assert!(own.is_dir(Path::new("apps/db")));
        own.forget_unshared_listings();
        assert!(own.is_dir(Path::new("apps/db")));
        assert_eq!(held_and_fresh(&own, &root, "apps").0, None);
        assert!(
            own.is_dir(Path::new("apps/alias")),
            "a symlinked folder, from the disk"
        );
        // What was never a directory is asked of the disk, which lists
        // the folder again.
        assert!(!own.is_dir(Path::new("apps/db/kustomization.yaml")));
        assert!(held_and_fresh(&own, &root, "apps/db").0.is_some());
    }

    /// Listings kept for a later disk answer as the disk does once a
    /// change forgets what it may have changed: a file made in a listed
    /// folder, a file turned into a folder, a folder deleted.
    #[test]
    fn kept_listings_forget_what_a_change_touches() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path());
        let kept = Arc::new(DiskListings::default());
        let disk = |kept: &Arc<DiskListings>| {
            let mut disk = Disk::new(&root, usize::MAX);
            disk.share_listings(kept.clone());
            disk
        };
        answers_as_the_disk_does(&disk(&kept), &root);
        let new = Path::new("apps/db/new.yaml");
        std::fs::write(root.join(new), "n").unwrap();
        assert!(
            !disk(&kept).is_file(new),
            "held: the listing before the change"
        );
        kept.forget(new);
        assert!(disk(&kept).is_file(new));
        std::fs::remove_file(root.join(new)).unwrap();
        std::fs::create_dir_all(root.join(new).join("below")).unwrap();
        kept.forget(new);
        assert!(disk(&kept).is_dir(new));
        assert!(disk(&kept).is_dir(&new.join("below")));
        std::fs::remove_dir_all(root.join(new)).unwrap();
        kept.forget(new);
        let after = disk(&kept);
        assert!(!after.is_dir(new) && !after.is_dir(&new.join("below")));
        answers_as_the_disk_does(&after, &root);
    }
}
