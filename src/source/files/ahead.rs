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
    pub fn reading_ahead(mut self, ahead: Option<ReadAhead>) -> Files {
        let Some(ahead) = ahead else {
            return self;
        };
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
