//! Reading repo files once: text registered in the [`SourceMap`] for spans,
//! YAML parsed once and shared by every stage that needs it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::commit_tree::Tree;
use super::confine::{Refused, joined};
use super::disk::{Disk, Kind};
use super::issue::Issue;
use super::limits::Limits;
use super::limits::kustomize::RunBudget;
use super::{PathMap, PathSet};
use crate::yaml::{FileId, Node, SourceMap, Span, parse_documents};

mod ahead;
mod budget;
mod cache;
mod fork;
mod layer;
mod remembered;
pub use ahead::ReadAhead;
use cache::{KEEP_TAKEN_BELOW, ParseCache};
pub(crate) use fork::Forked;
use fork::Journal;
pub(crate) use layer::{Event, ReadLayer};
pub use remembered::Listing;

/// Parsed documents of one file.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub file: FileId,
    /// Shared with the objects made of them ([`super::Object::root`]).
    pub docs: Vec<Arc<Node>>,
    /// No string of `docs` holds a `$` ([`Parsed::of`]): postBuild
    /// substitution passes over what an object still shares with them.
    pub dollar_free: bool,
}

/// What a kustomization read a file as, other than as a resource: such a
/// file is applied only through the objects it changes or makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Patch,
    GeneratorInput,
    Configuration,
    Replacement,
    Transformer,
}

impl Input {
    pub fn as_str(self) -> &'static str {
        match self {
            Input::Patch => "a patch",
            Input::GeneratorInput => "generator input",
            Input::Configuration => "transformer configuration",
            Input::Replacement => "a replacement",
            Input::Transformer => "a transformer",
        }
    }
}

/// Why a file or folder of the repository could not be read: its path
/// and the reason, for the entry that names it to report.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}: {reason}", path.display())]
pub struct ReadError {
    pub path: PathBuf,
    pub reason: String,
}

impl ReadError {
    fn new(path: &Path, reason: impl std::fmt::Display) -> ReadError {
        ReadError {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }
}

/// The repository's files, read lazily and cached, addressed by paths
/// relative to the repository root.
pub struct Files {
    root: PathBuf,
    /// Where files are read from; shared with forks ([`Files::fork`]).
    backing: Arc<Backing>,
    pub sources: SourceMap,
    limits: Limits,
    /// Files that could not be read; the texts of the others are in
    /// `sources`, which a second map keyed by path would double. Shared
    /// with forks, which read no file that is not in one of the two.
    unreadable: Arc<PathMap<PathBuf, Issue>>,
    parsed: ParseCache,
    /// What is made once per load from its files and shared with its
    /// forks, by type (kustomize's built-in field specs, whose parse
    /// registers a file of its own): the reader need not know what reads
    /// through it.
    made_once: HashMap<std::any::TypeId, Arc<dyn std::any::Any + Send + Sync>>,
    /// Files kustomizations read other than as resources, with the
    /// kustomization file that read them first.
    pub inputs: PathMap<PathBuf, (Input, PathBuf)>,
    /// Directories whose kustomization a build read.
    pub built_dirs: PathSet<PathBuf>,
    /// Texts read instead of the files at these paths: a fix's edits,
    /// rendered again before anything is written.
    overlay: PathMap<PathBuf, String>,
    /// Inline patches and transformers parsed so far, by where they are
    /// written, whether as a block scalar, and their text (see
    /// `kustomize::inline::inline_docs`); hashed as paths are, since
    /// std's SipHash over each text was a tenth of a cached lookup.
    pub(crate) inline_docs: PathMap<(Span, bool, String), Vec<Node>>,
    /// The parses a small run is done with ([`Files::release_parsed`]).
    spent: Option<Box<Spent>>,
    /// What these files are read through, when a load reuses an earlier
    /// one's work or records its own for a later load ([`ReadLayer`]).
    layer: Option<Box<dyn ReadLayer>>,
    /// Texts known to be what the backing holds, read instead of it (the
    /// same text, and the same `Arc`, which a reused build's check then
    /// compares in one step): for a base commit's load, the working
    /// tree's texts of the files git says are as the commit has them; for
    /// an editor's, the last load's of the files nothing changed since
    /// ([`Files::remembering`]).
    unchanged: PathMap<PathBuf, Arc<str>>,
    /// The YAML files the walk would find, and the entries it could not
    /// list, when known without walking ([`Files::remembering`]).
    listed: Option<Arc<Listing>>,
    /// The YAML files finding the root listed and read, each text or why
    /// it could not be read, in the listing's order
    /// ([`Files::reading_ahead`]).
    read_ahead: Option<Box<(Listing, Vec<Text>)>>,
    /// For a base commit's load: the files git says are as the commit has
    /// them that the working tree's builds read whole (a generator's
    /// input), with what they read: a replayed read of one is that read,
    /// without its blob (22 of the 23 blobs joryirving__home-ops read
    /// with one HelmRelease edited).
    unchanged_bytes: PathSet<PathBuf>,
    /// Set in a fork: what its build leaves behind, for the files it was
    /// forked from to take in order ([`Files::each_in_order`]).
    journal: Option<Journal>,
    /// What the builds of this load may still spend in all.
    left: RunBudget,
    /// The budget the load started with, for what an issue says.
    total: RunBudget,
    /// The budget a build found spent, the last time one was.
    budget_refused: Option<crate::source::Budget>,
    /// Fetches remote entries when the user asked for it (`--remote`).
    remote: Option<Arc<super::remote::Fetcher>>,
    /// Set when these are the files of a fetched git folder: what its
    /// paths are called where a user reads them.
    checkout: Option<super::remote::Checkout>,
}

/// What a path names ([`Files::entry_kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Neither,
}

/// A file's text, or why it could not be read.
type Text = Result<Arc<str>, Issue>;

/// A file's parse, or why it has none: boxed, since few files have an
/// issue and the map has a slot for each of them (at 100k objects, an
/// issue's size in every slot was 18 MB of the load's peak).
type Cached = Result<Arc<Parsed>, Box<Issue>>;

/// The disk below the root, or a commit's tree in git's object store.
pub(super) enum Backing {
    /// Every path read is confined to the root.
    Disk(Disk),
    Commit(Tree),
}

/// What [`Files::release_parsed`] let go of: held, never read.
struct Spent {
    _parsed: ParseCache,
    _inline_docs: PathMap<(Span, bool, String), Vec<Node>>,
}

impl Files {
    pub fn new(root: impl Into<PathBuf>, limits: Limits) -> Files {
        let root = root.into();
        Files::with(
            root.clone(),
            Arc::new(Backing::Disk(Disk::new(&root, limits.max_read_bytes))),
            limits,
        )
    }

    /// The files of a commit; `root` names the directory they are of.
    pub fn in_commit(root: impl Into<PathBuf>, tree: Tree, limits: Limits) -> Files {
        Files::with(root.into(), Arc::new(Backing::Commit(tree)), limits)
    }

    fn with(root: PathBuf, backing: Arc<Backing>, limits: Limits) -> Files {
        Files {
            backing,
            root,
            sources: SourceMap::default(),
            limits,
            unreadable: Default::default(),
            parsed: ParseCache::default(),
            made_once: HashMap::new(),
            inputs: PathMap::default(),
            built_dirs: PathSet::default(),
            overlay: PathMap::default(),
            inline_docs: PathMap::default(),
            spent: None,
            layer: None,
            unchanged: PathMap::default(),
            listed: None,
            read_ahead: None,
            unchanged_bytes: PathSet::default(),
            journal: None,
            left: RunBudget::new(&limits.kustomize),
            total: RunBudget::new(&limits.kustomize),
            budget_refused: None,
            remote: None,
            checkout: None,
        }
    }

    /// These files, with remote entries fetched by `fetcher`.
    pub fn fetching(self, fetcher: Option<Arc<super::remote::Fetcher>>) -> Files {
        Files {
            remote: fetcher,
            ..self
        }
    }

    /// The files of a fetched git folder checked out in `dir`, read for a
    /// build of these: registered in these files' source map, under their
    /// remote names, so that every span of the build (of a fetched
    /// component, on objects of this repository too) points into one
    /// table, which [`Files::take_checkout`] takes back. They share the
    /// fetcher, what is made once (kustomize's built-in field specs) and
    /// the budget.
    pub(crate) fn checkout(&self, dir: &Path, checkout: super::remote::Checkout) -> Files {
        Files {
            sources: self.sources.clone(),
            made_once: self.made_once.clone(),
            remote: self.remote.clone(),
            checkout: Some(checkout),
            ..Files::new(dir, self.limits)
        }
        .within_budget_of(self)
    }

    /// What a build on [`Files::checkout`] of these registered and spent.
    pub(crate) fn take_checkout(&mut self, sub: Files) {
        self.take_spent(&sub);
        self.sources = sub.sources;
    }

    /// A path of these files as a user reads it: repository paths as
    /// they are, a fetched folder's under its remote name.
    pub fn shown(&self, rel: &Path) -> String {
        let rel = path_text(rel);
        match &self.checkout {
            Some(c) => c.name(&rel),
            None => rel,
        }
    }

    /// What fetches remote entries, when the user asked for it.
    pub fn remote(&self) -> Option<&Arc<super::remote::Fetcher>> {
        self.remote.as_ref()
    }

    /// Notes that a kustomization read `path` as `role` (kept for the
    /// first kustomization file `by` that did).
    pub fn note_input(&mut self, path: PathBuf, role: Input, by: PathBuf) {
        self.note(|| Event::Input(path.clone(), role, by.clone()));
        match &mut self.journal {
            Some(journal) => journal.inputs.push((path, role, by)),
            None => {
                self.inputs.entry(path).or_insert((role, by));
            }
        }
    }

    /// Notes that a build read the kustomization of `dir`.
    pub fn note_built_dir(&mut self, dir: PathBuf) {
        self.note(|| Event::BuiltDir(dir.clone()));
        self.built_dirs.insert(dir);
    }

    /// Notes that kustomize's built-in field specs were parsed.
    pub(crate) fn note_defaults(&self) {
        self.note(|| Event::Defaults);
    }

    /// Files whose texts are read from `overlay` instead of the disk.
    pub fn with_overlay(
        root: impl Into<PathBuf>,
        limits: Limits,
        overlay: HashMap<PathBuf, String>,
    ) -> Files {
        Files {
            overlay: overlay.into_iter().collect(),
            ..Files::new(root, limits)
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// These files of the work tree without what git ignores (see
    /// [`super::ignored`]); a commit's or the index's hold nothing ignored.
    pub fn ignoring(mut self, ignored: super::ignored::Ignored) -> Files {
        if let Some(Backing::Disk(_)) = Arc::get_mut(&mut self.backing)
            && !ignored.listed().is_empty()
        {
            let disk = Disk::new(&self.root, self.limits.max_read_bytes);
            self.backing = Arc::new(Backing::Disk(disk.ignoring(ignored)));
        }
        self
    }

    /// What git ignores and these files leave out.
    pub fn ignored(&self) -> &[PathBuf] {
        match &*self.backing {
            Backing::Disk(disk) => disk.ignored().listed(),
            Backing::Commit(_) => &[],
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn abs(&self, rel: &Path) -> PathBuf {
        self.root.join(rel)
    }

    /// A directory of the repository: not one a symlink leads to outside it.
    pub fn is_dir(&self, rel: &Path) -> bool {
        let answer = match &*self.backing {
            Backing::Disk(disk) => disk.is_dir(rel),
            Backing::Commit(tree) => tree.is_dir(rel),
        };
        self.note(|| Event::IsDir(rel.to_path_buf(), answer));
        answer
    }

    /// A file of the repository: not one a symlink leads to outside it.
    pub fn is_file(&self, rel: &Path) -> bool {
        let answer = self.overlay.contains_key(rel)
            || match &*self.backing {
                Backing::Disk(disk) => disk.is_file(rel),
                Backing::Commit(tree) => tree.is_file(rel),
            };
        self.note(|| Event::IsFile(rel.to_path_buf(), answer));
        answer
    }

    /// The paths of those of `names` (plain file names) that are files
    /// of the repository in directory `dir`, in their order: each asked
    /// as [`Files::is_file`] asks it, the directory's listing looked up
    /// once for all of them.
    pub fn files_in(&self, dir: &Path, names: &[&str]) -> Vec<PathBuf> {
        let listed = match &*self.backing {
            Backing::Disk(disk) if self.overlay.is_empty() => disk.files_in(dir, names),
            _ => vec![None; names.len()],
        };
        let mut out = Vec::new();
        for (name, listed) in names.iter().zip(listed) {
            let answer = match listed {
                Some(answer) => {
                    self.note(|| Event::IsFile(joined(dir, name), answer));
                    answer
                }
                None => self.is_file(&joined(dir, name)),
            };
            if answer {
                out.push(joined(dir, name));
            }
        }
        out
    }

    /// What an entry naming `rel` finds there: why it is refused when it
    /// resolves outside the root ([`Files::outside`]), else a file
    /// ([`Files::is_file`]), a directory ([`Files::is_dir`]) or neither;
    /// asked of the listings once for all three where they can tell, and
    /// noted as the three questions.
    pub fn entry_kind(&self, rel: &Path) -> Result<EntryKind, String> {
        let listed = match &*self.backing {
            Backing::Disk(disk) if !self.overlay.contains_key(rel) => disk.listed_kind(rel),
            _ => None,
        };
        let Some(kind) = listed else {
            if let Some(reason) = self.outside(rel) {
                return Err(reason);
            }
            return Ok(if self.is_file(rel) {
                EntryKind::File
            } else if self.is_dir(rel) {
                EntryKind::Dir
            } else {
                EntryKind::Neither
            });
        };
        self.note(|| Event::Outside(rel.to_path_buf(), None));
        let file = kind == Some(Kind::File);
        self.note(|| Event::IsFile(rel.to_path_buf(), file));
        if file {
            return Ok(EntryKind::File);
        }
        let dir = kind == Some(Kind::Dir);
        self.note(|| Event::IsDir(rel.to_path_buf(), dir));
        Ok(match dir {
            true => EntryKind::Dir,
            false => EntryKind::Neither,
        })
    }

    /// Why `rel` is not the repository's, when it resolves outside the
    /// root: for the entry that names it to report.
    pub fn outside(&self, rel: &Path) -> Option<String> {
        let refused = match &*self.backing {
            Backing::Disk(disk) => disk.outside(rel),
            Backing::Commit(tree) => tree.outside(rel),
        };
        let answer = match refused {
            Some(e @ Refused::Outside { .. }) => Some(format!("'{}' {e}", self.shown(rel))),
            _ => None,
        };
        self.note(|| Event::Outside(rel.to_path_buf(), answer.clone()));
        answer
    }

    /// The bytes of a repository file within the size budget (files a
    /// generator reads whole, which need not be text).
    pub fn bytes(&self, rel: &Path) -> Result<Vec<u8>, ReadError> {
        let answer = self
            .raw(rel)
            .map_err(|e| ReadError::new(Path::new(&self.shown(rel)), e));
        self.note(|| Event::Bytes(rel.to_path_buf(), answer.clone()));
        answer
    }

    fn raw(&self, rel: &Path) -> Result<Vec<u8>, Refused> {
        let limit = self.limits.yaml.max_bytes;
        self.raw_with(rel, |disk| disk.read(rel, limit))
    }

    /// [`Files::raw`], a file on the disk read by `from_disk`.
    fn raw_with(
        &self,
        rel: &Path,
        from_disk: impl FnOnce(&Disk) -> Result<Vec<u8>, Refused>,
    ) -> Result<Vec<u8>, Refused> {
        if let Some(text) = self.overlay.get(rel) {
            // An editor's buffer is held to the limit a file on disk is.
            let limit = self.limits.yaml.max_bytes;
            if text.len() > limit {
                let len = Some(text.len() as u64);
                return Err(Refused::TooBig { len, limit });
            }
            return Ok(text.clone().into_bytes());
        }
        match &*self.backing {
            Backing::Disk(disk) => from_disk(disk),
            Backing::Commit(tree) => tree.read(rel, self.limits.yaml.max_bytes),
        }
    }

    /// The text the preload reads for `rel`: known already, else read,
    /// a file on the disk by `from_disk`.
    fn preload_text(
        &self,
        rel: &Path,
        from_disk: impl FnOnce(&Disk) -> Result<Vec<u8>, Refused>,
    ) -> Text {
        match self.known_text(rel) {
            Some(text) => Ok(text.clone()),
            None => text_of(self.raw_with(rel, from_disk), rel).map(Arc::from),
        }
    }

    /// Every YAML file of the repository, the entries that could not be
    /// listed, and the second paths to what was met (see
    /// [`super::walk::yaml_files`]), read and parsed (see
    /// [`Files::preload`]): on the disk, each file is read as the walk
    /// lists it. How much YAML it read decides how many cores the rest of
    /// this thread's run uses ([`crate::cores::fit`]).
    pub fn load_yaml_files(&mut self) -> Listing {
        let (listing, read) = self.yaml_files_read();
        self.preload_read(&listing.paths, read, true);
        listing
    }

    /// The listing of [`Files::load_yaml_files`], with the texts read so
    /// far in its order.
    fn yaml_files_read(&mut self) -> (Listing, Vec<Option<Text>>) {
        let unread = |n| (0..n).map(|_| None).collect();
        let (mut listing, read): (Listing, Vec<Option<Text>>) =
            match (self.read_ahead.take(), self.listed.take(), &*self.backing) {
                (Some(ahead), _, _) => {
                    let (listing, texts) = *ahead;
                    (listing, texts.into_iter().map(Some).collect())
                }
                (None, Some(listed), _) => {
                    let listing = Arc::try_unwrap(listed).unwrap_or_else(|l| (*l).clone());
                    let n = listing.paths.len();
                    (listing, unread(n))
                }
                (None, None, Backing::Disk(disk)) => {
                    let limit = self.limits.yaml.max_bytes;
                    let (listing, texts) = super::walk::yaml_files_reading(disk, |rel, plain| {
                        self.preload_text(rel, |disk| disk.read_walked(rel, limit, plain))
                    });
                    (listing, texts.into_iter().map(Some).collect())
                }
                (None, None, Backing::Commit(tree)) => {
                    let paths = tree.yaml_files();
                    let n = paths.len();
                    let listing = Listing {
                        paths,
                        ..Listing::default()
                    };
                    (listing, unread(n))
                }
            };
        // An editor's buffer of a file not (or no longer) on disk is read
        // as the editor holds it.
        let added: Vec<PathBuf> = self
            .overlay
            .keys()
            .filter(|p| super::walk::is_yaml(p) && !listing.paths.contains(p))
            .cloned()
            .collect();
        if added.is_empty() {
            return (listing, read);
        }
        let mut all: Vec<(PathBuf, Option<Text>)> = std::mem::take(&mut listing.paths)
            .into_iter()
            .zip(read)
            .chain(added.into_iter().map(|p| (p, None)))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        let (paths, read) = all.into_iter().unzip();
        listing.paths = paths;
        (listing, read)
    }

    /// The entries directly in directory `rel`, sorted by name, each with
    /// whether it is a directory (a symlink is not: it is not entered).
    pub fn list_dir(&self, rel: &Path) -> Result<Vec<(PathBuf, bool)>, ReadError> {
        let listed = match &*self.backing {
            Backing::Disk(disk) => list_disk_dir(&self.abs(rel))
                .map(|names| {
                    names
                        .into_iter()
                        .map(|(name, is_dir)| (rel.join(name), is_dir))
                        .filter(|(path, _)| !disk.ignored().covers(path))
                        .collect()
                })
                .map_err(|e| ReadError::new(rel, e)),
            Backing::Commit(tree) => tree.list_dir(rel).map_err(|e| ReadError::new(rel, e)),
        };
        let answer = listed;
        self.note(|| Event::ListDir(rel.to_path_buf(), answer.clone()));
        answer
    }

    /// Text of a file, registered in the source map on first read.
    pub fn text(&mut self, rel: &Path) -> Result<(FileId, Arc<str>), Issue> {
        let answer = self.text_unnoted(rel);
        self.note(|| Event::Text(rel.to_path_buf(), answer.clone()));
        answer
    }

    /// Whether [`Files::text`] gives `text` registered as `id` for `rel`,
    /// asked (and noted) as it asks; a file registered at `id` already is
    /// not looked up by its path.
    pub(crate) fn text_is(&mut self, rel: &Path, id: FileId, text: &Arc<str>) -> bool {
        if !self.sources.holds_at(rel, id) {
            return match self.text(rel) {
                Ok((now_id, now)) => now_id == id && (Arc::ptr_eq(&now, text) || now == *text),
                Err(_) => false,
            };
        }
        let now = &self.sources.get(id).text;
        let same = Arc::ptr_eq(now, text) || now == text;
        self.note(|| Event::Text(rel.to_path_buf(), Ok((id, now.clone()))));
        same
    }

    fn text_unnoted(&mut self, rel: &Path) -> Result<(FileId, Arc<str>), Issue> {
        if let Some(id) = self.id_of(rel) {
            return Ok((id, self.sources.get(id).text.clone()));
        }
        if let Some(issue) = self.unreadable.get(rel) {
            return Err(issue.clone());
        }
        if let Some(journal) = &mut self.journal {
            journal.spoiled = true;
            return Err(Issue::file(rel, "not read on a fork"));
        }
        let result = self.read(rel);
        if let Err(issue) = &result {
            Arc::make_mut(&mut self.unreadable).insert(rel.to_path_buf(), issue.clone());
        }
        result
    }

    fn read(&mut self, rel: &Path) -> Result<(FileId, Arc<str>), Issue> {
        let name = self.name_of(rel);
        let text: Arc<str> = match self.known_text(rel) {
            Some(text) => text.clone(),
            None => text_of(self.raw(rel), &name)?.into(),
        };
        // A fetched folder's file is no file of the repository: no fix
        // edits it.
        let id = match self.checkout {
            Some(_) => self.sources.add_external(name, text.clone()),
            None => self.sources.add(name, text.clone()),
        };
        Ok((id, text))
    }

    /// The id `rel` is registered under in the source map, if read.
    fn id_of(&self, rel: &Path) -> Option<FileId> {
        match &self.checkout {
            Some(_) => self.sources.find(&self.name_of(rel)),
            None => self.sources.find(rel),
        }
    }

    /// The name `rel` is registered under in the source map.
    fn name_of(&self, rel: &Path) -> PathBuf {
        match &self.checkout {
            Some(_) => PathBuf::from(self.shown(rel)),
            None => rel.to_path_buf(),
        }
    }

    /// Reads and parses many files using every core: the first thing a
    /// run does, and the larger part of its time on a big repo.
    pub fn preload(&mut self, rels: &[PathBuf]) {
        self.preload_read(rels, (0..rels.len()).map(|_| None).collect(), false);
    }

    /// [`Files::preload`] of `rels`, the texts `read` holds already (one
    /// per path) not read again. With `fit_cores`, the YAML read sets how
    /// many cores this thread's run uses from the parse on
    /// ([`crate::cores::fit`]).
    fn preload_read(&mut self, rels: &[PathBuf], read: Vec<Option<Text>>, fit_cores: bool) {
        use rayon::prelude::*;
        let limits = self.limits;
        let texts: Vec<Text> = match &*self.backing {
            Backing::Disk(_) => rels
                .par_iter()
                .zip(read)
                .map(|(rel, read)| {
                    read.unwrap_or_else(|| {
                        self.preload_text(rel, |disk| disk.read(rel, limits.yaml.max_bytes))
                    })
                })
                .collect(),
            Backing::Commit(tree) => {
                let unread: Vec<PathBuf> = rels
                    .iter()
                    .filter(|rel| !self.unchanged.contains_key(*rel))
                    .cloned()
                    .collect();
                let mut read = tree.read_many(&unread, limits.yaml.max_bytes).into_iter();
                rels.iter()
                    .map(|rel| {
                        if let Some(text) = self.unchanged.get(rel) {
                            return Ok(text.clone());
                        }
                        let bytes = read.next().unwrap_or_else(|| {
                            Err(Refused::Io(std::io::Error::other(
                                "git cat-file gave no answer",
                            )))
                        });
                        match self.overlay.get(rel) {
                            Some(text) => Ok(text.as_str().into()),
                            None => text_of(bytes, rel).map(Arc::from),
                        }
                    })
                    .collect()
            }
        };
        let mut to_parse = Vec::new();
        self.sources.reserve(rels.len());
        self.parsed.reserve(rels.len());
        if let Some(layer) = self.layer.as_mut() {
            layer.reserve_parsed(rels.len());
        }
        for (rel, text) in rels.iter().zip(texts) {
            match text {
                Ok(text) => {
                    let id = self.sources.add(rel.clone(), text.clone());
                    to_parse.push((rel.clone(), id, text));
                }
                Err(issue) => {
                    Arc::make_mut(&mut self.unreadable).insert(rel.clone(), issue);
                }
            }
        }
        // The whole repository's YAML, parsed here or taken below: what
        // renders after is as large either way.
        if fit_cores {
            crate::cores::fit(to_parse.iter().map(|(_, _, text)| text.len()).sum());
        }
        // The working tree's parse of a file with the same text at the
        // same id is this one's.
        if let Some(layer) = self.layer.as_mut() {
            to_parse.retain(
                |(rel, file, _)| match layer.parsed(rel, *file, &self.sources) {
                    Some(parsed) => {
                        self.parsed.insert(*file, Ok(parsed));
                        false
                    }
                    None => true,
                },
            );
        }
        let bytes: usize = to_parse.iter().map(|(_, _, text)| text.len()).sum();
        self.parsed.keep_taken = bytes <= KEEP_TAKEN_BELOW;
        let parsed = crate::cores::map(&to_parse, |(rel, file, text)| {
            parse(rel, *file, text, &limits.yaml)
        });
        for ((rel, file, _), result) in to_parse.into_iter().zip(parsed) {
            if let (Some(layer), Ok(parsed)) = (self.layer.as_mut(), &result) {
                layer.keep_parsed(rel, parsed.clone());
            }
            self.parsed.insert(file, result.map_err(Box::new));
        }
    }

    /// Lets go of the parsed documents once rendering is done: the
    /// objects own copies, and only the texts are needed later (for
    /// snippets). The directory listings the builds asked go too, unless
    /// a later load keeps them (see [`Disk::forget_unshared_listings`]).
    /// When the run uses every core the parses are freed on a worker,
    /// which the render has left idle (`cores::drop_later`). A run on one
    /// core (under 4 MiB of YAML, [`KEEP_TAKEN_BELOW`]) keeps them until
    /// these files go: freeing them node by node was 1.2 % of a
    /// joryirving__home-ops lint, and a process that exits after its
    /// report leaves them to the exit with the rest of the repository.
    pub fn release_parsed(&mut self) {
        let spent = Spent {
            _parsed: std::mem::take(&mut self.parsed),
            _inline_docs: std::mem::take(&mut self.inline_docs),
        };
        match crate::cores::count() {
            1 => self.spent = Some(Box::new(spent)),
            _ => crate::cores::drop_later(spent),
        }
        if let Backing::Disk(disk) = &*self.backing {
            disk.forget_unshared_listings();
        }
    }

    /// Whether the parse cache keeps a copy of each parse a build takes
    /// (a repository of little YAML, see [`KEEP_TAKEN_BELOW`]): what a
    /// build holds then shares its trees with the cache.
    pub(crate) fn keeps_taken_parses(&self) -> bool {
        self.parsed.keep_taken
    }

    /// Document `index` of `file` as parsed, while the cache holds it and
    /// no string of it holds a `$` ([`Parsed::dollar_free`]).
    pub fn dollar_free_document(&self, file: FileId, index: u32) -> Option<Arc<Node>> {
        let parsed = self.parsed.get(file)?.as_ref().ok()?;
        parsed
            .dollar_free
            .then(|| parsed.docs.get(index as usize).cloned())?
    }

    /// Every non-empty YAML document of a file.
    pub fn documents(&mut self, rel: &Path) -> Result<Arc<Parsed>, Issue> {
        // The documents are a function of the text: that is the question.
        self.note_text(rel);
        if let Some(cached) = self.id_of(rel).and_then(|id| self.parsed.get(id)) {
            return cached.clone().map_err(|issue| *issue);
        }
        let (file, text) = self.text_unnoted(rel)?;
        let result = parse(&self.name_of(rel), file, &text, &self.limits.yaml);
        self.parsed.insert(file, result.clone().map_err(Box::new));
        result
    }

    /// Every non-empty YAML document of a file, to own: see
    /// [`ParseCache::take_unforked`] for when the cache keeps a copy.
    pub fn take_documents(&mut self, rel: &Path) -> Result<Parsed, Issue> {
        self.note_text(rel);
        let id = self.id_of(rel);
        if let (Some(journal), Some(id)) = (&mut self.journal, id) {
            journal.taken.push(id);
        }
        // On a fork, the files it was forked from hold the parse until they
        // take the journal: moving it out here frees nothing, and a second
        // build on this fork that reads the file parsed it again (509 of
        // joryirving__home-ops's 1,575 takes parsed again, 8 % of its
        // instructions).
        let forked = self.journal.is_some();
        let cached = id.and_then(|id| match forked {
            true => self.parsed.get(id).cloned(),
            false => self.parsed.take_unforked(id),
        });
        let parsed = match cached {
            Some(cached) => cached.map_err(|issue| *issue)?,
            None => {
                let (file, text) = self.text_unnoted(rel)?;
                let parsed = parse(&self.name_of(rel), file, &text, &self.limits.yaml)?;
                if !forked {
                    self.parsed.keep_taken_parse(file, &parsed);
                }
                parsed
            }
        };
        Ok(Arc::unwrap_or_clone(parsed))
    }
}

impl Files {
    /// Notes the text of `rel` as a question, when a build is recorded.
    fn note_text(&mut self, rel: &Path) {
        if self.records() {
            let _ = self.text(rel);
        }
    }
}

fn parse(
    rel: &Path,
    file: FileId,
    text: &str,
    limits: &crate::yaml::Limits,
) -> Result<Arc<Parsed>, Issue> {
    parse_documents(text, file, limits)
        .map(|docs| {
            // Sized to the documents: collected in place, the parse's
            // vector (room for four nodes) would be kept, 152 bytes more
            // for each file, 18 MB at 100k objects.
            let mut shared = Vec::with_capacity(docs.len());
            shared.extend(docs.into_iter().map(Arc::new));
            Arc::new(Parsed::of(file, shared, text))
        })
        .map_err(|e| Issue::yaml(rel, e))
}

/// A file's text, refused when it leaves the repository, is not a
/// regular file, is over the size budget or is not UTF-8 (with the
/// position of the first bad byte).
pub(super) fn text_of(bytes: Result<Vec<u8>, Refused>, rel: &Path) -> Result<String, Issue> {
    let bytes = bytes.map_err(|e| Issue::file(rel, e.to_string()))?;
    // The name is written out only for the issue: a file's bytes are read
    // for every build that lists it.
    String::from_utf8(bytes).map_err(|e| not_utf8(&e, &path_text(rel)))
}

/// A path as text: as it is when it is UTF-8, which repository paths
/// nearly always are (`Path::display` checks it a chunk at a time).
fn path_text(rel: &Path) -> String {
    match rel.to_str() {
        Some(text) => text.to_owned(),
        None => rel.display().to_string(),
    }
}

/// The bytes of file `shown` (a repository path or a URL) as text, else
/// an issue at its first byte that is not UTF-8.
pub(crate) fn utf8_text(bytes: Vec<u8>, shown: &str) -> Result<String, Issue> {
    String::from_utf8(bytes).map_err(|e| not_utf8(&e, shown))
}

/// The issue at the first byte of file `shown` that is not UTF-8.
fn not_utf8(e: &std::string::FromUtf8Error, shown: &str) -> Issue {
    let upto = &e.as_bytes()[..e.utf8_error().valid_up_to()];
    let line = upto.iter().filter(|b| **b == b'\n').count() as u32 + 1;
    let col = upto.iter().rev().take_while(|b| **b != b'\n').count() as u32 + 1;
    Issue::located(shown.to_string(), line, col, "file is not valid UTF-8")
}

/// The names in a directory of the disk, sorted, with whether each is a
/// directory (a symlink's own type, as walkdir reports it unfollowed).
fn list_disk_dir(dir: &Path) -> std::io::Result<Vec<(std::ffi::OsString, bool)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        out.push((entry.file_name(), entry.file_type()?.is_dir()));
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests;
