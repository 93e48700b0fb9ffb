//! The tree of Flux Kustomizations, rendered the way Flux applies it.
//!
//! Flux starts from its own Kustomization (`flux-system`), builds its path,
//! finds more Flux Kustomizations in the output and builds those in turn,
//! each with its own `targetNamespace`, `patches` and postBuild variables.
//! [`render`] follows the same tree from the repo alone: it finds the
//! roots (the Kustomizations no other one produces, those flux-operator
//! syncs, those applied by hand), renders each root's tree
//! ([`super::render`] and [`super::steps`]) and says what became of every Flux Kustomization.

use crate::source::kustomize::{Cutting, FluxInputs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::artifact::Artifacts;
use super::layer::BuildLayer;
use super::sources::source_of;
use crate::source::coverage::{FluxRender, Unapplied};
use crate::source::files::Forked;
use crate::source::{Files, Issue, Object, PathKey, PathMap, PathSet, kustomize};
use crate::yaml::{FileId, Node};

pub(crate) const FLUX_KS_GROUP: &str = "kustomize.toolkit.fluxcd.io";
pub(crate) const ARTIFACT_GROUP: &str = "source.extensions.fluxcd.io";

/// Objects a sync Kustomization may come from (flux-operator's
/// FluxInstance, a HelmRelease of its chart), and the chart sources a
/// HelmRelease names.
pub(crate) fn is_bootstrap_input(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("fluxcd.controlplane.io", "FluxInstance")
            | ("helm.toolkit.fluxcd.io", "HelmRelease")
            | ("fluxcd.controlplane.io", "ResourceSet")
            | (
                "source.toolkit.fluxcd.io",
                "OCIRepository" | "HelmRepository"
            )
    )
}

pub(crate) fn is_flux_ks(o: &Object) -> bool {
    o.is(FLUX_KS_GROUP, "Kustomization")
}

/// `(namespace, name)` of a Flux Kustomization.
pub(super) type KsId = (String, String);

/// What rendering the Flux tree gave the load.
pub(crate) struct Rendered {
    /// The objects the Flux Kustomizations apply, each with its tree.
    pub objects: Vec<Object>,
    /// Whether any tree was rendered (the repository is a Flux repo).
    pub any_tree: bool,
    /// `kind/name` of the sources that are this repository, with their
    /// root directory.
    pub local_sources: BTreeMap<String, PathBuf>,
    /// What became of each Flux Kustomization.
    pub renders: Vec<FluxRender>,
    /// Files of the top-level kustomizations applied by hand that list a
    /// root, with that kustomization's directory.
    pub by_hand_files: PathMap<FileId, PathBuf>,
    /// Files of loose Flux Kustomizations that nothing applies.
    pub stray: PathSet<FileId>,
    /// The kustomization directories of the builds rendered.
    pub rendered_dirs: PathSet<PathBuf>,
    /// Flux Kustomizations written here that no root reaches.
    pub unapplied: Vec<Unapplied>,
}

/// What a render starts from, as written in files.
pub(crate) struct Written<'w> {
    /// The Flux Kustomizations.
    pub kustomizations: Vec<Object>,
    /// The ArtifactGenerators.
    pub generators: &'w [Object],
    /// The GitRepositories.
    pub git_repos: Vec<Object>,
    /// The ConfigMaps and Secrets.
    pub config_sources: &'w [Object],
    /// The objects a sync Kustomization may come from.
    pub bootstrap: Vec<Object>,
    /// Whether a document deploys the variable-adding webhook
    /// ([`super::webhook`]).
    pub webhook: bool,
}

/// Renders the tree of the Flux Kustomizations `written` in files,
/// building and running their steps through `layer`.
pub(crate) fn render(
    files: &mut Files,
    layer: &'static dyn BuildLayer,
    written: Written<'_>,
    issues: &mut Vec<Issue>,
) -> Rendered {
    let Written {
        kustomizations: written,
        generators,
        git_repos,
        config_sources,
        bootstrap,
        webhook,
    } = written;
    let mut flux = FluxTree::new(written, Artifacts::from_generators(generators), layer);
    flux.mutated = webhook;
    flux.foreign = super::foreign::foreign_git_sources(&git_repos, &bootstrap);
    let rooted = super::moved::rooted_sources(files, &flux.written, &git_repos, &flux.foreign);
    drop(git_repos);
    flux.moved = super::moved::find(files, &flux.written, &rooted);
    // Known from the root: never guessed to be a folder above a file.
    flux.source_roots
        .extend(rooted.into_iter().map(|s| (s, PathBuf::new())));
    flux.render_all(files, config_sources, bootstrap, issues);
    // What only the render read (its builds, the Kustomizations as
    // written) is freed on a worker while the load goes on, when the run
    // uses every core (`cores::drop_later`).
    let builds = std::mem::take(&mut flux.builds);
    let written = std::mem::take(&mut flux.written);
    crate::cores::drop_later((builds, written));
    Rendered {
        objects: flux.output,
        any_tree: flux.trees > 0,
        local_sources: flux.local_sources,
        renders: flux.renders,
        by_hand_files: flux.by_hand_files,
        stray: flux.stray,
        rendered_dirs: flux.rendered_dirs,
        unapplied: flux.unapplied,
    }
}

/// The Flux Kustomizations of the repo and what they render to.
pub(super) struct FluxTree {
    /// What builds and Flux-level steps are done through.
    pub(super) layer: &'static dyn BuildLayer,
    /// Flux Kustomizations as written in files.
    pub(super) written: Vec<Object>,
    /// kustomize output per path, before any Flux step: several Flux
    /// Kustomizations may build one path.
    pub(super) builds: PathMap<BuildKey, Result<kustomize::Built, Issue>>,
    /// Renders still to come per build, counted when the roots are found.
    pub(super) uses: PathMap<BuildKey, usize>,
    /// Builds of the Flux Kustomizations a render queued, made on forks
    /// of the files ahead of their turn and taken in it ([`Files::adopt`]).
    pub(super) prebuilt: PathMap<BuildKey, Forked<Building>>,
    /// The builds of the written Flux Kustomizations cut where their
    /// target namespace and images first take effect, by path and
    /// components: a render that sets another target namespace (a
    /// parent's replacement) resumes there ([`kustomize::Cut`]).
    pub(super) cuts: PathMap<CutKey, Box<kustomize::Cut>>,
    /// The build keys of queued children found for [`Self::prebuild`], by
    /// their index in the output: the same in their turn, as their
    /// source's root was known.
    pub(super) keys: PathMap<usize, Option<(BuildKey, FluxInputs)>>,
    pub(super) output: Vec<Object>,
    /// The tree of the first object of `output` from each document: a
    /// root whose own document an earlier tree applied joins that tree
    /// (a search of `output` per root made 3,000 roots over one
    /// directory of 500 objects quadratic).
    pub(super) first_tree: PathMap<DocId, u32>,
    /// Each tree a later root joined, as joining roots check their
    /// objects against it.
    pub(super) joined: PathMap<u32, super::joined::Joined>,
    /// `kind/name` of the sources the root Kustomizations build from:
    /// the ones that are this repository, with their root directory.
    pub(super) local_sources: BTreeMap<String, PathBuf>,
    /// Root directory of every source seen, local or not.
    pub(super) source_roots: PathMap<String, PathBuf>,
    /// Number of trees rendered so far (one per root).
    pub(super) trees: u32,
    /// Files of the objects the tree being rendered has applied so far:
    /// one root is one cluster, whose substituteFrom sources are its own.
    pub(super) tree_files: PathSet<FileId>,
    /// What postBuild substitution may still spend in this run.
    pub(super) subst_budget: Option<crate::source::flux::Budget>,
    /// Whether the repository deploys the variable-adding webhook
    /// ([`Inherited::mutated`]).
    pub(super) mutated: bool,
    /// What became of each Flux Kustomization met while rendering.
    pub(super) renders: Vec<FluxRender>,
    /// ExternalArtifacts that ArtifactGenerators make from sources here.
    pub(super) artifacts: Artifacts,
    /// `kind/name` of the sources that are this repository (or artifacts
    /// made from it): only their Flux Kustomizations are built from here.
    pub(super) local: PathSet<String>,
    /// GitRepositories whose URL is not the one the bootstrap syncs: never
    /// this repository, whatever their paths ([`crate::source::flux::foreign`]).
    pub(super) foreign: PathSet<String>,
    /// Files of the top-level kustomizations applied by hand that list a
    /// root, with that kustomization's directory.
    pub(super) by_hand_files: PathMap<FileId, PathBuf>,
    /// Files of loose Flux Kustomizations that nothing applies.
    pub(super) stray: PathSet<FileId>,
    /// One issue per source whose root is guessed away from the
    /// repository root.
    pub(super) guessed_roots: Vec<Issue>,
    /// The kustomization directories each build went through.
    pub(super) build_dirs: PathMap<BuildKey, PathSet<PathBuf>>,
    /// The kustomization directories of the builds rendered: a file a
    /// kustomization elsewhere lists is unreachable, not left out of it.
    pub(super) rendered_dirs: PathSet<PathBuf>,
    /// Flux Kustomizations written here that no root reaches.
    pub(super) unapplied: Vec<Unapplied>,
    /// Flux Kustomizations of trees moved away from where their paths
    /// start ([`super::moved`]): no root.
    pub(super) moved: PathMap<DocId, super::moved::Moved>,
}

/// What the builds of the written Flux Kustomizations produced.
#[derive(Default)]
pub(super) struct Produced {
    /// Flux Kustomizations some build outputs.
    pub(super) produced: PathSet<DocId>,
    /// Those output by a build other than their own.
    pub(super) produced_by_other: PathSet<DocId>,
    /// A root whose own build fails cannot produce itself, so it is not
    /// found as a root; its failure is reported at the end.
    pub(super) failed: Vec<(DocId, Issue)>,
}

/// What a Flux Kustomization's render passes to those it applies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Inherited {
    /// Its postBuild substitution ran over them (Flux skips it without
    /// `postBuild` or when no variable is found), so a `${VAR}` still in
    /// them waits for a value only the cluster has.
    pub(crate) substituted: bool,
    /// The repository deploys a webhook that adds variables to every
    /// Flux Kustomization as the API server admits it
    /// ([`super::webhook`]): each substitutes, with variables the
    /// repository does not show.
    pub(crate) mutated: bool,
}

/// A kustomize build: the path, a Flux Kustomization's components, its
/// target namespace and its images, each with where it is written.
pub(super) type BuildKey = (PathKey, Vec<Placed>, Option<Placed>, Vec<Placed>);

/// What a build's cut ([`kustomize::Cut`]) is made of: the path and the
/// components of its [`BuildKey`].
pub(super) type CutKey = (PathKey, Vec<Placed>);

/// A build's result, with the kustomization directories it went through.
pub(super) type Building = (Result<kustomize::Built, Issue>, PathSet<PathBuf>);

/// A value a Flux Kustomization writes into a build, and where (file and
/// byte offset).
pub(super) type Placed = (String, FileId, u32);

/// ConfigMaps and Secrets by (kind, name), where postBuild variables come from.
pub(super) type LookupPool = PathMap<(String, String), Vec<Object>>;

/// Where a document is written: identifies a Flux Kustomization across
/// clusters of one repo, which reuse names such as `flux-system`.
pub(super) type DocId = (FileId, u32);

/// Objects by kind and name, in their order: the bootstrap steps look
/// ConfigMaps, Secrets and sources up once per candidate and per Flux
/// Kustomization, and a scan of every object each time was most of them.
pub(super) struct ByName<'a>(PathMap<(&'a str, &'a str), Vec<&'a Object>>);

impl<'a> ByName<'a> {
    pub(super) fn of(objects: impl Iterator<Item = &'a Object>) -> ByName<'a> {
        let mut by_name: PathMap<(&str, &str), Vec<&Object>> = PathMap::default();
        for o in objects {
            by_name.entry((o.kind(), o.name())).or_default().push(o);
        }
        ByName(by_name)
    }

    /// The first object of `kind` and `name` in `namespace`, or in none.
    pub(super) fn find(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Object> {
        self.0
            .get(&(kind, name))?
            .iter()
            .copied()
            .find(|o| o.namespace().unwrap_or(namespace) == namespace)
    }
}

/// A Flux Kustomization's identity: namespace and name.
pub(super) fn ks_id(ks: &Object) -> KsId {
    (
        ks.namespace().unwrap_or("").to_string(),
        ks.name().to_string(),
    )
}

/// The Flux Kustomizations that those in `objects` wait for. An entry
/// without a namespace is in the waiting one's (fluxcd/pkg
/// `apis/meta` `NamespacedObjectReference`: "when not specified it acts as
/// LocalObjectReference").
pub(super) fn awaited(objects: &[Object]) -> PathSet<KsId> {
    objects
        .iter()
        .filter(|o| is_flux_ks(o))
        .flat_map(|ks| {
            let own = ks.namespace().unwrap_or("");
            ks.root
                .path(&["spec", "dependsOn"])
                .and_then(|n| n.as_seq())
                .into_iter()
                .flatten()
                .filter_map(move |d| {
                    let name = d.str_at(&["name"])?;
                    Some((
                        d.str_at(&["namespace"]).unwrap_or(own).to_string(),
                        name.to_string(),
                    ))
                })
        })
        .collect()
}

pub(super) fn doc_id(o: &Object) -> DocId {
    (o.file, o.doc_index)
}

/// Identity of a Flux Kustomization found in `parent`'s output: one
/// written without a namespace lands in its parent's.
pub(super) fn child_id(parent: &Object, child: &Object) -> KsId {
    let ns = child.namespace().or(parent.namespace()).unwrap_or("");
    (ns.to_string(), child.name().to_string())
}

impl FluxTree {
    pub(super) fn new(
        written: Vec<Object>,
        artifacts: Artifacts,
        layer: &'static dyn BuildLayer,
    ) -> FluxTree {
        FluxTree {
            layer,
            written,
            builds: PathMap::default(),
            uses: PathMap::default(),
            prebuilt: PathMap::default(),
            cuts: PathMap::default(),
            keys: PathMap::default(),
            output: Vec::new(),
            first_tree: PathMap::default(),
            joined: PathMap::default(),
            local_sources: BTreeMap::new(),
            source_roots: PathMap::default(),
            trees: 0,
            tree_files: PathSet::default(),
            subst_budget: None,
            mutated: false,
            renders: Vec::new(),
            artifacts,
            local: PathSet::default(),
            foreign: PathSet::default(),
            by_hand_files: PathMap::default(),
            stray: PathSet::default(),
            guessed_roots: Vec::new(),
            build_dirs: PathMap::default(),
            rendered_dirs: PathSet::default(),
            unapplied: Vec::new(),
            moved: PathMap::default(),
        }
    }

    pub(super) fn render_all(
        &mut self,
        files: &mut Files,
        config_sources: &[Object],
        bootstrap: Vec<Object>,
        issues: &mut Vec<Issue>,
    ) {
        // Roots are the Kustomizations no other one produces: one
        // flux-system per cluster, which produces itself (flux bootstrap's
        // gotk-sync.yaml: fluxcd/flux2 pkg/manifestgen/sync `Generate`
        // writes it to <target path>/flux-system/ with `spec.path` the
        // target path, so the build of that path holds it), or the one
        // flux-operator makes for a FluxInstance, which no file holds
        // (flux::bootstrap). kustomize-controller builds the path's own
        // kustomization.yaml when there is one, else generates one
        // (fluxcd/pkg kustomize/kustomize_generator.go
        // `findOrGenerateKustomization`, kustomize::build_flux_path).
        let mut seen = Produced::default();
        let mut written = std::mem::take(&mut self.written);
        // Sync Kustomizations from the bootstrap objects as written first,
        // to know which sources are this repository; again from what the
        // builds made of them (a namespace set by a kustomization).
        let synced = Self::synced(files, &written, &bootstrap, config_sources, &mut Vec::new());
        written.extend(synced.iter().cloned());
        self.find_local_sources(files, &written, issues);
        written.retain(|ks| !synced.contains(ks));
        let keys = self.build_each(files, &written, &mut seen);
        // Without a candidate anywhere, the built inputs would only be
        // sources and ConfigMaps nothing looks up: copying them (namespaced,
        // substituted) cost a large repo a copy of every HelmRelease and
        // values ConfigMap.
        let may_sync = crate::source::flux::bootstrap::may_sync;
        let any_candidate = bootstrap.iter().any(may_sync)
            || self
                .builds
                .values()
                .flatten()
                .any(|b| b.objects.iter().any(may_sync));
        let mut built = if any_candidate {
            self.built_bootstrap_inputs(files, (&written, keys), &bootstrap, config_sources)
        } else {
            Vec::new()
        };
        // Moved, not copied: rendering changes these objects (a target
        // namespace, substitution), and a second holder of one would make
        // each such change copy it whole.
        built.extend(bootstrap);
        let synced = Self::synced(files, &written, &built, config_sources, issues);
        // Freed on a worker when the run uses every core: the workers are
        // idle until the builds below.
        crate::cores::drop_later(built);
        self.find_local_sources(files, &synced, issues);
        self.build_each(files, &synced, &mut seen);
        let Produced {
            produced,
            produced_by_other,
            failed,
        } = seen;
        let synced_ids: PathSet<DocId> = synced.iter().map(doc_id).collect();
        written.extend(synced);
        let by_hand = applied_by_hand(
            self.layer,
            files,
            &written,
            &produced,
            &mut self.by_hand_files,
        );
        self.written = written;
        // A file under a kustomization.yaml that no build includes is not
        // applied by anything (left out on purpose, commented out of a
        // resources list): it is no root.
        let listed_or_loose = |ks: &Object, files: &Files| {
            synced_ids.contains(&doc_id(ks))
                || by_hand.contains(&doc_id(ks))
                || produced.contains(&doc_id(ks))
                || !files
                    .sources
                    .path(ks.file)
                    .ancestors()
                    .skip(1)
                    .any(|dir| kustomize::has_kustomization(files, dir))
        };
        // Substitution sources are looked up among everything built, before
        // substitution, as Flux reads them from the cluster.
        // Files no Kustomization builds count too: bootstrap tools (flux-operator's
        // FluxInstance, scripts) apply cluster settings from plain files.
        let wanted = self.substitute_from_names();
        let looked_for = |o: &Object| {
            crate::source::data::provides(o)
                .is_some_and(|(_, name)| wanted.as_ref().is_none_or(|w| w.contains(name)))
        };
        // In build-key order, not the map's (random per process): the
        // lookup breaks ties by position, and the output must not change
        // from one run to the next. Only the builds that hold a source
        // are sorted: sorting every build's key (compared by its path's
        // components) was 3.6 % of the main thread at 10k objects, where
        // few builds hold one.
        let mut builds: Vec<(Vec<u8>, &BuildKey, Vec<&Object>)> = self
            .builds
            .iter()
            .filter_map(|(key, build)| {
                let objects = &build.as_ref().ok()?.objects;
                let found: Vec<&Object> = objects.iter().filter(|o| looked_for(o)).collect();
                (!found.is_empty()).then(|| (key.0.order_bytes(), key, found))
            })
            .collect();
        builds.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)));
        let pooled: Vec<Object> = builds
            .into_iter()
            .flat_map(|(_, _, found)| found)
            .cloned()
            .collect();
        let mut lookup_pool = LookupPool::default();
        // A moved tree's settings are applied by nothing either.
        let moved_dirs: PathSet<&Path> = self.moved.values().map(|m| m.path.as_path()).collect();
        let moved_away = |o: &Object| {
            !moved_dirs.is_empty()
                && files
                    .sources
                    .path(o.file)
                    .ancestors()
                    .any(|d| moved_dirs.contains(d))
        };
        let config_sources = config_sources
            .iter()
            .filter(|o| looked_for(o) && !moved_away(o))
            .cloned();
        for o in pooled.into_iter().chain(config_sources) {
            // Keyed by what the cluster will hold: a SealedSecret or an
            // ExternalSecret stands for the Secret it makes.
            if let Some((kind, name)) = crate::source::data::provides(&o) {
                lookup_pool
                    .entry((kind.to_string(), name.to_string()))
                    .or_default()
                    .push(o);
            }
        }
        let mut rendered: PathSet<DocId> = PathSet::default();
        let roots: Vec<Object> = self
            .written
            .iter()
            .filter(|ks| {
                synced_ids.contains(&doc_id(ks))
                    || (!produced_by_other.contains(&doc_id(ks)) && listed_or_loose(ks, files))
            })
            .cloned()
            .collect();
        // A moved tree's Kustomization is applied only when a rendered one
        // waits for it, as a loose one.
        let (roots, moved_roots): (Vec<Object>, Vec<Object>) = roots
            .into_iter()
            .partition(|ks| !self.moved.contains_key(&doc_id(ks)));
        // A root that produces itself is flux bootstrap's gotk-sync.yaml.
        let self_started = |ks: &&Object| {
            let id = doc_id(ks);
            synced_ids.contains(&id) || produced.contains(&id)
        };
        let bootstrapped = |ks: &&Object| self_started(ks) || by_hand.contains(&doc_id(ks));
        if let Some(first) = roots.first()
            && !roots.iter().any(|ks| bootstrapped(&ks))
        {
            issues.push(Issue::file(
                files.sources.path(first.file),
                format!(
                    "no Flux Kustomization here is how the cluster is bootstrapped (flux \
                     bootstrap's gotk-sync.yaml, which applies itself; a FluxInstance or a \
                     flux-instance HelmRelease with sync; one listed by a top-level \
                     kustomization.yaml applied with kubectl apply -k): each of the {} that \
                     no other one applies is rendered as a root",
                    roots.len()
                ),
            ));
        }
        // With the cluster's bootstrap in view (a Kustomization that
        // applies itself, or a FluxInstance's), another candidate root (a
        // loose Flux Kustomization, in no kustomization and listed by none;
        // one a top-level kustomization lists) is only applied when
        // something waits for it: one a rendered Kustomization names in
        // `dependsOn` is applied by hand or a script, else that one would
        // wait forever. The rest are retired or switched off (an
        // `_archive/` tree, an entry commented out of a list): rules must
        // not read them as the cluster's.
        let started = if roots.iter().any(|ks| self_started(&ks)) {
            Some(&self_started as &dyn Fn(&&Object) -> bool)
        } else if roots.iter().any(|ks| bootstrapped(&ks)) {
            Some(&bootstrapped as &dyn Fn(&&Object) -> bool)
        } else {
            None
        };
        let (mut roots, mut loose): (Vec<Object>, Vec<Object>) = match started {
            Some(started) => roots.into_iter().partition(|ks| started(&ks)),
            None => (roots, Vec::new()),
        };
        loose.extend(moved_roots);
        // Only what each round added is read for what it waits for, and
        // the loose ones are found by identity: a chain of loose
        // Kustomizations, each rendered only because the one before
        // waits for it, takes one round each, and scanning the whole
        // output and every loose one per round was quadratic in it.
        let mut loose: Vec<Option<Object>> = loose.into_iter().map(Some).collect();
        let mut by_id: PathMap<KsId, Vec<usize>> = PathMap::default();
        for (i, ks) in loose.iter().enumerate() {
            if let Some(ks) = ks {
                by_id.entry(ks_id(ks)).or_default().push(i);
            }
        }
        let mut seen = 0;
        while !roots.is_empty() {
            for root in std::mem::take(&mut roots) {
                self.render_tree(files, root, &lookup_pool, &mut rendered, issues);
            }
            let mut woken: Vec<usize> = awaited(&self.output[seen..])
                .into_iter()
                .filter_map(|id| by_id.remove(&id))
                .flatten()
                .collect();
            seen = self.output.len();
            // In the order they were found, as every round before.
            woken.sort_unstable();
            roots.extend(woken.into_iter().filter_map(|i| loose[i].take()));
        }
        let loose: Vec<Object> = loose.into_iter().flatten().collect();
        // A top-level kustomization none of whose Flux Kustomizations is
        // applied is not applied by hand either.
        let top_of = |ks: &Object| self.by_hand_files.get(&ks.file).cloned();
        let applied_tops: PathSet<PathBuf> = self
            .written
            .iter()
            .filter(|ks| rendered.contains(&doc_id(ks)))
            .filter_map(top_of)
            .collect();
        let stray_tops: PathSet<PathBuf> = loose
            .iter()
            .filter_map(top_of)
            .filter(|top| !applied_tops.contains(top))
            .collect();
        self.by_hand_files
            .retain(|_, top| !stray_tops.contains(top));
        self.stray.extend(loose.iter().map(|ks| ks.file));
        // Kustomizations only reachable through a cycle: render them as
        // written so nothing is silently dropped.
        while let Some(ks) = self
            .written
            .iter()
            .find(|ks| {
                !rendered.contains(&doc_id(ks))
                    && !self.stray.contains(&ks.file)
                    && listed_or_loose(ks, files)
            })
            .cloned()
        {
            self.render_tree(files, ks, &lookup_pool, &mut rendered, issues);
        }
        // Every render is made: freed on a worker when the run uses every
        // core.
        crate::cores::drop_later(std::mem::take(&mut self.cuts));
        self.unapplied = self
            .written
            .iter()
            .filter(|ks| !rendered.contains(&doc_id(ks)) && self.local.contains(&source_of(ks)))
            .filter_map(|ks| {
                // Written without a namespace, it gets one only from what
                // would apply it, which nothing does.
                let id = match ks_id(ks) {
                    (namespace, name) if namespace.is_empty() => name,
                    (namespace, name) => format!("{namespace}/{name}"),
                };
                let moved = self.moved.get(&doc_id(ks));
                let path = match moved {
                    Some(m) => m.path.clone(),
                    None => self.ks_path_text(files, ks)?,
                };
                Some(Unapplied {
                    id,
                    file: files.sources.path(ks.file).to_path_buf(),
                    line: ks.root.span().line,
                    path,
                    moved: moved.map(|m| m.why.clone()),
                })
            })
            .collect();
        for (id, issue) in failed {
            if !rendered.contains(&id) && !issues.contains(&issue) {
                issues.push(issue);
            }
        }
        issues.append(&mut self.guessed_roots);
    }

    /// Every name a Flux Kustomization, as written or as a build makes it,
    /// gives in `spec.postBuild.substituteFrom`: the only keys the renders
    /// look up in the lookup pool, so the pool needs no copy of any other
    /// ConfigMap or Secret (at 100k objects, 20,000 values ConfigMaps,
    /// each copied and namespaced per build, 7 % of the load's serial
    /// part). `None` (pool everything) when a name may still change after
    /// the build: it holds a `${` a parent's substitution fills in, or a
    /// Kustomization has `spec.patches`, which may patch a child's.
    pub(super) fn substitute_from_names(&self) -> Option<PathSet<&str>> {
        let built = self.builds.values().flatten().flat_map(|b| &b.objects);
        let mut names = PathSet::default();
        for ks in self.written.iter().chain(built.filter(|o| is_flux_ks(o))) {
            if ks.root.path(&["spec", "patches"]).is_some() {
                return None;
            }
            let from = ks.root.path(&["spec", "postBuild", "substituteFrom"]);
            for entry in from.and_then(Node::as_seq).into_iter().flatten() {
                let name = entry.str_at(&["name"]).unwrap_or("");
                if name.contains('$') {
                    return None;
                }
                names.insert(name);
            }
        }
        Some(names)
    }
}

/// Flux Kustomizations applied by hand (`kubectl apply -k D`, the way
/// flux-operator's and older bootstrap guides start a cluster): listed by
/// a top-level kustomization `D` (under no other kustomization) that no
/// Flux Kustomization builds.
pub(super) fn applied_by_hand(
    layer: &dyn BuildLayer,
    files: &mut Files,
    written: &[Object],
    produced: &PathSet<DocId>,
    by_hand_files: &mut PathMap<FileId, PathBuf>,
) -> PathSet<DocId> {
    let mut tops: Vec<PathBuf> = Vec::new();
    for ks in written.iter().filter(|ks| !produced.contains(&doc_id(ks))) {
        let path = files.sources.path(ks.file).to_path_buf();
        if let Some(top) = path
            .ancestors()
            .skip(1)
            .filter(|d| kustomize::has_kustomization(files, d))
            .last()
            .filter(|d| !files.built_dirs.contains(*d))
            && !tops.iter().any(|t| t == top)
        {
            tops.push(top.to_path_buf());
        }
    }
    // Looking is no build of Flux's: what it reads decides no file's fate.
    let (built_dirs, inputs) = (files.built_dirs.clone(), files.inputs.clone());
    let mut out = PathSet::default();
    for top in tops {
        if let Ok(built) =
            super::render::build(layer, files, &top, &FluxInputs::default(), Cutting::No)
        {
            let roots: Vec<DocId> = built
                .objects
                .iter()
                .filter(|o| is_flux_ks(o))
                .map(doc_id)
                .collect();
            if !roots.is_empty() {
                by_hand_files.extend(built.objects.iter().map(|o| (o.file, top.clone())));
            }
            out.extend(roots);
        }
    }
    (files.built_dirs, files.inputs) = (built_dirs, inputs);
    out
}
