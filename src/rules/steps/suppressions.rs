//! `unusedSuppression` and `unknownRuleInSuppression`: suppressions that
//! match no finding or name no rule. The steps hold nowhere: the
//! suppression pass reports them after all other rules ran.

use super::{Bindings, Step};
use crate::rules::engine::Ctx;

pub struct Suppressions;

impl Step for Suppressions {
    fn eval(&self, _cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        Vec::new()
    }
}
