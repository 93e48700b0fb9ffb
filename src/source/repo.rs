//! Loading a whole GitOps repository the way Flux would apply it: every
//! YAML file read and parsed, the Flux tree rendered
//! ([`super::flux::tree`]), and what became of each file. Manifests no
//! Flux Kustomization reaches are still loaded as they are written.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::Limits;
use super::coverage::{
    Coverage, Fate, FileFate, FluxRender, MovedTrees, blame_unapplied, lost_under,
};
use super::files::Input;
use super::flux::{
    self,
    tree::{ARTIFACT_GROUP, FLUX_KS_GROUP, is_bootstrap_input, is_flux_ks},
};
use super::{Files, Issue, Object, PathKey, PathMap, PathQuery, PathSet, StepKind, kustomize};
use crate::yaml::FileId;

/// A file that holds nothing to lint, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: String,
}

/// An object of a file Flux does not apply, by kind and name: what
/// refers to it is told where it is and why it is not applied, never that
/// the repository lacks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unapplied {
    pub kind: String,
    /// As written; `None` when the file leaves it to whatever would apply it.
    pub namespace: Option<String>,
    pub name: String,
    pub path: PathBuf,
}

/// The loaded repository.
pub struct Repo {
    pub files: Files,
    pub objects: Vec<Object>,
    /// Problems with single inputs; the rest of the repo still loaded.
    pub issues: Vec<Issue>,
    pub skipped: Vec<Skipped>,
    /// The objects of the files skipped as not applied.
    pub unapplied: Vec<Unapplied>,
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

    /// The coverage of the files `shown` holds for (the paths a run
    /// reports), with the Flux Kustomizations written in them that did
    /// not render completely: the whole repository is read, but the
    /// figures are of what the report is about.
    pub fn coverage_of(&self, shown: &dyn Fn(&Path) -> bool) -> (Coverage, Vec<&FluxRender>) {
        let sources = &self.files.sources;
        let fates = self.fates.iter().filter(|f| shown(&f.path));
        let renders = self.flux.iter().filter(|r| shown(sources.path(r.file)));
        let incomplete = self
            .flux
            .iter()
            .filter(|r| !r.outcome.is_complete() && shown(sources.path(r.file)))
            .collect();
        (Coverage::of(fates, renders), incomplete)
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
    let super::walk::Listing {
        paths,
        mut issues,
        aliases,
    } = files.load_yaml_files();
    let mut skipped: Vec<Skipped> = aliases
        .iter()
        .map(|a| Skipped {
            path: a.path.clone(),
            reason: a.reason(),
        })
        .collect();

    // Every file as written: documents that are Kubernetes objects. Only
    // what rendering looks up (Flux Kustomizations, and the ConfigMaps and
    // Secrets postBuild variables come from) is copied now; objects are
    // made of the rest at the end, for the files no Flux Kustomization
    // reaches, so that a large repo is not held twice while it renders.
    let mut looked_up: Vec<Object> = Vec::new();
    // Whether a document deploys the webhook that adds variables to every
    // Flux Kustomization (flux::webhook).
    let mut webhook = false;
    let mut git_repos: Vec<Object> = Vec::new();
    // Files that do not parse, and their issue: said again once the builds
    // know which are only a generator's data.
    let mut unparsed: Vec<(PathBuf, usize)> = Vec::new();
    // Files that do not parse (a template, a syntax error), with their fate.
    let mut unloadable: HashMap<PathBuf, Fate> = HashMap::new();
    // With each file's place in `paths`, which are sorted.
    let mut object_docs: Vec<(usize, &PathBuf, FileId, Vec<usize>)> = Vec::new();
    // Files of no Kubernetes object whose documents are known to be
    // something else, with their fate.
    let mut no_object: HashMap<PathBuf, Fate> = HashMap::new();
    for (at, path) in paths.iter().enumerate() {
        let parsed = match files.documents(path) {
            Ok(p) => p,
            Err(issue) => {
                let reason = skip_reason(&files, path, &issue);
                unloadable.insert(path.clone(), Fate::Unloadable(reason.clone()));
                skipped.push(Skipped {
                    path: path.clone(),
                    reason,
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
        let mut foreign = Vec::new();
        for (i, doc) in parsed.docs.iter().enumerate() {
            if let Some(what) = super::non_object::what(path, doc) {
                foreign.push((i, what));
                continue;
            }
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
            webhook |= flux::webhook::deploys(kind, doc);
            if (group == FLUX_KS_GROUP && kind == "Kustomization")
                || (group.is_empty() && matches!(kind, "ConfigMap" | "Secret"))
                || (group == ARTIFACT_GROUP && kind == "ArtifactGenerator")
            {
                looked_up.push(Object::new(doc.clone(), parsed.file, i));
            } else if group == "source.toolkit.fluxcd.io" && kind == "GitRepository" {
                git_repos.push(Object::new(doc.clone(), parsed.file, i));
            } else if is_bootstrap_input(group, kind) {
                // Held apart from the render, an object is copied (the
                // mappings on the way to each change) when the render
                // changes it: keep only what bootstrap reads.
                let o = Object::new(doc.clone(), parsed.file, i);
                if kind != "HelmRelease" || crate::source::flux::bootstrap::may_sync(&o) {
                    looked_up.push(o);
                }
            }
        }
        if !docs.is_empty() {
            object_docs.push((at, path, parsed.file, docs));
        }
        if !any && !is_kustomization_file(path) {
            let fate = Fate::NoObject {
                what: foreign.first().map(|(_, what)| what.clone()),
            };
            skipped.push(Skipped {
                path: path.clone(),
                reason: fate.reason(),
            });
            if let Fate::NoObject { what: Some(_) } = &fate {
                no_object.insert(path.clone(), fate);
            }
        } else if any {
            // Beside Kubernetes objects, each is said apart.
            for (i, what) in foreign {
                skipped.push(Skipped {
                    path: path.clone(),
                    reason: format!(
                        "document {} is not a Kubernetes object: {what}; the file's other \
                         documents are loaded",
                        i + 1
                    ),
                });
            }
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
    let layer = super::reuse::build_layer(&mut files);
    let written = flux::tree::Written {
        kustomizations: written_ks,
        generators: &generators,
        git_repos,
        config_sources: &config_sources,
        bootstrap,
        webhook,
    };
    let flux = flux::tree::render(&mut files, layer, written, &mut issues);
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

    // Plain objects: what no Flux Kustomization reached. In a Flux repo,
    // a file under a kustomization that no Flux Kustomization builds is not
    // applied (a component's template, an app left out of its parent's
    // resources): loading it as written would show rules `${APP}` objects
    // that never exist.
    let flux::tree::Rendered {
        mut objects,
        any_tree: flux_repo,
        local_sources,
        renders,
        by_hand_files,
        stray,
        rendered_dirs,
        unapplied,
    } = flux;
    let rendered_by = rendered_by(&objects, &renders);
    let moved = MovedTrees::of(&unapplied);
    let mut fates: Vec<FileFate> = Vec::new();
    // Which of `paths` have a fate in `fates`, which are in their order.
    let mut fated = vec![false; paths.len()];
    let mut unapplied_objects = Vec::new();
    for (at, path, file, docs) in object_docs {
        fated[at] = true;
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
                Some(dir) => Some(
                    moved
                        .holding(path)
                        .or_else(|| moved.under(path))
                        .or_else(|| left_out_by(&mut files, &rendered_dirs, dir))
                        .unwrap_or(Fate::Unreachable {
                            kustomization: dir.join("kustomization.yaml"),
                        }),
                ),
                None if let Some(fate) = moved.holding(path) => Some(fate),
                None if stray.contains(&file) => Some(Fate::Stray),
                None if let Some(fate) = moved.under(path).filter(|_| flux_repo) => Some(fate),
                None => None,
            }
        };
        if let Some(fate) = unapplied {
            if let Ok(parsed) = files.documents(path) {
                unapplied_objects.extend(docs.iter().filter_map(|&i| {
                    let doc = parsed.docs.get(i)?;
                    Some(Unapplied {
                        kind: doc.str_at(&["kind"])?.to_string(),
                        namespace: doc.str_at(&["metadata", "namespace"]).map(str::to_string),
                        name: doc.str_at(&["metadata", "name"])?.to_string(),
                        path: path.clone(),
                    })
                }));
            }
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
    blame_unapplied(&mut fates, &unapplied);
    let blamed: PathMap<PathQuery, String> = fates
        .iter()
        .filter(|f| matches!(f.fate, Fate::UnderUnapplied { .. }))
        .map(|f| (PathKey::of(&f.path), f.fate.reason()))
        .collect();
    for s in &mut skipped {
        if let Some(reason) = blamed.get(&PathKey::of(&s.path)) {
            s.reason = reason.clone();
        }
    }
    // By the paths' order bytes: the same order as by `Path`'s, one
    // `memcmp` a compare where `Path`'s walks both paths' components.
    skipped.sort_by_cached_key(|s| PathKey::of(&s.path).order_bytes());
    // A generator's input reaches the rules in what it generates.
    skipped.retain(|s| !files.inputs.contains_key(&s.path));
    // Files without objects: their fate is what they were skipped for, or
    // what a kustomization read them as.
    let without = paths
        .iter()
        .zip(&fated)
        .filter(|(_, fated)| !**fated)
        .map(|(path, _)| {
            let fate = if let Some((role, by)) = files.inputs.get(path.as_path()) {
                Fate::Input {
                    role: *role,
                    by: by.clone(),
                }
            } else if is_kustomization_file(path) {
                Fate::Kustomization
            } else if let Some(fate) = unloadable.remove(path).or_else(|| no_object.remove(path)) {
                fate
            } else {
                Fate::NoObject { what: None }
            };
            FileFate {
                path: path.clone(),
                fate,
            }
        });
    // Both in the order of `paths`: merged, they are sorted by path.
    let fates = merge_in_order(fates, without, &fated);
    let coverage = Coverage::of(&fates, &renders);
    files.release_parsed();
    Repo {
        files,
        objects,
        issues,
        skipped,
        unapplied: unapplied_objects,
        local_sources,
        flux: renders,
        fates,
        coverage,
    }
}

/// The fates of a listing's files in its order, from `with`, the fates of
/// the files `fated` marks, and `without`, the others', each in that
/// order: a merge, where a sort compared the paths by their components.
fn merge_in_order(
    with: Vec<FileFate>,
    mut without: impl Iterator<Item = FileFate>,
    fated: &[bool],
) -> Vec<FileFate> {
    let mut with = with.into_iter();
    fated
        .iter()
        .filter_map(|&fated| if fated { with.next() } else { without.next() })
        .collect()
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
fn rendered_by(objects: &[Object], renders: &[FluxRender]) -> PathMap<FileId, (String, bool)> {
    // Renders by (tree, `namespace/name`), the first of each kept: a scan
    // of every render per file made large repos quadratic. Keyed by what
    // the repository names, so hashed as its paths are ([`PathMap`]).
    let mut by_key: PathMap<(u32, String), &FluxRender> = PathMap::default();
    for r in renders {
        by_key
            .entry((r.tree, [r.namespace.as_str(), &r.name].join("/")))
            .or_insert(r);
    }
    let mut out = PathMap::default();
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
                .and_then(|tree| by_key.get(&(tree, step.detail.to_string())))
                .is_none_or(|r| r.outcome.is_complete());
            (step.detail.to_string(), complete)
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

/// The fate of a file under a kustomization (in `dir`) that no build
/// reached, in a folder whose own kustomization a Flux build did read:
/// kustomize reads a folder only through an entry naming it, so that
/// kustomization leaving it out is why (an app folder commented out of
/// its namespace's list). Deeper down the chain may stop anywhere (often
/// at a Flux Kustomization that is gone, whose path it was), so that is
/// left to the general reason, and so is a Component on either side: one
/// is taken in through `components:`, which a Flux Kustomization may
/// name as well.
fn left_out_by(files: &mut Files, rendered_dirs: &PathSet<PathBuf>, dir: &Path) -> Option<Fate> {
    let up = dir.parent().filter(|up| rendered_dirs.contains(*up))?;
    if kustomize::is_component(files, dir) || kustomize::is_component(files, up) {
        return None;
    }
    Some(Fate::NotListed {
        kustomization: up.join("kustomization.yaml"),
    })
}
