//! `undefinedVariable`: values made from a Flux postBuild variable that is
//! defined nowhere and has no default.

use super::{Bindings, Described, Fact, Step, bind};
use crate::model::{Model, ObjRef};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;
use crate::yaml::Node;

pub struct UndefinedVariable;

/// A Flux postBuild variable that rendered empty.
#[derive(Clone, Debug)]
pub(crate) struct VariableFact {
    pub object: ObjRef,
    pub name: String,
    pub node: Node,
}

impl Step for UndefinedVariable {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        crate::model::flux::undefined_variables(cx.model)
            .into_iter()
            .map(|(object, name, node)| vec![bind("variable", VariableFact { object, name, node })])
            .collect()
    }
}

impl Fact for VariableFact {
    fn describe(&self, model: &Model) -> Described {
        let (name, id) = (&self.name, model.object(self.object).id());
        let text = match set_elsewhere(model, name) {
            Some(at) => format!(
                "${{{name}}} is not defined for the Kustomization that renders it (the \
                 repository sets it only at {at}, which its postBuild does not read): {}",
                outcome(model, self.object)
            ),
            None => format!(
                "${{{name}}} is defined nowhere: {}",
                outcome(model, self.object)
            ),
        };
        Described {
            labels: vec![Label {
                span: self.node.span(),
                text,
            }],
            evidence: vec![("name".into(), name.clone()), ("object".into(), id.clone())],
            identity: format!("{id}${name}"),
        }
    }

    fn object(&self) -> Option<ObjRef> {
        Some(self.object)
    }
}

/// Where the repository sets a variable that the Kustomization rendering a
/// value does not read: a `postBuild.substitute` entry of another Flux
/// Kustomization, or a key of a ConfigMap or Secret (another cluster's
/// settings, one not listed in `substituteFrom`). A user who finds the
/// name written there must not be told it is defined nowhere.
fn set_elsewhere(model: &Model, name: &str) -> Option<String> {
    model.objects.iter().find_map(|o| {
        let at = if o.is("kustomize.toolkit.fluxcd.io", "Kustomization") {
            o.root.path(&["spec", "postBuild", "substitute", name])
        } else if o.is("", "ConfigMap") || o.is("", "Secret") {
            o.root
                .path(&["data", name])
                .or_else(|| o.root.path(&["stringData", name]))
        } else {
            None
        }?;
        Some(model.sources.location(at.span()))
    })
}

/// What kustomize-controller does with the undefined variable: fail the
/// Kustomization (strict substitution, the default since v1.9), or, where
/// the repository turns the `StrictPostBuildSubstitutions` feature gate
/// off for it (an argument of the controller's Deployment, a patch of a
/// FluxInstance or of the flux-instance chart's values), substitute an
/// empty string.
fn outcome(model: &Model, object: ObjRef) -> String {
    let obj = model.object(object);
    let off = model.memo(|| StrictOff::of(model));
    let at = off
        .0
        .iter()
        .find(|(tree, _)| tree.is_none() || obj.tree.is_none() || *tree == obj.tree);
    match at {
        Some((_, at)) => format!(
            "Flux substitutes an empty string here, since the repository turns strict \
             substitution off at {at}"
        ),
        None => "strict substitution fails the Kustomization here".into(),
    }
}

/// Where the repository turns strict substitution off, with the Flux
/// tree (the cluster) that applies each place: a repository of several
/// clusters may turn it off for one of them only.
struct StrictOff(Vec<(Option<u32>, String)>);

impl StrictOff {
    fn of(model: &Model) -> StrictOff {
        const OFF: &str = "StrictPostBuildSubstitutions=false";
        let carriers = [
            ("apps", "Deployment"),
            ("fluxcd.controlplane.io", "FluxInstance"),
            ("helm.toolkit.fluxcd.io", "HelmRelease"),
        ];
        let mut at = Vec::new();
        for &(group, kind) in &carriers {
            for i in model.of_kind(group, kind) {
                let o = model.object(i);
                let mut found = None;
                o.root.walk(&mut |_, n| {
                    if found.is_none() && n.as_str().is_some_and(|t| t.contains(OFF)) {
                        found = Some(n.span());
                    }
                });
                at.extend(found.map(|span| (o.tree, model.sources.location(span))));
            }
        }
        StrictOff(at)
    }
}
