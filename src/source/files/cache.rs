//! The parses a load made, kept for the builds that read them.

use std::sync::Arc;

use super::{Cached, Parsed};
use crate::source::{PathMap, PathSet};
use crate::yaml::{FileId, Node};

/// Parsed documents by the file's [`FileId`], whose path the source map
/// holds: a map keyed by path kept a third copy of every path and a slot
/// of 40 bytes for each (15.6 MB at the peak at 100k objects, where a
/// slot here is 16). A file that could not be read has no id and no
/// entry: `Files::unreadable` says why. A fork reads the cache of the
/// files it was forked from, shared rather than copied (122,000 entries
/// per worker at 100k objects), and keeps beside it what it parses and
/// takes itself. Only the files forked from change the shared table,
/// once their forks are gone, so it is never copied.
#[derive(Default)]
pub(super) struct ParseCache {
    pub(super) shared: Arc<Vec<Option<Cached>>>,
    /// In a fork: what it parsed itself.
    own: PathMap<FileId, Cached>,
    /// In a fork: the entries of `shared` it took.
    taken: PathSet<FileId>,
    /// Not in a fork: whether a build took the file before, by id.
    taken_unforked: Vec<bool>,
    /// Not in a fork: whether a take copies the parse and keeps it.
    pub(super) keep_taken: bool,
    forked: bool,
    /// Parses the builds on forks took, removed and not yet freed
    /// ([`ParseCache::retire`]).
    retired: Vec<Cached>,
}

/// Under this many bytes of YAML, a build's take copies the parse and
/// the cache keeps it: joryirving__home-ops's 1.2 MB then peak at 1 MB
/// more (see BENCHMARKS.md).
pub(super) const KEEP_TAKEN_BELOW: usize = 4 << 20;

/// How many taken parses [`ParseCache::retire`] frees at once.
const RETIRED_AT_ONCE: usize = 256;

impl ParseCache {
    pub(super) fn fork(&self) -> ParseCache {
        ParseCache {
            shared: self.shared.clone(),
            forked: true,
            ..ParseCache::default()
        }
    }

    pub(super) fn get(&self, id: FileId) -> Option<&Cached> {
        self.own
            .get(&id)
            .or_else(|| match self.taken.contains(&id) {
                true => None,
                false => self.shared.get(id.0 as usize)?.as_ref(),
            })
    }

    /// Room for `more` parses (see [`SourceMap::reserve`]).
    pub(super) fn reserve(&mut self, more: usize) {
        match self.forked {
            true => self.own.reserve(more),
            false => Arc::make_mut(&mut self.shared).reserve(more),
        }
    }

    pub(super) fn insert(&mut self, id: FileId, cached: Cached) {
        if self.forked {
            self.own.insert(id, cached);
            return;
        }
        let shared = Arc::make_mut(&mut self.shared);
        let at = id.0 as usize;
        if shared.len() <= at {
            shared.resize_with(at + 1, || None);
        }
        shared[at] = Some(cached);
    }

    /// Marks `id` taken by a build, not in a fork; whether it was before.
    fn mark_taken(&mut self, id: FileId) -> bool {
        let at = id.0 as usize;
        if self.taken_unforked.len() <= at {
            self.taken_unforked.resize(at + 1, false);
        }
        std::mem::replace(&mut self.taken_unforked[at], true)
    }

    /// Removes the parse of `id` that a build on a fork took, and frees
    /// such parses on a worker, a chunk at a time: where the build changed
    /// what it took (a target namespace set), freeing the parse frees a
    /// whole tree, 6 % of the main thread's instructions at 10k objects,
    /// while the workers wait for the main thread to take the builds.
    /// Kept, as a take here keeps it, where takes copy.
    pub(super) fn retire(&mut self, id: FileId) {
        if self.keep_taken || self.mark_taken(id) {
            return;
        }
        if let Some(cached) = self.remove(id) {
            self.retired.push(cached);
        }
        if self.retired.len() >= RETIRED_AT_ONCE {
            let retired = std::mem::take(&mut self.retired);
            crate::cores::drop_later(retired);
        }
    }

    /// The parse of `id` for a build to own, not in a fork. A repository
    /// of several clusters builds a file once per cluster, and every app
    /// includes the same components: parsing such files again was a third
    /// of joryirving__home-ops's main thread. So under
    /// [`KEEP_TAKEN_BELOW`] bytes of YAML each take copies the parse and
    /// the cache keeps it. Above, the first take moves it out (most files
    /// are built into objects once there, and a copy kept would double what
    /// a large repository holds), and a file taken again is parsed once
    /// more and then kept ([`ParseCache::keep_taken_parse`]).
    pub(super) fn take_unforked(&mut self, id: FileId) -> Option<Cached> {
        if self.keep_taken || self.mark_taken(id) {
            return self.get(id).cloned();
        }
        self.remove(id)
    }

    /// Keeps a parse of `id` made for a take, not in a fork, for the
    /// takes after it (see [`ParseCache::take_unforked`]).
    pub(super) fn keep_taken_parse(&mut self, id: FileId, parsed: &Arc<Parsed>) {
        self.mark_taken(id);
        self.insert(id, Ok(parsed.clone()));
    }

    fn remove(&mut self, id: FileId) -> Option<Cached> {
        if !self.forked {
            return Arc::make_mut(&mut self.shared)
                .get_mut(id.0 as usize)?
                .take();
        }
        // What a fork parsed itself is only what `shared` lacks or it took.
        let own = self.own.remove(&id);
        let shared = match self.taken.insert(id) {
            true => self.shared.get(id.0 as usize).cloned().flatten(),
            false => None,
        };
        own.or(shared)
    }
}

impl Parsed {
    /// The documents parsed from `text`.
    pub fn of(file: FileId, docs: Vec<Arc<Node>>, text: &str) -> Parsed {
        Parsed {
            file,
            docs,
            dollar_free: dollar_free(text),
        }
    }
}

/// Whether no string parsed from `text` can hold a `$`: past the blank
/// lines, comments and `---` it starts with (where a schema comment's
/// `$schema` is, in most files of a repository) it holds neither a `$`
/// nor a `\` (a double-quoted `"\x24"` is one). Before any content a line
/// whose first mark is `#` is a comment; later it may be a block
/// scalar's text.
fn dollar_free(text: &str) -> bool {
    let mut rest = text;
    while let Some(line) = rest.split_inclusive('\n').next() {
        let mark = line.trim();
        if !(mark.is_empty() || mark == "---" || mark.starts_with('#')) {
            break;
        }
        rest = &rest[line.len()..];
    }
    memchr::memchr2(b'$', b'\\', rest.as_bytes()).is_none()
}
