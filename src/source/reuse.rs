//! What a load of the working tree lends a load of the base commit
//! (`--base`), so that the base costs what differs, not a second load:
//! the parsed documents of files whose text is the same in both, and the
//! kustomize builds whose every input is the same.
//!
//! A build is reused only when a fresh build would give the same: the
//! working-tree load records every question a build asks of the files
//! (a file's text, a directory's entries, whether a path is a file, ...)
//! with its answer, and the base load asks each again, in order, of the
//! base commit. A build is a function of those answers, so the same
//! answers mean the same build. Asking again also repeats what a build
//! leaves behind (files registered in the source map, files noted as
//! patches or generator inputs, directories noted as built), so the rest
//! of the base load sees what a fresh build would have left. When an
//! answer differs, the build runs afresh: it asks the same questions up
//! to that one, so what the replay left is what it would leave too.
//!
//! Objects hold [`FileId`]s: a build's objects are reused only when every
//! file they point into has the same id, path and text in both loads
//! (the usual case: the same files are listed in the same order).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::Object;
use super::files::{Files, Input, Issue, Parsed};
use super::kustomize::Built;
use crate::yaml::{FileId, Limits, Node, Origin, SourceMap, Span, Value};

/// One question a build asked of the files, with the answer it got, or
/// one note it left.
#[derive(Debug)]
pub(crate) enum Event {
    /// A text (for itself, or for its documents), registered on first read.
    Text(PathBuf, Result<(FileId, Arc<str>), Issue>),
    Bytes(PathBuf, Result<Vec<u8>, String>),
    IsDir(PathBuf, bool),
    IsFile(PathBuf, bool),
    Outside(PathBuf, Option<String>),
    ListDir(PathBuf, Result<Vec<(PathBuf, bool)>, String>),
    /// A file read other than as a resource ([`Files::note_input`]).
    Input(PathBuf, Input, PathBuf),
    BuiltDir(PathBuf),
    /// kustomize's built-in field specs were parsed (and registered).
    Defaults,
}

/// What identifies a build: the path and the Flux components, with the
/// spans they are written at.
type BuildKey = (PathBuf, Vec<(String, Span)>);

/// A build of the working tree, with the questions it asked.
struct Recorded {
    events: Vec<Event>,
    result: Result<Built, Issue>,
}

/// Kept by a load of the working tree when a base load is to follow.
#[derive(Default)]
pub(crate) struct Recorder {
    /// The questions of the build under way; `None` between builds.
    /// Behind a lock because files are read from several threads.
    trace: Mutex<Option<Vec<Event>>>,
    builds: HashMap<BuildKey, Recorded>,
    parsed: HashMap<PathBuf, Arc<Parsed>>,
}

impl Recorder {
    /// Notes a question and its answer when a build is under way.
    pub(crate) fn note(&self, event: impl FnOnce() -> Event) {
        let mut trace = self.trace.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(events) = trace.as_mut() {
            events.push(event());
        }
    }

    /// Takes the builds another recorder (a fork's) recorded.
    pub(crate) fn adopt(&mut self, other: Recorder) {
        for (key, recorded) in other.builds {
            self.builds.entry(key).or_insert(recorded);
        }
    }

    /// Keeps a file's parsed documents: the load moves them into its
    /// objects, which then copies them instead.
    pub(crate) fn keep_parsed(&mut self, path: PathBuf, parsed: Arc<Parsed>) {
        self.parsed.insert(path, parsed);
    }
}

/// What the working tree's load lends the base load.
pub struct Lent {
    /// The working tree's files by id: what its objects point into.
    sources: Vec<(PathBuf, Arc<str>)>,
    limits: Limits,
    builds: HashMap<BuildKey, Recorded>,
    parsed: HashMap<PathBuf, Arc<Parsed>>,
    /// Ids known to mean the same file with the same text in both loads.
    aligned: HashSet<FileId>,
    /// How many builds and files were reused, for the log.
    pub reused_builds: usize,
    pub reused_parses: usize,
}

impl Lent {
    /// What `files` (a load made with [`Files::recording`]) lends; `None`
    /// when it did not record.
    pub fn of(files: &mut Files) -> Option<Lent> {
        let recorder = files.recorder.take()?;
        Some(Lent {
            sources: sources_by_id(&files.sources),
            limits: *files.limits(),
            builds: recorder.builds,
            parsed: recorder.parsed,
            aligned: HashSet::new(),
            reused_builds: 0,
            reused_parses: 0,
        })
    }

    /// The lender's files and texts.
    pub(crate) fn texts(&self) -> impl Iterator<Item = &(PathBuf, Arc<str>)> {
        self.sources.iter()
    }

    /// Whether `id` is the same file with the same text in the lender
    /// and in `sources`.
    fn is_aligned(&mut self, id: FileId, sources: &SourceMap) -> bool {
        if self.aligned.contains(&id) {
            return true;
        }
        let Some((path, text)) = self.sources.get(id.0 as usize) else {
            return false;
        };
        if (id.0 as usize) >= sources.len() {
            return false;
        }
        let mine = sources.get(id);
        let same = mine.path == *path && (Arc::ptr_eq(&mine.text, text) || mine.text == *text);
        if same {
            self.aligned.insert(id);
        }
        same
    }

    /// The lender's parse of `path`, registered as `id` with `text`
    /// here, when it is the same file at the same id.
    pub(crate) fn parsed(
        &mut self,
        path: &Path,
        id: FileId,
        sources: &SourceMap,
    ) -> Option<Arc<Parsed>> {
        let parsed = self.parsed.get(path).filter(|p| p.file == id)?.clone();
        self.is_aligned(id, sources).then(|| {
            self.reused_parses += 1;
            parsed
        })
    }

    /// What was reused, for the log.
    pub fn summary(&self) -> String {
        format!(
            "{} builds and {} parsed files reused from the working tree",
            self.reused_builds, self.reused_parses
        )
    }
}

fn sources_by_id(sources: &SourceMap) -> Vec<(PathBuf, Arc<str>)> {
    (0..sources.len())
        .map(|i| {
            let f = sources.get(FileId(i as u32));
            (f.path.clone(), f.text.clone())
        })
        .collect()
}

/// A build of `dir` with `components`: the lender's, when every question
/// it asked has the same answer here; else `build` run here, recorded
/// when this load records.
pub(crate) fn build(
    files: &mut Files,
    dir: &Path,
    components: &[(String, Span)],
    build: impl FnOnce(&mut Files) -> Result<Built, Issue>,
) -> Result<Built, Issue> {
    if let Some(built) = borrowed(files, dir, components) {
        return built;
    }
    let Some(recorder) = files.recorder.as_mut() else {
        return build(files);
    };
    let slot = recorder.trace.get_mut().unwrap_or_else(|p| p.into_inner());
    if slot.is_some() {
        // A build within a build: the outer one records every question.
        return build(files);
    }
    *slot = Some(Vec::new());
    let result = build(files);
    let Some(recorder) = files.recorder.as_mut() else {
        return result;
    };
    let slot = recorder.trace.get_mut().unwrap_or_else(|p| p.into_inner());
    let events = slot.take().unwrap_or_default();
    recorder
        .builds
        .entry((dir.to_path_buf(), components.to_vec()))
        .or_insert_with(|| Recorded {
            events,
            result: result.clone(),
        });
    result
}

/// The lender's build, when its questions are answered alike here and
/// its objects point into files that have the same ids here.
fn borrowed(
    files: &mut Files,
    dir: &Path,
    components: &[(String, Span)],
) -> Option<Result<Built, Issue>> {
    let mut lent = files.lent.take()?;
    let key = (dir.to_path_buf(), components.to_vec());
    let found = (lent.limits == *files.limits())
        .then(|| lent.builds.remove(&key))
        .flatten()
        .filter(|recorded| {
            recorded.events.iter().all(|e| answers_alike(files, e))
                && components
                    .iter()
                    .all(|(_, span)| lent.is_aligned(span.file, &files.sources))
                && points_into_aligned(&recorded.result, &mut lent, &files.sources)
        });
    if found.is_some() {
        lent.reused_builds += 1;
    }
    files.lent = Some(lent);
    found.map(|r| r.result)
}

/// Asks `files` the question of `event` again (leaving what it leaves)
/// and says whether the answer is the recorded one.
fn answers_alike(files: &mut Files, event: &Event) -> bool {
    match event {
        Event::Text(path, answer) => match (files.text(path), answer) {
            (Ok((id, text)), Ok((was_id, was_text))) => {
                id == *was_id && (Arc::ptr_eq(&text, was_text) || text == *was_text)
            }
            (Err(issue), Err(was)) => issue == *was,
            _ => false,
        },
        Event::Bytes(path, answer) => files.bytes(path) == *answer,
        Event::IsDir(path, answer) => files.is_dir(path) == *answer,
        Event::IsFile(path, answer) => files.is_file(path) == *answer,
        Event::Outside(path, answer) => files.outside(path) == *answer,
        Event::ListDir(path, answer) => files.list_dir(path) == *answer,
        Event::Input(path, role, by) => {
            files.note_input(path.clone(), *role, by.clone());
            true
        }
        Event::BuiltDir(dir) => {
            files.note_built_dir(dir.clone());
            true
        }
        Event::Defaults => super::kustomize::default_config(files).is_ok(),
    }
}

/// Whether every span of the build's objects is in a file with the same
/// id, path and text here as in the lender.
fn points_into_aligned(
    result: &Result<Built, Issue>,
    lent: &mut Lent,
    sources: &SourceMap,
) -> bool {
    let Ok(built) = result else {
        return true;
    };
    let mut ids = FileIds::default();
    for o in &built.objects {
        object_files(o, &mut ids);
    }
    ids.iter().all(|id| lent.is_aligned(id, sources))
}

/// A set of file ids, one flag per id: every node of a build is looked
/// up, and hashing each was a third of what checking a build cost.
#[derive(Default)]
struct FileIds(Vec<bool>);

impl FileIds {
    fn insert(&mut self, id: FileId) {
        let i = id.0 as usize;
        if i >= self.0.len() {
            self.0.resize(i + 1, false);
        }
        self.0[i] = true;
    }

    fn iter(&self) -> impl Iterator<Item = FileId> + '_ {
        (0..self.0.len())
            .filter(|&i| self.0[i])
            .map(|i| FileId(i as u32))
    }
}

fn object_files(o: &Object, ids: &mut FileIds) {
    ids.insert(o.file);
    node_files(&o.root, ids);
    if let Some(live) = &o.live {
        node_files(live, ids);
    }
    for step in &o.chain {
        if let Some(at) = step.at {
            ids.insert(at.file);
        }
    }
}

fn node_files(node: &Node, ids: &mut FileIds) {
    ids.insert(node.span.file);
    if let Some(origin) = &node.origin {
        let Origin::Substituted { defined_at, .. } = &**origin;
        if let Some(at) = defined_at {
            ids.insert(at.file);
        }
    }
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|n| node_files(n, ids)),
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            node_files(k, ids);
            node_files(v, ids);
        }),
        _ => {}
    }
}
