//! ConfigMap and Secret keys as the API server stores them: Secret `data`
//! is base64, `stringData` overrides it key by key, and SOPS-encrypted
//! files hold ciphertext that only the cluster can read. The objects that
//! make a Secret in the cluster (SealedSecret, ExternalSecret) are read the
//! same way: their keys are known, their values where the repository
//! holds them.

use crate::source::{Concealed, Object};
use crate::yaml::{Node, Value};

mod keyed;
mod read_once;
use keyed::Keyed;
pub use read_once::ReadOnce;

/// One key of a ConfigMap or Secret.
#[derive(Clone, Debug, PartialEq)]
pub enum DataValue<'a> {
    /// Readable text. `node` is where the value is written.
    Text { text: String, node: &'a Node },
    /// A Go template the cluster renders (external-secrets, SealedSecret
    /// templates) from data we cannot see; `template` is its text, which
    /// an operator's naming convention may still resolve.
    Template { template: String, node: &'a Node },
    /// Encrypted (SOPS, a SealedSecret), fetched from a secret store or
    /// written as a template: the cluster will see a value we cannot know.
    /// `why` says which, for the user.
    Unknown { node: &'a Node, why: &'static str },
    /// A key of a Secret read from the cluster: known to the rules, never
    /// shown to the user.
    Concealed {
        value: &'a Concealed,
        node: &'a Node,
    },
    /// Written, but not something the API server would accept.
    Invalid { node: &'a Node, message: String },
}

impl<'a> DataValue<'a> {
    pub fn node(&self) -> &'a Node {
        match self {
            DataValue::Text { node, .. }
            | DataValue::Template { node, .. }
            | DataValue::Concealed { node, .. }
            | DataValue::Unknown { node, .. }
            | DataValue::Invalid { node, .. } => node,
        }
    }
}

/// Finds a ConfigMap or Secret among the rendered objects by kind,
/// namespace and name: the pool the model, helm-controller's `valuesFrom`
/// and Flux's `substituteFrom` read.
pub type Lookup<'l, 'a> = &'l dyn Fn(&str, &str, &str) -> Option<&'a Object>;

/// Every key of a ConfigMap (`data`), a Secret (`data`, then
/// `stringData`), or the Secret a SealedSecret or ExternalSecret makes, in
/// the order written. Other kinds have none. `lookup` finds the
/// ConfigMaps and Secrets an ExternalSecret's `templateFrom` reads.
pub fn entries<'a>(obj: &'a Object, lookup: Lookup<'_, 'a>) -> Vec<(String, DataValue<'a>)> {
    let mut out = Keyed::default();
    match (obj.group(), obj.kind()) {
        ("", "ConfigMap") => {
            let sops = Sops::of(obj);
            for (key, node) in map_entries(obj.root.get("data")) {
                let encrypted = sops.as_ref().is_some_and(|s| s.encrypts(&["data", &key]));
                out.push(key, text_value(node, encrypted));
            }
        }
        ("", "Secret") => {
            let sops = Sops::of(obj);
            let encrypted =
                |field: &str, key: &str| sops.as_ref().is_some_and(|s| s.encrypts(&[field, key]));
            for (key, node) in map_entries(obj.root.get("data")) {
                let value = if obj.is_live() {
                    cluster_value(obj, &key, node)
                } else if encrypted("data", &key) || is_encrypted_node(node) {
                    DataValue::Unknown {
                        node,
                        why: SOPS_ENCRYPTED,
                    }
                } else {
                    decode_data(node)
                };
                out.push(key, value);
            }
            for (key, node) in map_entries(obj.root.get("stringData")) {
                let value = match obj.is_live() {
                    true => cluster_value(obj, &key, node),
                    false => text_value(node, encrypted("stringData", &key)),
                };
                out.set(key, value);
            }
        }
        ("bitnami.com", "SealedSecret") => {
            for (key, node) in map_entries(obj.root.path(&["spec", "encryptedData"])) {
                let why = "sealed (SealedSecret encryptedData)";
                out.push(key, DataValue::Unknown { node, why });
            }
            // Template data may refer to the sealed values with Go templates.
            for (key, node) in map_entries(obj.root.path(&["spec", "template", "data"])) {
                out.set(key, template_value(node));
            }
        }
        ("external-secrets.io", "ExternalSecret" | "ClusterExternalSecret") => {
            out = external_secret(obj, lookup).entries;
        }
        _ => {}
    }
    out.into_vec()
}

/// The ExternalSecret spec a ClusterExternalSecret copies into each
/// namespace it selects (external-secrets
/// `pkg/controllers/clusterexternalsecret/clusterexternalsecret_controller.go`
/// `createOrUpdateExternalSecret`: `externalSecret.Spec =
/// clusterExternalSecret.Spec.ExternalSecretSpec`).
fn cluster_es_spec(obj: &Object) -> Option<&Node> {
    obj.root.path(&["spec", "externalSecretSpec"])
}

/// The ExternalSecret spec of an ExternalSecret or ClusterExternalSecret:
/// `Some(None)` for one without a spec.
fn es_spec(obj: &Object) -> Option<Option<&Node>> {
    match (obj.group(), obj.kind()) {
        ("external-secrets.io", "ExternalSecret") => Some(obj.root.get("spec")),
        ("external-secrets.io", "ClusterExternalSecret") => Some(cluster_es_spec(obj)),
        _ => None,
    }
}

/// Whether [`entries`] lists every key the cluster's Secret (or
/// ConfigMap) will hold; `Err` says why more keys may be there.
///
/// ExternalSecret, after external-secrets'
/// `pkg/controllers/externalsecret/externalsecret_controller_template.go`
/// (`ApplyTemplate`): without a template the Secret holds the provider's
/// data; with `template.data` or `templateFrom` only the rendered keys,
/// unless `mergePolicy: Merge` adds the provider's data too;
/// `creationPolicy: Merge` writes into a Secret that exists only in the
/// cluster.
pub fn keys_complete<'a>(obj: &'a Object, lookup: Lookup<'_, 'a>) -> Result<(), String> {
    match creation_policy(obj) {
        Some("Merge") => Err(
            "it merges into a Secret that exists only in the cluster (creationPolicy: Merge)"
                .into(),
        ),
        Some("CreateOrMerge") => Err(
            "it merges into the Secret's keys already in the cluster, if it is there (creationPolicy: CreateOrMerge)"
                .into(),
        ),
        _ => keys_written(obj, lookup),
    }
}

/// Whether an ExternalSecret keeps the keys its target Secret already
/// holds: `target.creationPolicy` Merge (which never creates it) or
/// CreateOrMerge (which creates it when missing); `ApplyTemplate` clears
/// the Secret's data for every other policy.
pub fn merges(obj: &Object) -> bool {
    matches!(creation_policy(obj), Some("Merge" | "CreateOrMerge"))
}

fn creation_policy(obj: &Object) -> Option<&str> {
    es_spec(obj)
        .flatten()
        .and_then(|s| s.str_at(&["target", "creationPolicy"]))
}

/// [`keys_complete`] for the keys `obj` itself writes, whoever creates
/// the Secret they land in.
pub fn keys_written<'a>(obj: &'a Object, lookup: Lookup<'_, 'a>) -> Result<(), String> {
    let Some(spec) = es_spec(obj) else {
        return Ok(());
    };
    let at = |path: &[&str]| spec.and_then(|s| s.path(path));
    let rendered = external_secret(obj, lookup);
    if let Some(why) = rendered.unseen {
        return Err(why);
    }
    if rendered.provider_data && at(&["dataFrom"]).is_some() {
        return Err("dataFrom brings every key of the secret store's item".into());
    }
    Ok(())
}

/// The keys of the Secret an ExternalSecret renders.
struct Rendered<'a> {
    entries: Keyed<'a>,
    /// Whether the provider's data (`data`, `dataFrom`) reaches the Secret.
    provider_data: bool,
    /// Why keys may be there that `entries` does not list.
    unseen: Option<String>,
}

impl Rendered<'_> {
    /// Keeps the first reason: the one the user reads.
    fn unseen(&mut self, why: String) {
        self.unseen.get_or_insert(why);
    }
}

/// After external-secrets' `ApplyTemplate`: the provider's data when
/// there is no template or `mergePolicy: Merge`, then each
/// `templateFrom` in order, then `template.data`, each later key
/// overwriting an earlier one ("explicitly defined template.data
/// templates take precedence over templateFrom").
fn external_secret<'a>(obj: &'a Object, lookup: Lookup<'_, 'a>) -> Rendered<'a> {
    let spec = es_spec(obj).flatten();
    let template = spec.and_then(|s| s.path(&["target", "template"]));
    let part = |key: &str| template.and_then(|t| t.get(key)).filter(|n| !is_empty(n));
    let (data, from) = (part("data"), part("templateFrom"));
    let merge = template.and_then(|t| t.str_at(&["mergePolicy"])) == Some("Merge");
    let mut out = Rendered {
        entries: Keyed::default(),
        provider_data: (data.is_none() && from.is_none()) || merge,
        unseen: None,
    };
    if out.provider_data {
        for item in spec
            .and_then(|s| s.get("data"))
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
        {
            if let Some(key) = item.str_at(&["secretKey"]) {
                let why = "fetched from the secret store";
                out.entries
                    .push(key.to_string(), DataValue::Unknown { node: item, why });
            }
        }
    }
    // A ClusterExternalSecret's copies live in the namespaces it selects,
    // each reading templateFrom sources there: none is known here.
    let namespace = match obj.kind() {
        "ClusterExternalSecret" => "",
        _ => obj.namespace().unwrap_or("default"),
    };
    for source in from.and_then(Node::as_seq).into_iter().flatten() {
        template_from(source, namespace, lookup, &mut out);
    }
    for (key, node) in map_entries(data) {
        out.entries.set(key, template_value(node));
    }
    out
}

/// One `spec.target.template.templateFrom` entry, after external-secrets'
/// `pkg/controllers/templating/parser.go` (`MergeConfigMap`,
/// `MergeSecret`, `MergeLiteral`) and `runtime/template/v2/template.go`
/// (`Execute`): an entry's ConfigMap items, then its Secret items, then
/// its literal, each later key overwriting an earlier one
/// (`MergeTemplateFrom`); an item `templateAs: Values` (the default) renders the
/// source key's value into the Secret key of the same name; with
/// `KeysAndValues` the value, once rendered, is a YAML map of keys to
/// values; a `literal` is rendered as `KeysAndValues`. Only `target:
/// Data` (the default; matched case-insensitively) makes Secret keys.
/// A source or key that is missing fails the whole render.
fn template_from<'a>(
    source: &'a Node,
    namespace: &str,
    lookup: Lookup<'_, 'a>,
    out: &mut Rendered<'a>,
) {
    match source
        .str_at(&["target"])
        .unwrap_or("Data")
        .to_ascii_lowercase()
        .as_str()
    {
        "data" | "" => {}
        "annotations" | "labels" => return,
        other => {
            return out.unseen(format!(
                "its target.template.templateFrom target {other:?} is not Data, Annotations or Labels (external-secrets rejects it)"
            ));
        }
    }
    for kind in ["ConfigMap", "Secret"] {
        let field = if kind == "Secret" {
            "secret"
        } else {
            "configMap"
        };
        let Some(reference) = source.get(field) else {
            continue;
        };
        let name = reference.str_at(&["name"]).unwrap_or("");
        let items: Vec<(&str, bool)> = reference
            .get("items")
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .filter_map(|item| {
                let key = item.str_at(&["key"])?;
                Some((key, item.str_at(&["templateAs"]) == Some("KeysAndValues")))
            })
            .collect();
        let keys = || {
            let names: Vec<&str> = items.iter().map(|(k, _)| *k).collect();
            match names.len() {
                1 => format!("key {}", names[0]),
                _ => format!("keys {}", names.join(", ")),
            }
        };
        let Some(held) = lookup(kind, namespace, name) else {
            out.unseen(format!(
                "it renders {} from templateFrom {kind} {namespace}/{name}, which is not in the repository (it may exist only in the cluster)",
                keys()
            ));
            continue;
        };
        // A Secret another ExternalSecret renders is read without its own
        // templateFrom: one level, so no chain of them can loop.
        let held_entries = entries(held, &nowhere);
        // By key, the first of each: a search per item was quadratic in a
        // large source.
        let mut held_keys: std::collections::HashMap<&str, &DataValue> =
            std::collections::HashMap::with_capacity(held_entries.len());
        for (k, v) in &held_entries {
            held_keys.entry(k.as_str()).or_insert(v);
        }
        for (key, keys_and_values_scope) in &items {
            let Some(value) = held_keys.get(&**key).copied() else {
                out.unseen(match keys_complete(held, &nowhere) {
                    Ok(()) => format!(
                        "its templateFrom {} has no key {key} (external-secrets fails to render it)",
                        held.id()
                    ),
                    Err(why) => format!(
                        "it renders key {key} from templateFrom {}, which the repository does not show: {why}",
                        held.id()
                    ),
                });
                continue;
            };
            let what = format!("key {key} of templateFrom {}", held.id());
            let node = value.node();
            match (value, keys_and_values_scope) {
                (DataValue::Text { text, .. }, false) => {
                    out.entries.set(key.to_string(), template_text(text, node));
                }
                (DataValue::Text { text, .. }, true) => keys_and_values(text, node, &what, out),
                (_, false) => out.entries.set(
                    key.to_string(),
                    DataValue::Unknown {
                        node,
                        why: "a template the cluster renders from a value the repository does not hold",
                    },
                ),
                (_, true) => out.unseen(format!(
                    "the keys it renders from {what} (templateAs: KeysAndValues) are in a value the repository does not hold"
                )),
            }
        }
    }
    // The literal comes last: `MergeTemplateFrom` merges an entry's
    // ConfigMap, then its Secret, then its literal.
    if let Some(literal) = source.get("literal") {
        match literal.as_str() {
            Some(text) => keys_and_values(text, literal, "a templateFrom literal", out),
            None => out.unseen("its target.template.templateFrom literal is not a string".into()),
        }
    }
}

/// A `KeysAndValues` template: rendered, then read as a YAML map of
/// string values (`mapScopeApply`). Its keys are known when every
/// template action sits inside a value, so rendering cannot add, drop
/// or rename a key; a value that is not a string fails the render
/// (k8s.io/apimachinery's YAML into `map[string]string`).
fn keys_and_values<'a>(text: &str, node: &'a Node, what: &str, out: &mut Rendered<'a>) {
    let parsed =
        crate::yaml::parse_documents(text, node.span().file, &crate::yaml::Limits::default());
    let map = match parsed.as_deref() {
        Ok([doc]) => doc.as_map(),
        Ok([]) => Some(&[][..]),
        _ => None,
    };
    let in_values: usize = map
        .into_iter()
        .flatten()
        .filter_map(|(_, v)| v.as_str())
        .map(|v| v.matches("{{").count())
        .sum();
    let Some(map) = map.filter(|_| in_values == text.matches("{{").count()) else {
        out.unseen(format!(
            "the keys of {what} (templateAs: KeysAndValues) are made by template actions"
        ));
        return;
    };
    for (k, v) in map {
        let Some(key) = k.scalar_text() else { continue };
        let value = match v.as_str() {
            Some(text) => template_text(text, node),
            None => DataValue::Invalid {
                node,
                message: format!(
                    "{what} renders {key} as a value that is not a string (external-secrets fails to render it)"
                ),
            },
        };
        out.entries.set(key, value);
    }
}

/// A key of a Secret read from the cluster, whose value the tree holds
/// as null ([`crate::source::live::normalize`]).
fn cluster_value<'a>(obj: &'a Object, key: &str, node: &'a Node) -> DataValue<'a> {
    match obj.concealed.iter().find(|(k, _)| k == key) {
        Some((_, value)) => DataValue::Concealed { value, node },
        None => DataValue::Unknown {
            node,
            why: "held by the cluster in a form that is not read (not base64)",
        },
    }
}

/// A lookup that finds nothing.
fn nowhere<'a>(_: &str, _: &str, _: &str) -> Option<&'a Object> {
    None
}

fn is_empty(node: &Node) -> bool {
    match &node.value {
        Value::Null => true,
        Value::Map(m) => m.is_empty(),
        Value::Seq(s) => s.is_empty(),
        _ => false,
    }
}

/// The name of the Secret an object makes in the cluster: a Secret's own,
/// a SealedSecret's (the controller names the Secret after it), an
/// ExternalSecret's `spec.target.name` (default: its own name).
pub fn secret_name(obj: &Object) -> Option<&str> {
    match (obj.group(), obj.kind()) {
        ("", "Secret") | ("bitnami.com", "SealedSecret") => Some(obj.name()),
        // `creationPolicy: None` neither creates nor updates a Secret
        // (external-secrets docs, guides/ownership-deletion-policy).
        ("external-secrets.io", "ExternalSecret")
            if obj.root.str_at(&["spec", "target", "creationPolicy"]) == Some("None") =>
        {
            None
        }
        ("external-secrets.io", "ExternalSecret") => Some(
            obj.root
                .str_at(&["spec", "target", "name"])
                .filter(|n| !n.is_empty())
                .unwrap_or(obj.name()),
        ),
        _ => None,
    }
}

/// The ConfigMap or Secret an object puts into the cluster, as
/// `(kind, name)`: itself, the Secret a SealedSecret or ExternalSecret
/// makes ([`secret_name`]), or the one a ClusterExternalSecret makes in
/// each namespace it selects.
pub fn provides(obj: &Object) -> Option<(&'static str, &str)> {
    if obj.is("", "ConfigMap") {
        return Some(("ConfigMap", obj.name()));
    }
    if obj.is("external-secrets.io", "ClusterExternalSecret") {
        return Some(("Secret", cluster_secret_name(obj)));
    }
    secret_name(obj).map(|name| ("Secret", name))
}

/// The Secret a ClusterExternalSecret makes: its ExternalSecrets are
/// named `spec.externalSecretName`, else after it (external-secrets
/// `clusterexternalsecret_controller.go` `reconcile`: `esName`), and each
/// makes `target.name`, else a Secret named after itself.
fn cluster_secret_name(obj: &Object) -> &str {
    let non_empty = |path: &[&str]| obj.root.str_at(path).filter(|n| !n.is_empty());
    non_empty(&["spec", "externalSecretSpec", "target", "name"])
        .or_else(|| non_empty(&["spec", "externalSecretName"]))
        .unwrap_or(obj.name())
}

/// Whether a ClusterExternalSecret selects a namespace, as far as the
/// repository shows.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Pick {
    No,
    /// Only the labels the namespace carries in the cluster can tell.
    Unknown,
    Yes,
}

/// Whether a ClusterExternalSecret selects `namespace`: external-secrets
/// `runtime/esutils` `GetTargetNamespaces` takes the union of
/// `spec.namespaces` (each a selector on `kubernetes.io/metadata.name`),
/// the deprecated `spec.namespaceSelector` and `spec.namespaceSelectors`.
fn picks(obj: &Object, namespace: &str) -> Pick {
    let spec = obj.root.get("spec");
    let named = spec
        .and_then(|s| s.get("namespaces"))
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
        .filter_map(Node::scalar_text)
        .any(|n| n == namespace);
    if named {
        return Pick::Yes;
    }
    let single = spec.and_then(|s| s.get("namespaceSelector"));
    let many = spec
        .and_then(|s| s.get("namespaceSelectors"))
        .and_then(Node::as_seq)
        .into_iter()
        .flatten();
    single
        .into_iter()
        .chain(many)
        .filter(|s| s.as_map().is_some())
        .map(|s| selector_picks(s, namespace))
        .max()
        .unwrap_or(Pick::No)
}

/// One label selector against a namespace whose only label the repository
/// knows is `kubernetes.io/metadata.name` (set by the API server). Its
/// requirements are ANDed (apimachinery `LabelSelectorAsSelector`; an empty
/// selector selects everything). `NotIn` and `DoesNotExist` hold for a
/// label a namespace does not carry (apimachinery `labels.Requirement.
/// Matches`), so `NotIn [true]` on an opt-out label, the usual "every
/// namespace but those labelled out", picks a namespace unless it is
/// labelled in the cluster; `In`, `Exists` and `matchLabels` on other
/// labels need labels the repository does not show.
fn selector_picks(selector: &Node, namespace: &str) -> Pick {
    const NAME: &str = "kubernetes.io/metadata.name";
    let yes_if = |b: bool| if b { Pick::Yes } else { Pick::No };
    let mut pick = Pick::Yes;
    let labels = selector
        .get("matchLabels")
        .and_then(Node::as_map)
        .into_iter()
        .flatten();
    for (key, value) in labels {
        let holds = match key.as_str() {
            Some(NAME) => yes_if(value.scalar_text().as_deref() == Some(namespace)),
            _ => Pick::Unknown,
        };
        pick = pick.min(holds);
    }
    let expressions = selector
        .get("matchExpressions")
        .and_then(Node::as_seq)
        .into_iter()
        .flatten();
    for expr in expressions {
        let values: Vec<String> = expr
            .get("values")
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .filter_map(Node::scalar_text)
            .collect();
        let has_name = values.iter().any(|v| v == namespace);
        let by_name = expr.str_at(&["key"]) == Some(NAME);
        let holds = match (expr.str_at(&["operator"]).unwrap_or(""), by_name) {
            ("In", true) => yes_if(has_name),
            ("NotIn", true) => yes_if(!has_name),
            ("Exists", true) | ("NotIn" | "DoesNotExist", false) => Pick::Yes,
            ("DoesNotExist", true) => Pick::No,
            _ => Pick::Unknown,
        };
        pick = pick.min(holds);
    }
    pick
}

/// Why the repository cannot tell whether a ClusterExternalSecret makes
/// its Secret in `namespace`; `None` when it can (or for other kinds).
pub fn namespace_unknown(obj: &Object, namespace: &str) -> Option<String> {
    if !obj.is("external-secrets.io", "ClusterExternalSecret") {
        return None;
    }
    (picks(obj, namespace) == Pick::Unknown).then(|| {
        format!(
            "ClusterExternalSecret {} makes it only in the namespaces its namespace selectors \
             pick by labels, which the repository does not show",
            obj.name()
        )
    })
}

/// Whether `obj` makes its ConfigMap or Secret in `namespace`, for a
/// reference from an object there (`valuesFrom`, `secretKeyRef`): a
/// ClusterExternalSecret where it selects the namespace, any other object
/// in its own namespace (one written without one gets the namespace of
/// what applies it).
pub fn made_in(obj: &Object, namespace: &str) -> bool {
    if obj.is("external-secrets.io", "ClusterExternalSecret") {
        return picks(obj, namespace) == Pick::Yes;
    }
    obj.namespace().is_none_or(|ns| ns == namespace)
}

/// Whether the ConfigMap or Secret that `obj` provides exists in
/// `namespace`: its own, or one that emberstack's kubernetes-reflector
/// mirrors it into. Reflector copies a source annotated
/// `reflection-allowed: "true"` and `reflection-auto-enabled: "true"`
/// into every namespace that `reflection-allowed-namespaces` (and, when
/// set, `reflection-auto-namespaces`) lists: comma-separated names or
/// regular expressions, none meaning every namespace.
pub fn provided_in(obj: &Object, namespace: &str) -> bool {
    if obj.is("external-secrets.io", "ClusterExternalSecret") {
        return made_in(obj, namespace);
    }
    if obj.namespace() == Some(namespace) {
        return true;
    }
    let meta = match (obj.group(), obj.kind()) {
        ("bitnami.com", "SealedSecret") => obj.root.path(&["spec", "template", "metadata"]),
        ("external-secrets.io", "ExternalSecret") => {
            obj.root.path(&["spec", "target", "template", "metadata"])
        }
        _ => obj.root.get("metadata"),
    };
    // Looked for without the key written out: every source a Flux
    // Kustomization's `substituteFrom` might name is asked this, for
    // each Kustomization.
    let annotations = meta
        .and_then(|m| m.get("annotations"))
        .and_then(Node::as_map);
    let annotation = |name: &str| {
        annotations?
            .iter()
            .find(|(k, _)| {
                k.as_str()
                    .and_then(|k| k.strip_prefix("reflector.v1.k8s.emberstack.com/"))
                    == Some(name)
            })
            .and_then(|(_, v)| v.scalar_text())
    };
    let on = |name: &str| annotation(name).is_some_and(|v| v.trim() == "true");
    let listed = |name: &str| {
        annotation(name).is_none_or(|list| {
            let list = list.trim();
            list.is_empty()
                || list.split(',').map(str::trim).any(|p| {
                    p == namespace
                        || regex::Regex::new(&format!("^(?:{p})$"))
                            .is_ok_and(|r| r.is_match(namespace))
                })
        })
    };
    on("reflection-allowed")
        && on("reflection-auto-enabled")
        && listed("reflection-allowed-namespaces")
        && listed("reflection-auto-namespaces")
}

const SOPS_ENCRYPTED: &str = "SOPS-encrypted";

/// A template value (external-secrets, SealedSecret templates): Go
/// template text is rendered in the cluster from data we cannot see;
/// text without an action is the value itself.
fn template_value(node: &Node) -> DataValue<'_> {
    match text_value(node, false) {
        DataValue::Text { text, .. } => template_text(&text, node),
        other => other,
    }
}

/// Template text written at `node` (or, for a template from a
/// ConfigMap, in it).
fn template_text<'a>(text: &str, node: &'a Node) -> DataValue<'a> {
    match text.contains("{{") {
        true => DataValue::Template {
            template: text.to_string(),
            node,
        },
        false => DataValue::Text {
            text: text.to_string(),
            node,
        },
    }
}

/// Why a cluster Secret's value is not shown, for the user.
pub const CONCEALED: &str = "held only by the cluster (its value is not shown)";

/// Why a template's value is unknown, for the user.
pub const TEMPLATE: &str = "a template rendered in the cluster";

/// Which keys SOPS encrypted, from the file's `sops` metadata; after
/// getsops/sops `sops.go` (`Tree.Encrypt`): a value is encrypted unless a
/// key on its path ends with `unencrypted_suffix` or matches
/// `unencrypted_regex`; with `encrypted_suffix` or `encrypted_regex` set,
/// only values under a matching key are. The file records what was used
/// (`_unencrypted` when nothing was chosen), so no default applies here.
struct Sops {
    unencrypted_suffix: Option<String>,
    encrypted_suffix: Option<String>,
    unencrypted_regex: Option<regex::Regex>,
    encrypted_regex: Option<regex::Regex>,
    /// A pattern that does not compile: sops would not have written the
    /// file, so every value is taken as encrypted rather than guessed.
    unreadable: bool,
}

impl Sops {
    fn of(obj: &Object) -> Option<Sops> {
        let meta = obj.root.get("sops")?;
        let text = |k: &str| meta.str_at(&[k]).filter(|s| !s.is_empty());
        let mut unreadable = false;
        let mut regex = |k: &str| {
            // sops is Go: its regexes are Go's dialect.
            let compiled = crate::source::go_regexp::compile(text(k)?);
            unreadable |= compiled.is_err();
            compiled.ok()
        };
        let (unencrypted_regex, encrypted_regex) =
            (regex("unencrypted_regex"), regex("encrypted_regex"));
        Some(Sops {
            unencrypted_suffix: text("unencrypted_suffix").map(str::to_string),
            encrypted_suffix: text("encrypted_suffix").map(str::to_string),
            unencrypted_regex,
            encrypted_regex,
            unreadable,
        })
    }

    fn encrypts(&self, path: &[&str]) -> bool {
        if self.unreadable {
            return true;
        }
        let mut encrypted = !self
            .unencrypted_suffix
            .as_ref()
            .is_some_and(|suffix| path.iter().any(|k| k.ends_with(suffix.as_str())));
        if let Some(suffix) = &self.encrypted_suffix {
            encrypted = path.iter().any(|k| k.ends_with(suffix.as_str()));
        }
        if let Some(re) = &self.unencrypted_regex
            && path.iter().any(|k| re.is_match(k))
        {
            encrypted = false;
        }
        if let Some(re) = &self.encrypted_regex {
            encrypted = path.iter().any(|k| re.is_match(k));
        }
        encrypted
    }
}

/// The value of one key, as [`entries`] reads it: every key is read to
/// give it, so a caller asking many keys of one object uses [`ReadOnce`].
pub fn entry<'a>(obj: &'a Object, key: &str, lookup: Lookup<'_, 'a>) -> Option<DataValue<'a>> {
    entries(obj, lookup)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

fn map_entries(node: Option<&Node>) -> impl Iterator<Item = (String, &Node)> {
    node.and_then(Node::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.scalar_text()?, v)))
}

fn is_encrypted(text: &str) -> bool {
    text.starts_with("ENC[")
}

fn is_encrypted_node(node: &Node) -> bool {
    node.as_str().is_some_and(is_encrypted)
}

fn text_value(node: &Node, sops: bool) -> DataValue<'_> {
    match &node.value {
        Value::Seq(_) | Value::Map(_) => DataValue::Invalid {
            node,
            message: "value is not a string".into(),
        },
        _ => {
            let text = node.scalar_text().unwrap_or_default();
            if sops || is_encrypted(&text) {
                DataValue::Unknown {
                    node,
                    why: SOPS_ENCRYPTED,
                }
            } else {
                DataValue::Text { text, node }
            }
        }
    }
}

fn decode_data(node: &Node) -> DataValue<'_> {
    let text = match text_value(node, false) {
        DataValue::Text { text, .. } => text,
        other => return other,
    };
    match decode_base64(&text) {
        Some(bytes) => DataValue::Text {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            node,
        },
        None => DataValue::Invalid {
            node,
            message: "Secret data value is not valid base64".into(),
        },
    }
}

/// Standard base64 with padding, as Go's `encoding/json` decodes `[]byte`
/// (it skips `\r` and `\n`).
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let clean: Vec<u8> = text
        .bytes()
        .filter(|b| *b != b'\n' && *b != b'\r')
        .collect();
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
}

#[cfg(test)]
mod tests;
