//! Facts derived across objects: which app runs which version, which
//! database it uses, that database's effective settings and the storage
//! under it. Rules ask these questions; each answer carries the spans of
//! the values it was derived from, or says why it is unknown.

pub mod app;
pub mod conventions;
pub mod database;
pub mod env;
pub mod flux;
mod index;
pub mod postgres;
pub mod replication;
pub mod session;
pub mod settings;
pub mod storage;
pub mod version;
pub mod volume;

use std::sync::OnceLock;

use crate::source::Object;
use crate::source::data;
use crate::source::helm::{self, Release};
use crate::source::repo::{Repo, Skipped, Unapplied};
use crate::yaml::{FileId, Origin, SourceMap};
use index::Index;

/// Index of an object in [`Model::objects`].
pub type ObjRef = usize;

/// The loaded objects plus what is costly to derive more than once.
pub struct Model<'r> {
    pub objects: &'r [Object],
    pub sources: &'r SourceMap,
    /// The repository's files, when the objects come from one.
    pub files: Option<&'r crate::source::Files>,
    /// `kind/name` of the Flux sources that are this repository, with
    /// the directory that is their root.
    pub local_sources: Option<&'r std::collections::BTreeMap<String, std::path::PathBuf>>,
    /// What became of each Flux Kustomization, when the objects come from
    /// a repository.
    pub flux: &'r [crate::source::coverage::FluxRender],
    /// The objects of files Flux does not apply, and why each file is
    /// skipped (sorted by path), when the objects come from a repository.
    unapplied: &'r [Unapplied],
    skipped: &'r [Skipped],
    /// Effective chart and values of each HelmRelease, by object index.
    /// Boxed: a `Release` is ~370 bytes and most objects are no
    /// HelmRelease, so unboxed slots were 38 MB of the 100k-object
    /// synthetic repo's peak (BENCHMARKS.md).
    releases: Vec<Option<Box<Release>>>,
    /// Objects by (kind, name): lookups by reference are the model's
    /// inner loop, and a scan per lookup made large repos quadratic.
    by_name: Index<(&'r str, &'r str)>,
    /// Objects that make a Secret (Secret, SealedSecret, ExternalSecret)
    /// by the name of that Secret.
    secrets: Index<&'r str>,
    /// Objects by the file their root node's text is in.
    by_text_file: Index<FileId>,
    /// Objects by the file their document is in ([`Object::file`]),
    /// built on first use: a fix looks for the value it changes in the
    /// objects of that value's file first, and a scan of every object per
    /// finding made large repos quadratic.
    by_file: OnceLock<Index<FileId>>,
    /// Objects by kind: [`Model::of_kind`] is asked once per database,
    /// claim or volume a rule looks at, and a scan of every object each
    /// time made a repository of many workloads quadratic.
    by_kind: Index<&'r str>,
    /// Objects whose name is what a Flux variable the repository may not
    /// show leaves (`${CLAIM:-data}`), by kind and that text, built on
    /// first use: each reference the repository cannot resolve asks it.
    named_if_unset: OnceLock<Index<(&'r str, &'r str)>>,
    /// Bound PersistentVolumeClaims by namespace and each name of a
    /// database they may hold ([`storage`]'s `bound_volume`), built on
    /// first use: a scan of every claim per database made many
    /// databases and claims quadratic.
    pub(crate) claims_for: OnceLock<Index<(&'r str, &'r str)>>,
    /// Workloads by each label of their pod template (key and value as
    /// text), built on first use: what a Service selects is found
    /// through its rarest label, not by a scan of every object.
    pod_labels: OnceLock<Index<(&'r str, String)>>,
    /// The keys of each ConfigMap or Secret asked for one at a time
    /// ([`Model::data_entry`]), read once.
    held: data::ReadOnce<'r>,
    /// Every storage class the repo declares, computed on first use.
    pub(crate) classes: OnceLock<storage::Classes>,
    /// What identifies each release's and workload's app, computed on
    /// first use.
    app_facts: OnceLock<Vec<app::AppFacts>>,
    /// What a module (a Postgres operator's, say) works out once per
    /// model, by its type: the module keeps its own index in its own
    /// file ([`Model::memo`]).
    memos: Memos,
}

type Memos = std::sync::Mutex<
    std::collections::HashMap<std::any::TypeId, std::sync::Arc<dyn std::any::Any + Send + Sync>>,
>;

/// A fact that could not be established, and why (shown under
/// `--verbose` so users see what the linter could not see).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unknown(pub String);

impl<'r> Model<'r> {
    pub fn new(repo: &'r Repo) -> Model<'r> {
        // The releases' merges spend what the load's builds left of the
        // run's output budget.
        let shared = helm::Shared::new(repo.files.budget_left().bytes);
        let mut model = Model::sharing(&repo.objects, &repo.files.sources, &shared);
        model.files = Some(&repo.files);
        model.local_sources = Some(&repo.local_sources);
        model.flux = &repo.flux;
        model.unapplied = &repo.unapplied;
        model.skipped = &repo.skipped;
        model
    }

    pub fn from_parts(objects: &'r [Object], sources: &'r SourceMap) -> Model<'r> {
        let bytes = crate::source::Limits::default()
            .kustomize
            .max_run_output_bytes;
        Model::sharing(objects, sources, &helm::Shared::new(bytes))
    }

    /// [`Model::from_parts`], the releases sharing `shared`.
    fn sharing(objects: &'r [Object], sources: &'r SourceMap, shared: &helm::Shared) -> Model<'r> {
        let mut by_name = Vec::with_capacity(objects.len());
        let mut secrets = Vec::new();
        let mut by_text_file = Vec::with_capacity(objects.len());
        let mut by_kind = Vec::with_capacity(objects.len());
        for (i, o) in objects.iter().enumerate() {
            by_name.push(((o.kind(), o.name()), i));
            by_kind.push((o.kind(), i));
            by_text_file.push((o.root.span().file, i));
            if let Some(("Secret", name)) = data::provides(o) {
                secrets.push((name, i));
            }
        }
        // Sorted on two cores when the run uses them, the one by two
        // strings (the longest) against the other three: they were 4.5 %
        // of the serial path at 10k objects.
        let (by_name, (secrets, by_text_file, by_kind)) = crate::cores::join(
            || Index::new(by_name),
            || {
                let secrets = Index::new(secrets);
                (secrets, Index::new(by_text_file), Index::new(by_kind))
            },
        );
        // Each release resolves on its own (values files, valuesFrom):
        // on every core the run uses, in object order.
        let releases = crate::cores::map(objects, |hr| {
            let lookup = |kind: &str, ns: &str, name: &str| {
                let seen = |i: ObjRef| {
                    let o = &objects[i];
                    (data::made_in(o, ns) && o.same_tree(hr)).then_some(o)
                };
                match kind {
                    "Secret" => secrets.get(&name).find_map(seen),
                    _ => by_name.get(&(kind, name)).find_map(seen),
                }
            };
            let elsewhere = |kind: &str, ns: &str, name: &str| {
                let found = match kind {
                    "Secret" => secrets.get(&name).find(|&i| data::made_in(&objects[i], ns)),
                    _ => by_name
                        .get(&(kind, name))
                        .find(|&i| data::made_in(&objects[i], ns)),
                }?;
                Some(applier(&objects[found]))
            };
            is_helm_release(hr).then(|| {
                Box::new(helm::resolve_in_tree(
                    sources, hr, &lookup, &elsewhere, shared,
                ))
            })
        });
        Model {
            objects,
            sources,
            files: None,
            local_sources: None,
            flux: &[],
            unapplied: &[],
            skipped: &[],
            releases,
            by_name,
            secrets,
            by_text_file,
            by_kind,
            by_file: OnceLock::new(),
            named_if_unset: OnceLock::new(),
            claims_for: OnceLock::new(),
            pod_labels: OnceLock::new(),
            held: data::ReadOnce::default(),
            classes: OnceLock::new(),
            app_facts: OnceLock::new(),
            memos: Memos::default(),
        }
    }

    /// The value of type `T` this model holds, made by `make` on first
    /// use: an index a module builds over the objects once instead of a
    /// scan per question. `make` runs outside the lock (it may ask for
    /// other memos); when two threads make one at once, the first kept
    /// is the one both get.
    pub(crate) fn memo<T: std::any::Any + Send + Sync>(
        &self,
        make: impl FnOnce() -> T,
    ) -> std::sync::Arc<T> {
        let key = std::any::TypeId::of::<T>();
        let lock = || self.memos.lock().unwrap_or_else(|e| e.into_inner());
        let held = lock().get(&key).cloned();
        let any = match held {
            Some(any) => any,
            None => {
                let made: std::sync::Arc<dyn std::any::Any + Send + Sync> =
                    std::sync::Arc::new(make());
                lock().entry(key).or_insert(made).clone()
            }
        };
        // Keyed by `T`'s own TypeId, so it is a `T`.
        any.downcast::<T>()
            .unwrap_or_else(|_| unreachable!("memo keyed by type"))
    }

    /// Objects whose root node's text is in `file`, in model order: the
    /// candidates for text an edit there touches.
    pub fn with_text_in(&self, file: FileId) -> impl Iterator<Item = ObjRef> + '_ {
        self.by_text_file.get(&file)
    }

    /// Objects whose document is in `file` (for generated objects, the
    /// kustomization.yaml that generated them), in model order.
    pub fn written_in(&self, file: FileId) -> impl Iterator<Item = ObjRef> + '_ {
        self.by_file
            .get_or_init(|| {
                Index::new(
                    self.objects
                        .iter()
                        .enumerate()
                        .map(|(i, o)| (o.file, i))
                        .collect(),
                )
            })
            .get(&file)
    }

    pub fn object(&self, r: ObjRef) -> &'r Object {
        &self.objects[r]
    }

    pub fn release(&self, r: ObjRef) -> Option<&Release> {
        self.releases.get(r).and_then(Option::as_deref)
    }

    /// What the releases could not use (a values document that does not
    /// parse, a `valuesFrom` source missing, a merge past the budget),
    /// each once: a HelmRelease rendered by several Flux Kustomizations
    /// resolves once per copy.
    pub fn release_issues(&self) -> Vec<crate::source::Issue> {
        let mut seen = std::collections::HashSet::new();
        self.releases
            .iter()
            .flatten()
            .flat_map(|r| &r.issues)
            .filter(|i| seen.insert(*i))
            .cloned()
            .collect()
    }

    /// Drops the model, its releases' values freed on a worker when the
    /// run uses every core (`cores::drop_later`): they are the model's
    /// largest part (2 % of a joryirving__home-ops lint's main thread on
    /// two cores), and the report drawn next waits for none of it.
    pub fn free(mut self) {
        let releases = std::mem::take(&mut self.releases);
        crate::cores::drop_later(releases);
    }

    /// The `valuesFrom` sources, not optional, that the repository does
    /// not hold (see [`Release::absent`]), each once.
    pub fn release_absent(&self) -> Vec<crate::source::Issue> {
        let mut seen = std::collections::HashSet::new();
        self.releases
            .iter()
            .flatten()
            .flat_map(|r| &r.absent)
            .filter(|i| seen.insert(*i))
            .cloned()
            .collect()
    }

    pub(crate) fn app_facts(&self) -> &[app::AppFacts] {
        self.app_facts.get_or_init(|| app::facts(self))
    }

    /// Objects of a kind in an API group (any version).
    pub fn of_kind<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
    ) -> impl Iterator<Item = ObjRef> + 'a {
        self.by_kind
            .get(&kind)
            .filter(move |&i| self.objects[i].is(group, kind))
    }

    /// Objects of a kind in an API group named `name`, in any namespace
    /// and tree.
    pub fn named<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = ObjRef> + 'a {
        self.by_name
            .get(&(kind, name))
            .filter(move |&i| self.objects[i].is(group, kind))
    }

    /// The workloads (objects with a pod template) whose template's labels
    /// hold every entry of `selector` (a Service's), in object order.
    pub fn selected_by<'a>(
        &'a self,
        selector: &'a [(crate::yaml::Node, crate::yaml::Node)],
    ) -> impl Iterator<Item = ObjRef> + 'a {
        let index = self.pod_labels.get_or_init(|| {
            let mut entries = Vec::new();
            for (i, o) in self.objects.iter().enumerate() {
                let labels = crate::source::object::pod_spec(o)
                    .and(o.root.path(&["spec", "template", "metadata", "labels"]))
                    .and_then(crate::yaml::Node::as_map);
                for (k, v) in labels.into_iter().flatten() {
                    if let (Some(k), Some(v)) = (k.as_str(), v.scalar_text()) {
                        entries.push(((k, v), i));
                    }
                }
            }
            Index::new(entries)
        });
        let pairs: Vec<(&str, String)> = selector
            .iter()
            .filter_map(|(k, v)| Some((k.as_str()?, v.scalar_text()?)))
            .collect();
        // A selector entry no label can equal (a key that is not text)
        // selects nothing.
        let rarest = (pairs.len() == selector.len())
            .then(|| {
                pairs
                    .iter()
                    .min_by_key(|&(k, v)| index.count(&(*k, v.clone())))
            })
            .flatten()
            .map(|(k, v)| (*k, v.clone()));
        rarest
            .into_iter()
            .flat_map(move |key| index.get(&key))
            .filter(move |&i| {
                let o = &self.objects[i];
                let labels = o.root.path(&["spec", "template", "metadata", "labels"]);
                pairs.iter().all(|(k, v)| {
                    labels
                        .and_then(|l| l.get(k))
                        .and_then(crate::yaml::Node::scalar_text)
                        .as_ref()
                        == Some(v)
                })
            })
    }

    /// An object by kind, namespace and name, as `near` sees it: in the
    /// same cluster's Flux tree. Objects written without a namespace match
    /// any namespace: a repo often leaves it to Flux.
    pub fn find(
        &self,
        near: ObjRef,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<ObjRef> {
        let near = &self.objects[near];
        self.by_name.get(&(kind, name)).find(|&i| {
            let o = &self.objects[i];
            o.is(group, kind) && o.namespace().is_none_or(|ns| ns == namespace) && o.same_tree(near)
        })
    }

    /// Why [`Model::find`] found nothing, for the user: `what` (`claim
    /// data`) is not in the repository, or only in a Flux tree other than
    /// `near`'s, which the repository's roots apply as another cluster.
    pub fn not_found(&self, near: ObjRef, kind: &str, namespace: &str, what: &str) -> String {
        let name = what.rsplit(' ').next().unwrap_or(what);
        let elsewhere = self
            .by_name
            .get(&(kind, name))
            .map(|i| &self.objects[i])
            .find(|o| o.namespace().is_none_or(|ns| ns == namespace));
        match elsewhere {
            Some(o) => format!(
                "{what} is in the repository only under {}, which another Flux root applies, so it is taken for another cluster than {}'s",
                applier(o),
                self.objects[near].id()
            ),
            None => match self.named_unless_set(near, kind, namespace, name) {
                Some(why) => format!("{what} {why}"),
                None => {
                    let mut others: Vec<&str> = self
                        .by_name
                        .get(&(kind, name))
                        .filter_map(|i| self.objects[i].namespace())
                        .collect();
                    others.sort_unstable();
                    others.dedup();
                    if let Some((exact, why)) = self.unapplied_as(kind, namespace, name)
                        && (exact || others.is_empty())
                    {
                        return format!("{what} {why}");
                    }
                    match others.as_slice() {
                        [] => format!("{what} is not in the repository in namespace {namespace}"),
                        _ => format!(
                            "{what} is not in the repository in namespace {namespace} (it holds one of that name only in namespace {})",
                            others.join(", ")
                        ),
                    }
                }
            },
        }
    }

    /// Where the repository holds an object of `kind` named `name` in a
    /// file Flux does not apply, and why that file is not applied: one
    /// written in `namespace` (`true`), else one written without a
    /// namespace, which is said to be only possibly the same object.
    fn unapplied_as(&self, kind: &str, namespace: &str, name: &str) -> Option<(bool, String)> {
        let named = |u: &&Unapplied, ns: Option<&str>| {
            u.kind == kind && u.name == name && u.namespace.as_deref() == ns
        };
        let (held, exact) = match self.unapplied.iter().find(|u| named(u, Some(namespace))) {
            Some(u) => (u, true),
            None => (self.unapplied.iter().find(|u| named(u, None))?, false),
        };
        let why = self
            .skipped
            .binary_search_by(|s| s.path.cmp(&held.path))
            .map_or("it is not applied", |i| {
                let reason = self.skipped[i].reason.as_str();
                reason.strip_prefix("not applied: ").unwrap_or(reason)
            });
        let at = format!("{} ({why})", held.path.display());
        Some(if exact {
            (
                true,
                format!("is in the repository only where Flux does not apply it: {at}"),
            )
        } else {
            (
                false,
                format!(
                    "is not in the repository in namespace {namespace}; one of that name, with no namespace written, is only where Flux does not apply it: {at}"
                ),
            )
        })
    }

    /// Why an object of `kind` in `namespace` takes `name` unless a Flux
    /// variable the repository does not show is set: its name is written
    /// as `${CLAIM:-${APP}}`, and a substituteFrom source the repository
    /// does not hold in full may define CLAIM. The object is named by its
    /// place, not by the text Flux replaces.
    fn named_unless_set(
        &self,
        near: ObjRef,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<String> {
        let near_obj = &self.objects[near];
        let named = self.named_if_unset.get_or_init(|| {
            Index::new(
                self.objects
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| Some(((o.kind(), if_unset(o)?), i)))
                    .collect(),
            )
        });
        named.get(&(kind, name)).find_map(|i| {
            let o = &self.objects[i];
            if o.namespace().is_some_and(|ns| ns != namespace) || !o.same_tree(near_obj) {
                return None;
            }
            let node = o.root.path(&["metadata", "name"])?;
            let Some(Origin::Substituted { variable, .. }) = node.origin() else {
                return None;
            };
            Some(format!(
                "is the name of the {kind} at {} unless Flux variable {variable} is set, which the variables of {} may do where the repository does not show (a substituteFrom source it does not hold in full, or variables a deployed kustomize-mutating-webhook adds)",
                self.sources.location(node.span()),
                applier(o)
            ))
        })
    }

    /// The object that makes Secret `name` in `namespace` (a Secret, a
    /// SealedSecret, an ExternalSecret's target), as `near` sees it.
    pub fn find_secret(&self, near: ObjRef, namespace: &str, name: &str) -> Option<ObjRef> {
        let near = &self.objects[near];
        self.secrets.get(&name).find(|&i| {
            let o = &self.objects[i];
            data::made_in(o, namespace) && o.same_tree(near)
        })
    }

    /// A ConfigMap or Secret that `near` refers to and the repository
    /// does not make in `namespace`, for a reason: named with its
    /// namespace, and with the namespaces where the repository does make
    /// one of that name, so that the user is not sent looking for an
    /// object that is there under another namespace.
    pub fn absent(&self, near: ObjRef, kind: &str, namespace: &str, name: &str) -> String {
        let near_obj = &self.objects[near];
        let holders: Vec<ObjRef> = match kind {
            "Secret" => self.secrets.get(&name).collect(),
            _ => self.by_name.get(&(kind, name)).collect(),
        };
        let mut elsewhere: Vec<String> = holders
            .iter()
            .map(|&i| &self.objects[i])
            .filter(|o| o.same_tree(near_obj))
            .filter_map(|o| o.namespace())
            .filter(|ns| *ns != namespace)
            .map(|ns| format!("{ns}/{name}"))
            .collect();
        elsewhere.sort();
        elsewhere.dedup();
        match elsewhere.as_slice() {
            [] => format!(
                "{kind} {namespace}/{name}, which is not in the repository (it may exist only in the cluster)"
            ),
            _ => format!(
                "{kind} {namespace}/{name}, which is not in the repository (it holds only {kind} {}, in another namespace; {namespace}/{name} may exist only in the cluster)",
                elsewhere.join(", ")
            ),
        }
    }

    /// Every object that writes Secret `name` in `namespace`, as `near`
    /// sees them: the one that creates it (a Secret, a SealedSecret, an
    /// ExternalSecret with `creationPolicy` Owner or Orphan) first, then
    /// the ExternalSecrets with `creationPolicy: Merge` that add their
    /// keys to it, in repository order.
    pub fn secret_writers(&self, near: ObjRef, namespace: &str, name: &str) -> Vec<ObjRef> {
        let near = &self.objects[near];
        let mut out: Vec<ObjRef> = self
            .secrets
            .get(&name)
            .filter(|&i| {
                let o = &self.objects[i];
                data::made_in(o, namespace) && o.same_tree(near)
            })
            .collect();
        out.sort_by_key(|&i| data::merges(&self.objects[i]));
        out
    }

    /// [`Model::keys_complete`] over the writers of one Secret: a Merge
    /// writer's keys land in a Secret the repository shows when another
    /// writer there creates it.
    pub fn writers_complete(&self, writers: &[ObjRef]) -> Result<(), String> {
        let created = writers.iter().any(|&w| !data::merges(self.object(w)));
        match (created, writers.first()) {
            (false, Some(&first)) => self.keys_complete(first),
            _ => writers
                .iter()
                .try_for_each(|&w| data::keys_written(self.object(w), &self.lookup(w))),
        }
    }

    /// The keys of the ConfigMap or Secret that object `r` provides
    /// ([`data::entries`]), an ExternalSecret's `templateFrom` sources
    /// found as `r` sees them, the way `configMapKeyRef` is resolved.
    pub fn data_entries(&self, r: ObjRef) -> Vec<(String, data::DataValue<'r>)> {
        data::entries(self.object(r), &self.lookup(r))
    }

    /// One key of [`Model::data_entries`].
    pub fn data_entry(&self, r: ObjRef, key: &str) -> Option<data::DataValue<'r>> {
        self.held.entry(self.object(r), key, &self.lookup(r))
    }

    /// [`data::keys_complete`] for object `r`.
    pub fn keys_complete(&self, r: ObjRef) -> Result<(), String> {
        data::keys_complete(self.object(r), &self.lookup(r))
    }

    /// ConfigMaps and Secrets by kind, namespace and name, as `near`
    /// sees them.
    fn lookup(&self, near: ObjRef) -> impl Fn(&str, &str, &str) -> Option<&'r Object> + '_ {
        move |kind, namespace, name| {
            let found = match kind {
                "Secret" => self.find_secret(near, namespace, name),
                _ => self.find(near, "", kind, namespace, name),
            };
            found.map(|r| self.object(r))
        }
    }

    /// Namespace an object lives in, `default` when none is written.
    pub fn namespace_of(&self, r: ObjRef) -> &'r str {
        self.objects[r].namespace().unwrap_or("default")
    }
}

/// The name `o` takes unless a Flux variable the repository may not show
/// is set (`${CLAIM:-data}` gives `data`).
fn if_unset(o: &Object) -> Option<&str> {
    let node = o.root.path(&["metadata", "name"])?;
    match node.origin() {
        Some(Origin::Substituted {
            if_unset: Some(text),
            ..
        }) => Some(text),
        _ => None,
    }
}

/// The Flux Kustomization that applies `o`, for messages.
pub fn applier(o: &Object) -> String {
    o.chain
        .iter()
        .rfind(|s| s.kind == crate::source::StepKind::FluxKustomization)
        .map_or("no Flux Kustomization".to_string(), |s| {
            format!("Flux Kustomization {}", s.detail)
        })
}

pub fn is_helm_release(o: &Object) -> bool {
    o.is("helm.toolkit.fluxcd.io", "HelmRelease")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{Step, StepKind};

    #[test]
    fn a_selector_selects_the_workloads_whose_pods_carry_all_its_labels() {
        let workload = |name: &str, labels: &str| {
            format!(
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  template:\n    metadata: {{labels: {labels}}}\n    spec: {{containers: [{{name: c, image: x}}]}}\n"
            )
        };
        let text = [
            workload("common", "{tier: db}"),
            workload("both", "{tier: db, app: pg}"),
            workload("number", "{tier: db, app: 1}"),
            workload("other", "{tier: db, app: redis}"),
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm, labels: {tier: db, app: pg}}\n".into(),
            workload("again", "{app: pg, tier: db, extra: x}"),
        ]
        .concat();
        let repo = crate::source::test_repo::TestRepo::new(&[("w.yaml", &text)]);
        let model = Model::from_parts(&repo.objects, &repo.sources);
        let selected = |selector: &str| -> Vec<&str> {
            let node = crate::yaml::parse_one(selector);
            model
                .selected_by(node.as_map().unwrap())
                .map(|r| repo.objects[r].name())
                .collect()
        };
        assert_eq!(selected("{tier: db, app: pg}"), ["both", "again"]);
        assert_eq!(selected("{app: '1'}"), ["number"]);
        assert_eq!(
            selected("{tier: db}"),
            ["common", "both", "number", "other", "again"]
        );
        assert_eq!(selected("{tier: db, app: none}"), Vec::<&str>::new());
        assert_eq!(selected("{tier: [db]}"), Vec::<&str>::new());
    }

    /// A HelmRelease of one cluster whose chartRef and valuesFrom name
    /// objects the repository holds only in another cluster's Flux tree.
    #[test]
    fn a_release_source_only_in_another_clusters_tree_is_said_to_be_there() {
        let mut repo = crate::source::test_repo::TestRepo::new(&[
            (
                "kubernetes/cluster-0/oci.yaml",
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nmetadata: {name: app-template, namespace: flux-system}\nspec:\n  url: oci://ghcr.io/bjw-s-labs/helm/app-template\n  ref: {tag: 4.0.1}\n",
            ),
            (
                "kubernetes/cluster-0/values.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: zot-values, namespace: storage}\ndata: {values.yaml: 'a: 1'}\n",
            ),
            (
                "kubernetes/nas-1/zot.yaml",
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: zot, namespace: storage}\nspec:\n  chartRef: {kind: OCIRepository, name: app-template, namespace: flux-system}\n  valuesFrom:\n    - {kind: ConfigMap, name: zot-values}\n    - {kind: ConfigMap, name: nowhere}\n",
            ),
        ]);
        for (o, (tree, ks)) in repo.objects.iter_mut().zip([
            (0, "cluster-0-apps"),
            (0, "cluster-0-apps"),
            (1, "nas-1-apps"),
        ]) {
            o.tree = Some(tree);
            o.chain.push(Step {
                kind: StepKind::FluxKustomization,
                detail: format!("flux-system/{ks}").into(),
                at: None,
            });
        }
        let model = Model::from_parts(&repo.objects, &repo.sources);
        let messages: Vec<String> = model
            .release_issues()
            .into_iter()
            .chain(model.release_absent())
            .map(|i| i.message)
            .collect();
        let elsewhere = "is in the repository only under Flux Kustomization \
                         flux-system/cluster-0-apps, which another Flux root applies, so it is \
                         taken for another cluster than HelmRelease/storage/zot's";
        assert!(
            messages.contains(&format!(
                "chartRef OCIRepository flux-system/app-template {elsewhere}: chart and version are unknown"
            )),
            "{messages:#?}"
        );
        assert!(
            messages.contains(&format!(
                "valuesFrom ConfigMap storage/zot-values {elsewhere} and not optional: \
                 helm-controller fails unless it exists in the cluster"
            )),
            "{messages:#?}"
        );
        assert!(
            messages.contains(
                &"valuesFrom ConfigMap storage/nowhere is not in the repository and not \
                  optional: helm-controller fails unless it exists in the cluster"
                    .to_string()
            ),
            "{messages:#?}"
        );
    }
}
