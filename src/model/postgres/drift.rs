//! Postgres parameters the repository and the cluster disagree on: a
//! declaration linked to its live object (`source::link`) compared at
//! the fields where the operators keep parameter maps.

use super::OPERATORS;
use crate::yaml::Node;

/// A Postgres parameter the repository and the cluster disagree on.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// Where the operator keeps parameters (`spec.postgresql.parameters`).
    pub path: String,
    pub name: String,
    /// The value as the repository writes it, if it does.
    pub declared: Option<Node>,
    /// The parameter map of the declaration, if it has one: where a value
    /// the repository does not write would go.
    pub container: Option<Node>,
    /// The value in the cluster, if set there.
    pub live: Option<String>,
}

/// The fields any operator keeps parameter maps at, each once.
fn fields() -> Vec<&'static [&'static str]> {
    let mut out: Vec<&'static [&'static str]> = Vec::new();
    for field in OPERATORS.iter().flat_map(|o| o.parameter_fields()) {
        if !out.contains(field) {
            out.push(field);
        }
    }
    out
}

/// Postgres parameters whose declared and live values differ.
pub fn parameter_drift(declared: &Node, live: &Node) -> Vec<Drift> {
    let mut out = Vec::new();
    for path in fields() {
        let (d, c) = (declared.path(path), live.path(path));
        if d.is_none() && c.is_none() {
            continue;
        }
        let keys = |n: Option<&Node>| -> Vec<String> {
            n.and_then(Node::as_map)
                .into_iter()
                .flatten()
                .filter_map(|(k, _)| k.as_str().map(str::to_string))
                .collect()
        };
        let mut names = keys(d);
        names.extend(keys(c));
        names.sort();
        names.dedup();
        for name in names {
            let dn = d.and_then(|m| m.get(&name));
            let cv = c.and_then(|m| m.get(&name)).and_then(Node::scalar_text);
            if dn.and_then(Node::scalar_text) != cv {
                out.push(Drift {
                    path: path.join("."),
                    name,
                    declared: dn.cloned(),
                    container: d.cloned(),
                    live: cv,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{FileId, Limits, parse_documents};

    fn doc(text: &str) -> Node {
        parse_documents(text, FileId(0), &Limits::default())
            .unwrap()
            .remove(0)
    }

    #[test]
    fn a_parameter_set_only_in_the_repository_drifts() {
        let declared = doc(
            "apiVersion: acid.zalan.do/v1\nkind: postgresql\nspec:\n  postgresql:\n    parameters:\n      synchronous_commit: \"off\"\n      max_connections: \"200\"\n",
        );
        let live = doc(
            "apiVersion: acid.zalan.do/v1\nkind: postgresql\nspec:\n  postgresql:\n    parameters:\n      max_connections: \"200\"\n",
        );
        let drift = parameter_drift(&declared, &live);
        assert_eq!(drift.len(), 1, "{drift:?}");
        assert_eq!(
            (drift[0].path.as_str(), drift[0].name.as_str()),
            ("spec.postgresql.parameters", "synchronous_commit")
        );
        assert_eq!(
            drift[0]
                .declared
                .as_ref()
                .and_then(Node::scalar_text)
                .as_deref(),
            Some("off")
        );
        assert_eq!(drift[0].live, None);
    }

    #[test]
    fn crunchy_fields_are_compared_in_order() {
        let declared = doc(
            "spec:\n  config:\n    parameters: {a: \"1\"}\n  patroni:\n    dynamicConfiguration:\n      postgresql:\n        parameters: {b: \"2\"}\n",
        );
        let live = doc("spec: {}\n");
        let paths: Vec<String> = parameter_drift(&declared, &live)
            .into_iter()
            .map(|d| d.path)
            .collect();
        assert_eq!(
            paths,
            [
                "spec.config.parameters",
                "spec.patroni.dynamicConfiguration.postgresql.parameters"
            ]
        );
    }
}
