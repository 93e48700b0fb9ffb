//! The environment an app runs with, gathered from where it is written:
//! container `env`/`envFrom`, Helm values `env` lists and maps, and chart
//! values that a chart turns into variables (Authentik's `authentik.*`).

use super::app::{App, workload_containers};
use super::{Model, ObjRef};
use crate::yaml::{Node, PathSeg, Span, Value};

#[derive(Clone, Debug)]
pub struct EnvVar {
    pub name: String,
    pub value: EnvValue,
    /// Where the variable is set (its value, or the entry naming it).
    pub span: Span,
    pub node: Option<Node>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvValue {
    Known(String),
    /// Set, but from somewhere we do not read (a Secret, a field ref).
    Hidden(String),
}

impl EnvVar {
    pub fn known(&self) -> Option<&str> {
        match &self.value {
            EnvValue::Known(v) => Some(v),
            EnvValue::Hidden(_) => None,
        }
    }
}

/// A chart convention that turns a values subtree into variables:
/// `authentik.postgresql.conn_max_age` is `AUTHENTIK_POSTGRESQL__CONN_MAX_AGE`.
#[derive(Clone, Debug)]
pub struct ValuesPrefix {
    pub key: String,
    pub prefix: String,
}

/// All variables of an app. Later entries win (explicit `env` over chart
/// values over `envFrom`, as Kubernetes and the charts resolve them);
/// [`lookup`] honours that.
pub fn of_app(model: &Model, app: &App, prefixes: &[ValuesPrefix]) -> Vec<EnvVar> {
    let mut vars = Vec::new();
    let ns = model.namespace_of(app.object);
    if let Some(release) = model.release(app.object) {
        collect_env_from(model, app.object, ns, &release.values, &mut vars);
        for p in prefixes {
            if let Some(tree) = release.values.get(&p.key) {
                flatten_prefixed(tree, &p.prefix, &mut Vec::new(), &mut vars);
            }
        }
        collect_env_lists(&release.values, &mut vars);
    } else if let Some(containers) = workload_containers(model.object(app.object)) {
        for c in containers {
            collect_env_from(model, app.object, ns, c, &mut vars);
            if let Some(env) = c.get("env") {
                push_env_entries(env, &mut vars);
            }
        }
    }
    vars
}

/// The effective value of `name`: the last one set.
pub fn lookup<'a>(vars: &'a [EnvVar], name: &str) -> Option<&'a EnvVar> {
    vars.iter().rev().find(|v| v.name == name)
}

/// Every `env` list or map anywhere in Helm values (charts put them under
/// `global`, `server`, `worker`, `controllers.*.containers.*`, ...).
fn collect_env_lists(values: &Node, vars: &mut Vec<EnvVar>) {
    values.walk(&mut |path, node| {
        if matches!(
            path.last(),
            Some(PathSeg::Key("env" | "extraEnv" | "extraEnvVars"))
        ) {
            push_env_entries(node, vars);
        }
    });
}

fn push_env_entries(env: &Node, vars: &mut Vec<EnvVar>) {
    match &env.value {
        Value::Seq(items) => {
            for item in items {
                let Some(name) = item.get("name").and_then(Node::as_str) else {
                    continue;
                };
                vars.push(entry(
                    name,
                    item.get("value"),
                    item.get("valueFrom"),
                    item.span,
                ));
            }
        }
        // The app-template form: `env: {NAME: value}` or `NAME: {valueFrom: …}`.
        Value::Map(entries) => {
            for (k, v) in entries {
                let Some(name) = k.as_str() else { continue };
                match &v.value {
                    Value::Map(_) => {
                        vars.push(entry(name, v.get("value"), v.get("valueFrom"), k.span))
                    }
                    _ => vars.push(entry(name, Some(v), None, k.span)),
                }
            }
        }
        _ => {}
    }
}

fn entry(name: &str, value: Option<&Node>, value_from: Option<&Node>, fallback: Span) -> EnvVar {
    match (value.and_then(Node::scalar_text), value_from) {
        (Some(text), _) => EnvVar {
            name: name.to_string(),
            value: EnvValue::Known(text),
            span: value.map_or(fallback, |v| v.span),
            node: value.cloned(),
        },
        (None, Some(from)) => EnvVar {
            name: name.to_string(),
            value: EnvValue::Hidden(describe_value_from(from)),
            span: from.span,
            node: None,
        },
        (None, None) => EnvVar {
            name: name.to_string(),
            value: EnvValue::Known(String::new()),
            span: fallback,
            node: value.cloned(),
        },
    }
}

fn describe_value_from(from: &Node) -> String {
    if let Some(s) = from.get("secretKeyRef") {
        format!("from Secret {}", s.str_at(&["name"]).unwrap_or("?"))
    } else if let Some(c) = from.get("configMapKeyRef") {
        format!("from ConfigMap {}", c.str_at(&["name"]).unwrap_or("?"))
    } else {
        "from a field reference".to_string()
    }
}

fn flatten_prefixed<'a>(
    node: &'a Node,
    prefix: &str,
    path: &mut Vec<&'a str>,
    vars: &mut Vec<EnvVar>,
) {
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries {
                let Some(key) = k.as_str() else { continue };
                path.push(key);
                flatten_prefixed(v, prefix, path, vars);
                path.pop();
            }
        }
        Value::Seq(_) => {}
        _ => {
            let name = format!(
                "{prefix}_{}",
                path.iter()
                    .map(|p| p.to_ascii_uppercase())
                    .collect::<Vec<_>>()
                    .join("__")
            );
            vars.push(EnvVar {
                name,
                value: EnvValue::Known(node.scalar_text().unwrap_or_default()),
                span: node.span,
                node: Some(node.clone()),
            });
        }
    }
}

/// `envFrom` ConfigMaps found in the repo contribute their keys; Secrets
/// only their names, as hidden values: their content is never read here.
fn collect_env_from(model: &Model, near: ObjRef, ns: &str, holder: &Node, vars: &mut Vec<EnvVar>) {
    holder.walk(&mut |path, node| {
        if !matches!(path.last(), Some(PathSeg::Key("envFrom"))) {
            return;
        }
        for source in node.as_seq().into_iter().flatten() {
            if let Some(name) = source.str_at(&["configMapRef", "name"]) {
                match configmap(model, near, ns, name) {
                    Some(cm) => {
                        for (k, v) in model
                            .object(cm)
                            .root
                            .get("data")
                            .and_then(Node::as_map)
                            .into_iter()
                            .flatten()
                        {
                            if let Some(key) = k.as_str() {
                                vars.push(entry(key, Some(v), None, k.span));
                            }
                        }
                    }
                    None => vars.push(EnvVar {
                        name: format!("(all keys of ConfigMap {name})"),
                        value: EnvValue::Hidden(format!(
                            "ConfigMap {name} is not in the repository"
                        )),
                        span: source.span,
                        node: None,
                    }),
                }
            }
        }
    });
}

fn configmap(model: &Model, near: ObjRef, ns: &str, name: &str) -> Option<ObjRef> {
    model.find(near, "", "ConfigMap", ns, name)
}

/// Whether any variable may be set where we cannot see it (a Secret or a
/// ConfigMap outside the repo): a rule that needs a variable to be absent
/// cannot be sure then.
pub fn has_hidden_sources(model: &Model, app: &App) -> Option<String> {
    let holder = match model.release(app.object) {
        Some(r) => r.values.clone(),
        None => model.object(app.object).root.clone(),
    };
    let mut hidden = None;
    holder.walk(&mut |path, node| {
        if hidden.is_none() && matches!(path.last(), Some(PathSeg::Key("envFrom"))) {
            for source in node.as_seq().into_iter().flatten() {
                if let Some(name) = source.str_at(&["secretRef", "name"]) {
                    hidden = Some(format!("Secret {name}"));
                }
            }
        }
    });
    hidden
}
