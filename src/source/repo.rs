//! Loading a whole GitOps repository the way Flux would apply it.
//!
//! Flux starts from its own Kustomization (`flux-system`), builds its path,
//! finds more Flux Kustomizations in the output and builds those in turn,
//! each with its own `targetNamespace`, `patches` and postBuild variables.
//! We follow the same tree from the repo alone. Manifests no Flux
//! Kustomization reaches are still loaded as they are written.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::flux::substitute::{collect_vars, substitute};
use super::{Files, Issue, Object, StepKind, join_within, kustomize, walk};
use crate::yaml::Limits;

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

fn is_flux_ks(o: &Object) -> bool {
    o.is(FLUX_KS_GROUP, "Kustomization")
}

/// `(namespace, name)` of a Flux Kustomization.
type KsId = (String, String);

/// Loads every YAML file under `root` and renders the Flux tree.
pub fn load(root: &Path, limits: Limits) -> Repo {
    let mut files = Files::new(root, limits);
    let (paths, mut issues) = walk::yaml_files(root);
    let mut skipped = Vec::new();

    // Every file as written: documents that are Kubernetes objects.
    let mut raw: Vec<Object> = Vec::new();
    for path in &paths {
        let parsed = match files.documents(path) {
            Ok(p) => p,
            Err(issue) => {
                skipped.push(Skipped {
                    path: path.clone(),
                    reason: skip_reason(&files, path, &issue),
                });
                if !looks_like_template(&files, path) {
                    issues.push(issue);
                }
                continue;
            }
        };
        let mut any = false;
        for (i, doc) in parsed.docs.iter().enumerate() {
            if !Object::looks_like_object(doc) {
                continue;
            }
            any = true;
            let obj = Object::new(doc.clone(), parsed.file, i);
            // kustomization.yaml files are configuration, read when their
            // directory is built.
            if obj.group() != "kustomize.config.k8s.io" {
                raw.push(obj);
            }
        }
        if !any {
            skipped.push(Skipped {
                path: path.clone(),
                reason: "no Kubernetes object in it (no apiVersion and kind)".into(),
            });
        }
    }

    let mut flux = FluxTree::new(&raw);
    flux.render_all(&mut files, &mut issues);

    // Plain objects: what no Flux Kustomization reached.
    let reached: HashSet<_> = flux.output.iter().map(|o| o.file).collect();
    let mut objects = flux.output;
    objects.extend(raw.into_iter().filter(|o| !reached.contains(&o.file)));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Repo {
        files,
        objects,
        issues,
        skipped,
    }
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
    /// Flux Kustomizations as written in files, by identity.
    written: BTreeMap<KsId, Object>,
    /// kustomize output per path, before any Flux step: several Flux
    /// Kustomizations may build one path.
    builds: HashMap<PathBuf, Result<Vec<Object>, Issue>>,
    output: Vec<Object>,
}

impl FluxTree {
    fn new(raw: &[Object]) -> FluxTree {
        let written = raw
            .iter()
            .filter(|o| is_flux_ks(o))
            .map(|o| {
                (
                    (
                        o.namespace().unwrap_or("").to_string(),
                        o.name().to_string(),
                    ),
                    o.clone(),
                )
            })
            .collect();
        FluxTree {
            written,
            builds: HashMap::new(),
            output: Vec::new(),
        }
    }

    fn render_all(&mut self, files: &mut Files, issues: &mut Vec<Issue>) {
        // Roots are the Kustomizations no other one produces (normally
        // only flux-system, which produces itself).
        let mut produced_by_other: HashSet<KsId> = HashSet::new();
        let ids: Vec<KsId> = self.written.keys().cloned().collect();
        for id in &ids {
            let ks = self.written[id].clone();
            if let Some(Ok(objs)) = self.build(files, &ks) {
                produced_by_other.extend(
                    objs.iter()
                        .filter(|o| is_flux_ks(o))
                        .map(|o| child_id(&ks, o))
                        .filter(|child| child != id),
                );
            }
        }
        let mut queue: Vec<(KsId, Object)> = ids
            .iter()
            .filter(|id| !produced_by_other.contains(*id))
            .map(|id| (id.clone(), self.written[id].clone()))
            .collect();
        let mut done: HashSet<KsId> = HashSet::new();
        // Substitution sources are looked up among everything built, before
        // substitution, as Flux reads them from the cluster.
        let lookup_pool: Vec<Object> = self
            .builds
            .values()
            .filter_map(|b| b.as_ref().ok())
            .flatten()
            .cloned()
            .collect();
        loop {
            while let Some((id, ks)) = queue.pop() {
                if !done.insert(id.clone()) {
                    continue;
                }
                let objs = self.render(files, &id, &ks, &lookup_pool, issues);
                queue.extend(
                    objs.iter()
                        .filter(|o| is_flux_ks(o))
                        .map(|o| (child_id(&ks, o), o.clone()))
                        .filter(|(child, _)| !done.contains(child)),
                );
                self.output.extend(objs);
            }
            // Kustomizations only reachable through a cycle: render them as
            // written so nothing is silently dropped.
            match self.written.iter().find(|(id, _)| !done.contains(*id)) {
                Some((id, ks)) => queue.push((id.clone(), ks.clone())),
                None => break,
            }
        }
    }

    /// kustomize output for a Flux Kustomization's path, cached per path.
    /// `None` when the path cannot be resolved at all.
    fn build(&mut self, files: &mut Files, ks: &Object) -> Option<&Result<Vec<Object>, Issue>> {
        let path = ks_path(ks)?;
        if !self.builds.contains_key(&path) {
            let result = if files.is_dir(&path) {
                kustomize::build_flux_path(files, &path)
            } else {
                Err(path_issue(files, ks, &path))
            };
            self.builds.insert(path.clone(), result);
        }
        self.builds.get(&path)
    }

    /// One Flux Kustomization: build, then targetNamespace, patches and
    /// postBuild substitution, in Flux's order.
    fn render(
        &mut self,
        files: &mut Files,
        id: &KsId,
        ks: &Object,
        lookup_pool: &[Object],
        issues: &mut Vec<Issue>,
    ) -> Vec<Object> {
        let mut objs = match self.build(files, ks) {
            Some(Ok(objs)) => objs.clone(),
            Some(Err(issue)) => {
                issues.push(issue.clone());
                return Vec::new();
            }
            None => return Vec::new(),
        };
        let ks_span = ks.root.get("metadata").map(|m| m.span);
        for o in &mut objs {
            o.chain.insert(
                0,
                super::Step {
                    kind: StepKind::FluxKustomization,
                    detail: format!("{}/{}", id.0, id.1),
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
        if let (Some(patches), Some(path)) = (ks.root.path(&["spec", "patches"]), ks_path(ks)) {
            if let Err(issue) = kustomize::apply_patches(&mut objs, patches, files, &path) {
                issues.push(issue);
            }
        }
        if ks.root.path(&["spec", "postBuild"]).is_some() {
            // Flux reads substituteFrom in the Kustomization's own namespace.
            let lookup = |kind: &str, _namespace: &str, name: &str| {
                find_in(lookup_pool, "", kind, Some(&id.0), name)
            };
            let (vars, var_issues) = collect_vars(&files.sources, ks, &lookup);
            issues.extend(var_issues);
            for o in &mut objs {
                issues.extend(substitute(&files.sources, o, &vars));
            }
        }
        objs
    }
}

/// Identity of a Flux Kustomization found in `parent`'s output: one
/// written without a namespace lands in its parent's.
fn child_id(parent: &Object, child: &Object) -> KsId {
    let ns = child.namespace().or(parent.namespace()).unwrap_or("");
    (ns.to_string(), child.name().to_string())
}

/// `spec.path` of a Flux Kustomization, relative to the repo root. Flux
/// reads it relative to the source root whether or not it starts with `./`.
fn ks_path(ks: &Object) -> Option<PathBuf> {
    let raw = ks.root.str_at(&["spec", "path"]).unwrap_or("./");
    join_within(Path::new(""), raw.trim_start_matches('/'))
}

fn path_issue(files: &Files, ks: &Object, path: &Path) -> Issue {
    let node = ks.root.path(&["spec", "path"]);
    let span = node.map(|n| n.span).or(ks.root.get("spec").map(|n| n.span));
    let message = format!(
        "Flux Kustomization {} has spec.path {} which is not a directory in this repository",
        ks.id(),
        path.display()
    );
    match span {
        Some(s) => Issue {
            path: files.sources.path(s.file).display().to_string(),
            line: s.line,
            col: s.col,
            message,
        },
        None => Issue::file(files.sources.path(ks.file), message),
    }
}
