//! `anyOf`: holds when any of the listed step sequences holds.

use serde::{Deserialize, Serialize};

use super::{Bindings, Spec, Step};
use crate::rules::engine::Ctx;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct AnyOf(pub Vec<Vec<Spec>>);

impl Step for AnyOf {
    /// Per subject, the first branch that holds: branches that bind
    /// objects of their own (`object:`) each find every object they match,
    /// but a place two branches match (the same object, the same node) is
    /// bound once; a branch that binds no object holds once.
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let mut out = Vec::new();
        let mut subjects = std::collections::HashSet::new();
        for branch in &self.0 {
            let mut found = Vec::new();
            cx.run(branch, bound.clone(), &mut found);
            for result in found {
                let new = result[bound.len()..].to_vec();
                let subject: Vec<_> = new.iter().map(|(_, f)| (f.object(), f.place())).collect();
                if subjects.insert(subject) {
                    out.push(new);
                }
            }
        }
        out
    }
}
