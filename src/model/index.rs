//! Objects by a key (kind and name, the file they are written in), held
//! as one sorted list: a lookup is a binary search. A hash map of a `Vec`
//! per key took a block for every key, which at 100k objects was about
//! 20 MB of the model for the two indexes over every object.
//!
//! The list is sorted by a hash of the key, then by object: a sort that
//! compared the keys themselves (two strings for a kind and name) was
//! most of the cost of building the model's indexes, and the order of
//! the keys is never asked, only the objects under one. Keys whose hashes
//! meet are put in key order within their run, so a key's objects stay
//! one slice, in object order.

use std::hash::{BuildHasher, Hash};

use super::ObjRef;

pub(crate) struct Index<K> {
    /// By hash, then by key within a run of equal hashes, then in object
    /// order.
    entries: Vec<Entry<K>>,
}

/// One object under one key. The hash and the object as 32 bits each
/// keep an entry the size of a key and a `usize`.
struct Entry<K> {
    key: K,
    hash: u32,
    object: u32,
}

/// The same hash in every run and on every thread (foldhash's fixed
/// state): only the order within the list depends on it, never what a
/// lookup gives.
fn hash_of<K: Hash>(key: &K) -> u32 {
    // The high half: foldhash mixes into the upper bits last.
    (foldhash::fast::FixedState::with_seed(0).hash_one(key) >> 32) as u32
}

impl<K: Ord + Hash> Index<K> {
    /// `entries` in object order (each caller lists them as it goes
    /// through the objects).
    pub(crate) fn new(entries: Vec<(K, ObjRef)>) -> Index<K> {
        debug_assert!(entries.is_sorted_by_key(|&(_, object)| object));
        // The order sorted as plain integers, hash then place (so object
        // order within a hash), then the entries moved into it along its
        // cycles: a sort that moved the entries at each step cost as much
        // again, and moving them into a second list held two at once.
        let mut order: Vec<u64> = entries
            .iter()
            .enumerate()
            .map(|(place, (key, _))| (u64::from(hash_of(key)) << 32) | place as u64)
            .collect();
        order.sort_unstable();
        let mut entries = entries;
        const DONE: u64 = u32::MAX as u64;
        for start in 0..order.len() {
            let mut at = start;
            while order[at] & DONE != DONE {
                let from = (order[at] & DONE) as usize;
                order[at] |= DONE;
                if from == start {
                    break;
                }
                entries.swap(at, from);
                at = from;
            }
        }
        let mut entries: Vec<Entry<K>> = entries
            .into_iter()
            .zip(order)
            .map(|((key, object), o)| Entry {
                key,
                hash: (o >> 32) as u32,
                object: u32::try_from(object).expect("fewer than 2^32 objects"),
            })
            .collect();
        // A run of one hash holding two keys: the keys in order, each
        // key's objects still in object order (a stable sort).
        let mut start = 0;
        while start < entries.len() {
            let hash = entries[start].hash;
            let len = entries[start..].partition_point(|e| e.hash == hash);
            let run = &mut entries[start..start + len];
            if run.iter().any(|e| e.key != run[0].key) {
                run.sort_by(|a, b| a.key.cmp(&b.key));
            }
            start += len;
        }
        entries.shrink_to_fit();
        Index { entries }
    }

    /// The objects under `key`, in object order.
    pub(crate) fn get<'a>(&'a self, key: &K) -> impl Iterator<Item = ObjRef> + use<'a, K> {
        self.under(key).iter().map(|e| e.object as ObjRef)
    }

    /// How many objects are under `key`, without visiting them.
    pub(crate) fn count(&self, key: &K) -> usize {
        self.under(key).len()
    }

    fn under(&self, key: &K) -> &[Entry<K>] {
        let hash = hash_of(key);
        let start = self.entries.partition_point(|e| e.hash < hash);
        let run = &self.entries[start..];
        let run = &run[..run.partition_point(|e| e.hash == hash)];
        let start = run.partition_point(|e| e.key < *key);
        let len = run[start..].partition_point(|e| e.key == *key);
        &run[start..start + len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_gives_its_objects_in_object_order_and_no_other() {
        let index = Index::new(vec![("b", 0), ("a", 1), ("b", 2), ("c", 3), ("b", 4)]);
        assert_eq!(index.get(&"b").collect::<Vec<_>>(), [0, 2, 4]);
        assert_eq!((index.count(&"b"), index.count(&"bb")), (3, 0));
        assert_eq!(index.get(&"a").collect::<Vec<_>>(), [1]);
        assert_eq!(index.get(&"bb").count(), 0);
        assert_eq!(index.get(&"0").count(), 0);
        assert_eq!(index.get(&"d").count(), 0);
    }

    /// Keys that all hash alike: a lookup still gives one key's objects,
    /// in object order, and no other's.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    struct Colliding(&'static str);

    impl Hash for Colliding {
        fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
    }

    #[test]
    fn keys_whose_hashes_meet_keep_their_own_objects() {
        let keys = ["b", "a", "b", "c", "a", "b"].map(Colliding);
        let index = Index::new(keys.iter().copied().zip(0..).collect());
        assert_eq!(index.get(&Colliding("b")).collect::<Vec<_>>(), [0, 2, 5]);
        assert_eq!(index.get(&Colliding("a")).collect::<Vec<_>>(), [1, 4]);
        assert_eq!(index.count(&Colliding("c")), 1);
        assert_eq!(index.count(&Colliding("d")), 0);
    }
}
