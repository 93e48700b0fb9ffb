//! The YAML tree every later stage works on: plain data plus, on every node,
//! the place in a source file where it was written.
//!
//! Kustomize, Flux and Helm all copy values between objects. Keeping the span
//! on the node (rather than in a side table keyed by path) means a value keeps
//! its origin however often it is copied, merged or patched.

use std::sync::Arc;

use super::tag::Place;

pub use compact_str::CompactString;

/// Index of a file in [`crate::yaml::SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct FileId(pub u32);

/// Where a node was written: byte range plus the 1-based line and column
/// (in characters) of its start, which is what users and SARIF want.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
    pub line: u32,
    pub col: u32,
}

/// How a scalar was written. Flux substitution re-types plain scalars only
/// (`replicas: ${N}` becomes a number; `"${N}"` stays a string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Plain,
    Quoted,
    Block,
}

/// A value that reached the node through something other than plain
/// copying: today, a Flux postBuild variable.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// `${name}` was replaced. `defined_at` is the span of the variable's
    /// value (inline `substitute`, or the ConfigMap/Secret key), or `None`
    /// when the default or the empty string was used.
    Substituted {
        variable: String,
        defined_at: Option<Span>,
        /// The value came from an encrypted or otherwise unreadable source.
        unknown: bool,
        /// Variables used without a default that nothing defines: Flux
        /// renders each as an empty string.
        undefined: Vec<String>,
        /// Some variable it used is a Secret's: the value is never shown.
        secret: bool,
        /// When `unknown` only because a variable may be defined where
        /// the repository does not show (a substituteFrom source it does
        /// not hold in full): the text if no such variable is set, every
        /// default taken (`${CLAIM:-${APP}}` read as APP's value).
        if_unset: Option<String>,
    },
    /// Read from a Secret's key (HelmRelease `valuesFrom` a Secret): the
    /// value is never shown.
    Secret,
}

impl Origin {
    /// Whether the value came, in whole or in part, from a Secret.
    pub fn is_secret(&self) -> bool {
        matches!(
            self,
            Origin::Substituted { secret: true, .. } | Origin::Secret
        )
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// Inline up to 24 bytes: a large repository holds millions of
    /// scalars, nearly all short, and a heap block each was a tenth of
    /// its memory.
    Str(CompactString),
    /// Behind a pointer, so that the collections fit beside
    /// `CompactString`'s niche: a `Value` is 24 bytes and a `Node` 40 (48
    /// with plain `Vec`s), and the trees are most of a large run's memory.
    /// Shared: copying a tree (an object a build changes, a value Helm or
    /// a patch takes) counts a reference, and a change copies only the
    /// collections on the way to what it changes (`Arc::make_mut` in
    /// [`Node::as_seq_mut`] and [`Node::as_map_mut`]). A sequence stays a
    /// `Vec` because jsonpath-rust's `Queryable::as_array` hands out
    /// `&Vec<Self>`; sequences are few beside the nodes in them, so the
    /// extra block costs less than the 8 bytes per node saved.
    Seq(Arc<Vec<Node>>),
    /// A shared slice (no capacity word); adding or removing entries goes
    /// through [`Node::edit_map`].
    Map(Arc<[(Node, Node)]>),
}

/// 40 bytes: the span, the style and the origin share 16 ([`Place`]).
#[derive(Clone, Debug)]
pub struct Node {
    pub value: Value,
    place: Place,
}

/// Nodes are equal when their values are: where a value was written does
/// not change what it is (JSONPath filters and merges compare this way).
impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

/// A map entry with the map it is in.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'n> {
    pub map: &'n Node,
    pub key: &'n Node,
    pub value: &'n Node,
}

impl Node {
    pub fn new(value: Value, span: Span) -> Node {
        Node::styled(value, span, Style::Plain)
    }

    /// A null at no place: what an entry moved out leaves behind.
    fn null() -> Node {
        Node::new(Value::Null, Span::default())
    }

    /// A node written in `style`.
    pub fn styled(value: Value, span: Span, style: Style) -> Node {
        Node {
            value,
            place: Place::new(span, style, None),
        }
    }

    /// Where the node was written.
    pub fn span(&self) -> Span {
        self.place.span()
    }

    pub fn set_span(&mut self, span: Span) {
        self.place.set_span(span);
    }

    pub fn style(&self) -> Style {
        self.place.style()
    }

    pub fn set_style(&mut self, style: Style) {
        self.place.set_style(style);
    }

    /// How the value reached the node, when not by plain copying.
    pub fn origin(&self) -> Option<&Origin> {
        self.place.origin()
    }

    /// The origin as the `Arc` it was set with, to give to other nodes.
    pub fn shared_origin(&self) -> Option<Arc<Origin>> {
        self.place.shared_origin()
    }

    /// The same node with `value`: its span, style and origin.
    pub fn with_value(&self, value: Value) -> Node {
        Node {
            value,
            place: self.place.clone(),
        }
    }

    pub fn has_origin(&self) -> bool {
        self.place.origin().is_some()
    }

    /// Nodes given one `Arc` share its entry in the origins' table.
    pub fn set_origin(&mut self, origin: Option<Arc<Origin>>) {
        self.place.set_origin(origin);
    }

    /// A node made by the tool itself (e.g. a generated ConfigMap's name),
    /// attributed to the span of the instruction that made it.
    pub fn synthetic_str(s: impl Into<CompactString>, span: Span) -> Node {
        Node::styled(Value::Str(s.into()), span, Style::Quoted)
    }

    /// A mapping made here, not read from a file: each key spans its value.
    pub fn synthetic_map(entries: Vec<(String, Node)>, span: Span) -> Node {
        Node::new(
            Value::Map(
                entries
                    .into_iter()
                    .map(|(k, v)| (Node::synthetic_str(k, v.span()), v))
                    .collect(),
            ),
            span,
        )
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_map(&self) -> Option<&[(Node, Node)]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The entries to change, copied first (one level, the nodes in them
    /// shared) when another tree holds them too.
    pub fn as_map_mut(&mut self) -> Option<&mut [(Node, Node)]> {
        match &mut self.value {
            Value::Map(m) => Some(Arc::make_mut(m)),
            _ => None,
        }
    }

    pub fn as_seq(&self) -> Option<&Vec<Node>> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    /// The items to change, copied first as [`Node::as_map_mut`] does.
    pub fn as_seq_mut(&mut self) -> Option<&mut Vec<Node>> {
        match &mut self.value {
            Value::Seq(s) => Some(Arc::make_mut(s)),
            _ => None,
        }
    }

    /// Runs `f` on a mapping's entries as a vector, for edits that change
    /// their number; `None` (and `f` not run) when this is no mapping.
    pub fn edit_map<R>(&mut self, f: impl FnOnce(&mut Vec<(Node, Node)>) -> R) -> Option<R> {
        match &mut self.value {
            Value::Map(entries) => Some(edit_vec(entries, f)),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }

    /// Scalar as text, whatever its type: env values, annotations and
    /// ConfigMap data are often written as numbers or booleans.
    pub fn scalar_text(&self) -> Option<String> {
        match &self.value {
            Value::Str(s) => Some(s.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Int(i) => Some(i.to_string()),
            Value::Float(f) => Some(f.to_string()),
            Value::Null => None,
            Value::Seq(_) | Value::Map(_) => None,
        }
    }

    /// A boolean as Kubernetes' YAML 1.1 decoder would read it
    /// (`on`, `yes`, `off`, `no` included), for settings such as
    /// Postgres parameters that users write unquoted.
    pub fn as_bool_lenient(&self) -> Option<bool> {
        match &self.value {
            Value::Bool(b) => Some(*b),
            Value::Str(s) => match s.to_ascii_lowercase().as_str() {
                "true" | "on" | "yes" | "y" | "1" => Some(true),
                "false" | "off" | "no" | "n" | "0" => Some(false),
                _ => None,
            },
            Value::Int(i) => Some(*i != 0),
            _ => None,
        }
    }

    /// Value under `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.as_map_mut()?
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// The key node of `key`, for pointing at `key:` rather than its value.
    pub fn get_key(&self, key: &str) -> Option<&Node> {
        self.as_map()?
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, _)| k)
    }

    /// The entries along a path of mapping keys, outermost first: each
    /// map with the key and value followed.
    pub fn entries_along(&self, keys: &[&str]) -> Option<Vec<Entry<'_>>> {
        let mut out: Vec<Entry<'_>> = Vec::with_capacity(keys.len());
        let mut node = self;
        for key in keys {
            let (k, v) = node
                .as_map()?
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))?;
            out.push(Entry {
                map: node,
                key: k,
                value: v,
            });
            node = v;
        }
        Some(out)
    }

    /// Follows a path of mapping keys.
    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    pub fn str_at(&self, keys: &[&str]) -> Option<&str> {
        self.path(keys).and_then(Node::as_str)
    }

    /// Sets `key` to `value`, replacing an existing entry in place (keeping
    /// its position) or appending a new one. The new key node takes the
    /// value's span: it was written wherever the value was.
    pub fn insert(&mut self, key: &str, value: Node) {
        let Some(map) = self.as_map() else { return };
        match map.iter().position(|(k, _)| k.as_str() == Some(key)) {
            Some(i) => {
                if let Some(map) = self.as_map_mut() {
                    map[i].1 = value;
                }
            }
            None => {
                let k = Node::synthetic_str(key, value.span());
                self.edit_map(|map| map.push((k, value)));
            }
        }
    }

    /// [`Node::insert`] of each pair in turn, in one pass over the
    /// mapping: inserting K keys one by one into a mapping rebuilds it K
    /// times (10,000 `commonLabels` keys over every object of a build).
    pub fn insert_all(&mut self, pairs: &[(String, Node)]) {
        self.edit_map(|map| {
            let mut at: std::collections::HashMap<CompactString, usize> = map
                .iter()
                .enumerate()
                .filter_map(|(i, (k, _))| Some((CompactString::from(k.as_str()?), i)))
                .rev()
                .collect();
            map.reserve(pairs.len());
            for (key, value) in pairs {
                match at.get(key.as_str()) {
                    Some(&i) => map[i].1 = value.clone(),
                    None => {
                        at.insert(key.into(), map.len());
                        map.push((
                            Node::synthetic_str(key.as_str(), value.span()),
                            value.clone(),
                        ));
                    }
                }
            }
        });
    }

    pub fn remove(&mut self, key: &str) -> Option<Node> {
        let i = self
            .as_map()?
            .iter()
            .position(|(k, _)| k.as_str() == Some(key))?;
        self.edit_map(|map| map.remove(i).1)
    }

    /// Returns the mapping under `key`, creating an empty one (spanned at
    /// `span`) when it is missing or not a mapping.
    pub fn entry_map(&mut self, key: &str, span: Span) -> &mut Node {
        let needs_new = !matches!(self.get(key).map(|n| &n.value), Some(Value::Map(_)));
        if needs_new {
            self.insert(key, Node::new(Value::Map(Arc::default()), span));
        }
        self.get_mut(key).expect("inserted above")
    }

    /// Plain JSON, for output and for comparing content.
    pub fn to_json(&self) -> serde_json::Value {
        self.to_json_with(&|_, _| None)
    }

    /// [`Node::to_json`], with `leaf` giving what a node (a map key when
    /// its flag is set) becomes instead where it returns `Some`: a
    /// Secret's value, redacted.
    pub fn to_json_with(
        &self,
        leaf: &dyn Fn(&Node, bool) -> Option<serde_json::Value>,
    ) -> serde_json::Value {
        use serde_json::Value as J;
        if let Some(shown) = leaf(self, false) {
            return shown;
        }
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(J::Number)
                .unwrap_or_else(|| J::String(f.to_string())),
            Value::Str(s) => J::String(s.to_string()),
            Value::Seq(items) => J::Array(items.iter().map(|i| i.to_json_with(leaf)).collect()),
            Value::Map(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let key = match leaf(k, true) {
                            Some(J::String(shown)) => shown,
                            _ => k.scalar_text().unwrap_or_default(),
                        };
                        (key, v.to_json_with(leaf))
                    })
                    .collect(),
            ),
        }
    }

    /// Builds a node tree from JSON, every node attributed to `span`. Used
    /// where the tool makes values (generated ConfigMaps, JSON patches).
    pub fn from_json(json: &serde_json::Value, span: Span) -> Node {
        use serde_json::Value as J;
        let value = match json {
            J::Null => Value::Null,
            J::Bool(b) => Value::Bool(*b),
            J::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            J::String(s) => Value::Str(s.into()),
            J::Array(a) => Value::Seq(Arc::new(
                a.iter().map(|v| Node::from_json(v, span)).collect(),
            )),
            J::Object(o) => Value::Map(
                o.iter()
                    .map(|(k, v)| {
                        (
                            Node::synthetic_str(k.clone(), span),
                            Node::from_json(v, span),
                        )
                    })
                    .collect(),
            ),
        };
        Node::new(value, span)
    }

    /// Calls `f` on this node and on every node below it, keys included
    /// (to move spans: a value re-read in place, texts taken into another
    /// source map).
    pub fn each_mut(&mut self, f: &mut dyn FnMut(&mut Node)) {
        f(self);
        match &mut self.value {
            Value::Seq(items) => Arc::make_mut(items).iter_mut().for_each(|n| n.each_mut(f)),
            Value::Map(entries) => Arc::make_mut(entries).iter_mut().for_each(|(k, v)| {
                k.each_mut(f);
                v.each_mut(f);
            }),
            _ => {}
        }
    }

    /// Depth-first visit of every node with its path of keys/indices.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&[PathSeg<'a>], &'a Node)) {
        let mut path = Vec::new();
        walk_inner(self, &mut path, f);
    }
}

/// Runs `f` on a mapping's entries as a vector (see [`Node::edit_map`]).
pub fn edit_vec<R>(
    entries: &mut Arc<[(Node, Node)]>,
    f: impl FnOnce(&mut Vec<(Node, Node)>) -> R,
) -> R {
    // Room for one more entry from the start: the usual edit adds a key,
    // and growing a vector of the exact size moved every entry again.
    let mut vec = entries_with_room(entries, 1);
    let out = f(&mut vec);
    *entries = vec.into();
    out
}

/// A mapping's entries as a vector, moved out (nulls left behind) when no
/// other tree holds them, else copied (the nodes in them shared).
pub fn take_entries(entries: &mut Arc<[(Node, Node)]>) -> Vec<(Node, Node)> {
    entries_with_room(entries, 0)
}

/// [`take_entries`] into a vector with room for `more` entries.
fn entries_with_room(entries: &mut Arc<[(Node, Node)]>, more: usize) -> Vec<(Node, Node)> {
    let mut out = Vec::with_capacity(entries.len() + more);
    match Arc::get_mut(entries) {
        Some(owned) => out.extend(
            owned
                .iter_mut()
                .map(|entry| std::mem::replace(entry, (Node::null(), Node::null()))),
        ),
        None => out.extend_from_slice(entries),
    }
    out
}

/// One step in a path from an object's root to a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathSeg<'a> {
    Key(&'a str),
    Index(usize),
}

fn walk_inner<'a>(
    node: &'a Node,
    path: &mut Vec<PathSeg<'a>>,
    f: &mut dyn FnMut(&[PathSeg<'a>], &'a Node),
) {
    f(path, node);
    match &node.value {
        Value::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                path.push(PathSeg::Index(i));
                walk_inner(item, path, f);
                path.pop();
            }
        }
        Value::Map(entries) => {
            for (k, v) in entries.iter() {
                path.push(PathSeg::Key(k.as_str().unwrap_or("")));
                walk_inner(v, path, f);
                path.pop();
            }
        }
        _ => {}
    }
}

/// Renders a path as JSONPath-like text (`spec.values.env[0].value`).
pub fn path_to_string(path: &[PathSeg<'_>]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            PathSeg::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            PathSeg::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trees are most of a large run's memory: a field that makes a
    /// node bigger should be a decision, not an accident.
    #[test]
    fn node_sizes() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
        assert_eq!(std::mem::size_of::<Node>(), 40);
    }

    /// A copy is a count: changing it copies the mappings on the way to
    /// the change, leaves the original as it was, and shares the rest.
    #[test]
    fn a_change_to_a_copy_copies_only_its_path() {
        let span = Span::default();
        let leaf = |s: &str| Node::synthetic_str(s, span);
        let map = |k: &str, v: Node| Node::synthetic_map(vec![(k.into(), v)], span);
        let original = Node::synthetic_map(
            vec![
                ("metadata".into(), map("name", leaf("a"))),
                ("spec".into(), map("x", leaf("1"))),
            ],
            span,
        );
        let mut copy = original.clone();
        if let Some(meta) = copy.get_mut("metadata") {
            meta.insert("namespace", leaf("ns"));
        }
        assert_eq!(original.str_at(&["metadata", "namespace"]), None);
        assert_eq!(copy.str_at(&["metadata", "namespace"]), Some("ns"));
        let entries = |n: &Node, key: &str| match &n.get(key).map(|v| &v.value) {
            Some(Value::Map(entries)) => entries.clone(),
            _ => panic!("{key} is a mapping"),
        };
        assert!(Arc::ptr_eq(
            &entries(&original, "spec"),
            &entries(&copy, "spec")
        ));
        assert!(!Arc::ptr_eq(
            &entries(&original, "metadata"),
            &entries(&copy, "metadata")
        ));
    }

    #[test]
    fn insert_and_remove_rebuild_the_mapping() {
        let span = Span::default();
        let mut map = Node::synthetic_map(vec![("a".into(), Node::synthetic_str("1", span))], span);
        map.insert("b", Node::synthetic_str("2", span));
        map.insert("a", Node::synthetic_str("3", span));
        assert_eq!(map.str_at(&["a"]), Some("3"));
        assert_eq!(
            map.remove("a")
                .and_then(|n| n.as_str().map(str::to_owned))
                .as_deref(),
            Some("3")
        );
        assert_eq!(map.as_map().map(<[_]>::len), Some(1));
        assert_eq!(map.str_at(&["b"]), Some("2"));
        assert!(map.remove("a").is_none());
    }
}
