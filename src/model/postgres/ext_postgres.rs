//! ext-postgres-operator (movetokube/postgres-operator): it runs no
//! cluster of its own, but makes a database, a role and a Secret per
//! `PostgresUser` on a server it is pointed at, so an app's host may come
//! from its settings.

use super::{Derived, PostgresOperator};
use crate::model::app::{App, split_image, workload_containers};
use crate::model::conventions::template_value;
use crate::model::env::{self, EnvValue};
use crate::model::{Model, ObjRef, is_helm_release};
use crate::source::StepKind;
use crate::source::data::{self, DataValue};
use crate::yaml::{Node, Value};
use std::sync::Arc;

pub struct ExtPostgres;

// How deep a Secret's value is being derived through operators' settings.
thread_local!(static DEPTH: std::cell::Cell<u32> = const { std::cell::Cell::new(0) });

impl PostgresOperator for ExtPostgres {
    fn name(&self) -> &'static str {
        "ext-postgres-operator"
    }

    fn secret_value(
        &self,
        model: &Model,
        near: ObjRef,
        ns: &str,
        secret: &str,
        key: &str,
    ) -> Option<Derived> {
        // An operator's own settings may come from a Secret read through
        // this same function: a repository that makes that a loop gets an
        // answer, not a stack overflow.
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
    let users = model.memo(|| Users::of(model));
    let &(user, keep) = users.0.get(secret)?.iter().find(|&&(r, _)| {
        let o = model.object(r);
        o.namespace().is_none_or(|n| n == ns) && o.same_tree(model.object(near))
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
    let all = operators_of(model, near);
    let operators: Vec<&Operator> = all
        .iter()
        .filter(|op| match &op.instance {
            Ok(i) => i.eq_ignore_ascii_case(&instance),
            // A filter we cannot read may be this user's.
            Err(_) => true,
        })
        .collect();
    let op = match operators.as_slice() {
        [op] => *op,
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

/// The PostgresUsers by the Secret each makes: `<spec.secretName>-<name>`
/// (`false`), or `spec.secretName` under `KEEP_SECRET_NAME=true`
/// (`true`), in model order. Built once: each Secret an app reads asks,
/// and a scan of every user per question made many users quadratic.
struct Users(std::collections::HashMap<String, Vec<(ObjRef, bool)>>);

impl Users {
    fn of(model: &Model) -> Users {
        let mut by_secret: std::collections::HashMap<String, Vec<(ObjRef, bool)>> =
            Default::default();
        for r in model.of_kind("db.movetokube.com", "PostgresUser") {
            let o = model.object(r);
            let Some(base) = o.root.str_at(&["spec", "secretName"]) else {
                continue;
            };
            by_secret
                .entry(format!("{base}-{}", o.name()))
                .or_default()
                .push((r, false));
            by_secret.entry(base.to_string()).or_default().push((r, true));
        }
        Users(by_secret)
    }
}

/// The operators of each Flux tree ([`ext_postgres_operators`]), found
/// once per tree: every user's Secret asks, and a scan of every object
/// per question made many users quadratic. Only an answer made outside
/// another's making is kept (it may have stopped at the depth limit).
#[derive(Default)]
struct OperatorsByTree(std::sync::Mutex<std::collections::HashMap<Option<u32>, Arc<[Operator]>>>);

fn operators_of(model: &Model, near: ObjRef) -> Arc<[Operator]> {
    let by_tree = model.memo(OperatorsByTree::default);
    let tree = model.object(near).tree;
    let lock = || by_tree.0.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(ops) = lock().get(&tree) {
        return ops.clone();
    }
    let outermost = DEPTH.get() <= 1;
    let ops: Arc<[Operator]> = ext_postgres_operators(model, near).into();
    if outermost {
        lock().insert(tree, ops.clone());
    }
    ops
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
        // A stand-in for the Deployment of a remote manifest that was not
        // read is the operator when the manifest is the operator's own
        // (`https://raw.githubusercontent.com/movetokube/postgres-operator/…`).
        let stand_in = obj.chain.iter().any(|s| {
            s.kind == StepKind::RemoteStandIn && s.detail.contains("movetokube/postgres-operator/")
        });
        let image = !is_helm_release(obj)
            && (stand_in
                || workload_containers(obj).is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c.str_at(&["image"]).is_some_and(|i| {
                            split_image(i)
                                .repository
                                .ends_with("movetokube/postgres-operator")
                        })
                    })
                }));
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
            None if stand_in => Err(
                "left to the remote manifest it stands in for, which was not read (--remote reads it)"
                    .to_string(),
            ),
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
                "from existingSecret {}",
                model.absent(r, "Secret", model.namespace_of(r), &secret)
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
    fn keep_secret_name_reads_as_go_parses_it() {
        assert!(go_parse_bool("true") && go_parse_bool("1") && go_parse_bool("T"));
        assert!(!go_parse_bool("yes") && !go_parse_bool("") && !go_parse_bool("tRUE"));
    }
}
