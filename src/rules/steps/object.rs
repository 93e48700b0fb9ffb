//! `object`: objects of a kind whose fields pass tests; and the fact the
//! steps that point at one value of an object bind (`object`, `values`,
//! the Flux Kustomization steps).

use serde::{Deserialize, Serialize};

use super::test::path_test;
use super::{
    AppFact, Bindings, Described, Fact, Shape, Step, ValueTest, bind, find, object_span,
    variable_label,
};
use crate::model::settings;
use crate::model::{Model, ObjRef};
use crate::rules::Severity;
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;
use crate::yaml::Node;
use crate::yaml::jsonpath::JsonPath;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectStep {
    /// Only the object a binding of an earlier step is in (`app`: the
    /// bound app's HelmRelease or workload); default: every object.
    #[serde(default)]
    pub of: Option<String>,
    /// API group (`""` for core objects, `acid.zalan.do`, ...).
    pub group: String,
    /// The kind, or `*` for every kind of the group.
    pub kind: String,
    /// Tests that must all hold. The last test's match is where the
    /// finding points.
    #[serde(rename = "where")]
    pub tests: Vec<PathTest>,
    /// The last test's match holds Postgres parameters (a parameters map,
    /// or the keys a `keysOtherThan` map should not have): when every one
    /// is at PostgreSQL's default, the finding is info and says so.
    #[serde(default)]
    pub postgres_parameters: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PathTest {
    /// JSONPath (RFC 9535) from the object's root, e.g. `$.spec.postgresql.parameters.*`.
    /// With several matches, the test holds when any match passes. At
    /// most one descendant segment (`..`).
    #[schemars(with = "String")]
    pub path: JsonPath,
    pub is: ValueTest,
}

/// A value a path test matched, in an object.
#[derive(Clone, Debug)]
pub(crate) struct ValueFact {
    pub object: ObjRef,
    pub node: Option<Node>,
    pub path: String,
    /// Postgres parameters the match holds, each at PostgreSQL's default
    /// (`name=value`); empty unless the step asked (`postgresParameters`)
    /// and every one is.
    pub at_default: Vec<String>,
}

impl ValueFact {
    /// A value found at `path`, with nothing to say about defaults.
    pub fn at(object: ObjRef, node: Option<Node>, path: String) -> ValueFact {
        ValueFact {
            object,
            node,
            path,
            at_default: Vec::new(),
        }
    }
}

/// The object the fact last bound under `name` is about.
fn object_of(bound: &Bindings, name: &str) -> Option<ObjRef> {
    let (_, fact) = bound.iter().rev().find(|(n, _)| n == name)?;
    fact.object()
}

impl Step for ObjectStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let model = cx.model;
        let only = match &self.of {
            Some(name) => match object_of(bound, name) {
                Some(object) => Some(object),
                None => return Vec::new(),
            },
            None => None,
        };
        // With an app bound, objects another cluster's Flux tree applies
        // are not the app's concern.
        let tree = find::<AppFact>(bound, "app").and_then(|a| model.object(a.app.object).tree);
        let work = &mut cx.work;
        // Every object counts as examined, as when each was looked at in
        // turn; the kind's index hands over only the few of the kind,
        // where asking each object its kind and group was most of the
        // step's work.
        *work += model.objects.len();
        let candidates: Box<dyn Iterator<Item = ObjRef>> = match self.kind.as_str() {
            "*" => Box::new(
                (0..model.objects.len()).filter(|&i| model.objects[i].group() == self.group),
            ),
            kind => Box::new(model.of_kind(&self.group, kind)),
        };
        candidates
            .filter_map(|i| {
                let o = &model.objects[i];
                let other_tree = tree.is_some() && o.tree.is_some() && o.tree != tree;
                if only.is_some_and(|only| only != i) || other_tree {
                    return None;
                }
                let mut last = None;
                for t in &self.tests {
                    last = Some(path_test(&t.path, &t.is, &o.root, work)?);
                }
                let hit = last.flatten();
                let at_default = match (self.postgres_parameters, self.tests.last()) {
                    (true, Some(t)) => parameters_at_default(t, &o.root, hit.as_ref()),
                    _ => Vec::new(),
                };
                let path = match &hit {
                    Some((_, shown)) => shown.clone(),
                    None => self
                        .tests
                        .last()
                        .map(|t| t.path.as_str().to_string())
                        .unwrap_or_default(),
                };
                Some(vec![bind(
                    "object",
                    ValueFact {
                        object: i,
                        at_default,
                        path,
                        node: hit.map(|(n, _)| n),
                    },
                )])
            })
            .collect()
    }
}

/// The Postgres parameters a matched test found (the keys a
/// `keysOtherThan` map should not have, or every entry of a matched
/// parameters map) as `name=value`, when each is at PostgreSQL's default;
/// empty when one is not, or its default is not known here.
fn parameters_at_default(
    test: &PathTest,
    root: &Node,
    hit: Option<&(Node, String)>,
) -> Vec<String> {
    let entries: Vec<(&Node, &Node)> = match &test.is {
        // The same map `path_test` named its first stray key from.
        ValueTest::KeysOtherThan(allowed) => {
            let stray = |k: &Node| k.as_str().is_some_and(|k| !allowed.iter().any(|a| a == k));
            test.path
                .select(root)
                .into_iter()
                .filter_map(Node::as_map)
                .find(|m| m.iter().any(|(k, _)| stray(k)))
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| stray(k))
                        .map(|(k, v)| (k, v))
                        .collect()
                })
                .unwrap_or_default()
        }
        _ => hit
            .and_then(|(n, _)| n.as_map())
            .map(|m| m.iter().map(|(k, v)| (k, v)).collect())
            .unwrap_or_default(),
    };
    let at_default: Vec<String> = entries
        .iter()
        .filter_map(|(k, v)| {
            let name = k.as_str()?;
            let value = settings::normalize(name, &v.scalar_text()?);
            (value == settings::normalize(name, settings::default_of(name)?))
                .then(|| format!("{name}={value}"))
        })
        .collect();
    if at_default.len() == entries.len() {
        at_default
    } else {
        Vec::new()
    }
}

/// Whether `path` in `object` may reach a Secret's values: anything but
/// its metadata, kind, apiVersion and type named without wildcards. A
/// Secret a generator made is written in a plain file (an env file, a
/// literal), where no mask of the text finds its values.
fn secret_field(object: &crate::source::Object, path: &str) -> bool {
    let plain = ["$.metadata.", "$.kind", "$.apiVersion", "$.type"]
        .iter()
        .any(|p| path.starts_with(p))
        && !path.contains('*')
        && !path.contains("..");
    object.kind() == "Secret" && object.group().is_empty() && !plain
}

impl Fact for ValueFact {
    fn describe(&self, model: &Model) -> Described {
        let (object, node, path) = (self.object, &self.node, &self.path);
        let id = model.object(object).id();
        let value = |n: &Node| match secret_field(model.object(object), path) {
            true => n
                .scalar_text()
                .map_or_else(|| "<redacted>".into(), |text| crate::yaml::redacted(&text)),
            false => n
                .scalar_text()
                .map(|text| model.sources.shown_value(n, text))
                .unwrap_or_else(|| model.sources.shown_json(n).to_string()),
        };
        let (span, text) = match node {
            Some(n) => (n.span(), format!("{path}: {}", value(n))),
            None => (object_span(model, object), format!("{path} is not set")),
        };
        let mut labels = vec![Label { span, text }];
        labels.extend(node.as_ref().and_then(variable_label));
        Described {
            labels,
            evidence: vec![
                ("object".into(), id.clone()),
                ("name".into(), model.object(object).name().to_string()),
                ("kind".into(), model.object(object).kind().to_string()),
                ("path".into(), path.clone()),
                (
                    "value".into(),
                    node.as_ref()
                        .filter(|n| n.scalar_text().is_some())
                        .map(value)
                        .unwrap_or_default(),
                ),
            ],
            identity: format!("{id}{path}"),
        }
    }

    fn object(&self) -> Option<ObjRef> {
        Some(self.object)
    }

    fn place(&self) -> Option<(u32, u32)> {
        self.node
            .as_ref()
            .map(|n| (n.span().file.0, n.span().start))
    }

    fn shape(&self, finding: &mut Shape) {
        if self.at_default.is_empty() {
            return;
        }
        finding.severity = Severity::Info;
        finding.harmless = Some(format!(
            ", but {} {} PostgreSQL's default, so the server runs as written",
            self.at_default.join(", "),
            if self.at_default.len() == 1 {
                "is"
            } else {
                "are"
            }
        ));
        finding.notes.push(
            "harmless today; a value changed there later will not take effect either: \
             move it where the operator reads it, or delete it"
                .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_is_read_only_through_its_plain_fields() {
        assert!(!secret_field_of_kind("Secret", "$.metadata.name"));
        assert!(!secret_field_of_kind("Secret", "$.type"));
        assert!(secret_field_of_kind("Secret", "$.data.password"));
        assert!(secret_field_of_kind("Secret", "$.metadata.*"));
        assert!(secret_field_of_kind("Secret", "$..name"));
        assert!(!secret_field_of_kind("ConfigMap", "$.data.password"));
    }

    fn secret_field_of_kind(kind: &str, path: &str) -> bool {
        let text = format!("apiVersion: v1\nkind: {kind}\nmetadata:\n  name: x\n");
        let docs = crate::yaml::parse_documents(
            &text,
            crate::yaml::FileId(0),
            &crate::yaml::Limits::default(),
        )
        .expect("parses");
        let object = crate::source::Object::new(docs[0].clone(), crate::yaml::FileId(0), 0);
        secret_field(&object, path)
    }
}
