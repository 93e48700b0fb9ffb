//! What the kustomize builds of one load may still spend in all, shared
//! by every build and by Flux's own steps (`spec.patches`,
//! `targetNamespace`): a budget per build alone would let many small
//! builds, or many Flux Kustomizations over one directory, each spend
//! it again.

use super::Limits;
use crate::source::files::Files;
use crate::yaml::{Node, Size};

/// What is left of the budgets of one load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBudget {
    /// Kustomization and component directories the builds may go through
    /// (`Limits::max_run_builds`).
    pub builds: usize,
    /// Node visits (`Limits::max_run_work`).
    pub work: u64,
    /// Bytes added by transformers (`Limits::max_run_output_bytes`).
    pub bytes: u64,
}

impl RunBudget {
    /// Nothing: the start of a count of what was spent.
    pub const NONE: RunBudget = RunBudget {
        builds: 0,
        work: 0,
        bytes: 0,
    };

    /// The whole of a load's budgets.
    pub fn new(limits: &Limits) -> RunBudget {
        RunBudget {
            builds: limits.max_run_builds,
            work: limits.max_run_work,
            bytes: limits.max_run_output_bytes,
        }
    }

    /// `self` less `other`, field by field and never below zero: what
    /// was spent between two readings, or what is left after a spending.
    pub fn minus(self, other: RunBudget) -> RunBudget {
        RunBudget {
            builds: self.builds.saturating_sub(other.builds),
            work: self.work.saturating_sub(other.work),
            bytes: self.bytes.saturating_sub(other.bytes),
        }
    }

    /// `self` and `other` together (saturating).
    pub fn plus(self, other: RunBudget) -> RunBudget {
        RunBudget {
            builds: self.builds.saturating_add(other.builds),
            work: self.work.saturating_add(other.work),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }

    /// Whether `spent` fits in what is left.
    pub fn covers(&self, spent: &RunBudget) -> bool {
        spent.builds <= self.builds && spent.work <= self.work && spent.bytes <= self.bytes
    }
}

/// Spends the work of applying what has `applied` nodes to `object`;
/// the reason, for an issue at what is applied, when it does not fit.
pub(crate) fn spend_work_on(
    files: &mut Files,
    object: &Node,
    applied: usize,
) -> Result<(), String> {
    let nodes = Size::of(object, &files.limits().yaml).nodes;
    spend_work(files, nodes.saturating_add(applied))
}

/// What a patch or replacement pays as it goes, in node visits: the
/// reason when the run's work budget does not cover them.
pub(crate) type Spend<'a> = dyn FnMut(usize) -> Result<(), String> + 'a;

/// What searching a mapping of `width` keys (or moving `width` list
/// items) costs in node visits: comparing a short key is a nanosecond or
/// two, where copying or writing a node (what a visit otherwise stands
/// for) allocates, so 64 keys compared count as one visit. A search is
/// still paid for: many patches over one very wide object stop at the
/// budget.
pub(crate) fn scan_cost(width: usize) -> usize {
    1 + width / 64
}

/// Spends `visits` node visits; the reason when they do not fit.
pub(crate) fn spend_work(files: &mut Files, visits: usize) -> Result<(), String> {
    if files.spend(RunBudget {
        work: visits as u64,
        ..RunBudget::NONE
    }) {
        return Ok(());
    }
    Err(format!(
        "kustomize work budget exceeded: the patches, replacements and transformers of this repository would visit more than {} nodes of the objects they change in all; not applied further",
        files.budget_total().work
    ))
}

/// Spends `bytes` that a transformer adds to an object; the reason when
/// they do not fit.
pub(crate) fn spend_output(files: &mut Files, bytes: usize) -> Result<(), String> {
    if files.spend(RunBudget {
        bytes: bytes as u64,
        ..RunBudget::NONE
    }) {
        return Ok(());
    }
    Err(format!(
        "kustomize output budget exceeded: transformers would add more than {} bytes to the objects of this repository in all; not applied further",
        files.budget_total().bytes
    ))
}
