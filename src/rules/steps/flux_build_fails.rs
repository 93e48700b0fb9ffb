//! `fluxBuildFails`: Flux Kustomizations that kustomize-controller fails
//! because a local file or directory their build names is missing.

use super::{Bindings, Step, ValueFact, bind};
use crate::rules::engine::Ctx;

pub struct FluxBuildFails;

impl Step for FluxBuildFails {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        crate::model::flux::failed_builds(cx.model)
            .into_iter()
            .map(|(object, node, what)| {
                let fact = ValueFact::at(object, Some(node), what.into());
                vec![bind("kustomization", fact)]
            })
            .collect()
    }
}
