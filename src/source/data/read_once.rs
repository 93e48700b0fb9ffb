//! The keys of ConfigMaps and Secrets read once per object, for callers
//! that ask for one key at a time. [`super::entry`] reads every key of
//! its object (decoding, SOPS patterns, the Secret an ExternalSecret
//! renders) to give one, so a HelmRelease whose `valuesFrom` entries, or
//! a container whose `env`, named each key of one large ConfigMap in
//! turn was quadratic in its keys: 20,000 `valuesFrom` entries took 46 s,
//! 2,000 env variables 6 s.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{DataValue, Lookup, entries};
use crate::source::Object;

/// Each object's keys, by the object's address: the objects are
/// borrowed for `'a`, so no two of them share one while this lives.
/// Every object must be read with the same `lookup` (the one its holder
/// sees: for the model, the object's own).
#[derive(Default)]
pub struct ReadOnce<'a> {
    read: Mutex<HashMap<usize, Arc<Keys<'a>>>>,
}

type Keys<'a> = HashMap<String, DataValue<'a>>;

impl<'a> ReadOnce<'a> {
    /// [`super::entry`]: the value of `key` in `obj`, the first entry of
    /// that key when several are written.
    pub fn entry(
        &self,
        obj: &'a Object,
        key: &str,
        lookup: Lookup<'_, 'a>,
    ) -> Option<DataValue<'a>> {
        let at = std::ptr::from_ref(obj) as usize;
        let known = self.lock().get(&at).cloned();
        let keys = match known {
            Some(keys) => keys,
            None => {
                let mut keys = Keys::new();
                for (k, v) in entries(obj, lookup) {
                    keys.entry(k).or_insert(v);
                }
                // Read outside the lock: another thread may have read the
                // same object meanwhile, and either reading is the same.
                Arc::clone(self.lock().entry(at).or_insert(Arc::new(keys)))
            }
        };
        keys.get(key).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<usize, Arc<Keys<'a>>>> {
        self.read
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
