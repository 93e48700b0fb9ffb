//! Loading a whole GitOps repository the way Flux would apply it.
//!
//! Flux starts from its own Kustomization (`flux-system`), builds its path,
//! finds more Flux Kustomizations in the output and builds those in turn,
//! each with its own `targetNamespace`, `patches` and postBuild variables.
//! We follow the same tree from the repo alone. Manifests no Flux
//! Kustomization reaches are still loaded as they are written.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::coverage::{Coverage, Fate, FileFate, FluxRender, Outcome, lost_under};
use super::files::{Gap, Input};
use super::flux::artifact::Artifacts;
use super::flux::substitute::{collect_vars, is_disabled, substitute};
use super::reuse::{self, Lookup, RenderInputs, RenderKey, RenderOutputs, Steps};
use super::{Files, Issue, Object, StepKind, join_within, kustomize};
use crate::yaml::{FileId, Limits, Node, SourceMap, Span};

/// A file that holds nothing to lint, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// The loaded repository.
pub struct Repo {
    pub files: Files,
    pub objects: Vec<Object>,
    /// Problems with single inputs; the rest of the repo still loaded.
    pub issues: Vec<Issue>,
    pub skipped: Vec<Skipped>,
    /// `kind/name` of the Flux sources that are this repository (those
    /// the root Flux Kustomizations build from), with the directory of the
    /// repository that is the source's root (`""`, or e.g. `kubernetes`
    /// for an OCI artifact pushed from there).
    pub local_sources: BTreeMap<String, PathBuf>,
    /// What became of each Flux Kustomization.
    pub flux: Vec<FluxRender>,
    /// The fate of every YAML file, in path order.
    pub fates: Vec<FileFate>,
    pub coverage: Coverage,
}

impl Repo {
    /// Looks an object up by group, kind, namespace and name. Namespace
    /// `None` matches cluster-scoped objects and objects written without
    /// one.
    pub fn find(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<&Object> {
        find_in(&self.objects, group, kind, namespace, name)
    }
}

fn find_in<'a>(
    objects: &'a [Object],
    group: &str,
    kind: &str,
    namespace: Option<&str>,
    name: &str,
) -> Option<&'a Object> {
    objects.iter().find(|o| {
        o.is(group, kind) && o.name() == name && (namespace.is_none() || o.namespace() == namespace)
    })
}

const FLUX_KS_GROUP: &str = "kustomize.toolkit.fluxcd.io";
const ARTIFACT_GROUP: &str = "source.extensions.fluxcd.io";

/// Objects a sync Kustomization may come from (flux-operator's
/// FluxInstance, a HelmRelease of its chart), and the chart sources a
/// HelmRelease names.
fn is_bootstrap_input(group: &str, kind: &str) -> bool {
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

fn is_flux_ks(o: &Object) -> bool {
    o.is(FLUX_KS_GROUP, "Kustomization")
}

/// `(namespace, name)` of a Flux Kustomization.
type KsId = (String, String);

/// Loads every YAML file under `root` and renders the Flux tree.
pub fn load(root: &Path, limits: Limits) -> Repo {
    load_files(Files::new(root, limits))
}

/// [`load`] with some files' texts replaced (a fix's edits, checked
/// before they are written).
pub fn load_overlaid(
    root: &Path,
    limits: Limits,
    overlay: std::collections::HashMap<PathBuf, String>,
) -> Repo {
    load_files(Files::with_overlay(root, limits, overlay))
}

/// Loads every YAML file of `files` (the disk, or a commit's tree) and
/// renders the Flux tree.
pub fn load_files(mut files: Files) -> Repo {
    let (paths, mut issues) = files.yaml_files();
    files.preload(&paths);
    let mut skipped = Vec::new();

    // Every file as written: documents that are Kubernetes objects. Only
    // what rendering looks up (Flux Kustomizations, and the ConfigMaps and
    // Secrets postBuild variables come from) is copied now; objects are
    // made of the rest at the end, for the files no Flux Kustomization
    // reaches, so that a large repo is not held twice while it renders.
    let mut looked_up: Vec<Object> = Vec::new();
    let mut git_repos: Vec<Object> = Vec::new();
    // Files that do not parse, and their issue: said again once the builds
    // know which are only a generator's data.
    let mut unparsed: Vec<(PathBuf, usize)> = Vec::new();
    let mut object_docs: Vec<(&PathBuf, FileId, Vec<usize>)> = Vec::new();
    for path in &paths {
        let parsed = match files.documents(path) {
            Ok(p) => p,
            Err(issue) => {
                skipped.push(Skipped {
                    path: path.clone(),
                    reason: skip_reason(&files, path, &issue),
                });
                if !looks_like_template(&files, path) {
                    unparsed.push((path.clone(), issues.len()));
                    issues.push(issue);
                }
                continue;
            }
        };
        let mut any = false;
        let mut docs = Vec::new();
        for (i, doc) in parsed.docs.iter().enumerate() {
            if !Object::looks_like_object(doc) {
                continue;
            }
            any = true;
            let group = doc
                .str_at(&["apiVersion"])
                .and_then(|v| v.rsplit_once('/'))
                .map_or("", |(g, _)| g);
            let kind = doc.str_at(&["kind"]).unwrap_or("");
            // kustomization.yaml files are configuration, read when their
            // directory is built.
            if group == "kustomize.config.k8s.io" {
                continue;
            }
            docs.push(i);
            if (group == FLUX_KS_GROUP && kind == "Kustomization")
                || (group.is_empty() && matches!(kind, "ConfigMap" | "Secret"))
                || (group == ARTIFACT_GROUP && kind == "ArtifactGenerator")
            {
                looked_up.push(Object::new(doc.clone(), parsed.file, i));
            } else if group == "source.toolkit.fluxcd.io" && kind == "GitRepository" {
                git_repos.push(Object::new(doc.clone(), parsed.file, i));
            } else if is_bootstrap_input(group, kind) {
                // Held apart from the render, an object is copied whole when
                // the render changes it: keep only what bootstrap reads.
                let o = Object::new(doc.clone(), parsed.file, i);
                if kind != "HelmRelease" || crate::source::flux::bootstrap::may_sync(&o) {
                    looked_up.push(o);
                }
            }
        }
        if !docs.is_empty() {
            object_docs.push((path, parsed.file, docs));
        }
        if !any && !is_kustomization_file(path) {
            skipped.push(Skipped {
                path: path.clone(),
                reason: "no Kubernetes object in it (no apiVersion and kind)".into(),
            });
        }
    }

    let (written_ks, config_sources): (Vec<Object>, Vec<Object>) =
        looked_up.into_iter().partition(is_flux_ks);
    let (generators, config_sources): (Vec<Object>, Vec<Object>) = config_sources
        .into_iter()
        .partition(|o| o.is(ARTIFACT_GROUP, "ArtifactGenerator"));
    let (bootstrap, config_sources): (Vec<Object>, Vec<Object>) = config_sources
        .into_iter()
        .partition(|o| is_bootstrap_input(o.group(), o.kind()));
    let mut flux = FluxTree::new(written_ks, Artifacts::from_generators(&generators));
    flux.foreign = crate::source::flux::foreign::foreign_git_sources(&git_repos, &bootstrap);
    drop(git_repos);
    flux.render_all(&mut files, &config_sources, bootstrap, &mut issues);
    for (path, at) in unparsed {
        if let Some((Input::GeneratorInput, by)) = files.inputs.get(path.as_path()) {
            issues[at].message.push_str(&format!(
                " (only data that {} generates a ConfigMap or Secret from: kustomize and Flux \
                 copy it as text, so their build does not fail, but a program that reads it as \
                 YAML does)",
                by.display()
            ));
        }
    }
    drop(config_sources);

    // Plain objects: what no Flux Kustomization reached.
    let mut objects = std::mem::take(&mut flux.output);
    // In a Flux repo, a file under a kustomization that no Flux
    // Kustomization builds is not applied (a component's template, an
    // app left out of its parent's resources): loading it as written
    // would show rules `${APP}` objects that never exist.
    let flux_repo = flux.trees > 0;
    let local_sources = std::mem::take(&mut flux.local_sources);
    let renders = std::mem::take(&mut flux.renders);
    let by_hand_files = std::mem::take(&mut flux.by_hand_files);
    let stray = std::mem::take(&mut flux.stray);
    let rendered_dirs = std::mem::take(&mut flux.rendered_dirs);
    let rendered_by = rendered_by(&objects, &renders);
    drop(flux);
    let mut fates: Vec<FileFate> = Vec::new();
    for (path, file, docs) in object_docs {
        if let Some((by, complete)) = rendered_by.get(&file) {
            fates.push(FileFate {
                path: path.clone(),
                fate: Fate::Rendered {
                    by: by.clone(),
                    complete: *complete,
                },
            });
            continue;
        }
        let kustomization = path
            .ancestors()
            .skip(1)
            .find(|d| kustomize::has_kustomization(&files, d));
        let loaded = by_hand_files
            .get(&file)
            .map_or(Fate::AsWritten, |top| Fate::ByHand {
                kustomization: top.join("kustomization.yaml"),
            });
        let unapplied = if matches!(loaded, Fate::ByHand { .. }) {
            None
        } else if let Some((role, by)) = files.inputs.get(path.as_path()) {
            Some(Fate::Input {
                role: *role,
                by: by.clone(),
            })
        } else {
            match kustomization.filter(|_| flux_repo) {
                Some(_) if let Some((by, why)) = lost_under(&renders, path) => {
                    Some(Fate::Lost { by, why })
                }
                Some(dir) if rendered_dirs.contains(dir) => Some(Fate::NotListed {
                    kustomization: dir.join("kustomization.yaml"),
                }),
                Some(dir) => Some(Fate::Unreachable {
                    kustomization: dir.join("kustomization.yaml"),
                }),
                None if stray.contains(&file) => Some(Fate::Stray),
                None => None,
            }
        };
        if let Some(fate) = unapplied {
            skipped.push(Skipped {
                path: path.clone(),
                reason: fate.reason(),
            });
            fates.push(FileFate {
                path: path.clone(),
                fate,
            });
            continue;
        }
        fates.push(FileFate {
            path: path.clone(),
            fate: loaded,
        });
        // Parsed once already: taking the documents again cannot fail.
        let Ok(parsed) = files.take_documents(path) else {
            continue;
        };
        objects.extend(
            parsed
                .docs
                .into_iter()
                .enumerate()
                .filter(|(i, _)| docs.binary_search(i).is_ok())
                .map(|(i, doc)| Object::new(doc, file, i)),
        );
    }
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    // Files without objects: their fate is what they were skipped for, or
    // what a kustomization read them as.
    let with_objects: HashSet<PathBuf> = fates.iter().map(|f| f.path.clone()).collect();
    // A generator's input reaches the rules in what it generates.
    skipped.retain(|s| !files.inputs.contains_key(&s.path));
    for path in paths.iter().filter(|p| !with_objects.contains(*p)) {
        let fate =
            if let Some((role, by)) = files.inputs.get(path.as_path()) {
                Fate::Input {
                    role: *role,
                    by: by.clone(),
                }
            } else if is_kustomization_file(path) {
                Fate::Kustomization
            } else if let Some(s) = skipped.iter().find(|s| &s.path == path).filter(|s| {
                s.reason.starts_with("not loadable") || s.reason.starts_with("template")
            }) {
                Fate::Unloadable(s.reason.clone())
            } else {
                Fate::NoObject
            };
        fates.push(FileFate {
            path: path.clone(),
            fate,
        });
    }
    fates.sort_by(|a, b| a.path.cmp(&b.path));
    let coverage = Coverage::of(&fates, &renders);
    files.release_parsed();
    Repo {
        files,
        objects,
        issues,
        skipped,
        local_sources,
        flux: renders,
        fates,
        coverage,
    }
}

fn is_kustomization_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| {
        kustomize::KUSTOMIZATION_FILES
            .iter()
            .any(|k| n.to_str() == Some(*k))
    })
}

/// Files rendered through a Flux Kustomization: the first one that
/// rendered each, and whether it rendered completely.
fn rendered_by(objects: &[Object], renders: &[FluxRender]) -> HashMap<FileId, (String, bool)> {
    // Renders by (tree, `namespace/name`), the first of each kept: a scan
    // of every render per file made large repos quadratic.
    let mut by_key: HashMap<(u32, String), &FluxRender> = HashMap::new();
    for r in renders {
        by_key
            .entry((r.tree, format!("{}/{}", r.namespace, r.name)))
            .or_insert(r);
    }
    let mut out = HashMap::new();
    for o in objects {
        let Some(step) = o
            .chain
            .first()
            .filter(|s| s.kind == StepKind::FluxKustomization)
        else {
            continue;
        };
        out.entry(o.file).or_insert_with(|| {
            let complete = o
                .tree
                .and_then(|tree| by_key.get(&(tree, step.detail.clone())))
                .is_none_or(|r| r.outcome.is_complete());
            (step.detail.clone(), complete)
        });
    }
    out
}

fn looks_like_template(files: &Files, path: &Path) -> bool {
    files
        .sources
        .find(path)
        .is_some_and(|id| files.sources.get(id).text.contains("{{"))
}

fn skip_reason(files: &Files, path: &Path, issue: &Issue) -> String {
    if looks_like_template(files, path) {
        format!("template, not YAML ({issue})")
    } else {
        format!("not loadable: {issue}")
    }
}

/// The Flux Kustomizations of the repo and what they render to.
struct FluxTree {
    /// Flux Kustomizations as written in files.
    written: Vec<Object>,
    /// kustomize output per path, before any Flux step: several Flux
    /// Kustomizations may build one path.
    builds: HashMap<BuildKey, Result<kustomize::Built, Issue>>,
    /// Renders still to come per build, counted when the roots are found.
    uses: HashMap<BuildKey, usize>,
    output: Vec<Object>,
    /// `kind/name` of the sources the root Kustomizations build from:
    /// the ones that are this repository, with their root directory.
    local_sources: BTreeMap<String, PathBuf>,
    /// Root directory of every source seen, local or not.
    source_roots: HashMap<String, PathBuf>,
    /// Number of trees rendered so far (one per root).
    trees: u32,
    /// Files of the objects the tree being rendered has applied so far:
    /// one root is one cluster, whose substituteFrom sources are its own.
    tree_files: HashSet<FileId>,
    /// What postBuild substitution may still spend in this run.
    subst_budget: Option<crate::source::flux::Budget>,
    /// What became of each Flux Kustomization met while rendering.
    renders: Vec<FluxRender>,
    /// ExternalArtifacts that ArtifactGenerators make from sources here.
    artifacts: Artifacts,
    /// `kind/name` of the sources that are this repository (or artifacts
    /// made from it): only their Flux Kustomizations are built from here.
    local: HashSet<String>,
    /// GitRepositories whose URL is not the one the bootstrap syncs: never
    /// this repository, whatever their paths ([`crate::source::flux::foreign`]).
    foreign: HashSet<String>,
    /// Files of the top-level kustomizations applied by hand that list a
    /// root, with that kustomization's directory.
    by_hand_files: HashMap<FileId, PathBuf>,
    /// Files of loose Flux Kustomizations that nothing applies.
    stray: HashSet<FileId>,
    /// One issue per source whose root is guessed away from the
    /// repository root.
    guessed_roots: Vec<Issue>,
    /// The kustomization directories each build went through.
    build_dirs: HashMap<BuildKey, HashSet<PathBuf>>,
    /// The kustomization directories of the builds rendered: a file a
    /// kustomization elsewhere lists is unreachable, not left out of it.
    rendered_dirs: HashSet<PathBuf>,
}

/// What the builds of the written Flux Kustomizations produced.
#[derive(Default)]
struct Produced {
    /// Flux Kustomizations some build outputs.
    produced: HashSet<DocId>,
    /// Those output by a build other than their own.
    produced_by_other: HashSet<DocId>,
    /// A root whose own build fails cannot produce itself, so it is not
    /// found as a root; its failure is reported at the end.
    failed: Vec<(DocId, Issue)>,
}

/// What a Flux Kustomization's render passes to those it applies.
#[derive(Clone, Copy, Default)]
struct Inherited {
    /// Variables were left unresolved in them (in its patches, say):
    /// text that looks undefined there may have been replaced here.
    unknowns: bool,
    /// Its postBuild substitution ran over them (Flux skips it without
    /// `postBuild` or when no variable is found), so a `${VAR}` still in
    /// them waits for a value only the cluster has.
    substituted: bool,
}

/// A kustomize build: the path and a Flux Kustomization's components.
type BuildKey = (PathBuf, Vec<String>);

/// The `targetNamespace` a Flux Kustomization sets, and where.
type Placed = Option<(String, Span)>;

/// ConfigMaps and Secrets by (kind, name), where postBuild variables come from.
type LookupPool = HashMap<(String, String), Vec<Object>>;

/// Where a document is written: identifies a Flux Kustomization across
/// clusters of one repo, which reuse names such as `flux-system`.
type DocId = (FileId, usize);

/// Objects by kind and name, in their order: the bootstrap steps look
/// ConfigMaps, Secrets and sources up once per candidate and per Flux
/// Kustomization, and a scan of every object each time was most of them.
struct ByName<'a>(HashMap<(&'a str, &'a str), Vec<&'a Object>>);

impl<'a> ByName<'a> {
    fn of(objects: impl Iterator<Item = &'a Object>) -> ByName<'a> {
        let mut by_name: HashMap<(&str, &str), Vec<&Object>> = HashMap::new();
        for o in objects {
            by_name.entry((o.kind(), o.name())).or_default().push(o);
        }
        ByName(by_name)
    }

    /// The first object of `kind` and `name` in `namespace`, or in none.
    fn find(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Object> {
        self.0
            .get(&(kind, name))?
            .iter()
            .copied()
            .find(|o| o.namespace().unwrap_or(namespace) == namespace)
    }
}

/// A Flux Kustomization's identity: namespace and name.
fn ks_id(ks: &Object) -> KsId {
    (
        ks.namespace().unwrap_or("").to_string(),
        ks.name().to_string(),
    )
}

/// The Flux Kustomizations that those in `objects` wait for. An entry
/// without a namespace is in the waiting one's (fluxcd/pkg
/// `apis/meta` `NamespacedObjectReference`: "when not specified it acts as
/// LocalObjectReference").
fn awaited(objects: &[Object]) -> HashSet<KsId> {
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

fn doc_id(o: &Object) -> DocId {
    (o.file, o.doc_index)
}

impl FluxTree {
    fn new(written: Vec<Object>, artifacts: Artifacts) -> FluxTree {
        FluxTree {
            written,
            builds: HashMap::new(),
            uses: HashMap::new(),
            output: Vec::new(),
            local_sources: BTreeMap::new(),
            source_roots: HashMap::new(),
            trees: 0,
            tree_files: HashSet::new(),
            subst_budget: None,
            renders: Vec::new(),
            artifacts,
            local: HashSet::new(),
            foreign: HashSet::new(),
            by_hand_files: HashMap::new(),
            stray: HashSet::new(),
            guessed_roots: Vec::new(),
            build_dirs: HashMap::new(),
            rendered_dirs: HashSet::new(),
        }
    }

    fn render_all(
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
        self.build_each(files, &written, &mut seen);
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
            self.built_bootstrap_inputs(files, &written, config_sources)
        } else {
            Vec::new()
        };
        // Moved, not copied: rendering changes these objects (a target
        // namespace, substitution), and a second holder of one would make
        // each such change copy it whole.
        built.extend(bootstrap);
        let synced = Self::synced(files, &written, &built, config_sources, issues);
        drop(built);
        self.find_local_sources(files, &synced, issues);
        self.build_each(files, &synced, &mut seen);
        let Produced {
            produced,
            produced_by_other,
            failed,
        } = seen;
        let synced_ids: HashSet<DocId> = synced.iter().map(doc_id).collect();
        written.extend(synced);
        let by_hand = applied_by_hand(files, &written, &produced, &mut self.by_hand_files);
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
        // In build-key order, not the map's (random per process): the
        // lookup breaks ties by position, and the output must not change
        // from one run to the next.
        let placed = self.placed_namespaces(files);
        let mut builds: Vec<_> = self.builds.iter().collect();
        builds.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let wanted = self.substitute_from_names();
        let looked_for = |o: &Object| {
            crate::source::flux::data::provides(o)
                .is_some_and(|(_, name)| wanted.as_ref().is_none_or(|w| w.contains(name)))
        };
        let mut pooled: Vec<Object> = Vec::new();
        for (key, build) in builds {
            let Ok(build) = build else { continue };
            let providers = || build.objects.iter().filter(|o| looked_for(o)).cloned();
            let targets = placed.get(key).map_or(&[None][..], Vec::as_slice);
            for target in targets {
                let mut objs: Vec<Object> = providers().collect();
                if let Some((ns, span)) = target {
                    // A conflict is reported when the Kustomization renders.
                    let _ = kustomize::set_namespace(files, &mut objs, ns, *span);
                }
                pooled.extend(objs);
            }
        }
        let mut lookup_pool = LookupPool::new();
        let config_sources = config_sources.iter().filter(|o| looked_for(o)).cloned();
        for o in pooled.into_iter().chain(config_sources) {
            // Keyed by what the cluster will hold: a SealedSecret or an
            // ExternalSecret stands for the Secret it makes.
            if let Some((kind, name)) = crate::source::flux::data::provides(&o) {
                lookup_pool
                    .entry((kind.to_string(), name.to_string()))
                    .or_default()
                    .push(o);
            }
        }
        let mut rendered: HashSet<DocId> = HashSet::new();
        let roots: Vec<Object> = self
            .written
            .iter()
            .filter(|ks| {
                synced_ids.contains(&doc_id(ks))
                    || (!produced_by_other.contains(&doc_id(ks)) && listed_or_loose(ks, files))
            })
            .cloned()
            .collect();
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
        while !roots.is_empty() {
            for root in std::mem::take(&mut roots) {
                self.render_tree(files, root, &lookup_pool, &mut rendered, issues);
            }
            let awaited = awaited(&self.output);
            (roots, loose) = loose
                .into_iter()
                .partition(|ks| awaited.contains(&ks_id(ks)));
        }
        // A top-level kustomization none of whose Flux Kustomizations is
        // applied is not applied by hand either.
        let top_of = |ks: &Object| self.by_hand_files.get(&ks.file).cloned();
        let applied_tops: HashSet<PathBuf> = self
            .written
            .iter()
            .filter(|ks| rendered.contains(&doc_id(ks)))
            .filter_map(top_of)
            .collect();
        let stray_tops: HashSet<PathBuf> = loose
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
    fn substitute_from_names(&self) -> Option<HashSet<&str>> {
        let built = self.builds.values().flatten().flat_map(|b| &b.objects);
        let mut names = HashSet::new();
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

    /// The namespaces Flux places each build's objects in: per build, the
    /// `targetNamespace` of every written Flux Kustomization that builds
    /// it (`None` for one without), as kustomize-controller sets it on
    /// every namespaced object of its build.
    fn placed_namespaces(&mut self, files: &mut Files) -> HashMap<BuildKey, Vec<Placed>> {
        let mut placed: HashMap<BuildKey, Vec<Placed>> = HashMap::new();
        let written = std::mem::take(&mut self.written);
        for ks in &written {
            let Some((key, _)) = self.build_key(files, ks) else {
                continue;
            };
            let target = ks
                .root
                .path(&["spec", "targetNamespace"])
                .and_then(|n| Some((n.as_str()?.to_string(), n.span)));
            let targets = placed.entry(key).or_default();
            let ns = |t: &Placed| t.as_ref().map(|(ns, _)| ns.clone());
            if !targets.iter().any(|t| ns(t) == ns(&target)) {
                targets.push(target);
            }
        }
        self.written = written;
        placed
    }

    /// The bootstrap inputs (and substitution sources) the builds of
    /// `written` hold, each as the Flux Kustomization that builds it
    /// applies it: its targetNamespace set and its postBuild variables
    /// substituted. A flux-instance HelmRelease applied by a Kustomization
    /// with `postBuild.substitute: {CLUSTER: home}` syncs
    /// `clusters/${CLUSTER}` as `clusters/home` (Flux substitutes the
    /// HelmRelease before helm-controller reads its values). Where several
    /// Flux Kustomizations build one document, a copy they changed comes
    /// before the one as written, which `synced` then skips.
    fn built_bootstrap_inputs(
        &mut self,
        files: &mut Files,
        written: &[Object],
        config_sources: &[Object],
    ) -> Vec<Object> {
        let mut keyed: Vec<(BuildKey, &Object)> = written
            .iter()
            .filter_map(|ks| Some((self.build_key(files, ks)?.0, ks)))
            .collect();
        // Builds are a map: sorted, the roots (and so the tree numbers)
        // are the same in every run.
        keyed.sort_by(|a, b| (&a.0, doc_id(a.1)).cmp(&(&b.0, doc_id(b.1))));
        let by_name = ByName::of(config_sources.iter());
        let lookup = |_: &SourceMap, kind: &str, namespace: &str, name: &str| {
            by_name.find(kind, namespace, name)
        };
        // Its own budget: the run's is for the renders.
        let mut budget = Some(crate::source::flux::budget(files.limits()));
        let mut out: Vec<(Object, bool)> = Vec::new();
        for (key, ks) in keyed {
            let Some(Ok(built)) = self.builds.get(&key) else {
                continue;
            };
            let objs: Vec<Object> = built
                .objects
                .iter()
                .filter(|o| {
                    (is_bootstrap_input(o.group(), o.kind())
                        && (o.kind() != "HelmRelease"
                            || crate::source::flux::bootstrap::may_sync(o)))
                        || crate::source::flux::data::provides(o).is_some()
                })
                .cloned()
                .collect();
            let given = RenderInputs {
                ks: ks.clone(),
                inherited: [false, false],
                objects: objs,
                patch_dir: None,
                budget: budget.take(),
            };
            let key = RenderKey {
                steps: Steps::Bootstrap,
                path: files.sources.path(ks.file).to_path_buf(),
                doc_index: ks.doc_index,
                id: ks_id(ks),
            };
            let gave = reuse::steps(files, key, given, &lookup, |files, objs, given, lookup| {
                bootstrap_steps(files, ks, objs, given, lookup)
            });
            budget = gave.budget;
            // `issues` holds targetNamespace's failure only.
            let placed = ks.root.str_at(&["spec", "targetNamespace"]).is_some();
            let changed = (placed && gave.issues.is_empty())
                || ks.root.path(&["spec", "postBuild"]).is_some();
            out.extend(gave.objects.into_iter().map(|o| (o, changed)));
        }
        out.sort_by(|(a, a_changed), (b, b_changed)| {
            (doc_id(a), a.namespace(), a.name(), !a_changed).cmp(&(
                doc_id(b),
                b.namespace(),
                b.name(),
                !b_changed,
            ))
        });
        out.into_iter().map(|(o, _)| o).collect()
    }

    /// Builds each of `kss`, noting the Flux Kustomizations each produces.
    /// Their builds are independent: done on every core, each build's
    /// notes taken in the order of `kss` ([`Files::each_in_order`]).
    fn build_each(&mut self, files: &mut Files, kss: &[Object], seen: &mut Produced) {
        let keys: Vec<_> = kss.iter().map(|ks| self.build_key(files, ks)).collect();
        let mut queued: HashSet<&BuildKey> = HashSet::new();
        let todo: Vec<&(BuildKey, Vec<(String, Span)>)> = keys
            .iter()
            .flatten()
            .filter(|key| !self.builds.contains_key(&key.0) && queued.insert(&key.0))
            .collect();
        let built = files.each_in_order(&todo, |files, (key, components)| {
            build_noting_dirs(files, &key.0, components)
        });
        for ((key, _), (result, dirs)) in todo.into_iter().zip(built) {
            self.build_dirs.insert(key.clone(), dirs);
            self.builds.insert(key.clone(), result);
        }
        for (ks, key) in kss.iter().zip(keys) {
            let Some((key, _)) = key else { continue };
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
        }
    }

    /// Renders `root` and every Flux Kustomization it produces, depth
    /// first. Identities are unique within one cluster's tree only.
    fn render_tree(
        &mut self,
        files: &mut Files,
        root: Object,
        lookup_pool: &LookupPool,
        rendered: &mut HashSet<DocId>,
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
        // Children wait as their index in the output, which holds them
        // anyway: a copy each would hold every Flux Kustomization twice.
        let mut queue: Vec<(KsId, Option<usize>, Inherited)> =
            vec![(root_id, None, Inherited::default())];
        let joined = self.joined_tree(&root);
        let tree = joined.unwrap_or(self.trees);
        let mut done: HashSet<KsId> = HashSet::new();
        self.tree_files.clear();
        if joined.is_some() {
            for o in self.output.iter().filter(|o| o.tree == Some(tree)) {
                self.tree_files.insert(o.file);
                if is_flux_ks(o) {
                    done.insert(ks_id(o));
                }
            }
        }
        while let Some((id, at, inherited)) = queue.pop() {
            if !done.insert(id.clone()) {
                continue;
            }
            let ks = at.map_or_else(|| root.clone(), |i| self.output[i].clone());
            rendered.insert(doc_id(&ks));
            let (mut objs, passed) = self.render(files, &id, &ks, inherited, lookup_pool, issues);
            if joined.is_some() {
                self.drop_applied(files, tree, &mut objs, issues);
            }
            let first = self.output.len();
            for (i, child) in objs.iter().enumerate().filter(|(_, o)| is_flux_ks(o)) {
                if !done.contains(&child_id(&ks, child)) {
                    queue.push((child_id(&ks, child), Some(first + i), passed));
                }
            }
            self.tree_files.extend(objs.iter().map(|o| o.file));
            self.output.extend(objs.into_iter().map(|mut o| {
                o.tree = Some(tree);
                o
            }));
        }
        if joined.is_none() {
            self.trees += 1;
        }
    }

    /// The tree of an earlier root that applied `root`'s own document: a
    /// FluxInstance (or flux-instance HelmRelease) that a self-applying
    /// root's tree applies syncs the same cluster again (gavinmcfall's
    /// `flux-system/cluster` applies `cluster-apps`, whose flux-instance
    /// release syncs `kubernetes/flux/cluster`, which applies
    /// `cluster-apps`): one cluster, not two.
    fn joined_tree(&self, root: &Object) -> Option<u32> {
        self.output
            .iter()
            .find(|o| doc_id(o) == doc_id(root) && o.tree.is_some())
            .and_then(|o| o.tree)
    }

    /// Drops from a joining root's objects those the tree already holds:
    /// the cluster holds one object of a kind, namespace and name, and
    /// kustomize-controller applies it from each Kustomization that has it
    /// as that one reconciles, so the two take turns (the last apply wins).
    /// Rendered once, as the first applier has it, and the double applier
    /// is reported.
    fn drop_applied(
        &self,
        files: &Files,
        tree: u32,
        objs: &mut Vec<Object>,
        issues: &mut Vec<Issue>,
    ) {
        let applier = |o: &Object| {
            o.chain
                .iter()
                .find(|s| s.kind == StepKind::FluxKustomization)
                .map(|s| s.detail.clone())
                .unwrap_or_default()
        };
        let key = |o: &Object| {
            (
                o.group().to_string(),
                o.kind().to_string(),
                o.namespace().map(str::to_string),
                o.name().to_string(),
            )
        };
        let held: HashMap<_, &Object> = self
            .output
            .iter()
            .filter(|o| o.tree == Some(tree))
            .map(|o| (key(o), o))
            .collect();
        objs.retain(|o| {
            let Some(first) = held.get(&key(o)) else {
                return true;
            };
            issues.push(Issue::file(
                files.sources.path(o.file),
                format!(
                    "{} is applied by Flux Kustomization {} and again by {}: the cluster \
                     holds one object, which each re-applies as it reconciles (the last apply \
                     wins); rendered once, as {} has it",
                    o.id(),
                    applier(first),
                    applier(o),
                    applier(first),
                ),
            ));
            false
        });
    }

    /// `spec.path` of a Flux Kustomization, relative to the repo root.
    /// Flux reads it relative to the source's root, which is the repo root
    /// for a GitRepository but may be a subdirectory for an OCI artifact
    /// (`flux push artifact --path=./kubernetes`): when the path is not a
    /// directory from the repo root, the nearest ancestor of the
    /// Kustomization's own file under which it is becomes the source's
    /// root. `None` when a variable in the path is unresolved.
    fn ks_path(&mut self, files: &Files, ks: &Object) -> Option<PathBuf> {
        let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
        if raw.contains("${") {
            return None;
        }
        let raw = raw.trim_start_matches('/');
        let source = source_of(ks);
        if self.artifacts.knows(&source) {
            let in_artifact = join_within(Path::new(""), raw)?;
            let found = self.artifacts.resolve(&source, &in_artifact)?.ok()?;
            let path = found.path.display().to_string();
            return self.in_source(files, &found.source, &path, ks);
        }
        self.in_source(files, &source, raw, ks)
    }

    /// A path of the source `source`, relative to the repo root.
    fn in_source(
        &mut self,
        files: &Files,
        source: &str,
        raw: &str,
        ks: &Object,
    ) -> Option<PathBuf> {
        let source = source.to_string();
        if let Some(base) = self.source_roots.get(&source) {
            return path_in_source(files, &source, base, raw);
        }
        let at_root = join_within(Path::new(""), raw)?;
        if files.is_dir(&at_root) {
            self.source_roots.insert(source, PathBuf::new());
            return Some(at_root);
        }
        let own_dir = files
            .sources
            .path(ks.file)
            .parent()
            .unwrap_or(Path::new(""));
        for base in own_dir.ancestors().filter(|b| !b.as_os_str().is_empty()) {
            if let Some(p) = join_within(base, raw).filter(|p| files.is_dir(p)) {
                // Right for an artifact pushed from a subdirectory (`flux
                // push artifact --path`); a GitRepository is the whole
                // repository, so said: if it is this one, Flux fails the
                // path as not found.
                if source.starts_with("GitRepository/") {
                    let span = ks
                        .root
                        .path(&["spec", "path"])
                        .map_or(ks.root.span, |n| n.span);
                    self.guessed_roots.push(kustomize::issue_at(
                        files,
                        span,
                        format!(
                            "path '{raw}' is not a directory from the repository root, but is \
                             from {}: {source} is read as a repository whose root is that \
                             directory; if it is this repository, Flux fails with path not found",
                            base.display()
                        ),
                    ));
                }
                self.source_roots.insert(source, base.to_path_buf());
                return Some(p);
            }
        }
        Some(at_root)
    }

    /// The build for a render, moved out of the cache by its last user:
    /// a large repo would otherwise hold every object twice.
    fn take_build(
        &mut self,
        files: &mut Files,
        ks: &Object,
    ) -> Option<Result<kustomize::Built, Issue>> {
        let (key, components) = self.build_key(files, ks)?;
        let uses = self.uses.entry(key.clone()).or_default();
        *uses = uses.saturating_sub(1);
        let result = if *uses > 0
            && let Some(cached) = self.builds.get(&key)
        {
            cached.clone()
        } else {
            match self.builds.remove(&key) {
                Some(result) => result,
                None => {
                    let (result, dirs) = build_noting_dirs(files, &key.0, &components);
                    self.build_dirs.insert(key.clone(), dirs);
                    result
                }
            }
        };
        if let Some(dirs) = self.build_dirs.get(&key) {
            self.rendered_dirs.extend(dirs.iter().cloned());
        }
        Some(result)
    }

    /// The sync Kustomizations flux-operator creates for the FluxInstances
    /// (or flux-instance chart releases) among `candidates`, one per
    /// document; none where `written` already holds that Kustomization
    /// (a repository moving from `flux bootstrap` keeps its gotk-sync.yaml).
    fn synced(
        files: &mut Files,
        written: &[Object],
        candidates: &[Object],
        config_sources: &[Object],
        issues: &mut Vec<Issue>,
    ) -> Vec<Object> {
        let members: Vec<Object> = candidates
            .iter()
            .flat_map(crate::source::flux::bootstrap::resource_set_members)
            .collect();
        let candidates: Vec<&Object> = candidates.iter().chain(&members).collect();
        // Every HelmRelease with a chartRef looks its source up; a search
        // through all candidates each time was quadratic (1.7 ms of
        // joryirving__home-ops, serial).
        let by_name = ByName::of(candidates.iter().copied().chain(config_sources));
        let lookup = |kind: &str, namespace: &str, name: &str| by_name.find(kind, namespace, name);
        let mut seen: HashSet<DocId> = HashSet::new();
        let mut out = Vec::new();
        for &o in &candidates {
            if seen.contains(&doc_id(o)) {
                continue;
            }
            let Some(synced) =
                crate::source::flux::bootstrap::sync_kustomization(&files.sources, o, &lookup)
            else {
                continue;
            };
            seen.insert(doc_id(o));
            let mut ks = [synced.kustomization];
            if let Some(patches) = synced.patches
                && let Err(issue) =
                    kustomize::apply_patches(&mut ks, &patches, files, Path::new(""))
            {
                issues.push(issue);
            }
            let [ks] = ks;
            let same = |w: &&Object| {
                w.name() == ks.name()
                    && w.namespace() == ks.namespace()
                    && w.root
                        .str_at(&["spec", "path"])
                        .map(|p| p.trim_start_matches("./"))
                        == ks
                            .root
                            .str_at(&["spec", "path"])
                            .map(|p| p.trim_start_matches("./"))
            };
            if !written.iter().any(|w| same(&w)) {
                out.push(ks);
            }
        }
        out
    }

    /// The sources that are this repository: those a Flux Kustomization
    /// builds a directory of the repository from (flux bootstrap names its
    /// own `flux-system`), and artifacts generated from them. A source
    /// used only with `path: ./` (flux's own manifests from an
    /// OCIRepository) proves nothing: every repository has a root.
    fn find_local_sources(&mut self, files: &Files, written: &[Object], issues: &mut Vec<Issue>) {
        for ks in written {
            let source = source_of(ks);
            if self.artifacts.knows(&source) || self.foreign.contains(&source) {
                continue;
            }
            let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
            let trivial = join_within(Path::new(""), raw.trim_start_matches('/'))
                .is_none_or(|p| p.as_os_str().is_empty());
            let named_bootstrap = source.ends_with("/flux-system");
            if named_bootstrap
                || (!trivial
                    && !raw.contains("${")
                    && self.ks_path(files, ks).is_some_and(|p| files.is_dir(&p)))
            {
                self.local.insert(source);
            }
        }
        for ks in written {
            let source = source_of(ks);
            let from = self.artifacts.sources_of(&source);
            if !from.is_empty() && from.iter().all(|s| self.local.contains(*s)) {
                self.local.insert(source);
            }
        }
        if self.local.is_empty() && !written.is_empty() {
            issues.push(Issue::file(
                files.sources.path(written[0].file),
                "no Flux Kustomization of the repository builds one of its directories: \
                 every source is taken to be this repository",
            ));
            self.local.extend(written.iter().map(source_of));
        }
    }

    /// The Flux Kustomization recorded last fails after all (its postBuild
    /// substitution cannot parse a value): Flux applies none of it.
    fn fail_render(&mut self, mut why: Vec<Issue>) {
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

    fn record(&mut self, files: &Files, ks: &Object, id: &KsId, outcome: Outcome) {
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

    fn ks_path_text(&self, files: &Files, ks: &Object) -> Option<PathBuf> {
        let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
        let source = source_of(ks);
        let base = self.source_roots.get(&source)?;
        path_in_source(files, &source, base, raw.trim_start_matches('/'))
    }

    /// Why a Flux Kustomization has no build, and the issue to show when
    /// no rule reports it (a missing path has its own rule).
    /// Why `ks` is not built; `substituted` says the Flux Kustomization
    /// that applies it ran postBuild substitution over it.
    fn unbuilt(
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

    fn unbuilt_reason(
        &mut self,
        files: &Files,
        ks: &Object,
        substituted: bool,
    ) -> (String, Option<Issue>) {
        let Some(node) = ks.root.path(&["spec", "path"]) else {
            return ("its path is not a directory".into(), None);
        };
        let raw = node.as_str().unwrap_or("");
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
            let issue = kustomize::issue_at(files, node.span, format!("not rendered: {why}"));
            return (why, Some(issue));
        }
        if let Some(Some(Err(why))) = join_within(Path::new(""), raw.trim_start_matches('/'))
            .map(|p| self.artifacts.resolve(&source, &p))
        {
            let issue = kustomize::issue_at(files, node.span, format!("not rendered: {why}"));
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
            let issue = kustomize::issue_at(files, node.span, format!("not rendered: {reason}"));
            return (reason, Some(issue));
        }
        match self.ks_path(files, ks) {
            Some(p) => (
                format!(
                    "its path {} is not a directory of the repository",
                    p.display()
                ),
                None,
            ),
            None => (format!("its path '{raw}' leaves the repository"), None),
        }
    }

    /// What identifies a build: the path and the Flux components.
    fn build_key(
        &mut self,
        files: &mut Files,
        ks: &Object,
    ) -> Option<(BuildKey, Vec<(String, Span)>)> {
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
            .filter_map(|c| Some((c.scalar_text()?, c.span)))
            .collect();
        let names = components.iter().map(|(c, _)| c.clone()).collect();
        Some(((path, names), components))
    }

    /// One Flux Kustomization: build, then targetNamespace, patches and
    /// postBuild substitution, in Flux's order. Returns the objects and
    /// what they inherit from this render ([`Inherited`]); `inherited`
    /// is what the parent passed to this Kustomization.
    fn render(
        &mut self,
        files: &mut Files,
        id: &KsId,
        ks: &Object,
        inherited: Inherited,
        lookup_pool: &LookupPool,
        issues: &mut Vec<Issue>,
    ) -> (Vec<Object>, Inherited) {
        let inherited_unknowns = inherited.unknowns;
        let passed_on = Inherited {
            unknowns: inherited_unknowns,
            substituted: false,
        };
        let name = format!("{}/{}", id.0, id.1);
        let (objs, outcome) = match self.take_build(files, ks) {
            Some(Ok(built)) => {
                let (remote, missing): (Vec<Issue>, Vec<Issue>) = built
                    .gaps
                    .into_iter()
                    .partition(|g| g.gap == Some(Gap::Remote));
                issues.extend(remote.iter().map(|g| Issue {
                    message: format!("{} (Flux Kustomization {name})", g.message),
                    ..g.clone()
                }));
                let outcome = if !missing.is_empty() {
                    Outcome::Failed(missing)
                } else if !remote.is_empty() {
                    Outcome::Partial(remote.len())
                } else {
                    Outcome::Rendered
                };
                (built.objects, outcome)
            }
            Some(Err(issue)) => {
                issues.push(issue.clone());
                self.record(files, ks, id, Outcome::BuildFailed(issue));
                return (Vec::new(), passed_on);
            }
            None => {
                let (outcome, issue) = self.unbuilt(files, ks, inherited.substituted);
                issues.extend(issue);
                self.record(files, ks, id, outcome);
                return (Vec::new(), passed_on);
            }
        };
        self.record(files, ks, id, outcome);
        let given = RenderInputs {
            ks: ks.clone(),
            inherited: [inherited.unknowns, inherited.substituted],
            objects: objs,
            patch_dir: ks
                .root
                .path(&["spec", "patches"])
                .and_then(|_| self.ks_path(files, ks)),
            budget: self.subst_budget.clone(),
        };
        let key = RenderKey {
            steps: Steps::Render,
            path: files.sources.path(ks.file).to_path_buf(),
            doc_index: ks.doc_index,
            id: id.clone(),
        };
        let tree_files = &self.tree_files;
        let lookup = |sources: &SourceMap, kind: &str, _namespace: &str, name: &str| {
            substitute_from(lookup_pool, tree_files, sources, ks, &id.0, kind, name)
        };
        let gave = reuse::steps(
            files,
            key,
            given,
            &lookup,
            |files, objects, given, lookup| flux_steps(files, id, ks, objects, given, lookup),
        );
        issues.extend(gave.issues);
        if !gave.unparsed.is_empty() {
            self.fail_render(gave.unparsed);
        }
        self.subst_budget = gave.budget;
        let max = files.limits().max_rendered_objects;
        if self.output.len() + gave.objects.len() > max {
            let issue = kustomize::issue_at(
                files,
                ks.root.span,
                format!(
                    "render budget exceeded: the Flux Kustomizations of this repository render \
                     more than {max} objects in all; Flux Kustomization {name} is not rendered"
                ),
            );
            issues.push(issue.clone());
            self.fail_render(vec![issue]);
            return (Vec::new(), passed_on);
        }
        let [unknowns, substituted] = gave.passed;
        (
            gave.objects,
            Inherited {
                unknowns,
                substituted,
            },
        )
    }
}

/// A Flux Kustomization's steps after its build, in Flux's order:
/// targetNamespace, patches, postBuild substitution. Returns what they
/// give and the `substituteFrom` look-ups they made.
fn flux_steps<'p>(
    files: &mut Files,
    id: &KsId,
    ks: &Object,
    mut objs: Vec<Object>,
    given: &RenderInputs,
    lookup: Lookup<'_, 'p>,
) -> RenderOutputs {
    let mut issues = Vec::new();
    let ks_span = ks.root.get("metadata").map(|m| m.span);
    let detail = format!("{}/{}", id.0, id.1);
    for o in &mut objs {
        o.chain.insert(
            0,
            super::Step {
                kind: StepKind::FluxKustomization,
                detail: detail.clone(),
                at: ks_span,
            },
        );
    }
    if let Some(ns) = ks.root.path(&["spec", "targetNamespace"])
        && let Some(ns_text) = ns.as_str()
        && let Err(issue) = kustomize::set_namespace(files, &mut objs, ns_text, ns.span)
    {
        issues.push(issue);
    }
    if let (Some(patches), Some(path)) = (ks.root.path(&["spec", "patches"]), &given.patch_dir)
        && let Err(issue) = kustomize::apply_patches(&mut objs, patches, files, path)
    {
        issues.push(issue);
    }
    let mut budget = given.budget.clone();
    let mut unparsed = Vec::new();
    let mut passed = [given.inherited[0], false];
    if ks.root.path(&["spec", "postBuild"]).is_some() {
        let here =
            |kind: &str, namespace: &str, name: &str| lookup(&files.sources, kind, namespace, name);
        let (mut vars, var_issues) = collect_vars(&files.sources, ks, &here);
        issues.extend(var_issues);
        vars.incomplete |= given.inherited[0];
        let budget = budget.get_or_insert_with(|| crate::source::flux::budget(files.limits()));
        for o in &mut objs {
            let (failed, other): (Vec<Issue>, Vec<Issue>) =
                substitute(&files.sources, o, &vars, budget)
                    .into_iter()
                    .partition(|i| i.gap == Some(Gap::Substitution));
            issues.extend(other);
            unparsed.extend(failed);
        }
        let unknowns = vars.incomplete || vars.map.values().any(|v| v.unknown);
        passed = [unknowns, vars.is_active()];
    }
    RenderOutputs {
        objects: objs,
        issues,
        unparsed,
        passed,
        budget,
    }
}

/// The bootstrap inputs of a build as the Flux Kustomization `ks` applies
/// them: its targetNamespace set (its failure is the only issue given)
/// and its postBuild variables substituted. What goes wrong in the
/// substitution is reported when the tree renders.
fn bootstrap_steps<'p>(
    files: &mut Files,
    ks: &Object,
    mut objs: Vec<Object>,
    given: &RenderInputs,
    lookup: Lookup<'_, 'p>,
) -> RenderOutputs {
    let mut issues = Vec::new();
    if let Some(ns) = ks.root.path(&["spec", "targetNamespace"])
        && let Some(ns_text) = ns.as_str()
        && let Err(issue) = kustomize::set_namespace(files, &mut objs, ns_text, ns.span)
    {
        issues.push(issue);
    }
    let mut budget = given.budget.clone();
    if ks.root.path(&["spec", "postBuild"]).is_some()
        && let Some(budget) = budget.as_mut()
    {
        let here =
            |kind: &str, namespace: &str, name: &str| lookup(&files.sources, kind, namespace, name);
        let (vars, _) = collect_vars(&files.sources, ks, &here);
        for o in &mut objs {
            let _ = substitute(&files.sources, o, &vars, budget);
        }
    }
    RenderOutputs {
        objects: objs,
        issues,
        unparsed: Vec::new(),
        passed: [false, false],
        budget,
    }
}

/// The ConfigMap or Secret `kind/name` that postBuild's substituteFrom of
/// `ks` reads. Flux reads substituteFrom in the Kustomization's own
/// namespace `namespace`. A repo of several clusters holds one such
/// object per cluster: the one this cluster's tree applies (`tree_files`)
/// is its cluster's (two clusters may share a Kustomization, each reading
/// its own cluster-settings); else the one nearest to the Kustomization's
/// file. One that may make it there (a ClusterExternalSecret whose
/// selectors need the cluster's labels) is named by collect_vars.
fn substitute_from<'p>(
    lookup_pool: &'p LookupPool,
    tree_files: &HashSet<FileId>,
    sources: &SourceMap,
    ks: &Object,
    namespace: &str,
    kind: &str,
    name: &str,
) -> Option<&'p Object> {
    use crate::source::flux::data::{namespace_unknown, provided_in};
    let ks_path = sources.path(ks.file);
    let candidates = lookup_pool.get(&(kind.to_string(), name.to_string()))?;
    candidates
        .iter()
        .filter(|o| provided_in(o, namespace))
        .max_by_key(|o| {
            (
                tree_files.contains(&o.file),
                common_prefix(sources.path(o.file), ks_path),
            )
        })
        .or_else(|| {
            candidates
                .iter()
                .find(|o| namespace_unknown(o, namespace).is_some())
        })
        .or_else(|| {
            // A file as written (no chain) that names no namespace and
            // of which no build made a copy: only a bootstrap step
            // applies it, which collect_vars says.
            candidates.iter().find(|o| {
                o.chain.is_empty()
                    && o.namespace().is_none()
                    && !candidates
                        .iter()
                        .any(|c| !std::ptr::eq(c, *o) && doc_id(c) == doc_id(o))
            })
        })
}

/// [`kustomize::build_flux_path`], with the directories it builds (noted
/// in `files.built_dirs` too).
fn build_noting_dirs(
    files: &mut Files,
    dir: &Path,
    components: &[(String, Span)],
) -> (Result<kustomize::Built, Issue>, HashSet<PathBuf>) {
    let before = std::mem::take(&mut files.built_dirs);
    let result = kustomize::build_flux_path(files, dir, components);
    let dirs = std::mem::replace(&mut files.built_dirs, before);
    files.built_dirs.extend(dirs.iter().cloned());
    (result, dirs)
}

/// Flux Kustomizations applied by hand (`kubectl apply -k D`, the way
/// flux-operator's and older bootstrap guides start a cluster): listed by
/// a top-level kustomization `D` (under no other kustomization) that no
/// Flux Kustomization builds.
fn applied_by_hand(
    files: &mut Files,
    written: &[Object],
    produced: &HashSet<DocId>,
    by_hand_files: &mut HashMap<FileId, PathBuf>,
) -> HashSet<DocId> {
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
    let mut out = HashSet::new();
    for top in tops {
        if let Ok(built) = kustomize::build_flux_path(files, &top, &[]) {
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

/// The first variable of a `${...}` expression in `text`.
fn unresolved_variable(text: &str) -> Option<&str> {
    let rest = &text[text.find("${")? + 2..];
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Number of leading path components two paths share.
fn common_prefix(a: &Path, b: &Path) -> usize {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count()
}

/// Identity of a Flux Kustomization found in `parent`'s output: one
/// written without a namespace lands in its parent's.
fn child_id(parent: &Object, child: &Object) -> KsId {
    let ns = child.namespace().or(parent.namespace()).unwrap_or("");
    (ns.to_string(), child.name().to_string())
}

/// `spec.path` of a Flux Kustomization, relative to the repo root. Flux
/// reads it relative to the source root whether or not it starts with `./`.
/// `kind/name` of the source a Flux Kustomization builds from.
/// `raw`, a Flux Kustomization's `spec.path` (no leading `/`), in the
/// source `source` whose root was found at `base`. A GitRepository is the
/// whole repository: a root guessed for one Kustomization (an old copy of
/// the cluster under `archive/`, whose paths are from there) does not move
/// a path that is a directory from the repository's root, as the live
/// cluster's are.
pub fn path_in_source(files: &Files, source: &str, base: &Path, raw: &str) -> Option<PathBuf> {
    if source.starts_with("GitRepository/")
        && !base.as_os_str().is_empty()
        && let Some(at_root) = join_within(Path::new(""), raw).filter(|p| files.is_dir(p))
    {
        return Some(at_root);
    }
    join_within(base, raw)
}

pub fn source_of(ks: &Object) -> String {
    format!(
        "{}/{}",
        ks.root.str_at(&["spec", "sourceRef", "kind"]).unwrap_or(""),
        ks.root.str_at(&["spec", "sourceRef", "name"]).unwrap_or("")
    )
}
