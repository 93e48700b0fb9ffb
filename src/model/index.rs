//! Objects by a key (kind and name, the file they are written in), held
//! as one sorted list: a lookup is a binary search. A hash map of a `Vec`
//! per key took a block for every key, which at 100k objects was about
//! 20 MB of the model for the two indexes over every object.

use super::ObjRef;

pub(crate) struct Index<K> {
    /// By key, then in object order.
    entries: Vec<(K, ObjRef)>,
}

impl<K: Ord> Index<K> {
    pub(crate) fn new(mut entries: Vec<(K, ObjRef)>) -> Index<K> {
        entries.sort_unstable();
        entries.shrink_to_fit();
        Index { entries }
    }

    /// The objects under `key`, in object order.
    pub(crate) fn get<'a>(&'a self, key: &K) -> impl Iterator<Item = ObjRef> + use<'a, K> {
        self.under(key).iter().map(|&(_, i)| i)
    }

    /// How many objects are under `key`, without visiting them.
    pub(crate) fn count(&self, key: &K) -> usize {
        self.under(key).len()
    }

    fn under(&self, key: &K) -> &[(K, ObjRef)] {
        let start = self.entries.partition_point(|(k, _)| k < key);
        let len = self.entries[start..].partition_point(|(k, _)| k == key);
        &self.entries[start..start + len]
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
}
