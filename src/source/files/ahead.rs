//! What finding the root read, taken by the load: outside git, the root
//! is found by reading the folder given for Flux Kustomizations' paths,
//! and is that folder most often. The load then takes the listing, the
//! folders' listings and the texts (or why each file cannot be read),
//! instead of listing and reading every file a second time
//! (joryirving__home-ops: 1,141 files opened twice, 316 folders listed
//! twice, the first time on one core).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Backing, Files, text_of};
use crate::source::disk::Disk;
use crate::source::walk::{Listing, yaml_files_reading};
use crate::source::{Issue, Limits};

/// Every YAML file below a folder, read as a load of that folder with
/// the same limits reads it, on the same disk: the reads count against
/// the load's budget.
pub struct ReadAhead {
    root: PathBuf,
    limits: Limits,
    disk: Disk,
    listing: Listing,
    /// By the listing's paths, in order.
    texts: Vec<Result<Arc<str>, Issue>>,
}

impl ReadAhead {
    /// Lists and reads the YAML files below `root` (absolute).
    pub fn of(root: &Path, limits: Limits) -> ReadAhead {
        let disk = Disk::new(root, limits.max_read_bytes);
        let limit = limits.yaml.max_bytes;
        let (listing, texts) = yaml_files_reading(&disk, |rel, plain| {
            text_of(disk.read_walked(rel, limit, plain), rel).map(Arc::from)
        });
        ReadAhead {
            root: root.to_path_buf(),
            limits,
            disk,
            listing,
            texts,
        }
    }

    /// The folder read.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Each YAML file, repo-relative, with its text or why the load
    /// cannot read it, in the listing's order.
    pub fn texts(&self) -> impl Iterator<Item = (&Path, &Result<Arc<str>, Issue>)> {
        self.listing
            .paths
            .iter()
            .map(PathBuf::as_path)
            .zip(&self.texts)
    }
}

impl Files {
    /// These files, taking what `ahead` read of their root instead of
    /// walking and reading it again. Not when they are read otherwise
    /// than it read them: another folder or limits, not from the disk, an
    /// editor's buffers, what git ignores left out.
    pub fn reading_ahead(mut self, ahead: ReadAhead) -> Files {
        let same_root = std::fs::canonicalize(&self.root).is_ok_and(|r| r == ahead.root);
        let plain = self.overlay.is_empty()
            && self.unchanged.is_empty()
            && self.listed.is_none()
            && self.limits == ahead.limits
            && self.ignored().is_empty();
        if let (true, true, Some(Backing::Disk(_))) =
            (same_root, plain, Arc::get_mut(&mut self.backing))
        {
            self.backing = Arc::new(Backing::Disk(ahead.disk));
            self.read_ahead = Some(Box::new((ahead.listing, ahead.texts)));
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;
    use crate::source::disk::tests::every_kind_of_entry;
    use crate::source::repo::{Repo, load_files};
    use crate::yaml::FileId;

    /// What a load ends with, as far as the files read can change it.
    fn outcome(repo: &Repo) -> String {
        let sources = &repo.files.sources;
        let texts: Vec<_> = (0..sources.len() as u32)
            .map(|i| (sources.path(FileId(i)), &sources.get(FileId(i)).text))
            .collect();
        format!(
            "{texts:?}\n{:?}\n{:?}\n{:?}\n{:?}",
            repo.issues, repo.skipped, repo.fates, repo.coverage
        )
    }

    /// A load that takes what finding the root read loads what it loads
    /// reading the repository itself: the same texts, and the same
    /// refusals (a symlink or a folder link out of the repository, which
    /// neither reads, a FIFO, a file that is not UTF-8, the budget).
    #[test]
    fn a_load_taking_what_was_read_ahead_is_a_load_reading_itself() {
        let dir = tempfile::tempdir().unwrap();
        let root = every_kind_of_entry(dir.path()).canonicalize().unwrap();
        std::fs::write(
            root.join("ks.yaml"),
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n\
             metadata: {name: db, namespace: flux-system}\nspec: {path: ./apps/db}\n",
        )
        .unwrap();
        std::fs::write(root.join("apps/latin1.yaml"), b"a: caf\xe9\n").unwrap();
        symlink("../../elsewhere/secret.yaml", root.join("apps/leak.yaml")).unwrap();
        let (found, ahead) =
            crate::source::root::find_reading(std::slice::from_ref(&root)).unwrap();
        assert_eq!(found.root, root);
        let ahead = ahead.expect("outside git, the folder given is read ahead");
        let read: Vec<&Path> = ahead.texts().map(|(rel, _)| rel).collect();
        assert!(read.contains(&Path::new("apps/latin1.yaml")));
        assert!(!read.iter().any(|rel| rel.starts_with("apps/out")));
        assert!(!read.contains(&Path::new("apps/leak.yaml")));
        let itself = outcome(&load_files(Files::new(&root, Limits::default())));
        let taken = load_files(Files::new(&root, Limits::default()).reading_ahead(ahead));
        assert_eq!(outcome(&taken), itself);
        assert!(itself.contains("not valid UTF-8") && itself.contains("links outside"));
        // Nothing left to read: every file was over the budget already.
        let none = Limits {
            max_read_bytes: 0,
            ..Limits::default()
        };
        let itself = outcome(&load_files(Files::new(&root, none)));
        let ahead = ReadAhead::of(&root, none);
        let taken = load_files(Files::new(&root, none).reading_ahead(ahead));
        assert_eq!(outcome(&taken), itself);
        assert!(itself.contains("budget"));
    }
}
