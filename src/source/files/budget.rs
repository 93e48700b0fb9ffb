//! What the builds of a load spend of its budgets ([`RunBudget`]).

use super::Files;
use crate::source::limits::kustomize::RunBudget;
use crate::source::{Budget, Issue};

impl Files {
    /// What the builds of this load may still spend.
    pub(crate) fn budget_left(&self) -> RunBudget {
        self.left
    }

    /// Whether a spending did not fit in the budget (since this fork's
    /// job began, in a fork).
    pub(crate) fn budget_stopped(&self) -> bool {
        self.budget_refused.is_some()
    }

    /// Runs `build`; an error it ends with after a spending did not fit
    /// is that budget's stop (a spending refused ends the build: it is
    /// never a gap the build goes on without).
    pub(crate) fn stopped_by_budget<T>(
        &mut self,
        build: impl FnOnce(&mut Files) -> Result<T, Issue>,
    ) -> Result<T, Issue> {
        let before = self.budget_refused.take();
        let result = build(self).map_err(|issue| match (issue.budget, self.budget_refused) {
            (None, Some(budget)) => issue.stopped_by(budget),
            _ => issue,
        });
        self.budget_refused = self.budget_refused.or(before);
        result
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
            let (left, total) = (self.left, self.total);
            self.budget_refused = Some(if spent.builds > left.builds {
                Budget::RunBuilds(total.builds)
            } else if spent.work > left.work {
                Budget::Work(total.work)
            } else {
                Budget::OutputBytes(total.bytes)
            });
            return false;
        }
        self.left = self.left.minus(spent);
        true
    }

    /// These files, spending what `other` has left: a fetched folder's
    /// build is one of the load's builds.
    pub(crate) fn within_budget_of(mut self, other: &Files) -> Files {
        (self.left, self.total) = (other.left, other.total);
        self
    }

    /// Takes what `sub` ([`Files::within_budget_of`] these) spent as
    /// spent here.
    pub(crate) fn take_spent(&mut self, sub: &Files) {
        self.left = sub.left;
        self.budget_refused = self.budget_refused.or(sub.budget_refused);
    }

    /// Counts one directory built; false once the budget is spent.
    pub(crate) fn spend_build(&mut self) -> bool {
        self.spend(RunBudget {
            builds: 1,
            ..RunBudget::NONE
        })
    }
}
