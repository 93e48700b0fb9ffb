//! Field specs: which fields of which kinds each transformer touches.
//! The defaults are kustomize's own (api/konfig/builtinpluginconsts,
//! Apache-2.0), kept as YAML text so they read like the upstream source and
//! `configurations:` files extend them in the same format.

use std::sync::Arc;

use crate::yaml::{Node, Span, Value};

use super::Gvk;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FieldSpec {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub path: String,
    pub create: bool,
}

impl FieldSpec {
    pub fn new(path: &str, create: bool) -> FieldSpec {
        FieldSpec {
            group: String::new(),
            version: String::new(),
            kind: String::new(),
            path: path.to_string(),
            create,
        }
    }

    /// The kind first, compared as text: every object of a build is
    /// checked against every spec of a list (name references list
    /// dozens), and nearly all differ by kind.
    pub fn selects(&self, gvk: &Gvk) -> bool {
        (self.kind.is_empty() || self.kind == gvk.kind.as_str())
            && (self.group.is_empty() || self.group == gvk.group.as_str())
            && (self.version.is_empty() || self.version == gvk.version.as_str())
    }
}

/// A kind whose name other objects refer to, and where they do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NameRef {
    pub group: String,
    pub version: String,
    pub kind: String,
    pub specs: Vec<FieldSpec>,
}

/// kustomize's TransformerConfig.
#[derive(Clone, Debug, Default)]
pub(crate) struct Config {
    pub name_prefix: Vec<FieldSpec>,
    pub common_labels: Vec<FieldSpec>,
    pub template_labels: Vec<FieldSpec>,
    pub common_annotations: Vec<FieldSpec>,
    pub namespace: Vec<FieldSpec>,
    pub images: Vec<FieldSpec>,
    pub replicas: Vec<FieldSpec>,
    pub name_reference: Vec<NameRef>,
}

fn merge_specs(into: &mut Vec<FieldSpec>, from: &[FieldSpec]) {
    for fs in from {
        if let Some(same) = into.iter_mut().find(|f| {
            f.path == fs.path && f.group == fs.group && f.version == fs.version && f.kind == fs.kind
        }) {
            same.create |= fs.create;
        } else {
            into.push(fs.clone());
        }
    }
}

impl Config {
    pub fn is_empty(&self) -> bool {
        self.name_prefix.is_empty()
            && self.common_labels.is_empty()
            && self.template_labels.is_empty()
            && self.common_annotations.is_empty()
            && self.namespace.is_empty()
            && self.images.is_empty()
            && self.replicas.is_empty()
            && self.name_reference.is_empty()
    }

    pub fn merge(&mut self, other: &Config) {
        merge_specs(&mut self.name_prefix, &other.name_prefix);
        merge_specs(&mut self.common_labels, &other.common_labels);
        merge_specs(&mut self.template_labels, &other.template_labels);
        merge_specs(&mut self.common_annotations, &other.common_annotations);
        merge_specs(&mut self.namespace, &other.namespace);
        merge_specs(&mut self.images, &other.images);
        merge_specs(&mut self.replicas, &other.replicas);
        for nr in &other.name_reference {
            match self
                .name_reference
                .iter_mut()
                .find(|n| n.kind == nr.kind && n.group == nr.group && n.version == nr.version)
            {
                Some(n) => merge_specs(&mut n.specs, &nr.specs),
                None => self.name_reference.push(nr.clone()),
            }
        }
    }

    /// A `configurations:` file (or the built-in defaults).
    pub fn parse(doc: &Node) -> Result<Config, (Span, String)> {
        let mut c = Config::default();
        let Some(map) = doc.as_map() else {
            if doc.is_null() {
                return Ok(c);
            }
            return Err((
                doc.span(),
                "transformer configuration must be a mapping".into(),
            ));
        };
        for (k, v) in map {
            let key = k.as_str().unwrap_or("");
            let list = match key {
                "namePrefix" | "nameSuffix" => &mut c.name_prefix,
                "commonLabels" => &mut c.common_labels,
                "templateLabels" => &mut c.template_labels,
                "commonAnnotations" => &mut c.common_annotations,
                "namespace" => &mut c.namespace,
                "images" => &mut c.images,
                "replicas" => &mut c.replicas,
                "nameReference" => {
                    for item in seq_items(v)? {
                        let specs = parse_specs(item.get("fieldSpecs"))?;
                        let nr = NameRef {
                            group: text(item, "group"),
                            version: text(item, "version"),
                            kind: text(item, "kind"),
                            specs: Vec::new(),
                        };
                        let mut one = Config::default();
                        one.name_reference.push(NameRef { specs, ..nr });
                        c.merge(&one);
                    }
                    continue;
                }
                // varReference and unknown sections do not affect output here.
                _ => continue,
            };
            let specs = parse_specs(Some(v))?;
            merge_specs(list, &specs);
        }
        Ok(c)
    }
}

fn seq_items(v: &Node) -> Result<&[Node], (Span, String)> {
    match &v.value {
        Value::Seq(items) => Ok(items),
        Value::Null => Ok(&[]),
        _ => Err((v.span(), "expected a list of field specs".into())),
    }
}

fn text(n: &Node, key: &str) -> String {
    n.get(key).and_then(Node::scalar_text).unwrap_or_default()
}

/// Fields one field spec path may name: as deep as a YAML document may
/// nest (`yaml::Limits::max_depth`).
const MAX_PATH_FIELDS: usize = 256;

pub(crate) fn parse_specs(v: Option<&Node>) -> Result<Vec<FieldSpec>, (Span, String)> {
    let Some(v) = v else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for item in seq_items(v)? {
        let Some(path) = item.get("path").and_then(Node::as_str) else {
            return Err((item.span(), "field spec needs a path".into()));
        };
        // A spec that creates its fields nests them as deep as its path,
        // and nested values are walked by recursion (here, in merges, in
        // every output): a path of 100,000 fields overflowed the stack.
        // kustomize sets no limit; no field it could mean lies deeper
        // than a YAML document may nest.
        let fields = field_count(path);
        if fields > MAX_PATH_FIELDS {
            return Err((
                item.span(),
                format!(
                    "field spec path has {fields} fields, more than the {MAX_PATH_FIELDS} the linter follows"
                ),
            ));
        }
        out.push(FieldSpec {
            group: text(item, "group"),
            version: text(item, "version"),
            kind: text(item, "kind"),
            path: path.to_string(),
            create: item
                .get("create")
                .and_then(Node::as_bool_lenient)
                .unwrap_or(false),
        });
    }
    Ok(out)
}

/// How many segments [`split_path`] makes of `path`, counted without
/// making them: the built-in specs are checked on every run, and making
/// their segments to count them was 0.8 M instructions.
fn field_count(path: &str) -> usize {
    let b = path.as_bytes();
    let mut fields = 1;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' if b.get(i + 1) == Some(&b'/') => i += 2,
            b'/' => {
                fields += 1;
                i += 1;
            }
            _ => i += 1,
        }
    }
    fields
}

/// Splits `a/b\/c/d[]` into segments; `\/` is a literal slash (annotation
/// keys), `[]` marks a list to descend into.
pub(crate) fn split_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'/') => {
                cur.push('/');
                chars.next();
            }
            '/' => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// What a missing leaf becomes when a spec says `create`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leaf {
    Map,
    Scalar,
}

/// Calls `f` on every node `spec.path` reaches in `node`, creating missing
/// fields when the spec says so. Lists met on the way are descended into
/// element by element, as kustomize's fieldspec filter does.
pub(crate) fn visit(
    node: &mut Node,
    path: &[String],
    create: bool,
    leaf: Leaf,
    span: Span,
    f: &mut dyn FnMut(&mut Node) -> Result<(), String>,
) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        return f(node);
    };
    match &mut node.value {
        Value::Seq(items) => {
            for item in Arc::make_mut(items).iter_mut() {
                visit(item, path, create, leaf, span, f)?;
            }
            Ok(())
        }
        Value::Map(_) => {
            let (name, is_seq) = match first.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (first.as_str(), false),
            };
            if node.get(name).is_none() {
                if !create || is_seq {
                    return Ok(());
                }
                let value = if rest.is_empty() && leaf == Leaf::Scalar {
                    Value::Null
                } else {
                    Value::Map(Default::default())
                };
                node.insert(name, Node::new(value, span));
            }
            let Some(child) = node.get_mut(name) else {
                return Ok(());
            };
            if child.is_null() {
                if is_seq {
                    child.value = Value::Seq(Default::default());
                } else if create && (!rest.is_empty() || leaf == Leaf::Map) {
                    child.value = Value::Map(Default::default());
                }
            }
            visit(child, rest, create, leaf, span, f)
        }
        _ => Ok(()),
    }
}

pub(crate) const NAME_PREFIX: &str = "
namePrefix:
- path: metadata/name
";

const METADATA_LABELS: &str = "
- path: metadata/labels
  create: true
- path: spec/template/metadata/labels
  create: true
  version: v1
  kind: ReplicationController
- path: spec/template/metadata/labels
  create: true
  kind: Deployment
- path: spec/template/metadata/labels
  create: true
  kind: ReplicaSet
- path: spec/template/metadata/labels
  create: true
  kind: DaemonSet
- path: spec/template/metadata/labels
  create: true
  group: apps
  kind: StatefulSet
- path: spec/template/metadata/labels
  create: true
  group: batch
  kind: Job
- path: spec/jobTemplate/metadata/labels
  create: true
  group: batch
  kind: CronJob
- path: spec/jobTemplate/spec/template/metadata/labels
  create: true
  group: batch
  kind: CronJob
- path: spec/volumeClaimTemplates[]/metadata/labels
  create: true
  group: apps
  kind: StatefulSet
";

const COMMON_LABELS: &str = "
commonLabels:
- path: spec/selector
  create: true
  version: v1
  kind: Service
- path: spec/selector
  create: true
  version: v1
  kind: ReplicationController
- path: spec/selector/matchLabels
  create: true
  kind: Deployment
- path: spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels
  group: apps
  kind: Deployment
- path: spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels
  group: apps
  kind: Deployment
- path: spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels
  group: apps
  kind: Deployment
- path: spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels
  group: apps
  kind: Deployment
- path: spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels
  group: apps
  kind: Deployment
- path: spec/selector/matchLabels
  create: true
  kind: ReplicaSet
- path: spec/selector/matchLabels
  create: true
  kind: DaemonSet
- path: spec/selector/matchLabels
  create: true
  group: apps
  kind: StatefulSet
- path: spec/template/spec/affinity/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels
  group: apps
  kind: StatefulSet
- path: spec/template/spec/affinity/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels
  group: apps
  kind: StatefulSet
- path: spec/template/spec/affinity/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels
  group: apps
  kind: StatefulSet
- path: spec/template/spec/affinity/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels
  group: apps
  kind: StatefulSet
- path: spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels
  group: apps
  kind: StatefulSet
- path: spec/selector/matchLabels
  group: batch
  kind: Job
- path: spec/jobTemplate/spec/selector/matchLabels
  group: batch
  kind: CronJob
- path: spec/selector/matchLabels
  group: policy
  kind: PodDisruptionBudget
- path: spec/podSelector/matchLabels
  group: networking.k8s.io
  kind: NetworkPolicy
- path: spec/ingress/from/podSelector/matchLabels
  group: networking.k8s.io
  kind: NetworkPolicy
- path: spec/egress/to/podSelector/matchLabels
  group: networking.k8s.io
  kind: NetworkPolicy
";

const COMMON_ANNOTATIONS: &str = "
commonAnnotations:
- path: metadata/annotations
  create: true
- path: spec/template/metadata/annotations
  create: true
  version: v1
  kind: ReplicationController
- path: spec/template/metadata/annotations
  create: true
  kind: Deployment
- path: spec/template/metadata/annotations
  create: true
  kind: ReplicaSet
- path: spec/template/metadata/annotations
  create: true
  kind: DaemonSet
- path: spec/template/metadata/annotations
  create: true
  kind: StatefulSet
- path: spec/template/metadata/annotations
  create: true
  group: batch
  kind: Job
- path: spec/jobTemplate/metadata/annotations
  create: true
  group: batch
  kind: CronJob
- path: spec/jobTemplate/spec/template/metadata/annotations
  create: true
  group: batch
  kind: CronJob
";

const NAMESPACE: &str = "
namespace:
- path: metadata/namespace
  create: true
- path: metadata/name
  kind: Namespace
  create: true
- path: subjects[]/namespace
  kind: RoleBinding
- path: subjects[]/namespace
  kind: ClusterRoleBinding
- path: spec/service/namespace
  group: apiregistration.k8s.io
  kind: APIService
  create: true
- path: spec/conversion/webhook/clientConfig/service/namespace
  group: apiextensions.k8s.io
  kind: CustomResourceDefinition
";

const REPLICAS: &str = "
replicas:
- path: spec/replicas
  create: true
  kind: Deployment
- path: spec/replicas
  create: true
  kind: ReplicationController
- path: spec/replicas
  create: true
  kind: ReplicaSet
- path: spec/replicas
  create: true
  kind: StatefulSet
";

/// kustomize v5.7 (images.go); image volumes (`volumes[].image`) are new
/// there, the container paths are also reached by the legacy walk.
const IMAGES: &str = "
images:
- path: spec/containers[]/image
  create: true
- path: spec/initContainers[]/image
  create: true
- path: spec/template/spec/containers[]/image
  create: true
- path: spec/template/spec/initContainers[]/image
  create: true
- path: spec/volumes[]/image/reference
  create: true
- path: spec/template/spec/volumes[]/image/reference
  create: true
";

const NAME_REFERENCE: &str = include_str!("namereference.yaml");

/// The built-in configuration as one YAML text, parsed once per build.
pub(crate) fn default_text() -> String {
    let mut s = String::new();
    s.push_str(NAME_PREFIX);
    s.push_str(COMMON_LABELS);
    s.push_str(METADATA_LABELS);
    s.push_str("templateLabels:");
    s.push_str(METADATA_LABELS);
    s.push_str(COMMON_ANNOTATIONS);
    s.push_str(NAMESPACE);
    s.push_str(REPLICAS);
    s.push_str(IMAGES);
    s.push_str(NAME_REFERENCE);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path of up to five parts of `a`, `/`, `\`, `é` and `[]` has
    /// as many fields counted as split.
    #[test]
    fn fields_are_counted_as_split() {
        let paths = crate::yaml::every_string_of(&["a", "/", "\\", "é", "[]"], 5);
        for p in &paths {
            assert_eq!(field_count(p), split_path(p).len(), "{p:?}");
        }
    }
}
