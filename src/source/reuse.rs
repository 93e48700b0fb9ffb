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
//!
//! The Flux-level steps of a Flux Kustomization's render (targetNamespace,
//! `spec.patches`, postBuild substitution) are reused the same way
//! ([`RenderRecord`]): their output is a function of the build's objects,
//! the Flux Kustomization, what they ask of the files, the ConfigMaps and
//! Secrets substitution looks up, what the parent passed on and the
//! substitution budget left, each compared exactly (spans included). So
//! are the steps that make each build's bootstrap inputs (a flux-instance
//! HelmRelease, the ConfigMaps it reads) as its Flux Kustomization
//! applies them, before the renders.
//!
//! All of it is a layer over the file reader and the renderer: the files
//! of such a load are read through a [`ReuseLayer`] (the reader's
//! [`ReadLayer`]), which holds what is recorded and what was lent, and the
//! renderer builds and runs steps through [`Reusing`] (its
//! [`BuildLayer`]). Neither knows how reuse is done.

use crate::source::kustomize::FluxInputs;
use std::any::Any;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::Issue;
use super::Limits;
use super::Object;
use super::PathMap;
use super::files::{Event, Files, Parsed, ReadLayer};
use super::flux::layer::{
    BuildLayer, Lookup, Plain, RenderInputs, RenderKey, RenderOutputs, RunSteps,
};
use super::kustomize::{Built, RunBudget};
use crate::yaml::{FileId, Node, Origin, SourceMap, Value};

/// What identifies a build: the path and the Flux components, with the
/// spans they are written at.
type BuildKey = (PathBuf, FluxInputs);

/// A build of the working tree, with the questions it asked.
struct Recorded {
    events: Vec<Event>,
    result: Result<Built, Issue>,
    /// What it spent of the load's budget (`kustomize::Limits`'s
    /// `max_run_*`): the base load spends it too, so that reuse gives
    /// what a fresh build there would.
    spent: RunBudget,
    /// The files its objects point into, once a reuse has looked: an
    /// editor lends a reused build to each next lint, and walking every
    /// node of every reused build again was a tenth of a re-diagnosis.
    points_into: Option<Vec<FileId>>,
}

/// Kept by a load of the working tree when a base load is to follow.
#[derive(Default)]
struct Recorder {
    /// The questions of the build under way; `None` between builds.
    /// Behind a lock because files are read from several threads.
    trace: Mutex<Option<Vec<Event>>>,
    builds: PathMap<BuildKey, Recorded>,
    parsed: PathMap<PathBuf, Arc<Parsed>>,
    renders: PathMap<RenderKey, Vec<RenderRecord>>,
}

impl Recorder {
    /// Notes a question and its answer when a build is under way.
    fn note(&self, event: impl FnOnce() -> Event) {
        let mut trace = self.trace.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(events) = trace.as_mut() {
            events.push(event());
        }
    }

    /// Takes the builds another recorder (a fork's) recorded.
    fn adopt(&mut self, other: Recorder) {
        for (key, recorded) in other.builds {
            self.builds.entry(key).or_insert(recorded);
        }
        for (key, records) in other.renders {
            self.renders.entry(key).or_default().extend(records);
        }
    }

    /// Keeps a render's Flux-level steps, for a base load to reuse.
    fn keep_render(&mut self, record: RenderRecord) {
        self.renders
            .entry(record.key.clone())
            .or_default()
            .push(record);
    }
}

/// What the files of a load that records or borrows are read through.
struct ReuseLayer {
    /// What each build asks, kept for a later load to reuse.
    recorder: Option<Recorder>,
    /// What an earlier load (the working tree's) lends this one.
    lent: Option<Lent>,
}

impl ReadLayer for ReuseLayer {
    fn note(&self, event: &dyn Fn() -> Event) {
        if let Some(recorder) = &self.recorder {
            recorder.note(event);
        }
    }

    fn records(&self) -> bool {
        self.recorder.is_some()
    }

    /// A load that borrows registers files as it checks a build: in order.
    fn in_order(&self) -> bool {
        self.lent.is_some()
    }

    /// A fork records what its jobs ask, for the files it was forked
    /// from to adopt; it borrows nothing.
    fn fork(&self) -> Option<Box<dyn ReadLayer>> {
        self.recorder.as_ref()?;
        Some(Box::new(ReuseLayer {
            recorder: Some(Recorder::default()),
            lent: None,
        }))
    }

    fn adopt(&mut self, fork: Box<dyn ReadLayer>) {
        let fork: Box<dyn Any> = fork;
        if let (Some(mine), Ok(theirs)) = (self.recorder.as_mut(), fork.downcast::<ReuseLayer>())
            && let Some(theirs) = theirs.recorder
        {
            mine.adopt(theirs);
        }
    }

    fn reserve_parsed(&mut self, more: usize) {
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.parsed.reserve(more);
        }
    }

    /// The working tree's parse of a file with the same text at the same
    /// id is this one's.
    fn parsed(&mut self, rel: &Path, id: FileId, sources: &SourceMap) -> Option<Arc<Parsed>> {
        let parsed = self.lent.as_mut()?.parsed(rel, id, sources)?;
        // Lent on again by a load that also records.
        self.keep_parsed(rel.to_path_buf(), parsed.clone());
        Some(parsed)
    }

    /// Keeps a file's parsed documents: the load moves them into its
    /// objects, which then copies them instead.
    fn keep_parsed(&mut self, rel: PathBuf, parsed: Arc<Parsed>) {
        if let Some(recorder) = self.recorder.as_mut() {
            recorder.parsed.insert(rel, parsed);
        }
    }
}

/// The reuse layer `files` are read through, when they are.
fn layer(files: &mut Files) -> Option<&mut ReuseLayer> {
    files.layer_mut::<ReuseLayer>()
}

/// What `files` record, when they do.
fn recorder(files: &mut Files) -> Option<&mut Recorder> {
    layer(files)?.recorder.as_mut()
}

/// `files`, with `change` made to their reuse layer (a new one when they
/// have none).
fn with_reuse(mut files: Files, change: impl FnOnce(&mut ReuseLayer)) -> Files {
    if let Some(layer) = layer(&mut files) {
        change(layer);
        return files;
    }
    let mut layer = ReuseLayer {
        recorder: None,
        lent: None,
    };
    change(&mut layer);
    files.with_layer(Box::new(layer))
}

/// `files`, with what each build asks of them recorded, for a load of
/// another commit (or the editor's next) to reuse ([`Lent::of`]).
pub fn recording(files: Files) -> Files {
    with_reuse(files, |layer| layer.recorder = Some(Recorder::default()))
}

/// `files`, reusing what `lent` holds where it is the same.
pub fn borrowing(files: Files, lent: Lent) -> Files {
    with_reuse(files, |layer| layer.lent = Some(lent))
}

/// A commit's `files`, reading the lent texts of the files not in
/// `changed` (the paths git says differ from the working tree, see
/// [`super::git::changed_since`]) instead of their blobs (see
/// [`Files::sharing_unchanged`]).
pub fn sharing_unchanged(mut files: Files, changed: &HashSet<PathBuf>) -> Files {
    let Some(lent) = layer(&mut files).and_then(|l| l.lent.take()) else {
        return files;
    };
    let mut files = files.sharing_unchanged(lent.texts(), lent.bytes_read(), changed);
    if let Some(layer) = layer(&mut files) {
        layer.lent = Some(lent);
    }
    files
}

/// What was lent to `files`, with its counts of what was reused.
pub fn take_lent(files: &mut Files) -> Option<Lent> {
    layer(files)?.lent.take()
}

/// What `files` are built and rendered through: [`Reusing`] when they
/// record or borrow, else [`Plain`].
pub(crate) fn build_layer(files: &mut Files) -> &'static dyn BuildLayer {
    match layer(files) {
        Some(_) => &Reusing,
        None => &Plain,
    }
}

/// Builds and runs a Flux Kustomization's steps reusing what was lent
/// ([`build`], [`steps`]), keeping them when the load records.
struct Reusing;

impl BuildLayer for Reusing {
    fn build(
        &self,
        files: &mut Files,
        dir: &Path,
        flux: &FluxInputs,
        run: &dyn Fn(&mut Files) -> Result<Built, Issue>,
    ) -> Result<Built, Issue> {
        build(files, dir, flux, run)
    }

    fn steps<'p>(
        &self,
        files: &mut Files,
        key: RenderKey,
        given: RenderInputs,
        lookup: Lookup<'_, 'p>,
        run: RunSteps<'_, 'p>,
    ) -> RenderOutputs {
        steps(files, key, given, lookup, run)
    }
}

/// What the working tree's load lends the base load.
pub struct Lent {
    /// The working tree's files by id: what its objects point into.
    sources: Vec<(PathBuf, Arc<str>)>,
    limits: Limits,
    builds: PathMap<BuildKey, Recorded>,
    parsed: PathMap<PathBuf, Arc<Parsed>>,
    renders: PathMap<RenderKey, Vec<RenderRecord>>,
    /// Ids known to mean the same file with the same text in both loads.
    aligned: FileIds,
    /// How many builds and files were reused, for the log.
    pub reused_builds: usize,
    pub reused_parses: usize,
    /// Renders and bootstrap inputs whose Flux-level steps were reused.
    pub reused_renders: usize,
}

impl Lent {
    /// What `files` (a load made with [`recording`]) lends; `None` when
    /// it did not record.
    pub fn of(files: &mut Files) -> Option<Lent> {
        let recorder = layer(files)?.recorder.take()?;
        Some(Lent {
            sources: sources_by_id(&files.sources),
            limits: *files.limits(),
            builds: recorder.builds,
            parsed: recorder.parsed,
            renders: recorder.renders,
            aligned: FileIds::default(),
            reused_builds: 0,
            reused_parses: 0,
            reused_renders: 0,
        })
    }

    /// The lender's files and texts.
    fn texts(&self) -> std::slice::Iter<'_, (PathBuf, Arc<str>)> {
        self.sources.iter()
    }

    /// The files the lender's builds and renders read whole, within the
    /// size limit.
    fn bytes_read(&self) -> impl Iterator<Item = &Path> {
        let builds = self.builds.values().map(|r| &r.events);
        let renders = self
            .renders
            .values()
            .flatten()
            .filter_map(|r| r.events.as_ref());
        builds.chain(renders).flatten().filter_map(|e| match e {
            Event::Bytes(path, Ok(_)) => Some(path.as_path()),
            _ => None,
        })
    }

    /// Whether `id` is the same file with the same text in the lender
    /// and in `sources`.
    fn is_aligned(&mut self, id: FileId, sources: &SourceMap) -> bool {
        if self.aligned.contains(id) {
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
    fn parsed(&mut self, path: &Path, id: FileId, sources: &SourceMap) -> Option<Arc<Parsed>> {
        let parsed = self.parsed.get(path).filter(|p| p.file == id)?.clone();
        self.is_aligned(id, sources).then(|| {
            self.reused_parses += 1;
            parsed
        })
    }

    /// What was reused, for the log.
    pub fn summary(&self) -> String {
        format!(
            "{} builds, the Flux-level steps of {} Flux Kustomization renders and bootstrap \
             inputs, and {} parsed files reused from the working tree",
            self.reused_builds, self.reused_renders, self.reused_parses
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

/// A build of `dir` with what a Flux Kustomization writes into it: the lender's, when every question
/// it asked has the same answer here; else `build` run here, recorded
/// when this load records.
fn build(
    files: &mut Files,
    dir: &Path,
    flux: &FluxInputs,
    build: impl FnOnce(&mut Files) -> Result<Built, Issue>,
) -> Result<Built, Issue> {
    if let Some(recorded) = borrowed(files, dir, flux) {
        let result = recorded.result.clone();
        // A load that both borrows and records (an editor's, one per
        // edit) lends what it reused to the next one too.
        if let Some(recorder) = recorder(files) {
            recorder
                .builds
                .entry((dir.to_path_buf(), flux.clone()))
                .or_insert(recorded);
        }
        return result;
    }
    let left = files.budget_left();
    let (result, events) = traced(files, build);
    // A build the load's budget stopped depends on the builds before it,
    // not only on what it asked: it is not kept.
    let (stopped, spent) = (files.budget_stopped(), left.minus(files.budget_left()));
    if let (Some(recorder), Some(events), false) = (recorder(files), events, stopped) {
        recorder
            .builds
            .entry((dir.to_path_buf(), flux.clone()))
            .or_insert_with(|| Recorded {
                events,
                result: result.clone(),
                spent,
                points_into: None,
            });
    }
    result
}

/// Runs `job` on `files`, with the questions it asks when this load
/// records; `None` when it does not, or when a job under way (a build
/// within a build, a build within a render's steps) records them.
fn traced<R>(files: &mut Files, job: impl FnOnce(&mut Files) -> R) -> (R, Option<Vec<Event>>) {
    let Some(recording) = recorder(files) else {
        return (job(files), None);
    };
    let slot = recording.trace.get_mut().unwrap_or_else(|p| p.into_inner());
    if slot.is_some() {
        return (job(files), None);
    }
    *slot = Some(Vec::new());
    let result = job(files);
    let events = recorder(files).and_then(|recording| {
        let slot = recording.trace.get_mut().unwrap_or_else(|p| p.into_inner());
        slot.take()
    });
    (result, events)
}

/// The lender's build, when its questions are answered alike here and
/// its objects point into files that have the same ids here.
fn borrowed(files: &mut Files, dir: &Path, flux: &FluxInputs) -> Option<Recorded> {
    let mut lent = layer(files)?.lent.take()?;
    let key = (dir.to_path_buf(), flux.clone());
    let found = (lent.limits == *files.limits())
        .then(|| lent.builds.remove(&key))
        .flatten()
        .filter(|recorded| {
            files.budget_left().covers(&recorded.spent)
                && recorded.events.iter().all(|e| answers_alike(files, e))
                && flux
                    .components
                    .iter()
                    .chain(&flux.namespace)
                    .all(|(_, span)| lent.is_aligned(span.file, &files.sources))
        })
        .and_then(|mut recorded| {
            let ids = recorded
                .points_into
                .get_or_insert_with(|| points_into(&recorded.result));
            ids.iter()
                .all(|&id| lent.is_aligned(id, &files.sources))
                .then_some(recorded)
        });
    if let Some(recorded) = &found {
        files.spend_reused(recorded.spent);
        lent.reused_builds += 1;
    }
    if let Some(layer) = layer(files) {
        layer.lent = Some(lent);
    }
    found
}

/// Asks `files` the question of `event` again (leaving what it leaves)
/// and says whether the answer is the recorded one.
fn answers_alike(files: &mut Files, event: &Event) -> bool {
    match event {
        Event::Text(path, Ok((id, text))) => files.text_is(path, *id, text),
        Event::Text(path, Err(was)) => files.text(path).err().is_some_and(|issue| issue == *was),
        // A file git says is unchanged reads as the lender read it.
        Event::Bytes(path, answer) => {
            (answer.is_ok() && files.bytes_unchanged(path)) || files.bytes(path) == *answer
        }
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
        Event::Fetched => false,
    }
}

/// The files the spans of the build's objects are in: a build is reused
/// when each has the same id, path and text here as in the lender.
fn points_into(result: &Result<Built, Issue>) -> Vec<FileId> {
    let Ok(built) = result else {
        return Vec::new();
    };
    let mut ids = FileIds::default();
    for o in &built.objects {
        object_files(o, &mut ids);
    }
    ids.iter().collect()
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

    fn contains(&self, id: FileId) -> bool {
        self.0.get(id.0 as usize).copied().unwrap_or(false)
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
    ids.insert(node.span().file);
    if let Some(Origin::Substituted {
        defined_at: Some(at),
        ..
    }) = node.origin()
    {
        ids.insert(at.file);
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

/// A `substituteFrom` look-up (kind, namespace, name) and what it found.
#[derive(Clone, Debug)]
struct LookedUp {
    kind: String,
    namespace: String,
    name: String,
    found: Option<Object>,
}

/// One render's Flux-level steps: a plain value (inputs and outputs), so
/// that renders done apart (on other threads) can each keep theirs.
#[derive(Debug)]
struct RenderRecord {
    key: RenderKey,
    given: RenderInputs,
    /// The look-ups the steps made, in order.
    looked_up: Vec<LookedUp>,
    /// The questions they asked of the files; `None`: not known.
    events: Option<Vec<Event>>,
    gave: RenderOutputs,
}

/// A Flux Kustomization's steps `run` on what `given` holds: the
/// lender's outputs when it recorded the same inputs (see
/// [`lent_render`]), else run here, and recorded when this load records.
/// `lookup` finds the ConfigMaps and Secrets substitution reads (kind,
/// namespace, name); `run` is to look them up through the one it is given.
fn steps<'p>(
    files: &mut Files,
    key: RenderKey,
    mut given: RenderInputs,
    lookup: Lookup<'_, 'p>,
    run: RunSteps<'_, 'p>,
) -> RenderOutputs {
    if let Some(record) = lent_render(files, &key, &given, lookup) {
        let gave = record.gave.clone();
        keep_render(files, record);
        return gave;
    }
    if !files.records() {
        let objects = std::mem::take(&mut given.objects);
        return run(files, objects, &given, lookup);
    }
    let asked = std::cell::RefCell::new(Vec::new());
    let noted = |sources: &SourceMap, kind: &str, namespace: &str, name: &str| {
        let found = lookup(sources, kind, namespace, name);
        asked.borrow_mut().push(LookedUp {
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            found: found.cloned(),
        });
        found
    };
    let objects = given.objects.clone();
    let (gave, events) = traced(files, |files| run(files, objects, &given, &noted));
    keep_render(
        files,
        RenderRecord {
            key,
            given,
            looked_up: asked.into_inner(),
            events,
            gave: gave.clone(),
        },
    );
    gave
}

/// Keeps a render's Flux-level steps when `files` record.
fn keep_render(files: &mut Files, record: RenderRecord) {
    if let Some(recorder) = recorder(files) {
        recorder.keep_render(record);
    }
}

/// The lender's record of the render `key`, when one of its records was
/// given what `given` is here, each look-up finds the same object here
/// (`lookup`: kind, namespace, name), and the steps' questions get the
/// same answers.
fn lent_render<'p>(
    files: &mut Files,
    key: &RenderKey,
    given: &RenderInputs,
    lookup: Lookup<'_, 'p>,
) -> Option<RenderRecord> {
    let mut lent = layer(files)?.lent.take()?;
    let found = lent.render(files, key, given, lookup);
    if let Some(layer) = layer(files) {
        layer.lent = Some(lent);
    }
    found
}

impl Lent {
    fn render<'p>(
        &mut self,
        files: &mut Files,
        key: &RenderKey,
        given: &RenderInputs,
        lookup: Lookup<'_, 'p>,
    ) -> Option<RenderRecord> {
        if self.limits != *files.limits() {
            return None;
        }
        let mut records = self.renders.remove(key)?;
        let at = records.iter().position(|r| {
            self.given_alike(&r.given, given, &files.sources)
                && r.looked_up.iter().all(|l| {
                    let here = lookup(&files.sources, &l.kind, &l.namespace, &l.name);
                    match (&l.found, here) {
                        (None, None) => true,
                        (Some(was), Some(now)) => self.same_object(was, now, &files.sources),
                        _ => false,
                    }
                })
        });
        // The first record given the same asks the same questions; when
        // an answer differs, the steps run afresh and ask the same up to
        // that one, so what asking again left is what they leave.
        let found = at
            .filter(|&i| {
                records[i]
                    .events
                    .as_ref()
                    .is_some_and(|events| events.iter().all(|e| answers_alike(files, e)))
            })
            .map(|i| records.remove(i));
        if !records.is_empty() {
            self.renders.insert(key.clone(), records);
        }
        found.inspect(|_| self.reused_renders += 1)
    }

    fn given_alike(&mut self, was: &RenderInputs, now: &RenderInputs, sources: &SourceMap) -> bool {
        was.inherited == now.inherited
            && was.patched == now.patched
            && was.budget == now.budget
            && was.objects.len() == now.objects.len()
            && self.same_object(&was.ks, &now.ks, sources)
            && was
                .objects
                .iter()
                .zip(&now.objects)
                .all(|(a, b)| self.same_object(a, b, sources))
    }

    /// Whether `now` (here) is `was` (the lender's), spans included, in
    /// files with the same id, path and text. A tree behind the same
    /// `Arc` came here from the lender (a reused build, parse or render,
    /// each checked to point into such files) and is what was recorded:
    /// a recorded tree is shared, so a step changes a copy of it.
    fn same_object(&mut self, was: &Object, now: &Object, sources: &SourceMap) -> bool {
        let same = was.file == now.file
            && was.doc_index == now.doc_index
            && was.tree == now.tree
            && was.chain == now.chain
            && was.concealed == now.concealed
            && match (&was.live, &now.live) {
                (None, None) => true,
                (Some(a), Some(b)) => same_node(a, b),
                _ => false,
            };
        if !same {
            return false;
        }
        let outer =
            std::iter::once(now.file).chain(now.chain.iter().filter_map(|s| Some(s.at?.file)));
        if Arc::ptr_eq(&was.root, &now.root) {
            // Looked up one by one: a set of every id would be scanned per
            // object, for the few ids an object's steps point into.
            let mut outer = outer;
            return outer.all(|id| self.is_aligned(id, sources));
        }
        if !same_node(&was.root, &now.root) {
            return false;
        }
        let mut ids = FileIds::default();
        outer.for_each(|id| ids.insert(id));
        node_files(&now.root, &mut ids);
        if let Some(live) = &now.live {
            node_files(live, &mut ids);
        }
        ids.iter().all(|id| self.is_aligned(id, sources))
    }
}

/// Whether two trees are the same, spans, styles and origins included
/// (`Node`'s `==` compares values only).
fn same_node(a: &Node, b: &Node) -> bool {
    if a.span() != b.span() || a.style() != b.style() || a.origin() != b.origin() {
        return false;
    }
    match (&a.value, &b.value) {
        (Value::Seq(x), Value::Seq(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| same_node(a, b))
        }
        (Value::Map(x), Value::Map(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y.iter())
                    .all(|((ka, va), (kb, vb))| same_node(ka, kb) && same_node(va, vb))
        }
        (Value::Seq(_) | Value::Map(_), _) | (_, Value::Seq(_) | Value::Map(_)) => false,
        (x, y) => x == y,
    }
}
