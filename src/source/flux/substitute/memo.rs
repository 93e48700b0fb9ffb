//! What one Flux Kustomization's substitution gave so far, for the
//! values after it to share: origins, and what each short text became.

use std::sync::Arc;

use super::Budget;
use crate::source::PathMap;
use compact_str::CompactString;

use crate::yaml::{Node, Origin};

/// What one Flux Kustomization's substitution (one set of variables)
/// gave so far. Every use of `${APP}` in its objects has the same origin,
/// and an origin each was a twentieth of the 100k-object synthetic
/// repository's memory. The same text expands the same way every time:
/// a component's `${APP}` is in half a dozen places of each app, and a
/// parent's patch gives `${CLUSTER}` to every child Kustomization.
#[derive(Default)]
pub struct Origins {
    kept: Vec<Arc<Origin>>,
    /// By text, for a value and for a key (which read back differently).
    outcomes: [PathMap<CompactString, Outcome>; 2],
}

/// What substituting a scalar's text gave where it reported nothing,
/// and the budget it spent doing so.
#[derive(Clone)]
pub(super) struct Outcome {
    /// The value and origin put in its place; `None` when it stayed.
    pub set: Option<(Node, Option<Arc<Origin>>)>,
    /// Whether a key changed (the mapping may now hold it twice).
    pub renamed: bool,
    pub before: Budget,
    pub after: Budget,
}

impl Origins {
    /// Distinct origins kept to share: a Kustomization's variables are
    /// few, and a scan of more would cost more than the memory it saves.
    const KEPT: usize = 32;

    /// Texts up to this long are remembered: the ones repeated are
    /// references such as `${APP}`, while a long text (a script, a
    /// dashboard) is written once and would only be copied.
    pub(super) const REMEMBERED_LEN: usize = 1024;

    pub(super) fn share(&mut self, origin: Origin) -> Arc<Origin> {
        if let Some(same) = self.kept.iter().find(|o| ***o == origin) {
            return same.clone();
        }
        let origin = Arc::new(origin);
        if self.kept.len() < Self::KEPT {
            self.kept.push(origin.clone());
        }
        origin
    }

    /// What `text` gave before, as a value or as a `key`.
    pub(super) fn outcome(&self, text: &str, key: bool) -> Option<&Outcome> {
        self.outcomes[usize::from(key)].get(text)
    }

    pub(super) fn remember(&mut self, text: CompactString, key: bool, outcome: Outcome) {
        if text.len() <= Self::REMEMBERED_LEN {
            self.outcomes[usize::from(key)].insert(text, outcome);
        }
    }
}
