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
        Described {
            labels: vec![Label {
                span: self.node.span,
                text: format!(
                    "${{{name}}} is defined nowhere: strict substitution fails the \
                     Kustomization here"
                ),
            }],
            evidence: vec![("name".into(), name.clone()), ("object".into(), id.clone())],
            identity: format!("{id}${name}"),
        }
    }

    fn object(&self) -> Option<ObjRef> {
        Some(self.object)
    }
}
