//! What a load's files may be read through: a layer that sees every
//! question asked of them with its answer, and may hand back the parse an
//! earlier load made of the same text. Plain reading has none; a load that
//! reuses an earlier one's work (`--base`, the editor's next lint) puts
//! one here, so the reader and the builds reading through it need not
//! know how reuse is done.

use std::any::{Any, TypeId};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{Files, Input, Parsed, ReadError};
use crate::source::Issue;
use crate::yaml::{FileId, SourceMap};

/// One question a build asked of the files, with the answer it got, or
/// one note it left.
#[derive(Debug)]
pub(crate) enum Event {
    /// A text (for itself, or for its documents), registered on first read.
    Text(PathBuf, Result<(FileId, Arc<str>), Issue>),
    Bytes(PathBuf, Result<Vec<u8>, ReadError>),
    IsDir(PathBuf, bool),
    IsFile(PathBuf, bool),
    Outside(PathBuf, Option<String>),
    ListDir(PathBuf, Result<Vec<(PathBuf, bool)>, ReadError>),
    /// A file read other than as a resource ([`Files::note_input`]).
    Input(PathBuf, Input, PathBuf),
    BuiltDir(PathBuf),
    /// kustomize's built-in field specs were parsed (and registered).
    Defaults,
    /// A remote entry was fetched: what it holds is not the commit's, so
    /// the build is never reused.
    Fetched,
}

/// A layer the files are read through (see the module's header).
pub(crate) trait ReadLayer: Any + Send + Sync {
    /// Sees a question asked of the files and its answer, made only when
    /// the layer wants it.
    fn note(&self, event: &dyn Fn() -> Event);

    /// Whether it keeps the questions: then reading a file's documents
    /// asks for its text too ([`Files::documents`]).
    fn records(&self) -> bool;

    /// Whether jobs are done one after another here rather than on forks
    /// ([`Files::each_in_order`]).
    fn in_order(&self) -> bool;

    /// The layer for a fork of the files (a job on another thread).
    fn fork(&self) -> Option<Box<dyn ReadLayer>>;

    /// Takes in what the layer of a fork kept, as if its job ran here.
    fn adopt(&mut self, fork: Box<dyn ReadLayer>);

    /// Room for `more` parses (see [`SourceMap::reserve`]).
    fn reserve_parsed(&mut self, more: usize);

    /// An earlier load's parse of `rel`, when it is the same file with
    /// the same text at `id` of `sources`.
    fn parsed(&mut self, rel: &Path, id: FileId, sources: &SourceMap) -> Option<Arc<Parsed>>;

    /// Sees a parse made here.
    fn keep_parsed(&mut self, rel: PathBuf, parsed: Arc<Parsed>);
}

impl Files {
    /// These files, read through `layer`.
    pub(crate) fn with_layer(self, layer: Box<dyn ReadLayer>) -> Files {
        Files {
            layer: Some(layer),
            ..self
        }
    }

    /// The layer these files are read through, when it is a `T`.
    pub(crate) fn layer_mut<T: ReadLayer>(&mut self) -> Option<&mut T> {
        let layer: &mut dyn Any = self.layer.as_deref_mut()?;
        layer.downcast_mut()
    }

    /// Whether a layer keeps the questions asked of these files.
    pub(crate) fn records(&self) -> bool {
        self.layer.as_ref().is_some_and(|l| l.records())
    }

    /// Notes a question asked of these files, and its answer.
    pub(super) fn note(&self, event: impl Fn() -> Event) {
        if let Some(layer) = &self.layer {
            layer.note(&event);
        }
    }

    /// What was made once for this load as a `T`, when it was.
    pub(crate) fn made<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let made = self.made_once.get(&TypeId::of::<T>())?.clone();
        made.downcast().ok()
    }

    /// Keeps `value`, made once for this load, for it and its forks.
    pub(crate) fn keep_made<T: Any + Send + Sync>(&mut self, value: Arc<T>) {
        self.made_once.insert(TypeId::of::<T>(), value);
    }

    /// A commit's files, reading `texts` (another load's, of the working
    /// tree) for the files not in `changed` (the paths git says differ
    /// from the working tree, see [`crate::source::git::changed_since`])
    /// instead of their blobs, and taking the reads of `bytes_read` (that
    /// load's whole reads) as the same here. Only a file of the tree named
    /// as git names it counts: git compares a path through a symlink or
    /// into a submodule as that symlink or submodule.
    pub(crate) fn sharing_unchanged<'a>(
        mut self,
        texts: impl ExactSizeIterator<Item = &'a (PathBuf, Arc<str>)>,
        bytes_read: impl Iterator<Item = &'a Path>,
        changed: &HashSet<PathBuf>,
    ) -> Files {
        if let super::Backing::Commit(tree) = &*self.backing {
            let unchanged = |path: &Path| !changed.contains(path) && tree.is_plain_file(path);
            self.unchanged.reserve(texts.len());
            self.unchanged.extend(
                texts
                    .filter(|(path, _)| unchanged(path))
                    .map(|(path, text)| (path.clone(), text.clone())),
            );
            self.unchanged_bytes = bytes_read
                .filter(|path| unchanged(path))
                .map(Path::to_path_buf)
                .collect();
        }
        self
    }

    /// Whether a read of `rel`'s bytes that the working tree's load made
    /// whole reads the same here (see [`Files::sharing_unchanged`]).
    pub(crate) fn bytes_unchanged(&self, rel: &Path) -> bool {
        self.unchanged_bytes.contains(rel)
    }
}
