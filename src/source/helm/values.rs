//! A HelmRelease's values while its `valuesFrom` entries build them, every
//! mapping written into keeping an index of its keys. A `Node`'s mapping
//! is a boxed slice searched key by key: each entry that merged or set one
//! key paid for a search and a copy of the whole mapping so far, so 20,000
//! entries each adding its own key took 35 s. Here an entry costs what it
//! writes; the values become a `Node` once, at the end, keys in the order
//! they were first written.

use crate::yaml::{Node, PathMap, Span, Value};
use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::Arc;

/// A value under construction: a mapping or list written into is held
/// open (its entries here), anything else as the node it is. A node's
/// mapping or list is opened the first time something is written into
/// it, once, at the cost of its own entries (not of what they hold).
pub(super) enum Values {
    Node(Node),
    Map(Shell, Table),
    Seq(Shell, Vec<Values>),
}

/// What a mapping or list node is besides its entries: the node, its
/// value left null.
pub(super) struct Shell(Node);

/// A mapping's entries, in order, and where each key first is.
#[derive(Default)]
pub(super) struct Table {
    entries: Vec<(Node, Values)>,
    /// Keys by [`Table::key_hash`]: the entries whose keys hash alike, the first
    /// first (keys are compared as `Value`s, like `transform.MergeMaps`'s
    /// map keys, so `1` and `"1"` differ).
    /// Hashed with foldhash seeded per process, as the maps keyed by
    /// what a repository names are ([`crate::yaml::PathHasher`]): the
    /// keys are the repository's, and no repository can choose keys
    /// that collide; std's SipHash, twice a key, was 0.6 M instructions
    /// of joryirving__home-ops.
    at: PathMap<u64, Vec<usize>>,
}

impl Table {
    fn find(&self, key: &Value) -> Option<usize> {
        self.at
            .get(&self.key_hash(key))?
            .iter()
            .copied()
            .find(|&i| self.entries[i].0.value == *key)
    }

    fn push(&mut self, key: Node, value: Values) -> usize {
        let i = self.entries.len();
        let hash = self.key_hash(&key.value);
        self.at.entry(hash).or_default().push(i);
        self.entries.push((key, value));
        i
    }

    /// A hash of a key's value that equal values share: a float's zero of
    /// either sign alike (they are equal), spans and styles left out
    /// (nodes are equal by value).
    fn key_hash(&self, value: &Value) -> u64 {
        struct ByValue<'v>(&'v Value);
        impl Hash for ByValue<'_> {
            fn hash<H: Hasher>(&self, h: &mut H) {
                hash_value(self.0, h);
            }
        }
        self.at.hasher().hash_one(ByValue(value))
    }

    /// The value at `key`, made by `fresh` when the key is new.
    fn slot(&mut self, key: &Value, fresh: impl FnOnce() -> (Node, Values)) -> &mut Values {
        let i = match self.find(key) {
            Some(i) => i,
            None => {
                let (k, v) = fresh();
                self.push(k, v)
            }
        };
        &mut self.entries[i].1
    }
}

fn hash_value(value: &Value, h: &mut impl Hasher) {
    std::mem::discriminant(value).hash(h);
    match value {
        Value::Null => {}
        Value::Bool(b) => b.hash(h),
        Value::Int(i) => i.hash(h),
        Value::Float(f) => (if *f == 0.0 { 0.0f64 } else { *f }).to_bits().hash(h),
        Value::Str(s) => s.hash(h),
        Value::Seq(items) => items.iter().for_each(|n| hash_value(&n.value, h)),
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            hash_value(&k.value, h);
            hash_value(&v.value, h);
        }),
    }
}

impl Values {
    /// An empty mapping at `span`.
    pub(super) fn map(span: Span) -> Values {
        Values::Node(Node::new(Value::Map(Default::default()), span))
    }

    pub(super) fn is_map(&self) -> bool {
        match self {
            Values::Node(n) => matches!(n.value, Value::Map(_)),
            Values::Map(..) => true,
            Values::Seq(..) => false,
        }
    }

    pub(super) fn is_seq(&self) -> bool {
        match self {
            Values::Node(n) => matches!(n.value, Value::Seq(_)),
            Values::Seq(..) => true,
            Values::Map(..) => false,
        }
    }

    pub(super) fn is_null(&self) -> bool {
        matches!(self, Values::Node(n) if n.is_null())
    }

    /// The mapping's entries, opened; `None` when this is not a mapping.
    pub(super) fn table(&mut self) -> Option<&mut Table> {
        if let Values::Node(node) = self
            && let Value::Map(entries) = &mut node.value
        {
            let entries = crate::yaml::take_entries(entries);
            let mut table = Table::default();
            for (k, v) in entries {
                table.push(k, Values::Node(v));
            }
            *self = Values::Map(shell(node), table);
        }
        match self {
            Values::Map(_, table) => Some(table),
            _ => None,
        }
    }

    /// The list's items, opened; `None` when this is not a list.
    pub(super) fn items(&mut self) -> Option<&mut Vec<Values>> {
        if let Values::Node(node) = self
            && let Value::Seq(items) = &mut node.value
        {
            let items = std::mem::take(Arc::make_mut(items));
            *self = Values::Seq(shell(node), items.into_iter().map(Values::Node).collect());
        }
        match self {
            Values::Seq(_, items) => Some(items),
            _ => None,
        }
    }

    /// The value at `key` of this mapping, made by `fresh` when the key is
    /// new; `None` when this is not a mapping.
    pub(super) fn key(
        &mut self,
        key: &str,
        fresh: impl FnOnce() -> (Node, Values),
    ) -> Option<&mut Values> {
        let key = Value::Str(key.into());
        Some(self.table()?.slot(&key, fresh))
    }

    /// `transform.MergeMaps`: maps merge key by key, anything else
    /// replaces.
    pub(super) fn merge(&mut self, src: Node) {
        if !(self.is_map() && matches!(src.value, Value::Map(_))) {
            *self = Values::Node(src);
            return;
        }
        let Value::Map(mut entries) = src.value else {
            unreachable!("a mapping, checked above");
        };
        let table = self.table().expect("a mapping, checked above");
        for (k, v) in crate::yaml::take_entries(&mut entries) {
            match table.find(&k.value) {
                Some(i) => table.entries[i].1.merge(v),
                None => {
                    table.push(k, Values::Node(v));
                }
            }
        }
    }

    /// The values as one node, each mapping's entries whose value is a
    /// null written at one of `dropped` left out.
    pub(super) fn into_node(self, dropped: &std::collections::HashSet<Span>) -> Node {
        match self {
            Values::Node(node) => node,
            Values::Map(shell, table) => {
                let entries = table
                    .entries
                    .into_iter()
                    .filter(|(_, v)| !(v.is_null() && dropped.contains(&v.span())))
                    .map(|(k, v)| (k, v.into_node(dropped)))
                    .collect();
                unshell(shell, Value::Map(entries))
            }
            Values::Seq(shell, items) => {
                let items = items.into_iter().map(|v| v.into_node(dropped)).collect();
                unshell(shell, Value::Seq(Arc::new(items)))
            }
        }
    }

    fn span(&self) -> Span {
        match self {
            Values::Node(n) => n.span(),
            Values::Map(s, _) | Values::Seq(s, _) => s.0.span(),
        }
    }

    /// The value a placeholder written at `at` still holds at `path`.
    pub(super) fn holds_placeholder(&mut self, path: &[super::Seg], at: Span) -> bool {
        let mut cur = self;
        for seg in path {
            let next = match seg {
                super::Seg::Key(k) => cur.table().and_then(|t| {
                    t.find(&Value::Str(k.as_str().into()))
                        .map(|i| &mut t.entries[i].1)
                }),
                super::Seg::Index(i) => cur.items().and_then(|items| items.get_mut(*i)),
            };
            match next {
                Some(n) => cur = n,
                None => return false,
            }
        }
        cur.is_null() && cur.span() == at
    }
}

fn shell(node: &Node) -> Shell {
    Shell(node.with_value(Value::Null))
}

fn unshell(Shell(mut node): Shell, value: Value) -> Node {
    node.value = value;
    node
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(text: &str) -> Node {
        crate::yaml::parse_one(text)
    }

    #[test]
    fn merges_keep_the_first_place_of_each_key_and_the_last_value() {
        let mut values = Values::map(Span::default());
        values.merge(node("b: 1\na: {x: 1, y: 2}\n"));
        values.merge(node("a: {y: 3, z: 4}\nc: 5\nb: [1]\n"));
        let merged = values.into_node(&Default::default());
        assert_eq!(merged, node("b: [1]\na: {x: 1, y: 3, z: 4}\nc: 5\n"));
    }

    #[test]
    fn keys_are_compared_by_value_and_type() {
        let mut values = Values::map(Span::default());
        values.merge(node("1: int\n'1': str\n0.0: zero\n~: none\ntrue: yes\n"));
        values.merge(node("1: INT\n-0.0: ZERO\nnull: NONE\n'true': str\n"));
        let merged = values.into_node(&Default::default());
        assert_eq!(
            merged,
            node("1: INT\n'1': str\n0.0: ZERO\n~: NONE\ntrue: yes\n'true': str\n")
        );
    }

    #[test]
    fn a_value_that_is_not_a_mapping_replaces() {
        let mut values = Values::map(Span::default());
        values.merge(node("a: {x: 1}\n"));
        values.merge(node("a: text\n"));
        values.merge(node("a: {y: 2}\n"));
        let merged = values.into_node(&Default::default());
        assert_eq!(merged, node("a: {y: 2}\n"));
    }
}
