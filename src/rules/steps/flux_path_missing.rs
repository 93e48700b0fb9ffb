//! `fluxPathMissing`: Flux Kustomizations whose `spec.path` is not a
//! directory of the repository.

use super::{Bindings, Step, ValueFact, bind};
use crate::rules::engine::Ctx;

pub struct FluxPathMissing;

impl Step for FluxPathMissing {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        crate::model::flux::missing_paths(cx.model)
            .into_iter()
            .map(|(object, node)| {
                let fact = ValueFact::at(object, Some(node), "$.spec.path".into());
                vec![bind("kustomization", fact)]
            })
            .collect()
    }
}
