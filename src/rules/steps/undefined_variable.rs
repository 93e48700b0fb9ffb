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
                 repository sets it only at {at}, which its postBuild does not read): strict \
                 substitution fails the Kustomization here"
            ),
            None => format!(
                "${{{name}}} is defined nowhere: strict substitution fails the \
                 Kustomization here"
            ),
        };
        Described {
            labels: vec![Label {
                span: self.node.span,
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
        Some(model.sources.location(at.span))
    })
}
