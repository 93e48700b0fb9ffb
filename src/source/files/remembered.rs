//! What an editor's load of the work tree takes from the load before it
//! instead of the disk: the server is told of every change on disk, so a
//! file nothing changed since reads as it did, and the walk finds what it
//! found (an edit is then not a walk and a read of every file).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Files;
pub use crate::source::walk::Listing;

impl Files {
    /// These files of the work tree as the last load found them: `listed`,
    /// the YAML files its walk found (see [`Files::yaml_files`]), is not
    /// walked again, and `texts` are read instead of the files at their
    /// paths. A buffer of the overlay is read before either.
    pub fn remembering(
        self,
        listed: Option<Arc<Listing>>,
        texts: HashMap<PathBuf, Arc<str>>,
    ) -> Files {
        Files {
            listed,
            unchanged: texts,
            ..self
        }
    }

    /// The text of `rel` known without reading it (see `unchanged`); an
    /// editor's buffer is never one.
    pub(super) fn known_text(&self, rel: &Path) -> Option<&Arc<str>> {
        self.unchanged
            .get(rel)
            .filter(|_| !self.overlay.contains_key(rel))
    }
}
