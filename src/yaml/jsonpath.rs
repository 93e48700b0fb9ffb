//! JSONPath (RFC 9535, through jsonpath-rust) over [`Node`] trees, so
//! that matches keep their spans: a rule's predicate points at the exact
//! value it matched.

use jsonpath_rust::query::queryable::Queryable;

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
}

/// Nodes `path` selects under `root`. An invalid path is an error that
/// names the path; rule files are checked with [`validate`] at load time.
pub fn select<'a>(path: &str, root: &'a Node) -> Result<Vec<&'a Node>, JsonPathError> {
    jsonpath_rust::query::js_path_vals(path, root).map_err(|source| JsonPathError::Invalid {
        path: path.to_string(),
        source,
    })
}

/// Whether `path` is a valid JSONPath query that evaluates in time
/// linear in the object: at most one descendant segment (`..`), filters
/// included. Each one visits every node below every node the path has
/// reached so far, so `$..*..*..*` on a deep object is the object's size
/// cubed.
pub fn validate(path: &str) -> Result<(), JsonPathError> {
    let query =
        jsonpath_rust::parser::parse_json_path(path).map_err(|source| JsonPathError::Invalid {
            path: path.to_string(),
            source,
        })?;
    // The parsed query's Debug form names every segment, those of filter
    // subqueries too; jsonpath-rust has no visitor to count them with.
    let count = format!("{query:?}").matches("Descendant(").count();
    if count > 1 {
        return Err(JsonPathError::TooManyDescendants {
            path: path.to_string(),
            count,
        });
    }
    Ok(())
}

/// For rule schemas: a JSONPath field checked as the rule file is read,
/// so that an invalid path is an error at its line and column rather
/// than a test that never matches.
pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let path = <String as serde::Deserialize>::deserialize(d)?;
    validate(&path).map_err(serde::de::Error::custom)?;
    Ok(path)
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
        Node::new(Value::Seq(Box::new(items)), Span::default())
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
        assert_eq!((hits[0].span.line, hits[0].span.col), (3, 12));
        let ints = select("$.spec.parameters.max_connections", doc).unwrap();
        assert_eq!(ints[0].value, Value::Int(200));
        assert!(validate("$.spec[").is_err());
    }
}
