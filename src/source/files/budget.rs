//! What the builds of a load spend of its budgets ([`RunBudget`]).

use super::Files;
use crate::source::limits::kustomize::RunBudget;

impl Files {
    /// What the builds of this load may still spend.
    pub(crate) fn budget_left(&self) -> RunBudget {
        self.left
    }

    /// Whether a spending did not fit in the budget (since this fork's
    /// job began, in a fork).
    pub(crate) fn budget_stopped(&self) -> bool {
        self.budget_spent
    }

    /// The budget the load started with.
    pub(crate) fn budget_total(&self) -> RunBudget {
        self.total
    }

    /// Spends `spent` at once, for a build reused from another load
    /// (which checked that it fits).
    pub(crate) fn spend_reused(&mut self, spent: RunBudget) {
        self.left = self.left.minus(spent);
    }

    /// Counts `spent` against the load's budget; false, spending nothing,
    /// when it does not fit.
    pub(crate) fn spend(&mut self, spent: RunBudget) -> bool {
        if !self.left.covers(&spent) {
            self.budget_spent = true;
            return false;
        }
        self.left = self.left.minus(spent);
        true
    }

    /// Counts one directory built; false once the budget is spent.
    pub(crate) fn spend_build(&mut self) -> bool {
        self.spend(RunBudget {
            builds: 1,
            ..RunBudget::NONE
        })
    }
}
