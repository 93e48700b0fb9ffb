//! The entries of one ConfigMap or Secret as they are read, each key's
//! place found by a map: a later writer of a key (a Secret's
//! `stringData`, a template's `data`) replaces the first entry of it, and
//! a search of the entries per key made a Secret of 20,000 `stringData`
//! keys take 9.7 s. The map hashes with foldhash: each Flux
//! Kustomization reads its `substituteFrom` sources anew, and SipHash of
//! their keys was a third of that read.

use super::DataValue;
use crate::source::PathMap;

#[derive(Default)]
pub(super) struct Keyed<'a> {
    list: Vec<(String, DataValue<'a>)>,
    /// The first entry of each key in `list`.
    at: PathMap<String, usize>,
}

impl<'a> Keyed<'a> {
    /// Adds an entry, even of a key already there.
    pub(super) fn push(&mut self, key: String, value: DataValue<'a>) {
        self.at.entry(key.clone()).or_insert(self.list.len());
        self.list.push((key, value));
    }

    /// Replaces the value of the first entry of `key`, or adds one.
    pub(super) fn set(&mut self, key: String, value: DataValue<'a>) {
        match self.at.get(&key) {
            Some(&i) => self.list[i].1 = value,
            None => self.push(key, value),
        }
    }

    pub(super) fn into_vec(self) -> Vec<(String, DataValue<'a>)> {
        self.list
    }
}
