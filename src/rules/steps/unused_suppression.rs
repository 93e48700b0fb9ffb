//! `unusedSuppression`: suppressions that match no finding. The step holds
//! nowhere: the suppression pass reports them after all other rules ran.

use super::{Bindings, Step};
use crate::rules::engine::Ctx;

pub struct UnusedSuppression;

impl Step for UnusedSuppression {
    fn eval(&self, _cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        Vec::new()
    }
}
