//! What the kustomize builds of one load may still spend in all, shared
//! by every build and by Flux's own steps (`spec.patches`,
//! `targetNamespace`): a budget per build alone would let many small
//! builds, or many Flux Kustomizations over one directory, each spend
//! it again.

use super::RunBudget;
use crate::source::files::Files;
use crate::source::{Object, Step, StepKind};
use crate::yaml::{Node, Size, Span};

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
/// items) costs in node visits: 4 keys compared count as one visit. A
/// key compared in a small mapping is a nanosecond or two, but a search
/// through a wide one goes through memory (1,000 replacements over 1,000
/// ConfigMaps each growing to 1,000 keys compared 500 million keys at
/// about 28 ns each, 22 s of CPU on a release build, within a budget that
/// counted 64 keys as one visit); about what a visit (a node copied or
/// written, an allocation) costs. Many patches or replacements over wide
/// objects stop at the budget.
pub(crate) fn scan_cost(width: usize) -> usize {
    1 + width / 4
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
        "kustomize output budget exceeded: the patches, replacements and transformers of this repository would add more than {} bytes to its objects in all (the values they set and the steps that record them); not applied further",
        files.budget_total().bytes
    ))
}

/// Spends what going once through the `objects` of a build costs a
/// patch's or replacement's target selection or a transformer's pass,
/// whether or not it changes them: each is looked at (its kind, its
/// name) for each entry, and an entry that changes nothing (a target of
/// a kind the build does not hold, a replica count of a name it does not
/// have) costs as much as one that does (4,000 replacements selecting
/// nothing over 5,000 ConfigMaps ran past 120 s).
pub(crate) fn spend_scan(files: &mut Files, objects: usize) -> Result<(), String> {
    // An object looked at has its id read (kind, name, namespace,
    // version, the ids it had before): about what four visits cost.
    spend_work(files, objects.saturating_mul(4))
}

/// Adds a step to `obj`'s chain (what changed it, shown with every
/// finding on it), paid from the output budget like the bytes a
/// transformer sets: a patch, replacement or transformer adds one to
/// every object it changes, however little it sets (an empty label listed
/// 20,000 times over 10,000 objects made 200 million steps; a patch named
/// by a 4 KB path listed 150 times over 5,000 objects, 3 GB of them).
/// The text is paid for each object even where one text is shared, as
/// the namespace transformer's is, so that the budget does not depend on
/// how a caller holds it.
pub(crate) fn record_step(
    files: &mut Files,
    obj: &mut Object,
    kind: StepKind,
    detail: impl Into<std::sync::Arc<str>>,
    at: Span,
) -> Result<(), String> {
    let detail = detail.into();
    spend_output(files, std::mem::size_of::<Step>() + detail.len())?;
    obj.push_step(kind, detail, Some(at));
    Ok(())
}
