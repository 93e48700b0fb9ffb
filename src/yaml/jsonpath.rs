//! JSONPath (RFC 9535, through jsonpath-rust) over [`Node`] trees, so
//! that matches keep their spans: a rule's predicate points at the exact
//! value it matched.

use jsonpath_rust::parser::model::{
    Comparable, Filter, FilterAtom, FnArg, JpQuery, Literal, Segment, Selector, Test, TestFunction,
};
use jsonpath_rust::query::queryable::Queryable;

use std::sync::Arc;

use super::node::{Node, Span, Value};

/// A JSONPath that cannot be used; the message names the path.
#[derive(Debug, thiserror::Error)]
pub enum JsonPathError {
    /// Not a JSONPath query (RFC 9535) as jsonpath-rust reads it.
    #[error("JSONPath {path}: {source}")]
    Invalid {
        path: String,
        #[source]
        source: jsonpath_rust::parser::errors::JsonPathError,
    },
    /// More than one descendant segment (`..`).
    #[error(
        "JSONPath {path}: {count} descendant segments (`..`); at most one is allowed, as each multiplies the work by the size of the object"
    )]
    TooManyDescendants { path: String, count: usize },
    /// An absolute query inside the filter of another one in a filter.
    #[error(
        "JSONPath {path}: an absolute query (`$`) inside the filter of another one in a filter; each runs once per node its filter tests, so nesting them multiplies the work by the size of the object (one level is allowed)"
    )]
    NestedRootQueries { path: String },
    /// A `search()` or `match()` pattern that does not compile.
    #[error(
        "JSONPath {path}: the pattern {pattern:?} is not a valid regular expression: {}",
        one_line(source)
    )]
    BadPattern {
        path: String,
        pattern: String,
        #[source]
        source: regex::Error,
    },
}

/// The regex crate's message, which draws the pattern over several lines.
fn one_line(e: &regex::Error) -> String {
    e.to_string().replace('\n', " ")
}

/// Nodes `path` selects under `root`. An invalid path is an error that
/// names the path; rule files' paths are [`JsonPath`]s, checked at load time.
pub fn select<'a>(path: &str, root: &'a Node) -> Result<Vec<&'a Node>, JsonPathError> {
    jsonpath_rust::query::js_path_vals(path, root).map_err(|source| JsonPathError::Invalid {
        path: path.to_string(),
        source,
    })
}

/// `path` parsed, when it is a valid JSONPath query that evaluates in
/// time bounded by the object's size:
/// - at most one descendant segment (`..`), filters included. Each one
///   visits every node below every node the path has reached so far, so
///   `$..*..*..*` on a deep object is the object's size cubed;
/// - no absolute query (`$...`) inside the filter of another absolute
///   query inside a filter. An absolute query in a filter runs once per
///   node the filter tests, so each level of nesting multiplies the work
///   by the object's size (`$.data[?$.data[?$.data[?$.data[*]]]]` over
///   300 keys took hours);
/// - the pattern of every `search()` and `match()` compiles (the regex
///   crate's syntax, as jsonpath-rust evaluates it): an invalid one never
///   matches, so `is: unset` would hold on every object.
pub fn compile(path: &str) -> Result<JpQuery, JsonPathError> {
    let query = match names_only(path) {
        Some(query) => query,
        None => jsonpath_rust::parser::parse_json_path(path).map_err(|source| {
            JsonPathError::Invalid {
                path: path.to_string(),
                source,
            }
        })?,
    };
    let mut walk = Walk::default();
    walk.segments(&query.segments, 0);
    let path = path.to_string();
    if walk.descendants > 1 {
        return Err(JsonPathError::TooManyDescendants {
            path,
            count: walk.descendants,
        });
    }
    if walk.nesting > 1 {
        return Err(JsonPathError::NestedRootQueries { path });
    }
    match walk.bad_pattern {
        Some((pattern, source)) => Err(JsonPathError::BadPattern {
            path,
            pattern,
            source,
        }),
        None => Ok(query),
    }
}

/// `path` as jsonpath-rust's grammar reads it, when it is `$` and then
/// only names (`.spec`, ASCII) and wildcards (`.*`, `[*]`): nearly every
/// path a rule names, read here in a scan where the grammar's parser
/// spent some 50,000 instructions on each, in every run. Anything else
/// (`..`, brackets, filters, spaces) is left to that parser.
fn names_only(path: &str) -> Option<JpQuery> {
    let mut rest = path.strip_prefix('$')?;
    let mut segments = Vec::new();
    while !rest.is_empty() {
        let (selector, tail) = if let Some(tail) = rest.strip_prefix("[*]") {
            (Selector::Wildcard, tail)
        } else {
            let tail = rest.strip_prefix('.')?;
            match tail.strip_prefix('*') {
                Some(tail) => (Selector::Wildcard, tail),
                None => {
                    // A member-name shorthand: a letter or `_`, then
                    // letters, digits and `_`.
                    let len = tail
                        .bytes()
                        .enumerate()
                        .take_while(|&(i, b)| {
                            b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit())
                        })
                        .count();
                    if len == 0 {
                        return None;
                    }
                    (Selector::Name(tail[..len].to_string()), &tail[len..])
                }
            }
        };
        segments.push(Segment::Selector(selector));
        rest = tail;
    }
    Some(JpQuery::new(segments))
}

/// What [`compile`] counts on its way through a parsed query.
#[derive(Default)]
struct Walk {
    descendants: usize,
    /// The deepest nesting of absolute queries inside filters.
    nesting: usize,
    bad_pattern: Option<(String, regex::Error)>,
}

impl Walk {
    fn segments(&mut self, segments: &[Segment], depth: usize) {
        for s in segments {
            self.segment(s, depth);
        }
    }

    fn segment(&mut self, segment: &Segment, depth: usize) {
        match segment {
            Segment::Descendant(inner) => {
                self.descendants += 1;
                self.segment(inner, depth);
            }
            Segment::Selector(s) => self.selector(s, depth),
            Segment::Selectors(ss) => ss.iter().for_each(|s| self.selector(s, depth)),
        }
    }

    fn selector(&mut self, selector: &Selector, depth: usize) {
        if let Selector::Filter(f) = selector {
            self.filter(f, depth);
        }
    }

    fn filter(&mut self, filter: &Filter, depth: usize) {
        match filter {
            Filter::Or(fs) | Filter::And(fs) => fs.iter().for_each(|f| self.filter(f, depth)),
            Filter::Atom(FilterAtom::Filter { expr, .. }) => self.filter(expr, depth),
            Filter::Atom(FilterAtom::Test { expr, .. }) => self.test(expr, depth),
            Filter::Atom(FilterAtom::Comparison(c)) => {
                let (left, right) = c.vals();
                self.comparable(left, depth);
                self.comparable(right, depth);
            }
        }
    }

    fn test(&mut self, test: &Test, depth: usize) {
        match test {
            Test::RelQuery(segments) => self.segments(segments, depth),
            Test::AbsQuery(query) => {
                self.nesting = self.nesting.max(depth + 1);
                self.segments(&query.segments, depth + 1);
            }
            Test::Function(f) => self.function(f, depth),
        }
    }

    /// A singular query (`$.a.b`, `@.a`) reaches one node: no work to count.
    fn comparable(&mut self, comparable: &Comparable, depth: usize) {
        if let Comparable::Function(f) = comparable {
            self.function(f, depth);
        }
    }

    fn function(&mut self, function: &TestFunction, depth: usize) {
        match function {
            TestFunction::Search(value, pattern) | TestFunction::Match(value, pattern) => {
                self.arg(value, depth);
                self.arg(pattern, depth);
                if let FnArg::Literal(Literal::String(p)) = pattern
                    && let Err(e) = regex::Regex::new(p)
                    && self.bad_pattern.is_none()
                {
                    self.bad_pattern = Some((p.clone(), e));
                }
            }
            TestFunction::Custom(_, args) => args.iter().for_each(|a| self.arg(a, depth)),
            TestFunction::Length(a) => self.arg(a, depth),
            TestFunction::Value(a) | TestFunction::Count(a) => self.arg(a, depth),
        }
    }

    fn arg(&mut self, arg: &FnArg, depth: usize) {
        match arg {
            FnArg::Literal(_) => {}
            FnArg::Test(t) => self.test(t, depth),
            FnArg::Filter(f) => self.filter(f, depth),
        }
    }
}

/// A rule's JSONPath, checked and parsed ([`compile`]) as its rule file
/// is read, so that an invalid path is an error at its line and column
/// rather than a test that never matches, and so that evaluating it on
/// each object does not parse it again (the parse costs more than most
/// evaluations). It reads and writes as its text.
#[derive(Clone)]
pub struct JsonPath {
    text: String,
    query: JpQuery,
}

impl JsonPath {
    pub fn new(text: String) -> Result<JsonPath, JsonPathError> {
        let query = compile(&text)?;
        Ok(JsonPath { text, query })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Nodes the path selects under `root`; none where jsonpath-rust's
    /// evaluation fails.
    pub fn select<'a>(&self, root: &'a Node) -> Vec<&'a Node> {
        jsonpath_rust::query::js_path_process(&self.query, root)
            .map(|refs| refs.into_iter().map(|r| r.val).collect())
            .unwrap_or_default()
    }
}

/// As its text, as a `String` field showed it.
impl std::fmt::Debug for JsonPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text.fmt(f)
    }
}

impl<'de> serde::Deserialize<'de> for JsonPath {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<JsonPath, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(d)?;
        JsonPath::new(text).map_err(serde::de::Error::custom)
    }
}

impl serde::Serialize for JsonPath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl Default for Node {
    fn default() -> Self {
        Node::new(Value::Null, Span::default())
    }
}

impl From<&str> for Node {
    fn from(s: &str) -> Self {
        Node::new(Value::Str(s.into()), Span::default())
    }
}

impl From<String> for Node {
    fn from(s: String) -> Self {
        Node::new(Value::Str(s.into()), Span::default())
    }
}

impl From<bool> for Node {
    fn from(b: bool) -> Self {
        Node::new(Value::Bool(b), Span::default())
    }
}

impl From<i64> for Node {
    fn from(i: i64) -> Self {
        Node::new(Value::Int(i), Span::default())
    }
}

impl From<f64> for Node {
    fn from(f: f64) -> Self {
        Node::new(Value::Float(f), Span::default())
    }
}

impl From<Vec<Node>> for Node {
    fn from(items: Vec<Node>) -> Self {
        Node::new(Value::Seq(Arc::new(items)), Span::default())
    }
}

impl Queryable for Node {
    fn get(&self, key: &str) -> Option<&Self> {
        Node::get(self, key)
    }

    fn as_array(&self) -> Option<&Vec<Self>> {
        self.as_seq()
    }

    fn as_object(&self) -> Option<Vec<(&str, &Self)>> {
        self.as_map().map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.as_str()?, v)))
                .collect()
        })
    }

    fn as_str(&self) -> Option<&str> {
        Node::as_str(self)
    }

    fn as_i64(&self) -> Option<i64> {
        match self.value {
            Value::Int(i) => Some(i),
            _ => None,
        }
    }

    fn as_f64(&self) -> Option<f64> {
        match self.value {
            Value::Float(f) => Some(f),
            Value::Int(i) => Some(i as f64),
            _ => None,
        }
    }

    fn as_bool(&self) -> Option<bool> {
        match self.value {
            Value::Bool(b) => Some(b),
            _ => None,
        }
    }

    fn null() -> Self {
        Node::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{FileId, Limits, parse_documents};

    /// The scan's reading of a path is the grammar's, and what it does
    /// not take goes to the grammar.
    #[test]
    fn names_only_reads_paths_as_the_grammar_does() {
        for path in [
            "$",
            "$.spec",
            "$.spec.postgresql.parameters.*",
            "$.spec.template.spec.containers[*].image",
            "$._a1.B_2[*].*",
        ] {
            let parsed = jsonpath_rust::parser::parse_json_path(path).unwrap();
            assert_eq!(names_only(path), Some(parsed), "{path}");
        }
        for path in [
            "",
            "spec",
            "$.",
            "$.1a",
            "$.a-b",
            "$..port",
            "$.spec..name",
            "$.a[0]",
            "$['a']",
            "$.a .b",
            "$.a ",
            "$.é",
            "$.a[?@ == 'x']",
        ] {
            assert_eq!(names_only(path), None, "{path}");
        }
    }

    #[test]
    fn matches_keep_their_spans() {
        let doc = &parse_documents(
            "spec:\n  parameters:\n    fsync: \"off\"\n    max_connections: 200\n",
            FileId(0),
            &Limits::default(),
        )
        .unwrap()[0];
        let hits = select("$.spec.parameters[?@ == 'off']", doc).unwrap();
        assert_eq!(hits.len(), 1);
        assert_eq!((hits[0].span().line, hits[0].span().col), (3, 12));
        let ints = select("$.spec.parameters.max_connections", doc).unwrap();
        assert_eq!(ints[0].value, Value::Int(200));
        assert!(compile("$.spec[").is_err());
    }

    /// A compiled path selects what the text did, and one that fails to
    /// compile keeps the message naming it.
    #[test]
    fn compiled_paths_select_as_their_text_does() {
        let doc = &parse_documents(
            "spec:\n  a: [1, 2]\n  b: {c: x}\n",
            FileId(0),
            &Limits::default(),
        )
        .unwrap()[0];
        for path in ["$.spec.a[*]", "$..c", "$.spec[?@.c == 'x']", "$.none"] {
            let compiled = JsonPath::new(path.to_string()).unwrap();
            assert_eq!(compiled.select(doc), select(path, doc).unwrap(), "{path}");
            assert_eq!(compiled.as_str(), path);
        }
        let err = JsonPath::new("$..a..b".into()).unwrap_err().to_string();
        assert_eq!(err, compile("$..a..b").unwrap_err().to_string());
    }

    #[test]
    fn nested_absolute_filters_and_invalid_patterns_are_refused() {
        for ok in [
            "$.data[?$.data[*]]",
            "$.data[?@.a[?@.b]]",
            "$.data[?search(@, '^a+$')]",
            "$[?@..a]",
        ] {
            assert!(compile(ok).is_ok(), "{ok}");
        }
        let err = |p: &str| compile(p).unwrap_err().to_string();
        assert!(err("$.data[?$.data[?$.data[*]]]").contains("absolute query"));
        assert!(err("$.data[?count($.data[?$.a]) > 1]").contains("absolute query"));
        assert!(err("$.data[?search(@, '[')]").contains("not a valid regular expression"));
        assert!(err("$.data[?!match(@.x, 'a(')]").contains("\"a(\""));
        assert!(err("$..a[?@..b]").contains("2 descendant segments"));
    }
}
