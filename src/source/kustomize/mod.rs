//! Rendering a kustomization directory the way `kubectl kustomize` does
//! (kustomize v5), with every value keeping the span it was written at.
//!
//! The order of work follows kustomize's `KustTarget`: resources, then
//! `configurations:`, generators, components, the built-in transformers in
//! their fixed order and inline `transformers:`; once, at the top level,
//! name hashes, name references and dropping local-config objects.

mod fieldspecs;
mod generators;
mod kustomization;
mod namereference;
mod patch_json6902;
mod patch_smp;
mod patches;
mod replacements;
mod resources;
mod transformers;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::source::files::{Files, Input};
use crate::source::object::{Object, StepKind};
use crate::source::{Gap, Issue};
use crate::yaml::{Node, Span};

pub(crate) use fieldspecs::Config;

pub(crate) use kustomization::FILE_NAMES as KUSTOMIZATION_FILES;
pub use patches::apply_patches;

/// Group, version and kind of an object.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub(crate) struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

impl Gvk {
    pub fn of(root: &Node) -> Gvk {
        let api = root.str_at(&["apiVersion"]).unwrap_or("");
        let (group, version) = match api.rsplit_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api.to_string()),
        };
        Gvk {
            group,
            version,
            kind: root.str_at(&["kind"]).unwrap_or("").to_string(),
        }
    }

    /// Cluster-scoped built-in kinds, as kustomize's bundled OpenAPI schema
    /// knows them. Custom resources count as namespaced, as in kustomize.
    /// That schema is Kubernetes 1.21's (kyaml/openapi/kubernetesapi/v1_21_2
    /// up to kustomize v5.7 at least), so kinds added since, such as
    /// ValidatingAdmissionPolicy, get `namespace:` too (kubectl kustomize
    /// v5.5 does so).
    pub fn is_cluster_scoped(&self) -> bool {
        let known: &[(&str, &str)] = &[
            ("", "Namespace"),
            ("", "Node"),
            ("", "PersistentVolume"),
            ("", "ComponentStatus"),
            ("rbac.authorization.k8s.io", "ClusterRole"),
            ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
            ("apiregistration.k8s.io", "APIService"),
            ("storage.k8s.io", "StorageClass"),
            ("storage.k8s.io", "CSIDriver"),
            ("storage.k8s.io", "CSINode"),
            ("storage.k8s.io", "VolumeAttachment"),
            ("scheduling.k8s.io", "PriorityClass"),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
            ),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
            ),
            ("networking.k8s.io", "IngressClass"),
            ("node.k8s.io", "RuntimeClass"),
            ("policy", "PodSecurityPolicy"),
            ("certificates.k8s.io", "CertificateSigningRequest"),
            ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
            ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
            ("authentication.k8s.io", "TokenReview"),
            ("authorization.k8s.io", "SelfSubjectAccessReview"),
            ("authorization.k8s.io", "SelfSubjectRulesReview"),
            ("authorization.k8s.io", "SubjectAccessReview"),
        ];
        known
            .iter()
            .any(|(g, k)| *g == self.group && *k == self.kind)
    }
}

/// What kustomize identifies an object by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ResId {
    pub gvk: Gvk,
    pub name: String,
    pub namespace: String,
}

impl ResId {
    pub fn of(root: &Node) -> ResId {
        ResId {
            gvk: Gvk::of(root),
            name: root.str_at(&["metadata", "name"]).unwrap_or("").to_string(),
            namespace: root
                .str_at(&["metadata", "namespace"])
                .unwrap_or("")
                .to_string(),
        }
    }

    /// kustomize treats a missing namespace as `default` when comparing.
    fn effective_ns(&self) -> &str {
        if self.gvk.is_cluster_scoped() {
            ""
        } else if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    /// `ResId.Equals`: same group, kind, name and effective namespace (the
    /// version is ignored when either side leaves it out).
    pub fn matches(&self, other: &ResId) -> bool {
        self.gvk.kind == other.gvk.kind
            && self.gvk.group == other.gvk.group
            && (self.gvk.version.is_empty()
                || other.gvk.version.is_empty()
                || self.gvk.version == other.gvk.version)
            && self.name == other.name
            && self.effective_ns() == other.effective_ns()
    }

    pub fn display(&self) -> String {
        let ns = if self.namespace.is_empty() {
            String::new()
        } else {
            format!("{}/", self.namespace)
        };
        format!("{}/{}{}", self.gvk.kind, ns, self.name)
    }
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

    pub fn gvk(&self) -> Gvk {
        Gvk::of(&self.obj.root)
    }

    /// Remembers the current id before a rename, for patches and name
    /// references written against the old name.
    pub fn store_prev(&mut self) {
        let cur = self.cur_id();
        if !self.prev.contains(&cur) {
            self.prev.push(cur);
        }
    }

    pub fn any_id_matches(&self, id: &ResId) -> bool {
        self.cur_id().matches(id) || self.org.matches(id) || self.prev.iter().any(|p| p.matches(id))
    }

    /// Every name this object has been known by, current first.
    pub fn names(&self) -> Vec<String> {
        let mut names = vec![self.obj.name().to_string(), self.org.name.clone()];
        names.extend(self.prev.iter().map(|p| p.name.clone()));
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
    index: Option<HashMap<(String, String, String), Vec<usize>>>,
}

impl Acc {
    pub fn res(&self) -> &[Res] {
        &self.res
    }

    pub fn res_mut(&mut self) -> &mut Vec<Res> {
        self.index = None;
        &mut self.res
    }

    pub fn into_res(self) -> Vec<Res> {
        self.res
    }

    fn key(id: &ResId) -> (String, String, String) {
        (id.gvk.group.clone(), id.gvk.kind.clone(), id.name.clone())
    }

    /// Adds an object without checking for duplicates (generators check
    /// their own `behavior`).
    pub fn push(&mut self, r: Res) {
        if let Some(index) = &mut self.index {
            index
                .entry(Acc::key(&r.cur_id()))
                .or_default()
                .push(self.res.len());
        }
        self.res.push(r);
    }

    /// Adds an object, refusing a second object with the same id.
    pub fn append(&mut self, r: Res, files: &Files, span: Span) -> Result<(), Issue> {
        let id = r.cur_id();
        let res = &self.res;
        let index = self.index.get_or_insert_with(|| {
            let mut index: HashMap<_, Vec<usize>> = HashMap::new();
            for (i, x) in res.iter().enumerate() {
                index.entry(Acc::key(&x.cur_id())).or_default().push(i);
            }
            index
        });
        let same = index
            .get(&Acc::key(&id))
            .is_some_and(|positions| positions.iter().any(|&i| res[i].cur_id().matches(&id)));
        if same {
            // An entry of a kustomization Flux generates has no line: the
            // object's own document is what to change.
            let at = if span == Span::default() {
                r.obj.root.span
            } else {
                span
            };
            return Err(Issue::at(
                &files.sources,
                at,
                format!(
                    "may not add resource with an already registered id: {}",
                    id.display()
                ),
            ));
        }
        self.push(r);
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

/// What Flux's kustomize-controller renders for a `spec.path`: the
/// kustomization there, or else one generated over every manifest below it,
/// with the Flux Kustomization's `spec.components` (paths relative to
/// `dir`) added to its components.
pub fn build_flux_path(
    files: &mut Files,
    dir: &Path,
    components: &[(String, Span)],
) -> Result<Built, Issue> {
    // A base load reuses the working tree's build when every input is alike.
    crate::source::reuse::build(files, dir, components, |files| {
        build_flux_path_here(files, dir, components)
    })
}

fn build_flux_path_here(
    files: &mut Files,
    dir: &Path,
    components: &[(String, Span)],
) -> Result<Built, Issue> {
    let mut b = Builder::new(files, false);
    let mut acc = Acc::default();
    if kustomization::find(b.files, dir)?.is_some() {
        b.flux_components = components.to_vec();
        b.build_dir(dir, &mut acc, false, None)?;
        return b.finish(acc);
    }
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
    b.add_components(dir, components, &mut acc)?;
    b.finish(acc)
}

/// kustomize's built-in field specs, parsed once per [`Files`]: every
/// kustomization level of every build needs them.
pub(crate) fn default_config(files: &mut Files) -> Result<std::sync::Arc<Config>, Issue> {
    if let Some(c) = &files.kustomize_defaults {
        return Ok(c.clone());
    }
    // Registered in the source map: a base load that reuses the build
    // registers it at the same point.
    files.note_defaults();
    let name = PathBuf::from("<kustomize built-in field specs>");
    let file = files.sources.add(name, fieldspecs::default_text().into());
    let text = files.sources.get(file).text.clone();
    let docs = crate::yaml::parse_documents(&text, file, files.limits())
        .map_err(|e| Issue::file(Path::new("<built-in>"), e.message))?;
    let mut config = Config::default();
    for d in &docs {
        config.merge(&Config::parse(d).map_err(|(s, m)| Issue::at(&files.sources, s, m))?);
    }
    let config = std::sync::Arc::new(config);
    files.kustomize_defaults = Some(config.clone());
    Ok(config)
}

/// Whether `dir` holds a kustomization file (which then decides what of
/// the directory is applied).
pub fn has_kustomization(files: &Files, dir: &Path) -> bool {
    !matches!(kustomization::find(files, dir), Ok(None))
}

/// Flux's `targetNamespace`: kustomize's namespace transformer, which
/// kustomize-controller applies by writing `namespace:` into the
/// kustomization it generates.
pub fn set_namespace(
    files: &mut Files,
    objects: &mut Vec<Object>,
    ns: &str,
    span: Span,
) -> Result<(), Issue> {
    let mut b = Builder::new(files, false);
    let config = b.default_config()?;
    let mut res: Vec<Res> = objects.drain(..).map(Res::new).collect();
    let result = transformers::namespace(b.files, &mut res, ns, span, &config.namespace);
    objects.extend(res.into_iter().map(|r| r.obj));
    result
}

/// A kustomization built once, for the next entries that list it.
struct Memo {
    acc: Acc,
    /// The gaps its build recorded, recorded again on every use (so that
    /// each listing kustomization knows a remote entry was left out);
    /// [`Builder::finish`] reports each once.
    gaps: Vec<Issue>,
    /// The kustomization file's root, where a duplicate id is reported
    /// when the directory is the build's top.
    root: Span,
}

pub(crate) struct Builder<'f> {
    pub files: &'f mut Files,
    /// Directories being built, outermost first, to report cycles.
    stack: Vec<PathBuf>,
    restrict: bool,
    /// A Flux Kustomization's `spec.components`, added to the top-level
    /// kustomization's own.
    flux_components: Vec<(String, Span)>,
    /// Entries the build went on without.
    gaps: Vec<Issue>,
    /// Kustomization directories asked for once in this build, and the
    /// result of those asked for again: a kustomization's objects depend
    /// only on its directory (it starts from an empty accumulator), so a
    /// DAG whose levels each list the next twice is built once per
    /// directory, not once per path. Results are kept only from the
    /// second request on, so the common tree costs no copies.
    requested: HashSet<PathBuf>,
    memo: HashMap<PathBuf, Memo>,
    /// Directories built so far, against `Limits::max_kustomize_builds`.
    builds: usize,
    /// Objects merged so far, against `Limits::max_kustomize_objects`.
    merged: usize,
    /// Bytes the generators of this build may still read, from
    /// `Limits::max_object_bytes` (each listing of a file is read again).
    generator_bytes_left: usize,
}

impl<'f> Builder<'f> {
    fn new(files: &'f mut Files, restrict: bool) -> Builder<'f> {
        let generator_bytes_left = files.limits().max_object_bytes;
        Builder {
            files,
            stack: Vec::new(),
            restrict,
            flux_components: Vec::new(),
            gaps: Vec::new(),
            requested: HashSet::new(),
            memo: HashMap::new(),
            builds: 0,
            merged: 0,
            generator_bytes_left,
        }
    }

    /// Adds a kustomization's objects to those of the one that lists it
    /// (at `span`), counted against `Limits::max_kustomize_objects`.
    fn merge_into(&mut self, sub: Acc, acc: &mut Acc, span: Span) -> Result<(), Issue> {
        let max = self.files.limits().max_kustomize_objects;
        self.merged += sub.res.len();
        if self.merged > max {
            return Err(Issue::at(
                &self.files.sources,
                span,
                format!(
                    "kustomize build budget exceeded: more than {max} objects gathered (a \
                     directory listed by several overlays is copied into each)"
                ),
            ));
        }
        acc.config.merge(&sub.config);
        for res in sub.into_res() {
            acc.append(res, self.files, span)?;
        }
        Ok(())
    }

    /// Records a gap and goes on; any other error stops the build.
    fn tolerate(&mut self, result: Result<(), Issue>) -> Result<(), Issue> {
        match result {
            Err(issue) if issue.gap.is_some() => {
                self.gaps.push(issue);
                Ok(())
            }
            other => other,
        }
    }

    /// The last steps, done once for the whole build.
    fn finish(&mut self, mut acc: Acc) -> Result<Built, Issue> {
        let config = self.config_with(&acc.config)?;
        generators::add_hashes(acc.res_mut());
        namereference::fix(acc.res_mut(), &config.name_reference)
            .map_err(|(span, m)| Issue::at(&self.files.sources, span, m))?;
        let out = acc
            .into_res()
            .into_iter()
            .filter(|r| {
                r.obj
                    .root
                    .path(&[
                        "metadata",
                        "annotations",
                        "config.kubernetes.io/local-config",
                    ])
                    .and_then(Node::scalar_text)
                    .is_none_or(|v| v != "true")
            })
            .map(|r| r.obj)
            .collect();
        Ok(Built {
            objects: out,
            gaps: unique(std::mem::take(&mut self.gaps)),
        })
    }

    /// kustomize's built-in field specs, parsed once per [`Files`]: every
    /// kustomization level of every build needs them.
    fn default_config(&mut self) -> Result<std::sync::Arc<Config>, Issue> {
        default_config(self.files)
    }

    /// The built-in field specs plus a kustomization's `configurations:`;
    /// most kustomizations have none, and then nothing is copied.
    fn config_with(&mut self, extra: &Config) -> Result<std::sync::Arc<Config>, Issue> {
        let defaults = self.default_config()?;
        if extra.is_empty() {
            return Ok(defaults);
        }
        let mut config = Config::clone(&defaults);
        config.merge(extra);
        Ok(std::sync::Arc::new(config))
    }

    /// Builds `dir` into `acc`: a kustomization into a fresh accumulator
    /// merged afterwards, a component directly into its parent's.
    pub fn build_dir(
        &mut self,
        dir: &Path,
        acc: &mut Acc,
        component: bool,
        from: Option<Span>,
    ) -> Result<(), Issue> {
        if let Some(pos) = self.stack.iter().position(|d| d == dir) {
            let mut cycle: Vec<String> = self.stack[pos..]
                .iter()
                .map(|d| d.display().to_string())
                .collect();
            cycle.push(dir.display().to_string());
            let msg = format!("kustomization cycle: {}", cycle.join(" -> "));
            return Err(match from {
                Some(s) => Issue::at(&self.files.sources, s, msg),
                None => Issue::file(dir, msg),
            });
        }
        if !component && let Some(memo) = self.memo.get(dir) {
            let (sub, root) = (memo.acc.clone(), memo.root);
            self.gaps.extend(memo.gaps.iter().cloned());
            return self.merge_into(sub, acc, from.unwrap_or(root));
        }
        let limits = *self.files.limits();
        self.builds += 1;
        let over = if self.stack.len() >= limits.max_kustomize_depth {
            Some(format!(
                "kustomizations and components nested more than {} deep",
                limits.max_kustomize_depth
            ))
        } else if self.builds > limits.max_kustomize_builds {
            Some(format!(
                "more than {} kustomization and component directories built (a component listed twice is applied twice)",
                limits.max_kustomize_builds
            ))
        } else if !self.files.spend_build() {
            Some(format!(
                "the builds of this repository went through more than {} kustomization and component directories in all",
                limits.max_kustomize_run_builds
            ))
        } else {
            None
        };
        if let Some(what) = over {
            let msg = format!("kustomize build budget exceeded: {what}");
            return Err(match from {
                Some(s) => Issue::at(&self.files.sources, s, msg),
                None => Issue::file(dir, msg),
            });
        }
        let Some(kfile) = kustomization::find(self.files, dir)? else {
            let msg = if self.files.is_dir(dir) {
                format!(
                    "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                    dir.display()
                )
            } else {
                // kustomize: "must build at directory: not a valid
                // directory"; a file of the same name beside it is the
                // usual cause (a component written as one file).
                let file = ["yaml", "yml"]
                    .map(|ext| PathBuf::from(format!("{}.{ext}", dir.display())))
                    .into_iter()
                    .find(|f| self.files.is_file(f));
                match file {
                    Some(f) => format!(
                        "directory '{}' does not exist; '{}' is a file: a component or a \
                         kustomization listed as a directory must be a directory with a \
                         kustomization.yaml",
                        dir.display(),
                        f.display()
                    ),
                    None => format!("directory '{}' does not exist", dir.display()),
                }
            };
            return Err(match from {
                Some(s) => Issue::at(&self.files.sources, s, msg).gap(Gap::Missing),
                None => Issue::file(dir, msg),
            });
        };
        let mut k = kustomization::Kustomization::load(self.files, &kfile, dir)?;
        k.restrict = self.restrict;
        // kubectl renders a Component named directly like a kustomization.
        if from.is_some() && component != k.is_component() {
            let msg = if component {
                format!("expected kind 'Component' for path '{}'", dir.display())
            } else {
                format!("expected kind != 'Component' for path '{}'", dir.display())
            };
            // An entry of a kustomization Flux generates has no line
            // (`Span::default()`): the directory's own `kind` is what to
            // change.
            let at = from
                .filter(|s| *s != Span::default())
                .unwrap_or_else(|| k.root.get("kind").map_or(k.root.span, |n| n.span));
            return Err(Issue::at(&self.files.sources, at, msg).gap(Gap::WrongKind));
        }
        self.files.note_built_dir(dir.to_path_buf());
        self.stack.push(dir.to_path_buf());
        let result = if component {
            let before = acc.res().len();
            let r = self.accumulate(&k, acc);
            for res in acc.res_mut().iter_mut().skip(before) {
                res.obj.chain.insert(
                    0,
                    crate::source::Step {
                        kind: StepKind::Component,
                        detail: dir.display().to_string(),
                        at: from,
                    },
                );
            }
            r
        } else {
            let gaps_before = self.gaps.len();
            let mut sub = Acc::default();
            let r = self.accumulate(&k, &mut sub);
            for res in sub.res_mut() {
                res.obj.chain.insert(
                    0,
                    crate::source::Step {
                        kind: StepKind::Kustomization,
                        detail: dir.display().to_string(),
                        at: Some(k.root.span),
                    },
                );
            }
            r.and_then(|()| {
                if !self.requested.insert(dir.to_path_buf()) {
                    let memo = Memo {
                        acc: sub.clone(),
                        gaps: unique(self.gaps[gaps_before..].to_vec()),
                        root: k.root.span,
                    };
                    self.memo.insert(dir.to_path_buf(), memo);
                }
                self.merge_into(sub, acc, from.unwrap_or(k.root.span))
            })
        };
        self.stack.pop();
        result
    }

    fn accumulate(&mut self, k: &kustomization::Kustomization, acc: &mut Acc) -> Result<(), Issue> {
        let gaps_before = self.gaps.len();
        for (entry, span) in k.strings("resources")? {
            let r = self.load_resource(&entry, span, &k.dir, acc);
            self.tolerate(r)?;
        }
        for (entry, span) in k.strings("configurations")? {
            let path = match k.local_file(self.files, &entry, span, Input::Configuration) {
                Ok(path) => path,
                Err(e) => {
                    self.tolerate(Err(e))?;
                    continue;
                }
            };
            let parsed = self.files.documents(&path)?;
            for d in &parsed.docs {
                let c = Config::parse(d).map_err(|(s, m)| Issue::at(&self.files.sources, s, m))?;
                acc.config.merge(&c);
            }
        }
        generators::run(
            self.files,
            k,
            acc,
            &mut self.gaps,
            &mut self.generator_bytes_left,
        )?;
        let mut components = k.strings("components")?;
        if self.stack.len() == 1 {
            components.extend(self.flux_components.iter().cloned());
        }
        self.add_components(&k.dir, &components, acc)?;
        let config = self.config_with(&acc.config)?;
        let built = self.transformer_dirs(k)?;
        let result = transformers::run(self.files, k, acc, &config, &built);
        // A patch or replacement whose target is missing after a remote
        // entry was left out may well be for an object of that entry.
        let remote_left_out = self.gaps[gaps_before..]
            .iter()
            .any(|g| g.gap == Some(Gap::Remote));
        match result {
            Err(mut issue) if remote_left_out && issue.gap.is_none() => {
                issue.message = format!(
                    "{} (its target may be in a remote entry of this kustomization, which is not fetched)",
                    issue.message
                );
                self.tolerate(Err(issue.gap(Gap::Remote)))
            }
            other => self.tolerate(other),
        }
    }

    /// The `transformers:` entries that name a directory, built: kustomize
    /// accumulates the entries like resources, so a kustomization there is
    /// built (its namespace, patches and all) and each object it yields is
    /// a transformer configuration (api/internal/target/kusttarget.go
    /// `configureExternalTransformers`). Seen in real repositories: one
    /// shared NamespaceTransformer that each namespace's overlay gives its
    /// namespace.
    fn transformer_dirs(
        &mut self,
        k: &kustomization::Kustomization,
    ) -> Result<HashMap<String, Vec<Node>>, Issue> {
        let mut out = HashMap::new();
        for (entry, span) in k.strings("transformers").unwrap_or_default() {
            let dir = crate::source::join_within(&k.dir, &entry);
            let Some(dir) = dir.filter(|d| !entry.contains(':') && self.files.is_dir(d)) else {
                continue;
            };
            let mut sub = Acc::default();
            self.build_dir(&dir, &mut sub, false, Some(span))?;
            let docs = sub
                .into_res()
                .into_iter()
                .map(|r| {
                    let path = self.files.sources.path(r.obj.file).to_path_buf();
                    self.files
                        .note_input(path, Input::Transformer, k.file.clone());
                    Node::clone(&r.obj.root)
                })
                .collect();
            out.insert(entry, docs);
        }
        Ok(out)
    }

    fn add_components(
        &mut self,
        base: &Path,
        components: &[(String, Span)],
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        for (entry, span) in components {
            let span = *span;
            if resources::is_remote(entry) {
                let issue = Issue::at(
                    &self.files.sources,
                    span,
                    format!("remote component '{entry}' is not fetched (it needs the network)"),
                );
                self.tolerate(Err(issue.gap(Gap::Remote)))?;
                continue;
            }
            let Some(dir) = crate::source::join_within(base, entry) else {
                return Err(Issue::at(
                    &self.files.sources,
                    span,
                    format!("'{entry}' leaves the repository"),
                ));
            };
            let r = self.build_dir(&dir, acc, true, Some(span));
            self.tolerate(r)?;
        }
        Ok(())
    }

    fn load_resource(
        &mut self,
        entry: &str,
        span: Span,
        dir: &Path,
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        if resources::is_remote(entry) {
            let issue = Issue::at(
                &self.files.sources,
                span,
                format!("remote resource '{entry}' is not fetched (it needs the network)"),
            );
            return Err(issue.gap(Gap::Remote));
        }
        let Some(path) = crate::source::join_within(dir, entry) else {
            return Err(Issue::at(
                &self.files.sources,
                span,
                format!("'{entry}' leaves the repository"),
            ));
        };
        self.load_resource_path(&path, dir, acc, span)
    }

    fn load_resource_path(
        &mut self,
        path: &Path,
        dir: &Path,
        acc: &mut Acc,
        span: Span,
    ) -> Result<(), Issue> {
        if let Some(reason) = self.files.outside(path) {
            return Err(Issue::at(&self.files.sources, span, reason));
        }
        if self.files.is_file(path) {
            if self.restrict && !path.starts_with(dir) {
                return Err(Issue::at(
                    &self.files.sources,
                    span,
                    format!(
                        "security; file '{}' is not in or below '{}'",
                        path.display(),
                        dir.display()
                    ),
                ));
            }
            let loaded =
                resources::load_file(self.files, path).map_err(|issue| match issue.gap {
                    Some(_) => issue,
                    None => issue.gap(Gap::Malformed),
                })?;
            for r in loaded {
                acc.append(r, self.files, span)?;
            }
            Ok(())
        } else if self.files.is_dir(path) {
            self.build_dir(path, acc, false, Some(span))
        } else {
            Err(Issue::at(
                &self.files.sources,
                span,
                format!("'{}' is neither a file nor a directory", path.display()),
            )
            .gap(Gap::Missing))
        }
    }
}

#[cfg(test)]
mod tests;
