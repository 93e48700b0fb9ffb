//! What the HelmReleases of one model share as they resolve (on several
//! threads): each values document held in a ConfigMap or Secret key
//! parsed once, and a budget on the bytes all their `valuesFrom` merges
//! copy. 200 entries naming one 12 MB values key parsed it 200 times and
//! merged 2.4 GB (89 s of CPU on a debug build); many releases naming it
//! would each do the same.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::source::{Issue, Object};
use crate::yaml::Node;

/// A values document as parsed from `text`: `None` for an empty one.
pub(super) type Parsed = Result<Option<Arc<Node>>, Issue>;

/// A document held with the text it was parsed from.
type Held = (Arc<str>, Parsed);

pub struct Shared {
    /// By object (its address: the objects are not moved while the
    /// model holds them) and key, with the text parsed: the text of an
    /// ExternalSecret's key may depend on which tree looks it up.
    parsed: Mutex<HashMap<(usize, String), Held>>,
    /// Bytes of values text the merges may still copy.
    left: AtomicU64,
    total: u64,
}

impl Shared {
    /// A start with `bytes` for the merges of every release.
    pub fn new(bytes: u64) -> Shared {
        Shared {
            parsed: Mutex::default(),
            left: AtomicU64::new(bytes),
            total: bytes,
        }
    }

    /// The document of `key` of `obj`, whose text is `text`: parsed by
    /// `parse` the first time, then shared.
    pub(super) fn document(
        &self,
        obj: &Object,
        key: &str,
        text: &str,
        parse: impl FnOnce() -> Parsed,
    ) -> Parsed {
        let at = (std::ptr::from_ref(obj) as usize, key.to_string());
        let held = |map: &HashMap<_, Held>| {
            map.get(&at)
                .filter(|(t, _): &&Held| &**t == text)
                .map(|(_, p)| p.clone())
        };
        if let Some(parsed) = held(&self.parsed.lock().unwrap_or_else(|e| e.into_inner())) {
            return parsed;
        }
        // Parsed outside the lock, so other releases go on meanwhile.
        let parsed = parse();
        let mut map = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(at)
            .or_insert_with(|| (Arc::from(text), parsed.clone()));
        parsed
    }

    /// Takes `bytes` from what the merges may still copy; the reason,
    /// for an issue at the entry, when they do not fit.
    pub(super) fn spend(&self, bytes: u64) -> Result<(), String> {
        let took = self
            .left
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                left.checked_sub(bytes)
            });
        took.map(drop).map_err(|_| {
            format!(
                "Helm values budget exceeded: the valuesFrom merges of this repository would copy more than {} bytes of values in all; not merged, so the release's values are incomplete here",
                self.total
            )
        })
    }
}
