//! Rendering a kustomization directory the way `kubectl kustomize` does
//! (kustomize v5), with every value keeping the span it was written at.
//!
//! The order of work follows kustomize's `KustTarget`: resources, then
//! `configurations:`, generators, components, the built-in transformers in
//! their fixed order and inline `transformers:`; once, at the top level,
//! name hashes, name references and dropping local-config objects.

mod budget;
mod builder;
mod cut;
mod fieldspecs;
mod generators;
mod images;
mod inline;
mod input;
mod kustomization;
mod namereference;
mod patch_json6902;
mod patch_smp;
mod patches;
mod remote;
mod replacements;
mod resources;
mod standin;
mod transformers;

use std::collections::HashSet;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};

use crate::source::files::{Files, Input};
use crate::source::object::{Object, StepKind};
use crate::source::{Gap, Issue, Listed, PathMap};
use compact_str::CompactString;

use crate::yaml::{Node, Span};

pub(crate) use builder::Builder;
pub use cut::{Cut, Cutting};
pub(crate) use fieldspecs::Config;

pub use crate::source::limits::kustomize::Limits;
pub(crate) use crate::source::limits::kustomize::RunBudget;
pub use images::Image;
pub(crate) use kustomization::FILE_NAMES as KUSTOMIZATION_FILES;
pub use patches::apply_patches;

/// Group, version and kind of an object.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
///
/// Ids are made for every object at every step of a build (tens of
/// thousands on a large repository): their parts are `CompactString`s,
/// inline up to 24 bytes, so that making and copying one rarely
/// allocates.
pub(crate) struct Gvk {
    pub group: CompactString,
    pub version: CompactString,
    pub kind: CompactString,
}

impl Gvk {
    pub fn of(root: &Node) -> Gvk {
        Gvk::from_parts(
            root.str_at(&["apiVersion"]).unwrap_or(""),
            root.str_at(&["kind"]).unwrap_or(""),
        )
    }

    pub fn from_parts(api: &str, kind: &str) -> Gvk {
        let (group, version) = Gvk::split_api(api);
        Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// An `apiVersion`'s group and version.
    pub fn split_api(api: &str) -> (&str, &str) {
        match api.as_bytes().iter().rposition(|&b| b == b'/') {
            Some(slash) => (&api[..slash], &api[slash + 1..]),
            None => ("", api),
        }
    }

    /// Cluster-scoped built-in kinds, as kustomize's bundled OpenAPI schema
    /// knows them. Custom resources count as namespaced, as in kustomize.
    /// That schema is Kubernetes 1.21's (kyaml/openapi/kubernetesapi/v1_21_2
    /// up to kustomize v5.7 at least), so kinds added since, such as
    /// ValidatingAdmissionPolicy, get `namespace:` too (kubectl kustomize
    /// v5.5 does so).
    pub fn is_cluster_scoped(&self) -> bool {
        is_cluster_scoped(&self.kind, &self.group)
    }
}

/// [`Gvk::is_cluster_scoped`] of a kind and group read in place.
fn is_cluster_scoped(kind: &str, group: &str) -> bool {
    // By kind, then its group: a match on text tells by length first,
    // and nearly every object's kind is none of these (asked of every
    // object by every transformer that places namespaces).
    let scoped_group = match kind {
        "Namespace" | "Node" | "PersistentVolume" | "ComponentStatus" => "",
        "ClusterRole" | "ClusterRoleBinding" => "rbac.authorization.k8s.io",
        "CustomResourceDefinition" => "apiextensions.k8s.io",
        "APIService" => "apiregistration.k8s.io",
        "StorageClass" | "CSIDriver" | "CSINode" | "VolumeAttachment" => "storage.k8s.io",
        "PriorityClass" => "scheduling.k8s.io",
        "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
            "admissionregistration.k8s.io"
        }
        "IngressClass" => "networking.k8s.io",
        "RuntimeClass" => "node.k8s.io",
        "PodSecurityPolicy" => "policy",
        "CertificateSigningRequest" => "certificates.k8s.io",
        "FlowSchema" | "PriorityLevelConfiguration" => "flowcontrol.apiserver.k8s.io",
        "TokenReview" => "authentication.k8s.io",
        "SelfSubjectAccessReview" | "SelfSubjectRulesReview" | "SubjectAccessReview" => {
            "authorization.k8s.io"
        }
        _ => return false,
    };
    group == scoped_group
}

/// What kustomize identifies an object by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResId {
    pub gvk: Gvk,
    pub name: CompactString,
    pub namespace: CompactString,
}

impl ResId {
    /// The id from one pass over the object's top-level entries and its
    /// metadata's ([`id_texts`]).
    pub fn of(root: &Node) -> ResId {
        let id = IdView::of(root);
        ResId {
            gvk: Gvk {
                group: id.group.into(),
                version: id.version.into(),
                kind: id.kind.into(),
            },
            name: id.name.into(),
            namespace: id.namespace.into(),
        }
    }

    pub fn view(&self) -> IdView<'_> {
        IdView {
            group: &self.gvk.group,
            version: &self.gvk.version,
            kind: &self.gvk.kind,
            name: &self.name,
            namespace: &self.namespace,
        }
    }

    pub fn display(&self) -> String {
        self.view().display()
    }
}

/// An id as read in place ([`id_texts`]) or borrowed from a [`ResId`]:
/// what compares and selects objects by id without making one (three to
/// five strings made and dropped, for an id most often asked once).
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdView<'a> {
    pub group: &'a str,
    pub version: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub namespace: &'a str,
}

impl<'a> IdView<'a> {
    pub fn of(root: &'a Node) -> IdView<'a> {
        let [api, kind, name, namespace] = id_texts(root);
        let (group, version) = Gvk::split_api(api);
        IdView {
            group,
            version,
            kind,
            name,
            namespace,
        }
    }

    /// kustomize treats a missing namespace as `default` when comparing.
    pub fn effective_ns(&self) -> &'a str {
        if is_cluster_scoped(self.kind, self.group) {
            ""
        } else if self.namespace.is_empty() {
            "default"
        } else {
            self.namespace
        }
    }

    /// `ResId.Equals`: same group, kind, name and effective namespace (the
    /// version is ignored when either side leaves it out).
    pub fn matches(&self, other: &IdView) -> bool {
        self.kind == other.kind
            && self.group == other.group
            && (self.version.is_empty()
                || other.version.is_empty()
                || self.version == other.version)
            && self.name == other.name
            && self.effective_ns() == other.effective_ns()
    }

    pub fn display(&self) -> String {
        let ns = if self.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", self.namespace)
        };
        format!("{}/{}{}", self.kind, ns, self.name)
    }
}

/// An object's `apiVersion`, `kind`, `metadata.name` and
/// `metadata.namespace` (empty when missing or not text), read in place in
/// one pass over its top-level entries and its metadata's, where the first
/// of repeated keys counts, as in [`Node::get`].
fn id_texts(root: &Node) -> [&str; 4] {
    let (mut api, mut kind, mut meta) = (None, None, None);
    for (k, v) in root.as_map().unwrap_or_default() {
        match k.as_str() {
            Some("apiVersion") if api.is_none() => api = Some(v),
            Some("kind") if kind.is_none() => kind = Some(v),
            Some("metadata") if meta.is_none() => meta = Some(v),
            _ => {}
        }
    }
    let (mut name, mut namespace) = (None, None);
    for (k, v) in meta.and_then(Node::as_map).unwrap_or_default() {
        match k.as_str() {
            Some("name") if name.is_none() => name = Some(v),
            Some("namespace") if namespace.is_none() => namespace = Some(v),
            _ => {}
        }
    }
    [api, kind, name, namespace].map(|n| n.and_then(Node::as_str).unwrap_or(""))
}

/// An object during a build, with what kustomize keeps in internal
/// annotations: the ids it had before renames, and whether its name gets a
/// content hash.
#[derive(Clone, Debug)]
pub(crate) struct Res {
    pub obj: Object,
    pub org: ResId,
    pub prev: Vec<ResId>,
    pub needs_hash: bool,
    /// For generated objects: `create`, `merge` or `replace`.
    pub behavior: Option<String>,
}

impl Res {
    pub fn new(obj: Object) -> Res {
        let org = ResId::of(&obj.root);
        Res {
            obj,
            org,
            prev: Vec::new(),
            needs_hash: false,
            behavior: None,
        }
    }

    pub fn cur_id(&self) -> ResId {
        ResId::of(&self.obj.root)
    }

    /// The current id, read in place.
    pub fn cur_view(&self) -> IdView<'_> {
        IdView::of(&self.obj.root)
    }

    pub fn gvk(&self) -> Gvk {
        Gvk::of(&self.obj.root)
    }

    /// Remembers the current id before a rename, for patches and name
    /// references written against the old name.
    pub fn store_prev(&mut self) {
        self.store_prev_id(self.cur_id());
    }

    /// [`Res::store_prev`] with the current id already made.
    pub fn store_prev_id(&mut self, cur: ResId) {
        if !self.prev.contains(&cur) {
            self.prev.push(cur);
        }
    }

    pub fn any_id_matches(&self, id: &ResId) -> bool {
        let id = id.view();
        self.cur_view().matches(&id)
            || self.org.view().matches(&id)
            || self.prev.iter().any(|p| p.view().matches(&id))
    }

    /// Every name this object has been known by, current first.
    pub fn names(&self) -> Vec<String> {
        let mut names = vec![self.obj.name().to_string(), self.org.name.to_string()];
        names.extend(self.prev.iter().map(|p| p.name.to_string()));
        names
    }

    pub fn set_name(&mut self, name: &str, span: Span) {
        set_meta(self.obj.root_mut(), "name", name, span);
    }
}

/// Sets `metadata.<key>` to a string made by the tool.
pub(crate) fn set_meta(root: &mut Node, key: &str, value: &str, span: Span) {
    let meta = root.entry_map("metadata", span);
    meta.insert(key, Node::synthetic_str(value, span));
}

/// Objects plus the transformer configuration gathered so far.
#[derive(Clone, Default)]
pub(crate) struct Acc {
    res: Vec<Res>,
    pub config: Config,
    /// Positions by (group, kind, name), for the duplicate check of
    /// `append`: a Flux path of thousands of apps appends as many objects.
    /// Dropped whenever the objects are handed out for change (a rename
    /// or a deletion would make it wrong) and rebuilt on the next append.
    index: Option<Index>,
}

/// The objects' positions by (group, kind, name), the three hashed
/// together ([`Index::key`]): each key's last position, and for each
/// position the one before it with the same key. One vector for all the
/// objects, where a list per key was a block per object.
#[derive(Clone, Default)]
struct Index {
    last: PathMap<u64, usize>,
    /// For each object, the position of the one before it with its key,
    /// [`Index::NONE`] when it is the first.
    before: Vec<usize>,
}

impl Index {
    const NONE: usize = usize::MAX;

    /// The key for the object `root`: its group, kind and name, read in
    /// place and hashed together rather than copied into an id (ids made
    /// for the index were a third of `append`). Two ids with one key are
    /// compared in full.
    fn key(&self, root: &Node) -> u64 {
        let [api, kind, name, _] = id_texts(root);
        self.last
            .hasher()
            .hash_one((Gvk::split_api(api).0, kind, name))
    }

    /// The positions of the objects with `key`, last first.
    fn positions(&self, key: u64) -> impl Iterator<Item = usize> + '_ {
        let next = |&i: &usize| Some(self.before[i]).filter(|&j| j != Index::NONE);
        std::iter::successors(self.last.get(&key).copied(), next)
    }

    /// Adds the next object's position under `key`.
    fn add(&mut self, key: u64) {
        let at = self.before.len();
        let before = self.last.insert(key, at).unwrap_or(Index::NONE);
        self.before.push(before);
    }
}

impl Acc {
    pub fn res(&self) -> &[Res] {
        &self.res
    }

    pub fn res_mut(&mut self) -> &mut Vec<Res> {
        self.index = None;
        &mut self.res
    }

    /// A copy of the objects and field specs, without the index (made
    /// again on the next append): a cut's objects are copied for each
    /// build resumed from it, whose transformers drop the index anyway.
    pub fn copy(&self) -> Acc {
        Acc {
            res: self.res.clone(),
            config: self.config.clone(),
            index: None,
        }
    }

    /// Room for `more` objects.
    pub fn reserve(&mut self, more: usize) {
        self.res.reserve(more);
        if let Some(index) = &mut self.index {
            index.before.reserve(more);
        }
    }

    pub fn into_res(self) -> Vec<Res> {
        self.res
    }

    /// Adds an object without checking for duplicates (generators check
    /// their own `behavior`).
    pub fn push(&mut self, r: Res) {
        if let Some(index) = &mut self.index {
            index.add(index.key(&r.obj.root));
        }
        self.res.push(r);
    }

    /// Adds an object, refusing a second object with the same id.
    pub fn append(&mut self, r: Res, files: &Files, span: Span) -> Result<(), Issue> {
        let res = &self.res;
        let index = self.index.get_or_insert_with(|| {
            let mut index = Index::default();
            index.before.reserve(res.len());
            for x in res {
                index.add(index.key(&x.obj.root));
            }
            index
        });
        // One key for both the check and the new position; ids are read
        // only to compare objects that share a key.
        let key = index.key(&r.obj.root);
        let duplicate = {
            let mut positions = index.positions(key).peekable();
            let id = positions.peek().is_some().then(|| r.cur_view());
            id.filter(|id| positions.any(|i| res[i].cur_view().matches(id)))
                .map(|id| id.display())
        };
        if let Some(id) = duplicate {
            // An entry of a kustomization Flux generates has no line: the
            // object's own document is what to change.
            let at = if span == Span::default() {
                r.obj.root.span()
            } else {
                span
            };
            return Err(Issue::at(
                &files.sources,
                at,
                format!("may not add resource with an already registered id: {id}"),
            ));
        }
        index.add(key);
        self.res.push(r);
        Ok(())
    }
}

/// Each gap once, in the order first recorded: an entry reached through
/// several kustomizations is one gap.
fn unique(gaps: Vec<Issue>) -> Vec<Issue> {
    let mut seen = HashSet::new();
    gaps.into_iter()
        .filter(|g| seen.insert(g.clone()))
        .collect()
}

/// Renders the kustomization in `dir` (repo-relative) like
/// `kubectl kustomize DIR`: an entry that is remote or missing fails the
/// build, as in kubectl without the network.
pub fn build(files: &mut Files, dir: &Path) -> Result<Vec<Object>, Issue> {
    let mut b = Builder::new(files, true);
    let mut acc = Acc::default();
    b.build_dir(dir, &mut acc, false, None)?;
    let built = b.finish(acc)?;
    match built.gaps.into_iter().next() {
        Some(gap) => Err(gap),
        None => Ok(built.objects),
    }
}

/// What a Flux build rendered, and the entries it went on without.
#[derive(Clone, Debug, Default)]
pub struct Built {
    pub objects: Vec<Object>,
    /// Remote and missing entries ([`Gap`]), each at its own line; the
    /// objects are everything else.
    pub gaps: Vec<Issue>,
}

/// What a Flux Kustomization writes into the kustomization at its
/// `spec.path` before kustomize builds it (fluxcd/pkg kustomize
/// `Generator.WriteFile`): its `spec.components`, added to the
/// kustomization's own, its `spec.images`, merged into its `images:`
/// ([`images::flux_merge`]), and its `spec.targetNamespace` as the
/// kustomization's `namespace:`, in place of one written there. So the
/// namespace is set before kustomize's name references are resolved: a
/// HelmRelease with no namespace finds the hashed name of a generated
/// ConfigMap that names the target namespace.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FluxInputs {
    /// `spec.components`, relative to the path.
    pub components: Vec<(String, Span)>,
    /// `spec.targetNamespace`, where it is a string.
    pub namespace: Option<(String, Span)>,
    /// `spec.images`, merged into the kustomization's own.
    pub images: Vec<Image>,
}

/// What Flux's kustomize-controller renders for a `spec.path`: the
/// kustomization there, or else one generated over every manifest below it,
/// with what the Flux Kustomization writes into it ([`FluxInputs`]).
pub fn build_flux_path(files: &mut Files, dir: &Path, flux: &FluxInputs) -> Result<Built, Issue> {
    build_flux_path_cutting(files, dir, flux, Cutting::No)
}

/// [`build_flux_path`], making or resuming a [`Cut`] as `cutting` says.
pub fn build_flux_path_cutting(
    files: &mut Files,
    dir: &Path,
    flux: &FluxInputs,
    cutting: Cutting<'_>,
) -> Result<Built, Issue> {
    files.stopped_by_budget(|files| build_flux_dir(files, dir, flux, cutting))
}

/// [`build_flux_path`], before a budget's stop is told apart.
fn build_flux_dir(
    files: &mut Files,
    dir: &Path,
    flux: &FluxInputs,
    cutting: Cutting<'_>,
) -> Result<Built, Issue> {
    if kustomization::find(files, dir)?.is_some() {
        return cut::build_kustomization(files, dir, flux, cutting);
    }
    // Flux's target namespace reaches the directories this kustomization
    // lists (they are built at the top of the stack): no cut.
    let mut b = Builder::new(files, false);
    b.flux_namespace = flux.namespace.clone();
    let mut acc = Acc::default();
    // Flux generates the kustomization here (fluxcd/pkg kustomize_generator.go
    // `GenerateManifest`): its resources are the manifests and kustomization
    // directories below `dir`, and `spec.components` become its own
    // components, relative to `dir`. They are not those of any directory
    // built below, so `flux_components` stays empty for them.
    let entries = resources::flux_generated_resources(b.files, dir)?;
    for path in entries {
        let r = b.load_resource_path(&path, dir, &mut acc, Span::default());
        b.tolerate(r)?;
    }
    b.add_components(dir, &flux.components, &mut acc)?;
    if let Some((ns, span)) = &flux.namespace
        && !ns.is_empty()
    {
        let config = b.config_with(&acc.config)?;
        transformers::namespace(b.files, acc.res_mut(), ns, *span, &config.namespace)?;
    }
    if !flux.images.is_empty() {
        let config = b.config_with(&acc.config)?;
        for image in &flux.images {
            images::apply(b.files, acc.res_mut(), image, &config.images)?;
        }
    }
    b.finish(acc)
}

/// kustomize's built-in field specs, registered once per [`Files`]: every
/// kustomization level of every build needs them.
pub(crate) fn default_config(files: &mut Files) -> Result<std::sync::Arc<Config>, Issue> {
    if let Some(c) = files.made::<Config>() {
        return Ok(c);
    }
    // Registered in the source map: a base load that reuses the build
    // registers it at the same point.
    files.note_defaults();
    let name = PathBuf::from("<kustomize built-in field specs>");
    let file = files.sources.add(name, fieldspecs::default_text().into());
    let limits = files.limits().yaml;
    let config = match parsed_defaults().filter(|_| limits == crate::yaml::Limits::default()) {
        Some(config) => config.clone(),
        None => {
            let text = files.sources.get(file).text.clone();
            std::sync::Arc::new(parse_defaults(&text, file, &limits).map_err(|e| match e {
                (Some(span), m) => Issue::at(&files.sources, span, m),
                (None, m) => Issue::file(Path::new("<built-in>"), m),
            })?)
        }
    };
    files.keep_made(config.clone());
    Ok(config)
}

/// [`default_config`]'s field specs under the default YAML limits, parsed
/// once per process, on whichever thread asks first: the pipeline asks
/// beside the load's walk, so that the first build, which runs alone on
/// the render's serial path, finds them made. `None` if they do not
/// parse (then [`default_config`] reports why, at its file).
pub(crate) fn parsed_defaults() -> Option<&'static std::sync::Arc<Config>> {
    static PARSED: std::sync::OnceLock<Option<std::sync::Arc<Config>>> = std::sync::OnceLock::new();
    PARSED
        .get_or_init(|| {
            let text = fieldspecs::default_text();
            let limits = crate::yaml::Limits::default();
            parse_defaults(&text, crate::yaml::FileId(0), &limits)
                .ok()
                .map(std::sync::Arc::new)
        })
        .as_ref()
}

/// The built-in field specs read from `text` (their file `file`); an
/// error's span, when it has one, is in `file`.
fn parse_defaults(
    text: &str,
    file: crate::yaml::FileId,
    limits: &crate::yaml::Limits,
) -> Result<Config, (Option<Span>, String)> {
    let docs = crate::yaml::parse_documents(text, file, limits).map_err(|e| (None, e.message))?;
    let mut config = Config::default();
    for d in &docs {
        config.merge(&Config::parse(d).map_err(|(s, m)| (Some(s), m))?);
    }
    Ok(config)
}

/// Whether kustomize's built-in field specs are registered: until then,
/// builds run one after another, so that the build that registers them
/// does it at the same point in every run.
pub(crate) fn defaults_registered(files: &Files) -> bool {
    files.made::<Config>().is_some()
}

/// Whether `dir` holds a kustomization file (which then decides what of
/// the directory is applied).
pub fn has_kustomization(files: &Files, dir: &Path) -> bool {
    !matches!(kustomization::find(files, dir), Ok(None))
}

/// Whether the kustomization file of `dir` is a kustomize `Component`,
/// which a build takes in through `components:`, never `resources:`.
pub(crate) fn is_component(files: &mut Files, dir: &Path) -> bool {
    let Ok(Some(file)) = kustomization::find(files, dir) else {
        return false;
    };
    files.take_documents(&file).is_ok_and(|parsed| {
        parsed
            .docs
            .first()
            .is_some_and(|d| d.str_at(&["kind"]) == Some("Component"))
    })
}

#[cfg(test)]
mod tests;
