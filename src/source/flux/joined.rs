//! A root that joins the tree of an earlier one
//! ([`super::tree::FluxTree::joined_tree`]): one cluster, whose objects
//! each joining root's are checked against. What it checks against is
//! made once per tree and kept up to date as joining roots add to it:
//! made anew from the whole output for each joining root, and for each
//! Flux Kustomization such a root rendered, it cost roots x objects and
//! Kustomizations x objects.

use super::tree::{KsId, is_flux_ks, ks_id};
use crate::source::files::Files;
use crate::source::{Issue, Object, PathMap, PathSet, StepKind};
use crate::yaml::FileId;

/// What the cluster holds one of: group, kind, namespace and name.
type Held = (String, String, Option<String>, String);

fn held(o: &Object) -> Held {
    (
        o.group().to_string(),
        o.kind().to_string(),
        o.namespace().map(str::to_string),
        o.name().to_string(),
    )
}

/// One tree's objects, as joining roots check theirs against them.
#[derive(Default)]
pub(super) struct Joined {
    /// Each object the tree holds, by what the cluster holds one of: its
    /// first one's index in the output.
    held: PathMap<Held, usize>,
    /// The Flux Kustomizations of the tree as it was before the root
    /// rendering now: a joining root does not render them again.
    pub(super) kss: PathSet<KsId>,
    /// The files of the tree's objects (substitution sources are looked
    /// up among them first).
    pub(super) files: PathSet<FileId>,
}

impl Joined {
    /// The tree `tree` of `output`.
    pub(super) fn of(output: &[Object], tree: u32) -> Joined {
        let mut joined = Joined::default();
        for (i, o) in output.iter().enumerate() {
            if o.tree == Some(tree) {
                joined.files.insert(o.file);
                joined.add(i, o);
            }
        }
        joined
    }

    /// Notes the object at `i` of the output, just added to the tree.
    pub(super) fn add(&mut self, i: usize, o: &Object) {
        self.held.entry(held(o)).or_insert(i);
    }

    /// Notes the Flux Kustomizations among `added`, once the root that
    /// rendered them is done.
    pub(super) fn done(&mut self, added: &[Object]) {
        self.kss
            .extend(added.iter().filter(|o| is_flux_ks(o)).map(ks_id));
    }

    /// Drops from a joining root's objects those the tree already holds:
    /// the cluster holds one object of a kind, namespace and name, and
    /// kustomize-controller applies it from each Kustomization that has it
    /// as that one reconciles, so the two take turns (the last apply wins).
    /// Rendered once, as the first applier has it, and the double applier
    /// is reported.
    pub(super) fn drop_applied(
        &self,
        files: &Files,
        output: &[Object],
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
        objs.retain(|o| {
            let Some(&first) = self.held.get(&held(o)) else {
                return true;
            };
            let first = &output[first];
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
}
