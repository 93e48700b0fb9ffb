//! The Flux-level steps of a Flux Kustomization after its build (which
//! set its targetNamespace), in Flux's order (`spec.patches`, postBuild
//! substitution), and the same steps applied to the bootstrap inputs of
//! each build before the tree renders. Flux appends `spec.patches` to the
//! kustomization's own patches (fluxcd/pkg kustomize `Generator.WriteFile`),
//! so they run before kustomize sets the namespace; here they run after
//! the build, which differs only for a patch whose target selects by
//! namespace or that sets one.

use std::path::Path;

use super::Budget;
use super::batch::{Batch, replayed};
use super::bootstrap::ChartSources;
use super::layer::{Lookup, RenderInputs, RenderKey, RenderOutputs, Steps};
use super::substitute::{Origins, collect_vars, substitute};
use super::tree::{
    BuildKey, ByName, DocId, FluxTree, Inherited, KsId, LookupPool, doc_id, is_bootstrap_input,
    ks_id,
};
use crate::source::Gap;
use crate::source::{Files, Issue, Object, PathSet, StepKind};
use crate::yaml::{FileId, SourceMap};

impl FluxTree {
    /// The bootstrap inputs (and substitution sources) the builds of
    /// `written` hold, each as the Flux Kustomization that builds it
    /// applies it: its targetNamespace set and its postBuild variables
    /// substituted. A flux-instance HelmRelease applied by a Kustomization
    /// with `postBuild.substitute: {CLUSTER: home}` syncs
    /// `clusters/${CLUSTER}` as `clusters/home` (Flux substitutes the
    /// HelmRelease before helm-controller reads its values). Where several
    /// Flux Kustomizations build one document, a copy they changed comes
    /// before the one as written, which `synced` then skips.
    ///
    /// `keys`: each written one's build key ([`Self::build_each`]).
    /// `bootstrap` and `config_sources`: what the sync look-ups also find.
    pub(super) fn built_bootstrap_inputs(
        &mut self,
        files: &mut Files,
        (written, keys): (&[Object], Vec<Option<BuildKey>>),
        bootstrap: &[Object],
        config_sources: &[Object],
    ) -> Vec<Object> {
        let mut keyed: Vec<(Vec<u8>, BuildKey, &Object)> = written
            .iter()
            .zip(keys)
            .filter_map(|(ks, key)| {
                let key = key?;
                Some((key.0.order_bytes(), key, ks))
            })
            .collect();
        // Builds are a map: sorted, the roots (and so the tree numbers)
        // are the same in every run. By the paths' order bytes first:
        // comparing paths by their components was 5 % of the main thread.
        keyed.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| (&a.1, doc_id(a.2)).cmp(&(&b.1, doc_id(b.2))))
        });
        let by_name = ByName::of(config_sources.iter());
        let seen: Vec<&Object> = keyed
            .iter()
            .filter_map(|(_, key, _)| self.builds.get(key)?.as_ref().ok())
            .flat_map(|built| &built.objects)
            .chain(bootstrap)
            .chain(config_sources)
            .collect();
        let charts = ChartSources::of(&seen);
        let jobs: Vec<(RenderKey, &Object, Vec<Object>)> = keyed
            .into_iter()
            .filter_map(|(_, key, ks)| {
                let Some(Ok(built)) = self.builds.get(&key) else {
                    return None;
                };
                let objs = built
                    .objects
                    .iter()
                    .filter(|o| {
                        (is_bootstrap_input(o.group(), o.kind())
                            && (o.kind() != "HelmRelease"
                                || crate::source::flux::bootstrap::may_sync(o)
                                    && charts.may_install(o)))
                            || charts.may_read(o) && crate::source::data::provides(o).is_some()
                    })
                    .cloned()
                    .collect();
                let key = RenderKey {
                    steps: Steps::Bootstrap,
                    path: files.sources.path(ks.file).to_path_buf(),
                    doc_index: ks.doc_index,
                    id: ks_id(ks),
                };
                Some((key, ks, objs))
            })
            .collect();
        let layer = self.layer;
        let run = |files: &mut Files,
                   (key, ks, objs): &(RenderKey, &Object, Vec<Object>),
                   budget: Option<Budget>| {
            let lookup = |_: &SourceMap, kind: &str, namespace: &str, name: &str| {
                by_name.find(kind, namespace, name)
            };
            let given = RenderInputs {
                ks: (*ks).clone(),
                inherited: Inherited::default(),
                objects: objs.clone(),
                patched: false,
                budget,
            };
            layer.steps(
                files,
                key.clone(),
                given,
                &lookup,
                &|files, objs, given, lookup| bootstrap_steps(files, ks, objs, given, lookup),
            )
        };
        // Its own budget: the run's is for the renders. Where steps may
        // run on forks, every Kustomization's run at once from the budget
        // as it starts, each result taken in its turn when the same steps
        // from what is left then give the same ([`replayed`]), else run
        // again then: the budget stops the same ones on any number of
        // threads.
        let fresh = Some(crate::source::flux::budget(&files.limits().flux));
        let forked = if jobs.len() > 1 && Batch::may_run(files) {
            files.fork_each(&jobs, &|files, job| run(files, job, fresh.clone()))
        } else {
            Vec::new()
        };
        let mut forked = forked.into_iter();
        let mut budget = fresh.clone();
        let mut out: Vec<(Object, bool)> = Vec::new();
        for job in &jobs {
            let kept = forked.next().and_then(|f| {
                let after = &f.result()?.budget;
                let left = replayed(files, &budget, &fresh, after)?;
                Some((left, files.adopt(f)?))
            });
            let gave = match kept {
                Some((left, mut gave)) => {
                    gave.budget = left;
                    gave
                }
                None => run(files, job, budget.take()),
            };
            budget = gave.budget;
            let ks = job.1;
            let changed = ks.root.str_at(&["spec", "targetNamespace"]).is_some()
                || ks.root.path(&["spec", "postBuild"]).is_some();
            out.extend(gave.objects.into_iter().map(|o| (o, changed)));
        }
        // The names only for ties: each is looked up in the object's tree.
        out.sort_by(|(a, a_changed), (b, b_changed)| {
            doc_id(a).cmp(&doc_id(b)).then_with(|| {
                (a.namespace(), a.name(), !a_changed).cmp(&(b.namespace(), b.name(), !b_changed))
            })
        });
        out.into_iter().map(|(o, _)| o).collect()
    }

    /// The sync Kustomizations flux-operator creates for the FluxInstances
    /// (or flux-instance chart releases) among `candidates`, one per
    /// document; none where `written` already holds that Kustomization
    /// (a repository moving from `flux bootstrap` keeps its gotk-sync.yaml).
    pub(super) fn synced(
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
        let mut seen: PathSet<DocId> = PathSet::default();
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
            if let Some(patches) = synced.patches {
                let at = "spec.kustomize.patches";
                super::patches::apply(files, &mut ks, &patches, at, issues);
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
}

/// A Flux Kustomization's steps after its build (which set its
/// targetNamespace, [`kustomize::FluxInputs`]), in Flux's order: patches,
/// postBuild substitution. Returns what they give and the
/// `substituteFrom` look-ups they made.
pub(super) fn flux_steps<'p>(
    files: &mut Files,
    id: &KsId,
    ks: &Object,
    mut objs: Vec<Object>,
    given: &RenderInputs,
    lookup: Lookup<'_, 'p>,
) -> RenderOutputs {
    let mut issues = Vec::new();
    let ks_span = ks.root.get("metadata").map(|m| m.span());
    // Joined at its size, as `Object::id` is.
    let detail: std::sync::Arc<str> = [id.0.as_str(), &id.1].join("/").into();
    for o in &mut objs {
        o.chain.insert(
            0,
            crate::source::Step {
                kind: StepKind::FluxKustomization,
                detail: detail.clone(),
                at: ks_span,
            },
        );
    }
    if let Some(patches) = ks.root.path(&["spec", "patches"]) {
        super::patches::apply(files, &mut objs, patches, "spec.patches", &mut issues);
    }
    let mut budget = given.budget.clone();
    let mut unparsed = Vec::new();
    let mut passed = Inherited {
        mutated: given.inherited.mutated,
        ..Inherited::default()
    };
    if ks.root.path(&["spec", "postBuild"]).is_some() || given.inherited.mutated {
        let here =
            |kind: &str, namespace: &str, name: &str| lookup(&files.sources, kind, namespace, name);
        let (mut vars, var_issues) = collect_vars(&files.sources, ks, &here);
        issues.extend(var_issues);
        vars.incomplete |= given.inherited.mutated;
        let budget =
            budget.get_or_insert_with(|| crate::source::flux::budget(&files.limits().flux));
        let mut origins = Origins::default();
        for o in &mut objs {
            let parsed = files.dollar_free_document(o.file, o.doc_index);
            let (failed, other): (Vec<Issue>, Vec<Issue>) = substitute(
                &files.sources,
                o,
                &vars,
                budget,
                &mut origins,
                parsed.as_deref(),
            )
            .into_iter()
            .partition(|i| i.gap == Some(Gap::Substitution));
            issues.extend(other);
            unparsed.extend(failed);
        }
        passed = Inherited {
            substituted: vars.is_active(),
            mutated: given.inherited.mutated,
        };
    }
    RenderOutputs {
        objects: objs,
        issues,
        unparsed,
        passed,
        budget,
    }
}

/// The bootstrap inputs of a build (its targetNamespace set) as the Flux
/// Kustomization `ks` applies them: its postBuild variables substituted.
/// What goes wrong in the substitution is reported when the tree renders.
pub(super) fn bootstrap_steps<'p>(
    files: &mut Files,
    ks: &Object,
    mut objs: Vec<Object>,
    given: &RenderInputs,
    lookup: Lookup<'_, 'p>,
) -> RenderOutputs {
    let mut budget = given.budget.clone();
    if ks.root.path(&["spec", "postBuild"]).is_some()
        && let Some(budget) = budget.as_mut()
    {
        let here =
            |kind: &str, namespace: &str, name: &str| lookup(&files.sources, kind, namespace, name);
        let (vars, _) = collect_vars(&files.sources, ks, &here);
        let mut origins = Origins::default();
        for o in &mut objs {
            let parsed = files.dollar_free_document(o.file, o.doc_index);
            let _ = substitute(
                &files.sources,
                o,
                &vars,
                budget,
                &mut origins,
                parsed.as_deref(),
            );
        }
    }
    RenderOutputs {
        objects: objs,
        issues: Vec::new(),
        unparsed: Vec::new(),
        passed: Inherited::default(),
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
pub(super) fn substitute_from<'p>(
    lookup_pool: &'p LookupPool,
    tree_files: &PathSet<FileId>,
    sources: &SourceMap,
    ks: &Object,
    namespace: &str,
    kind: &str,
    name: &str,
) -> Option<&'p Object> {
    use crate::source::data::{namespace_unknown, provided_in};
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

/// Number of leading path components two paths share.
pub(super) fn common_prefix(a: &Path, b: &Path) -> usize {
    a.components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .count()
}
