//! One root's tree: each Flux Kustomization built (kustomize), then its
//! Flux-level steps ([`super::steps`]), and the Flux Kustomizations in its
//! output rendered in turn; what became of each is recorded.

use crate::source::kustomize::{Cut, Cutting, FluxInputs, Image};
use std::sync::OnceLock;

use std::path::{Path, PathBuf};

use super::batch::{Batch, Waiting};
use super::joined::Joined;
use super::layer::{BuildLayer, RenderInputs, RenderKey, RenderOutputs, Steps};
use super::sources::source_of;
use super::steps::{flux_steps, substitute_from};
use super::substitute::is_disabled;
use super::tree::{
    BuildKey, CutKey, DocId, FluxTree, Inherited, KsId, LookupPool, Produced, child_id, doc_id,
    is_flux_ks,
};
use crate::source::Gap;
use crate::source::coverage::{FluxRender, Outcome};
use crate::source::{
    Budget, Files, Issue, Object, PathKey, PathMap, PathSet, StepKind, join_within, kustomize,
};
use crate::yaml::{FileId, Node, SourceMap, Span};

/// A Flux Kustomization taken from the queue ([`FluxTree::take`]): its
/// build done, its Flux-level steps still to run, nothing recorded yet.
pub(super) struct Taken {
    pub id: KsId,
    pub ks: Object,
    /// What its build gave to show before what the steps find (remote
    /// entries left out, or why it failed).
    pub noted: Vec<Issue>,
    pub outcome: Outcome,
    /// What its steps run on; `None` without a build.
    pub steps: Option<(RenderKey, RenderInputs)>,
    /// What it passes on without steps.
    pub passed_on: Inherited,
}

impl Taken {
    /// Whether its build holds no Flux Kustomization: its render applies
    /// none unless its steps (a patch, a substitution) make one, which is
    /// checked when its result is taken ([`FluxTree::flush`]).
    pub fn builds_no_kustomization(&self) -> bool {
        self.steps
            .as_ref()
            .is_none_or(|(_, given)| !given.objects.iter().any(is_flux_ks))
    }
}

/// A Flux Kustomization waiting to be rendered: its identity, where the
/// output holds it (`None`: the tree's root) and what its parent passes
/// on. Children wait as their index in the output, which holds them
/// anyway: a copy each would hold every Flux Kustomization twice.
pub(super) type Queued = (KsId, Option<usize>, Inherited);

/// One root's tree as it is walked, depth first.
pub(super) struct Walk<'r> {
    /// The Flux Kustomizations still to render, the next one last.
    pub queue: Vec<Queued>,
    /// Those rendered in this tree.
    pub done: PathSet<KsId>,
    /// The documents rendered in any tree.
    pub rendered: &'r mut PathSet<DocId>,
    /// The tree a root joins, whose objects its own are checked against.
    pub index: Option<Joined>,
    /// The tree the objects are added to.
    pub tree: u32,
}

impl Walk<'_> {
    /// Whether `id` is rendered in this tree already (the tree's own Flux
    /// Kustomizations are not rendered again).
    pub fn seen(&self, id: &KsId) -> bool {
        self.done.contains(id) || self.index.as_ref().is_some_and(|j| j.kss.contains(id))
    }
}

impl FluxTree {
    /// Builds each of `kss`, noting the Flux Kustomizations each produces.
    /// Their builds are independent: done on every core, each build's
    /// notes taken in the order of `kss` ([`Files::each_in_order`]).
    /// Returns each one's build key, `None` where it builds nothing here.
    pub(super) fn build_each(
        &mut self,
        files: &mut Files,
        kss: &[Object],
        seen: &mut Produced,
    ) -> Vec<Option<BuildKey>> {
        let keys: Vec<_> = kss.iter().map(|ks| self.build_key(files, ks)).collect();
        let mut queued: PathSet<&BuildKey> = PathSet::default();
        let todo: Vec<&(BuildKey, FluxInputs)> = keys
            .iter()
            .flatten()
            .filter(|key| !self.builds.contains_key(&key.0) && queued.insert(&key.0))
            .collect();
        let (ready, layer) = (kustomize::defaults_registered, self.layer);
        // Cut only where a cut's objects share their trees with the parse
        // cache: past that, each would hold its own copy of its build's
        // objects through the whole render (at 100k objects, 394 -> 553
        // MB peak).
        let cuts = files.keeps_taken_parses();
        let built = files.each_in_order(&todo, ready, |files, (key, flux)| {
            let cut = OnceLock::new();
            let cutting = match cuts {
                true => Cutting::Keep(&cut),
                false => Cutting::No,
            };
            let building = build_noting_dirs(layer, files, &key.0, flux, cutting);
            (building, cut.into_inner())
        });
        for ((key, _), ((result, dirs), cut)) in todo.into_iter().zip(built) {
            if let Some(cut) = cut {
                let at = (key.0.clone(), key.1.clone());
                self.cuts.entry(at).or_insert(cut);
            }
            self.build_dirs.insert(key.clone(), dirs);
            self.builds.insert(key.clone(), result);
        }
        let mut out = Vec::with_capacity(kss.len());
        for (ks, key) in kss.iter().zip(keys) {
            let Some((key, _)) = key else {
                out.push(None);
                continue;
            };
            *self.uses.entry(key.clone()).or_default() += 1;
            match &self.builds[&key] {
                Ok(built) => {
                    for o in built.objects.iter().filter(|o| is_flux_ks(o)) {
                        seen.produced.insert(doc_id(o));
                        if doc_id(o) != doc_id(ks) {
                            seen.produced_by_other.insert(doc_id(o));
                        }
                    }
                }
                Err(issue) => seen.failed.push((doc_id(ks), issue.clone())),
            }
            out.push(Some(key));
        }
        out
    }

    /// Renders `root` and every Flux Kustomization it produces, depth
    /// first. Identities are unique within one cluster's tree only.
    pub(super) fn render_tree(
        &mut self,
        files: &mut Files,
        root: Object,
        lookup_pool: &LookupPool,
        rendered: &mut PathSet<DocId>,
        issues: &mut Vec<Issue>,
    ) {
        let root_id = (
            root.namespace().unwrap_or("").to_string(),
            root.name().to_string(),
        );
        // Children that build from another source (a second GitRepository)
        // describe another repository's layout: not ours to render.
        let source = source_of(&root);
        let base = self.source_roots.get(&source).cloned().unwrap_or_default();
        // A root that builds from another repository (a GitRepository of
        // upstream CRDs) makes its source no more local: its paths are
        // that repository's, not this one's to find missing.
        if self.local.contains(&source) {
            self.local_sources.insert(source.clone(), base);
        }
        let inherited = Inherited {
            mutated: self.mutated,
            ..Inherited::default()
        };
        let joined = self.joined_tree(&root);
        let tree = joined.unwrap_or(self.trees);
        let index = joined.map(|tree| {
            let mut index = self
                .joined
                .remove(&tree)
                .unwrap_or_else(|| Joined::of(&self.output, tree));
            self.tree_files = std::mem::take(&mut index.files);
            index
        });
        if index.is_none() {
            self.tree_files.clear();
        }
        let mut walk = Walk {
            queue: vec![(root_id, None, inherited)],
            done: PathSet::default(),
            rendered,
            index,
            tree,
        };
        let start = self.output.len();
        // Kustomizations whose build holds no Flux Kustomization (an
        // app's) wait in a batch whose steps run on every core; a joining
        // root's objects are checked against the tree's as each one
        // renders.
        let mut batch = (joined.is_none() && Batch::may_run(files)).then(Batch::default);
        loop {
            let Some((id, at, inherited)) = walk.queue.pop() else {
                match &mut batch {
                    Some(batch) if !batch.is_empty() => {
                        self.flush(files, batch, lookup_pool, &mut walk, issues);
                        continue;
                    }
                    _ => break,
                }
            };
            if walk.seen(&id) {
                continue;
            }
            let ks = at.map_or_else(|| root.clone(), |i| self.output[i].clone());
            let mut peeked = None;
            if let Some(batch) = &mut batch
                && !batch.is_empty()
            {
                match self.joins(files, batch, (&ks, at), lookup_pool) {
                    Some(key) => peeked = Some(key),
                    None => {
                        // Taken again once the batch is: it may go back
                        // under the children of one of the batch's.
                        walk.queue.push((id, at, inherited));
                        self.flush(files, batch, lookup_pool, &mut walk, issues);
                        continue;
                    }
                }
            }
            walk.done.insert(id.clone());
            let fresh = walk.rendered.insert(doc_id(&ks));
            let mut taken = self.take(files, (id, at), ks, inherited, peeked.is_some());
            if let Some(batch) = &mut batch
                && (peeked.is_some() || taken.builds_no_kustomization())
            {
                let queued = Waiting {
                    at,
                    inherited,
                    fresh,
                    peeked: peeked.flatten(),
                };
                batch.push(taken, queued, &self.tree_files);
                continue;
            }
            let gave = taken.steps.take().map(|steps| {
                let (id, ks) = (&taken.id, &taken.ks);
                run_steps(
                    self.layer,
                    files,
                    id,
                    ks,
                    steps,
                    lookup_pool,
                    &self.tree_files,
                )
            });
            let ks = taken.ks.clone();
            let (objs, passed) = self.finish(files, taken, gave, issues);
            self.settle(files, &ks, objs, passed, &mut walk, issues);
        }
        match walk.index {
            Some(mut index) => {
                index.done(&self.output[start..]);
                index.files = std::mem::take(&mut self.tree_files);
                self.joined.insert(tree, index);
            }
            None => self.trees += 1,
        }
    }

    /// The tree of an earlier root that applied `root`'s own document: a
    /// FluxInstance (or flux-instance HelmRelease) that a self-applying
    /// root's tree applies syncs the same cluster again (gavinmcfall's
    /// `flux-system/cluster` applies `cluster-apps`, whose flux-instance
    /// release syncs `kubernetes/flux/cluster`, which applies
    /// `cluster-apps`): one cluster, not two.
    pub(super) fn joined_tree(&self, root: &Object) -> Option<u32> {
        self.first_tree.get(&doc_id(root)).copied()
    }

    /// Adds a render's objects to the walk's tree and queues the Flux
    /// Kustomizations among them; `ks` is the one rendered.
    pub(super) fn settle(
        &mut self,
        files: &mut Files,
        ks: &Object,
        mut objs: Vec<Object>,
        passed: Inherited,
        walk: &mut Walk<'_>,
        issues: &mut Vec<Issue>,
    ) {
        if let Some(index) = &walk.index {
            index.drop_applied(files, &self.output, &mut objs, issues);
        }
        let first = self.output.len();
        let mut queued = Vec::new();
        for (i, child) in objs.iter().enumerate().filter(|(_, o)| is_flux_ks(o)) {
            let id = child_id(ks, child);
            if !walk.seen(&id) {
                walk.queue.push((id, Some(first + i), passed));
                queued.push((first + i, child));
            }
        }
        self.prebuild(files, &queued);
        self.append(objs, walk.tree);
        if let Some(index) = &mut walk.index {
            for (i, o) in self.output.iter().enumerate().skip(first) {
                index.add(i, o);
            }
        }
    }

    /// The build for a render, moved out of the cache by its last user:
    /// a large repo would otherwise hold every object twice. A build of
    /// more objects than the render budget has left is the budget's issue
    /// instead, found before any copy of it is made: Flux's own steps
    /// never add objects, so such a render cannot fit (many Flux
    /// Kustomizations over one directory each asked for a copy of its
    /// build and ran their steps on it, only to be refused after).
    ///
    /// `peek`: a batch's later entry, whose build is made and fits
    /// ([`Self::joins`]): a copy of it, its use counted only when its
    /// result is taken ([`Self::used`]), so that one put back on the queue
    /// has changed nothing.
    pub(super) fn take_build(
        &mut self,
        files: &mut Files,
        (ks, at): (&Object, Option<usize>),
        name: &str,
        peek: bool,
    ) -> Option<Result<kustomize::Built, Issue>> {
        let found = at.and_then(|at| self.keys.remove(&at));
        let (key, flux) = found.unwrap_or_else(|| self.build_key(files, ks))?;
        if peek {
            let prebuilt = || Some(&self.prebuilt.get(&key)?.result()?.0);
            return self.builds.get(&key).or_else(prebuilt).cloned();
        }
        let last = self.count_use(&key);
        let max = files.limits().flux.max_rendered_objects;
        let room = max.saturating_sub(self.output.len());
        let fits = |result: &Result<kustomize::Built, Issue>| {
            result.as_ref().map_or(true, |b| b.objects.len() <= room)
        };
        let result = match self.builds.get(&key) {
            Some(cached) if !fits(cached) => {
                if last {
                    self.builds.remove(&key);
                }
                None
            }
            Some(cached) if !last => Some(cached.clone()),
            _ => match self.builds.remove(&key) {
                Some(result) => Some(result),
                None => {
                    let prebuilt = self.prebuilt.remove(&key).and_then(|f| files.adopt(f));
                    let (result, dirs) = prebuilt.unwrap_or_else(|| {
                        let cutting = cutting(&self.cuts, &key);
                        build_noting_dirs(self.layer, files, &key.0, &flux, cutting)
                    });
                    self.build_dirs.insert(key.clone(), dirs);
                    fits(&result).then_some(result)
                }
            },
        };
        let Some(result) = result else {
            return Some(Err(over_render_budget(files, ks, name)));
        };
        if let Some(dirs) = self.build_dirs.get(&key) {
            self.rendered_dirs.extend(dirs.iter().cloned());
        }
        Some(result)
    }

    /// Counts a use of the build `key`: whether it was the last.
    fn count_use(&mut self, key: &BuildKey) -> bool {
        let uses = self.uses.entry(key.clone()).or_default();
        *uses = uses.saturating_sub(1);
        *uses == 0
    }

    /// A peeked render's use of the build `key`, counted in its turn as
    /// [`Self::take_build`] counts it: the last use frees the cache, and
    /// a build made on a fork is taken now. `false` when taking it now
    /// would not give what the peek saw (an earlier render freed the
    /// cache; the fork's build does not fit in the run's budget left):
    /// the render is to be taken again in its turn.
    pub(super) fn used(&mut self, files: &mut Files, key: &BuildKey) -> bool {
        if !self.builds.contains_key(key) {
            let Some((_, dirs)) = self.prebuilt.remove(key).and_then(|f| files.adopt(f)) else {
                return false;
            };
            self.build_dirs.insert(key.clone(), dirs);
        }
        if self.count_use(key) {
            self.builds.remove(key);
        }
        if let Some(dirs) = self.build_dirs.get(key) {
            self.rendered_dirs.extend(dirs.iter().cloned());
        }
        true
    }

    /// What identifies a build: the path and what the Flux Kustomization
    /// writes into its kustomization.
    pub(super) fn build_key(
        &mut self,
        files: &mut Files,
        ks: &Object,
    ) -> Option<(BuildKey, FluxInputs)> {
        if !self.local.contains(&source_of(ks)) {
            return None;
        }
        let path = self.ks_path(files, ks).filter(|p| files.is_dir(p))?;
        let components: Vec<(String, Span)> = ks
            .root
            .path(&["spec", "components"])
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .filter_map(|c| Some((c.scalar_text()?, c.span())))
            .collect();
        let namespace = ks
            .root
            .path(&["spec", "targetNamespace"])
            .and_then(|n| Some((n.as_str()?.to_string(), n.span())));
        let images: Vec<Image> = ks
            .root
            .path(&["spec", "images"])
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .map(Image::of)
            .collect();
        // With where each is written: the objects' steps (and the
        // namespace's value) point at the Flux Kustomization that wrote
        // it, so two that build one path alike (two clusters) build it
        // each.
        let placed = |(text, at): &(String, Span)| (text.clone(), at.file, at.start);
        let image = |i: &Image| {
            let text = [&i.name, &i.new_name, &i.new_tag, &i.digest].map(|s| s.as_str());
            placed(&(text.join("\n"), i.span))
        };
        let key = (
            PathKey::from(path),
            components.iter().map(placed).collect(),
            namespace.as_ref().map(placed),
            images.iter().map(image).collect(),
        );
        Some((
            key,
            FluxInputs {
                components,
                namespace,
                images,
            },
        ))
    }

    /// Adds a render's objects to `tree`'s output.
    pub(super) fn append(&mut self, objs: Vec<Object>, tree: u32) {
        self.tree_files.extend(objs.iter().map(|o| o.file));
        for o in &objs {
            self.first_tree.entry(doc_id(o)).or_insert(tree);
        }
        self.output.extend(objs.into_iter().map(|mut o| {
            o.tree = Some(tree);
            o
        }));
    }

    /// One Flux Kustomization taken from the queue: its build, and what
    /// its Flux-level steps (targetNamespace, patches and postBuild
    /// substitution, in Flux's order) are to run on; `inherited` is what
    /// the parent passed to it; `at`, where the output holds it; `peek`:
    /// see [`Self::take_build`]. Nothing
    /// is recorded yet ([`Self::finish`]).
    pub(super) fn take(
        &mut self,
        files: &mut Files,
        (id, at): (KsId, Option<usize>),
        ks: Object,
        inherited: Inherited,
        peek: bool,
    ) -> Taken {
        let passed_on = Inherited {
            mutated: inherited.mutated,
            ..Inherited::default()
        };
        let mut taken = Taken {
            id,
            ks,
            noted: Vec::new(),
            outcome: Outcome::Rendered,
            steps: None,
            passed_on,
        };
        // Joined at its size, as `Object::id` is.
        let name = [taken.id.0.as_str(), &taken.id.1].join("/");
        let ks = &taken.ks;
        match self.take_build(files, (ks, at), &name, peek) {
            Some(Ok(built)) => {
                let (remote, missing): (Vec<Issue>, Vec<Issue>) = built
                    .gaps
                    .into_iter()
                    .partition(|g| g.gap == Some(Gap::Remote));
                taken.outcome = if !missing.is_empty() {
                    Outcome::Failed(missing)
                } else if !remote.is_empty() {
                    Outcome::Partial(remote.len())
                } else {
                    Outcome::Rendered
                };
                taken.noted = remote
                    .iter()
                    .map(|g| {
                        g.clone()
                            .noting(format_args!("(Flux Kustomization {name})"))
                    })
                    .collect();
                let given = RenderInputs {
                    ks: ks.clone(),
                    inherited,
                    objects: built.objects,
                    patched: ks.root.path(&["spec", "patches"]).is_some(),
                    budget: self.subst_budget.clone(),
                };
                let key = RenderKey {
                    steps: Steps::Render,
                    path: files.sources.path(ks.file).to_path_buf(),
                    doc_index: ks.doc_index,
                    id: taken.id.clone(),
                };
                taken.steps = Some((key, given));
            }
            Some(Err(issue)) => {
                taken.noted.push(issue.clone());
                taken.outcome = Outcome::of_failed_build(issue);
            }
            None => {
                let (outcome, issue) = self.unbuilt(files, ks, inherited.substituted);
                taken.noted.extend(issue);
                taken.outcome = outcome;
            }
        }
        taken
    }

    /// Records what became of a taken Flux Kustomization, given what its
    /// steps gave (`None`: it had no build to run them on). Returns the
    /// objects and what they inherit from this render ([`Inherited`]).
    pub(super) fn finish(
        &mut self,
        files: &mut Files,
        taken: Taken,
        gave: Option<RenderOutputs>,
        issues: &mut Vec<Issue>,
    ) -> (Vec<Object>, Inherited) {
        let Taken {
            id,
            ks,
            noted,
            outcome,
            passed_on,
            ..
        } = taken;
        issues.extend(noted);
        self.record(files, &ks, &id, outcome);
        let Some(gave) = gave else {
            return (Vec::new(), passed_on);
        };
        if !gave.unparsed.is_empty() {
            self.fail_render(gave.unparsed);
        } else if let Some(stop) = gave.issues.iter().find(|i| i.budget.is_some()) {
            self.stop_render(stop.clone());
        }
        issues.extend(gave.issues);
        self.subst_budget = gave.budget;
        // Flux's steps add no objects and a batch's later Kustomizations
        // join it only when they fit after all before them
        // (`FluxTree::joins`), so a build that fit when it was taken fits
        // now; checked again so that no render passes the budget.
        if self.output.len() + gave.objects.len() > files.limits().flux.max_rendered_objects {
            let issue = over_render_budget(files, &ks, &format!("{}/{}", id.0, id.1));
            issues.push(issue.clone());
            if let Some(last) = self.renders.last_mut() {
                last.outcome = Outcome::of_failed_build(issue);
            }
            return (Vec::new(), passed_on);
        }
        (gave.objects, gave.passed)
    }

    /// The Flux Kustomization recorded last fails after all (its postBuild
    /// substitution cannot parse a value): Flux applies none of it.
    pub(super) fn fail_render(&mut self, mut why: Vec<Issue>) {
        let Some(last) = self.renders.last_mut() else {
            return;
        };
        last.outcome = match std::mem::replace(&mut last.outcome, Outcome::Rendered) {
            Outcome::Failed(mut missing) => {
                missing.append(&mut why);
                Outcome::Failed(missing)
            }
            _ => Outcome::Failed(why),
        };
    }

    /// The Flux Kustomization recorded last was stopped in its own steps
    /// by a budget of the load (its postBuild substitution, say): counted
    /// as stopped by that budget, as one whose build a budget stopped is,
    /// unless it fails or stopped already.
    fn stop_render(&mut self, issue: Issue) {
        let (Some(last), Some(budget)) = (self.renders.last_mut(), issue.budget) else {
            return;
        };
        if matches!(last.outcome, Outcome::Rendered | Outcome::Partial(_)) {
            last.outcome = Outcome::Stopped(budget, issue);
        }
    }

    pub(super) fn record(&mut self, files: &Files, ks: &Object, id: &KsId, outcome: Outcome) {
        let path = self.ks_path_text(files, ks);
        self.renders.push(FluxRender {
            tree: self.trees,
            namespace: id.0.clone(),
            name: id.1.clone(),
            file: ks.file,
            path,
            outcome,
        });
    }

    /// Why the Flux Kustomization `ks` has no build, and the issue to show
    /// when no rule reports it (a missing path has its own rule);
    /// `substituted` says the Flux Kustomization that applies it ran
    /// postBuild substitution over it.
    pub(super) fn unbuilt(
        &mut self,
        files: &Files,
        ks: &Object,
        substituted: bool,
    ) -> (Outcome, Option<Issue>) {
        let (why, issue) = self.unbuilt_reason(files, ks, substituted);
        let source = source_of(ks);
        if self.local.contains(&source) {
            (Outcome::NotBuilt(why), issue)
        } else if source.starts_with("ExternalArtifact/") {
            // Made from somewhere: likely from this repository, by means
            // not mapped here.
            (Outcome::OtherSource(why), issue)
        } else {
            // Another repository's tree: named in the coverage figures of
            // every run, not a problem of this one.
            (Outcome::OtherSource(why), None)
        }
    }

    pub(super) fn unbuilt_reason(
        &mut self,
        files: &Files,
        ks: &Object,
        substituted: bool,
    ) -> (String, Option<Issue>) {
        // An absent spec.path is the root of the source (Flux's API:
        // "Defaults to 'None', which translates to the root path of the
        // SourceRef"); the issue then points at the sourceRef.
        let node = ks
            .root
            .path(&["spec", "path"])
            .or_else(|| ks.root.path(&["spec", "sourceRef"]))
            .unwrap_or(&ks.root);
        let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
        let source = source_of(ks);
        if !self.local.contains(&source) {
            let why = match join_within(Path::new(""), raw.trim_start_matches('/'))
                .and_then(|p| self.artifacts.resolve(&source, &p))
            {
                Some(Err(why)) => why,
                _ if source.starts_with("ExternalArtifact/") => format!(
                    "{source} is made by no ArtifactGenerator of the repository from its sources"
                ),
                _ => format!("it builds from {source}, which is not this repository"),
            };
            let issue = Issue::at(&files.sources, node.span(), format!("not rendered: {why}"));
            return (why, Some(issue));
        }
        if let Some(Some(Err(why))) = join_within(Path::new(""), raw.trim_start_matches('/'))
            .map(|p| self.artifacts.resolve(&source, &p))
        {
            let issue = Issue::at(&files.sources, node.span(), format!("not rendered: {why}"));
            return (why, Some(issue));
        }
        if let Some(var) = unresolved_variable(raw) {
            let reason = if substituted && !is_disabled(&ks.root) {
                // Flux substitutes a child's spec.path with the variables of
                // the Flux Kustomization that applies it; the value is not in
                // the repository, so only the cluster knows it.
                format!(
                    "its path '{raw}' uses ${{{var}}}, whose value is not in the repository \
                     (Flux takes it from the postBuild variables of the Flux Kustomization \
                     that applies this one, read in the cluster)"
                )
            } else {
                // No substitution reaches it: Flux reads the path as
                // written, `${...}` and all.
                let by = ks
                    .chain
                    .iter()
                    .find(|s| s.kind == StepKind::FluxKustomization)
                    .map_or("nothing".to_string(), |s| match s.at {
                        Some(at) => format!(
                            "Flux Kustomization {} ({})",
                            s.detail,
                            files.sources.path(at.file).display()
                        ),
                        None => format!("Flux Kustomization {}", s.detail),
                    });
                format!(
                    "its path '{raw}' reaches Flux as written: {by} applies it without \
                     postBuild substitution, so ${{{var}}} is not replaced and the path is \
                     no directory"
                )
            };
            let issue = Issue::at(
                &files.sources,
                node.span(),
                format!("not rendered: {reason}"),
            );
            return (reason, Some(issue));
        }
        // A path substituted from a Secret is shown as its length, as
        // the finding on it shows it.
        let shown = |text: String| files.sources.shown_value(node, text);
        match self.ks_path(files, ks) {
            Some(p) => (
                format!(
                    "its path {} is not a directory of the repository",
                    shown(p.display().to_string())
                ),
                None,
            ),
            None => (
                format!("its path '{}' leaves the repository", shown(raw.into())),
                None,
            ),
        }
    }
}

/// The render budget's stop for the Flux Kustomization `ks` named `name`.
fn over_render_budget(files: &Files, ks: &Object, name: &str) -> Issue {
    let max = files.limits().flux.max_rendered_objects;
    let issue = Issue::at(
        &files.sources,
        ks.root.span(),
        format!(
            "render budget exceeded: the Flux Kustomizations of this repository render \
             more than {max} objects in all; Flux Kustomization {name} is not rendered"
        ),
    );
    issue.stopped_by(Budget::RenderedObjects(max))
}

/// A Flux Kustomization's Flux-level steps through `layer`, its
/// substitution sources looked up in `lookup_pool`, preferring those
/// `tree_files` holds (see [`substitute_from`]).
pub(super) fn run_steps(
    layer: &dyn BuildLayer,
    files: &mut Files,
    id: &KsId,
    ks: &Object,
    (key, given): (RenderKey, RenderInputs),
    lookup_pool: &LookupPool,
    tree_files: &PathSet<FileId>,
) -> RenderOutputs {
    let lookup = |sources: &SourceMap, kind: &str, _namespace: &str, name: &str| {
        substitute_from(lookup_pool, tree_files, sources, ks, &id.0, kind, name)
    };
    layer.steps(
        files,
        key,
        given,
        &lookup,
        &|files, objects, given, lookup| flux_steps(files, id, ks, objects, given, lookup),
    )
}

/// How the build `key` resumes from the cut of a written Flux
/// Kustomization's build ([`FluxTree::cuts`]), if one was made.
pub(super) fn cutting<'c>(cuts: &'c PathMap<CutKey, Box<Cut>>, key: &BuildKey) -> Cutting<'c> {
    let found = cuts.get(&(key.0.clone(), key.1.clone()));
    found.map_or(Cutting::No, |cut| Cutting::From(cut))
}

/// [`kustomize::build_flux_path`], through `layer` (which may reuse an
/// earlier load's build where every input is alike), making or resuming
/// a cut as `cutting` says.
pub(super) fn build(
    layer: &dyn BuildLayer,
    files: &mut Files,
    dir: &Path,
    flux: &FluxInputs,
    cutting: Cutting<'_>,
) -> Result<kustomize::Built, Issue> {
    layer.build(files, dir, flux, &|files| {
        kustomize::build_flux_path_cutting(files, dir, flux, cutting)
    })
}

/// [`build`], with the directories it builds (noted in `files.built_dirs`
/// too).
pub(super) fn build_noting_dirs(
    layer: &dyn BuildLayer,
    files: &mut Files,
    dir: &Path,
    flux: &FluxInputs,
    cutting: Cutting<'_>,
) -> (Result<kustomize::Built, Issue>, PathSet<PathBuf>) {
    let before = std::mem::take(&mut files.built_dirs);
    let result = build(layer, files, dir, flux, cutting);
    let dirs = std::mem::replace(&mut files.built_dirs, before);
    files.built_dirs.extend(dirs.iter().cloned());
    (result, dirs)
}

/// The first variable of a `${...}` expression in `text`.
pub(super) fn unresolved_variable(text: &str) -> Option<&str> {
    let rest = &text[text.find("${")? + 2..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}
