//! What the kustomize builds of one load may still spend in all, shared
//! by every build and by Flux's own steps (`spec.patches`,
//! `targetNamespace`): a budget per build alone would let many small
//! builds, or many Flux Kustomizations over one directory, each spend
//! it again.

use super::RunBudget;
use crate::source::files::Files;
use crate::yaml::{Node, Size};

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
