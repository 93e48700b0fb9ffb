//! What Postgres operators write into the Secrets they create, so that a
//! value the repository only refers to (an ExternalSecret template over
//! an operator's user Secret, read through a Kubernetes-provider secret
//! store) follows from the operator's naming convention. Only values
//! that are a pure function of the declared cluster are derived; anything
//! else (passwords, a rewrite of the keys) stays unknown.

use super::{Model, ObjRef};
use crate::yaml::Node;

/// The value an ExternalSecret template renders for `node`, when the
/// template is one plain reference (`{{ .host }}`, `{{ index . "pgbouncer-host" }}`)
/// to a key of an operator's Secret that a Kubernetes-provider store reads.
pub fn template_value(model: &Model, near: ObjRef, node: &Node) -> Option<String> {
    let holder = model.object(near);
    if !holder.is("external-secrets.io", "ExternalSecret") {
        return None;
    }
    let key = referenced_key(node.as_str()?)?;
    let spec = holder.root.get("spec")?;
    let (secret, property) = source_of(spec, key)?;
    let namespace = kubernetes_store_namespace(model, near, spec)?;
    operator_secret_value(model, near, &namespace, &secret, &property)
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

/// A key of a Secret an operator creates for a cluster the repository
/// declares, when its value follows from the declaration.
///
/// - Crunchy PGO, `internal/controller/postgrescluster/postgres.go`
///   (`generatePostgresUserSecret`): Secret `<cluster>-pguser-<user>`,
///   `host` = `<cluster>-primary.<ns>.svc`, and with `spec.proxy.pgBouncer`
///   `pgbouncer-host` = `<cluster>-pgbouncer.<ns>.svc`.
/// - CloudNativePG, `pkg/specs/secrets.go` (`CreateSecret`, called with the
///   read-write Service name): Secrets `<cluster>-app` and
///   `<cluster>-superuser`, `host` = `<cluster>-rw`.
pub fn operator_secret_value(
    model: &Model,
    near: ObjRef,
    ns: &str,
    secret: &str,
    key: &str,
) -> Option<String> {
    let find = |group: &str, kind: &str, name: &str| model.find(near, group, kind, ns, name);
    if let Some((cluster, _user)) = secret.split_once("-pguser-")
        && let Some(r) = find(
            "postgres-operator.crunchydata.com",
            "PostgresCluster",
            cluster,
        )
    {
        let root = &model.object(r).root;
        return match key {
            "host" => Some(format!("{cluster}-primary.{ns}.svc")),
            "pgbouncer-host" if root.path(&["spec", "proxy", "pgBouncer"]).is_some() => {
                Some(format!("{cluster}-pgbouncer.{ns}.svc"))
            }
            _ => None,
        };
    }
    let cluster = secret
        .strip_suffix("-app")
        .or_else(|| secret.strip_suffix("-superuser"))?;
    find("postgresql.cnpg.io", "Cluster", cluster)?;
    (key == "host").then(|| format!("{cluster}-rw"))
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
