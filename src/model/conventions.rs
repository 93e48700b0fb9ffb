//! What Postgres operators write into the Secrets they create, so that a
//! value the repository only refers to (an ExternalSecret template over
//! an operator's user Secret, read through a Kubernetes-provider secret
//! store) follows from the operator's naming convention. Only values
//! that are a pure function of the declared cluster are derived; anything
//! else (passwords, a rewrite of the keys) stays unknown.

use super::app::{App, workload_containers};
use super::env::{self, EnvValue};
use super::{Model, ObjRef, is_helm_release};
use crate::source::flux::data::{self, DataValue};
use crate::yaml::{Node, Value};

/// What an operator writes under one key of a Secret it makes: `Ok` the
/// value, when it follows from what the repository declares; `Err` why
/// it does not (a password it generates, a setting the repository does
/// not show).
pub type Derived = Result<String, String>;

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
///
/// - Crunchy PGO, `internal/controller/postgrescluster/postgres.go`
///   (`generatePostgresUserSecret`): Secret `<cluster>-pguser-<user>`,
///   `host` = `<cluster>-primary.<ns>.svc`, and with `spec.proxy.pgBouncer`
///   `pgbouncer-host` = `<cluster>-pgbouncer.<ns>.svc`.
/// - CloudNativePG, `pkg/specs/secrets.go` (`CreateSecret`, called with the
///   read-write Service name): Secrets `<cluster>-app` and
///   `<cluster>-superuser`, `host` = `<cluster>-rw`.
/// - Zalando postgres-operator, `pkg/cluster/k8sres.go`
///   (`generateSingleUserSecret`) and `pkg/cluster/util.go`
///   (`credentialSecretNameForCluster`, default `secret_name_template`
///   `{username}.{cluster}.credentials.{tprkind}.{tprgroup}`, `_` in the
///   user name written as `-`): only `username` and `password`; the host
///   is the Service named after the cluster.
/// - ext-postgres-operator (movetokube), [`ext_postgres_value`].
pub fn operator_secret_value(
    model: &Model,
    near: ObjRef,
    ns: &str,
    secret: &str,
    key: &str,
) -> Option<Derived> {
    let find = |group: &str, kind: &str, name: &str| model.find(near, group, kind, ns, name);
    let generated = |by: &str| {
        Err(format!(
            "{by} generates key {key} of Secret {secret} itself"
        ))
    };
    if let Some((cluster, _user)) = secret.split_once("-pguser-")
        && let Some(r) = find(
            "postgres-operator.crunchydata.com",
            "PostgresCluster",
            cluster,
        )
    {
        let obj = model.object(r);
        return Some(match key {
            "host" => Ok(format!("{cluster}-primary.{ns}.svc")),
            "pgbouncer-host" if obj.root.path(&["spec", "proxy", "pgBouncer"]).is_some() => {
                Ok(format!("{cluster}-pgbouncer.{ns}.svc"))
            }
            "pgbouncer-host" => Err(format!(
                "{} has no spec.proxy.pgBouncer, so Crunchy PGO writes no key pgbouncer-host into Secret {secret}",
                obj.id()
            )),
            _ => generated("Crunchy PGO"),
        });
    }
    if let Some(cluster) = secret
        .strip_suffix("-app")
        .or_else(|| secret.strip_suffix("-superuser"))
        && find("postgresql.cnpg.io", "Cluster", cluster).is_some()
    {
        return Some(match key {
            "host" => Ok(format!("{cluster}-rw")),
            _ => generated("CloudNativePG"),
        });
    }
    if let Some(rest) = secret.strip_suffix(".credentials.postgresql.acid.zalan.do")
        && let Some((user, cluster)) = rest.rsplit_once('.')
        && let Some(r) = find("acid.zalan.do", "postgresql", cluster)
    {
        let obj = model.object(r);
        return Some(match key {
            "username" => zalando_user(&obj.root, user).ok_or_else(|| {
                format!(
                    "{} declares no user whose name gives Secret {secret}",
                    obj.id()
                )
            }),
            "password" => generated("Zalando postgres-operator"),
            _ => Err(format!(
                "Zalando postgres-operator writes only username and password into Secret {secret}, no key {key}"
            )),
        });
    }
    // An operator's own settings may come from a Secret read through
    // this same function: a repository that makes that a loop gets an
    // answer, not a stack overflow.
    thread_local!(static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });
    if DEPTH.get() > 3 {
        return Some(Err(format!(
            "Secret {secret} is derived from settings that refer back to it"
        )));
    }
    DEPTH.set(DEPTH.get() + 1);
    let value = ext_postgres_value(model, near, ns, secret, key);
    DEPTH.set(DEPTH.get() - 1);
    value
}

/// The user name behind the `{username}` part of a Zalando Secret name:
/// a key of `spec.users`, or the operator's own `postgres`/`standby`.
fn zalando_user(root: &Node, in_name: &str) -> Option<String> {
    let declared = root
        .path(&["spec", "users"])
        .and_then(Node::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(k, _)| k.as_str());
    declared
        .chain(["postgres", "standby"])
        .find(|u| u.replace('_', "-") == in_name)
        .map(str::to_string)
}

/// ext-postgres-operator (movetokube/postgres-operator,
/// `internal/controller/postgresuser_controller.go`, `newSecretForCR`):
/// a `PostgresUser` (`db.movetokube.com`) gets Secret
/// `<spec.secretName>-<metadata.name>` (`spec.secretName` alone when the
/// operator runs with `KEEP_SECRET_NAME=true`); its `HOST` is the
/// operator's own `POSTGRES_HOST` (`pkg/config/config.go`), `HOSTNAME`
/// and `PORT` that split at the port (5432 when none); `spec.secretTemplate`
/// overrides any key. The operator that serves a user is the one whose
/// `POSTGRES_INSTANCE` equals (ignoring case) the user's
/// `postgres.db.movetokube.com/instance` annotation, or has none when
/// the user has none (`pkg/utils/annotationfilter.go`).
fn ext_postgres_value(
    model: &Model,
    near: ObjRef,
    ns: &str,
    secret: &str,
    key: &str,
) -> Option<Derived> {
    let (user, keep) = model
        .of_kind("db.movetokube.com", "PostgresUser")
        .filter(|&r| {
            let o = model.object(r);
            o.namespace().is_none_or(|n| n == ns) && o.same_tree(model.object(near))
        })
        .find_map(|r| {
            let o = model.object(r);
            let base = o.root.str_at(&["spec", "secretName"])?;
            if format!("{base}-{}", o.name()) == secret {
                Some((r, false))
            } else {
                (base == secret).then_some((r, true))
            }
        })?;
    let user_obj = model.object(user);
    if let Some(template) = user_obj.root.path(&["spec", "secretTemplate", key]) {
        let text = template.scalar_text().unwrap_or_default();
        return Some(if text.contains("{{") {
            Err(format!(
                "{} sets key {key} by spec.secretTemplate, a template the operator renders",
                user_obj.id()
            ))
        } else {
            Ok(text)
        });
    }
    if !matches!(key, "HOST" | "HOSTNAME" | "PORT") {
        return Some(Err(format!(
            "ext-postgres-operator writes key {key} of Secret {secret} for {} itself",
            user_obj.id()
        )));
    }
    let instance = user_obj
        .root
        .path(&[
            "metadata",
            "annotations",
            "postgres.db.movetokube.com/instance",
        ])
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let operators: Vec<Operator> = ext_postgres_operators(model, near)
        .into_iter()
        .filter(|op| match &op.instance {
            Ok(i) => i.eq_ignore_ascii_case(&instance),
            // A filter we cannot read may be this user's.
            Err(_) => true,
        })
        .collect();
    let op = match operators.as_slice() {
        [op] => op,
        [] => {
            return Some(Err(format!(
                "no ext-postgres-operator in the repository serves {} (its POSTGRES_INSTANCE would be {instance:?}, after the user's annotation postgres.db.movetokube.com/instance)",
                user_obj.id()
            )));
        }
        _ => {
            return Some(Err(format!(
                "several ext-postgres-operators in the repository may serve {}",
                user_obj.id()
            )));
        }
    };
    let op_id = model.object(op.object).id();
    // Under KEEP_SECRET_NAME=true the Secret is named spec.secretName.
    if let Ok(flag) = &op.keep_secret_name
        && go_parse_bool(flag) != keep
    {
        return None;
    }
    let host = match &op.host {
        Ok(h) => h.clone(),
        Err(why) => {
            return Some(Err(format!(
                "ext-postgres-operator makes it for {} with HOST = the POSTGRES_HOST of {op_id}, which is {why}",
                user_obj.id()
            )));
        }
    };
    let (hostname, port) = match host.rsplit_once(':') {
        Some((h, p)) if !h.contains(']') || h.ends_with(']') => (h.to_string(), p.to_string()),
        _ => (host.clone(), "5432".to_string()),
    };
    Some(Ok(match key {
        "HOST" => host,
        "HOSTNAME" => hostname,
        _ => port,
    }))
}

/// Go's `strconv.ParseBool` true values; anything else is false, as the
/// operator takes a value that does not parse.
fn go_parse_bool(text: &str) -> bool {
    matches!(text, "1" | "t" | "T" | "TRUE" | "true" | "True")
}

/// An ext-postgres-operator the repository runs, with the settings
/// that decide its users' Secrets (`Err` says why one is unknown).
struct Operator {
    object: ObjRef,
    host: Derived,
    /// `POSTGRES_INSTANCE`, empty when unset.
    instance: Derived,
    /// `KEEP_SECRET_NAME`, empty when unset.
    keep_secret_name: Derived,
}

/// The operators as a HelmRelease of the `ext-postgres-operator` chart or
/// a workload running the `movetokube/postgres-operator` image.
fn ext_postgres_operators(model: &Model, near: ObjRef) -> Vec<Operator> {
    let mut out = Vec::new();
    for (i, obj) in model.objects.iter().enumerate() {
        if !obj.same_tree(model.object(near)) {
            continue;
        }
        let chart = is_helm_release(obj)
            && model
                .release(i)
                .and_then(|r| r.chart.as_ref())
                .and_then(Node::as_str)
                == Some("ext-postgres-operator");
        let image = !is_helm_release(obj)
            && workload_containers(obj).is_some_and(|cs| {
                cs.iter().any(|c| {
                    c.str_at(&["image"]).is_some_and(|i| {
                        super::app::split_image(i)
                            .repository
                            .ends_with("movetokube/postgres-operator")
                    })
                })
            });
        if !chart && !image {
            continue;
        }
        let app = App {
            object: i,
            identity: String::new(),
            version: None,
            version_node: None,
        };
        let vars = env::of_app(model, &app, &[]);
        let hidden = env::has_hidden_sources(model, &app);
        // A variable `env` does not set: from the chart's Secret, or from
        // an envFrom source; unset (`None`) is Go's zero value.
        let var = |name: &str| match env::lookup(&vars, name) {
            Some(v) => match &v.value {
                EnvValue::Known(text) => Ok(text.clone()),
                EnvValue::Hidden(why) | EnvValue::Concealed { why, .. } => {
                    Err(format!("set {why}"))
                }
            },
            None if chart => chart_var(model, i, name),
            None => match &hidden {
                Some(src) => Err(format!("not set in the repository; {src} could set it")),
                None if name == "POSTGRES_HOST" => Err("not set".to_string()),
                None => Ok(String::new()),
            },
        };
        out.push(Operator {
            object: i,
            host: var("POSTGRES_HOST"),
            instance: var("POSTGRES_INSTANCE"),
            keep_secret_name: var("KEEP_SECRET_NAME"),
        });
    }
    out
}

/// A variable of the chart's operator that its `env` map does not set
/// (`charts/ext-postgres-operator/templates/operator.yaml` and
/// `secret.yaml`): `externalSecret` makes an ExternalSecret the chart
/// fills from a secret store; else `existingSecret` names the Secret the
/// operator reads with envFrom; else the chart's own Secret holds
/// `postgres.host` as POSTGRES_HOST (and no POSTGRES_INSTANCE or
/// KEEP_SECRET_NAME).
fn chart_var(model: &Model, r: ObjRef, name: &str) -> Derived {
    let Some(values) = model.release(r).map(|rel| &rel.values) else {
        return Err("not readable".into());
    };
    let set = |k: &str| {
        values.get(k).filter(|v| match &v.value {
            Value::Map(m) => !m.is_empty(),
            _ => v.scalar_text().is_some_and(|t| !t.is_empty()),
        })
    };
    if set("externalSecret").is_some() {
        return Err("fetched by the chart's externalSecret from a secret store".into());
    }
    if let Some(secret) = set("existingSecret").and_then(Node::scalar_text) {
        let Some(holder) = model.find_secret(r, model.namespace_of(r), &secret) else {
            return Err(format!(
                "from Secret {secret} (existingSecret), which is not in the repository (it may exist only in the cluster)"
            ));
        };
        let obj = model.object(holder);
        let id = obj.id();
        return match model.data_entry(holder, name) {
            Some(DataValue::Text { text, .. }) => Ok(text),
            Some(DataValue::Template { template, .. }) => template_value(model, holder, &template)
                .unwrap_or_else(|| Err(format!("from key {name} of {id}, {}", data::TEMPLATE))),
            Some(DataValue::Unknown { why, .. }) => Err(format!("from key {name} of {id}, {why}")),
            Some(DataValue::Concealed { .. }) => {
                Err(format!("from key {name} of {id}, {}", data::CONCEALED))
            }
            Some(DataValue::Invalid { message, .. }) => {
                Err(format!("from key {name} of {id}: {message}"))
            }
            None => match model.keys_complete(holder) {
                Ok(()) if name == "POSTGRES_HOST" => {
                    Err(format!("not set: {id} has no key {name}"))
                }
                Ok(()) => Ok(String::new()),
                Err(why) => Err(format!("not shown by {id}: {why}")),
            },
        };
    }
    if name != "POSTGRES_HOST" {
        return Ok(String::new());
    }
    match values
        .path(&["postgres", "host"])
        .and_then(Node::scalar_text)
    {
        Some(host) if !host.is_empty() => Ok(host),
        _ => Err("left to the chart's default (postgres.host is not set)".into()),
    }
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

    #[test]
    fn zalando_secret_names_write_underscores_as_dashes() {
        let mut docs = crate::yaml::parse_documents(
            "spec:\n  users:\n    app_user: []\n",
            crate::yaml::FileId(0),
            &crate::yaml::Limits::default(),
        )
        .unwrap();
        let root = docs.remove(0);
        assert_eq!(zalando_user(&root, "app-user").as_deref(), Some("app_user"));
        assert_eq!(zalando_user(&root, "postgres").as_deref(), Some("postgres"));
        assert_eq!(zalando_user(&root, "other"), None);
    }

    #[test]
    fn keep_secret_name_reads_as_go_parses_it() {
        assert!(go_parse_bool("true") && go_parse_bool("1") && go_parse_bool("T"));
        assert!(!go_parse_bool("yes") && !go_parse_bool("") && !go_parse_bool("tRUE"));
    }
}
