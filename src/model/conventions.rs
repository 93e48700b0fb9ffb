//! What Postgres operators write into the Secrets they create, so that a
//! value the repository only refers to (an ExternalSecret template over
//! an operator's user Secret, read through a Kubernetes-provider secret
//! store) follows from the operator's naming convention. Only values
//! that are a pure function of the declared cluster are derived; anything
//! else (passwords, a rewrite of the keys) stays unknown.

use super::postgres::{Derived, OPERATORS};
use super::{Model, ObjRef};
use crate::source::data::{self, DataValue};
use crate::yaml::Node;

/// The value an ExternalSecret template `template` renders, when the
/// template is one plain reference (`{{ .host }}`, `{{ index . "pgbouncer-host" }}`)
/// to a key of a Secret that a Kubernetes-provider store reads: one the
/// repository holds, or one an operator makes. For any other store,
/// `Err` names the item and the store that only the cluster reads.
pub fn template_value(model: &Model, near: ObjRef, template: &str) -> Option<Derived> {
    let holder = model.object(near);
    if !holder.is("external-secrets.io", "ExternalSecret") {
        return None;
    }
    let key = referenced_key(template)?;
    let spec = holder.root.get("spec")?;
    let (secret, property) = source_of(spec, key)?;
    let store = format!(
        "{} {}",
        spec.str_at(&["secretStoreRef", "kind"])
            .unwrap_or("SecretStore"),
        spec.str_at(&["secretStoreRef", "name"]).unwrap_or("")
    );
    let Some(namespace) = kubernetes_store_namespace(model, near, spec) else {
        return Some(Err(format!(
            "a template over property {property} of item {secret}, which {store} fetches in the cluster"
        )));
    };
    if let Some(derived) = operator_secret_value(model, near, &namespace, &secret, &property) {
        return Some(derived);
    }
    let Some(held) = model.find_secret(near, &namespace, &secret) else {
        return Some(Err(format!(
            "a template over key {property} of Secret {namespace}/{secret} (read by {store}), which is not in the repository (it may exist only in the cluster)"
        )));
    };
    let held_id = model.object(held).id();
    Some(match model.data_entry(held, &property) {
        Some(DataValue::Text { text, .. }) => Ok(text),
        Some(DataValue::Template { .. }) => Err(format!(
            "a template over key {property} of {held_id} (read by {store}), {}",
            data::TEMPLATE
        )),
        Some(DataValue::Concealed { .. }) => Err(format!(
            "a template over key {property} of {held_id} (read by {store}), {}",
            data::CONCEALED
        )),
        Some(DataValue::Unknown { why, .. }) => Err(format!(
            "a template over key {property} of {held_id} (read by {store}), {why}"
        )),
        Some(DataValue::Invalid { message, .. }) => Err(format!(
            "a template over key {property} of {held_id}: {message}"
        )),
        None => Err(format!(
            "a template over key {property} of {held_id}, which has no such key"
        )),
    })
}

/// `{{ .key }}` or `{{ index . "key" }}` and nothing else.
fn referenced_key(text: &str) -> Option<&str> {
    let inner = text
        .trim()
        .strip_prefix("{{")?
        .strip_suffix("}}")?
        .trim()
        .trim_start_matches('-')
        .trim_end_matches('-')
        .trim();
    if let Some(key) = inner.strip_prefix('.') {
        return key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
            .then_some(key);
    }
    let rest = inner
        .strip_prefix("index")?
        .trim_start()
        .strip_prefix('.')?;
    let quoted = rest.trim();
    let key = quoted.strip_prefix('"')?.strip_suffix('"')?;
    (!key.contains('"')).then_some(key)
}

/// The remote Secret and its key that template key `key` comes from:
/// `spec.data[]` with that `secretKey`, or one `dataFrom[].extract`
/// without rewrites (which keeps the remote keys as they are).
fn source_of(spec: &Node, key: &str) -> Option<(String, String)> {
    let items = spec.get("data").and_then(Node::as_seq);
    if let Some(item) = items
        .into_iter()
        .flatten()
        .find(|i| i.str_at(&["secretKey"]) == Some(key))
    {
        let remote = item.str_at(&["remoteRef", "key"])?;
        let property = item.str_at(&["remoteRef", "property"])?;
        return Some((remote.to_string(), property.to_string()));
    }
    let extracts: Vec<&Node> = spec
        .get("dataFrom")
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
        .collect();
    // With several sources a later one may override the key.
    match extracts.as_slice() {
        [one] if one.get("rewrite").is_none() => {
            let remote = one.str_at(&["extract", "key"])?;
            Some((remote.to_string(), key.to_string()))
        }
        _ => None,
    }
}

/// The namespace a Kubernetes-provider SecretStore or ClusterSecretStore
/// reads Secrets from (`spec.provider.kubernetes.remoteNamespace`, default
/// `default`, external-secrets `apis/externalsecrets/v1/secretstore_kubernetes_types.go`).
fn kubernetes_store_namespace(model: &Model, near: ObjRef, spec: &Node) -> Option<String> {
    let kind = spec
        .str_at(&["secretStoreRef", "kind"])
        .unwrap_or("SecretStore");
    let name = spec.str_at(&["secretStoreRef", "name"])?;
    let store = match kind {
        // Cluster-scoped; kustomize and Flux may still write a namespace
        // into it, as they cannot tell a custom kind's scope.
        "ClusterSecretStore" => model.of_kind("external-secrets.io", kind).find(|&r| {
            let o = model.object(r);
            o.name() == name && o.same_tree(model.object(near))
        })?,
        _ => model.find(
            near,
            "external-secrets.io",
            kind,
            model.namespace_of(near),
            name,
        )?,
    };
    let provider = model
        .object(store)
        .root
        .path(&["spec", "provider", "kubernetes"])?;
    Some(
        provider
            .str_at(&["remoteNamespace"])
            .unwrap_or("default")
            .to_string(),
    )
}

/// A key of a Secret an operator creates for a cluster or user the
/// repository declares; `None` when no declared object makes `secret`.
/// Each operator's file says which Secrets it makes
/// ([`PostgresOperator::secret_value`](super::postgres::PostgresOperator::secret_value)).
pub fn operator_secret_value(
    model: &Model,
    near: ObjRef,
    ns: &str,
    secret: &str,
    key: &str,
) -> Option<Derived> {
    OPERATORS
        .iter()
        .find_map(|o| o.secret_value(model, near, ns, secret, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_references_are_read() {
        assert_eq!(referenced_key("{{ .host }}"), Some("host"));
        assert_eq!(
            referenced_key("{{ index . \"pgbouncer-host\" }}"),
            Some("pgbouncer-host")
        );
        assert_eq!(referenced_key("{{- .host -}}"), Some("host"));
        assert_eq!(referenced_key("{{ .host | upper }}"), None);
        assert_eq!(referenced_key("postgres://{{ .host }}"), None);
        assert_eq!(referenced_key("{{ .a }}{{ .b }}"), None);
    }
}
