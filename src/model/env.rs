//! The environment an app runs with, gathered from where it is written:
//! container `env`/`envFrom`, Helm values `env` lists and maps, and chart
//! values that a chart turns into variables (Authentik's `authentik.*`).
//! `envFrom` and `valueFrom` read the ConfigMaps and Secrets the repository
//! holds, SealedSecrets and ExternalSecrets included: their keys are known,
//! their values where the repository holds them; a value the repository
//! does not hold stays hidden, with the object and key that hold it.

use std::collections::HashMap;

use super::app::{App, workload_containers};
use super::{Model, ObjRef, conventions};
use crate::source::Concealed;
use crate::source::data::{self, DataValue};
use crate::yaml::{Node, PathSeg, Span, Value};

#[derive(Clone, Debug)]
pub struct EnvVar {
    pub name: String,
    pub value: EnvValue,
    /// Where the variable is set (its value, or the entry naming it).
    pub span: Span,
    /// The value's node where the app's own declaration writes it (what
    /// a fix may edit); `None` for values from elsewhere (a Secret).
    pub node: Option<Node>,
    /// For a value from a ConfigMap or Secret: which object and key.
    pub from: Option<String>,
    /// The value is a Secret's or a SealedSecret's (or came from one),
    /// held in the repository: rules read it, reports never show it.
    pub secret: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvValue {
    Known(String),
    /// Set, but from somewhere we do not read (a Secret, a field ref).
    Hidden(String),
    /// From a Secret only the cluster holds (`--snapshot`): a rule may
    /// decide with `value` (libpq options), messages show only `why`.
    Concealed {
        why: String,
        value: Concealed,
    },
}

impl EnvVar {
    pub fn known(&self) -> Option<&str> {
        match &self.value {
            EnvValue::Known(v) => Some(v),
            EnvValue::Hidden(_) | EnvValue::Concealed { .. } => None,
        }
    }

    /// Why the value is not shown, for one that is not.
    pub fn unshown(&self) -> Option<&str> {
        match &self.value {
            EnvValue::Known(_) => None,
            EnvValue::Hidden(why) | EnvValue::Concealed { why, .. } => Some(why),
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

/// All variables of an app. Later entries win, as the container sees
/// them; [`lookup`] honours that. Kubernetes gives `env` precedence over
/// `envFrom`, and among `envFrom` sources the last listed wins (core/v1
/// `Container.envFrom`). A chart that turns values into variables puts
/// them in a Secret listed first in `envFrom` (goauthentik/helm
/// charts/authentik/templates/server/deployment.yaml: `secretRef`
/// `authentik.fullname`, then `global.envFrom`, `server.envFrom`), so chart
/// values come lowest: `env` > `envFrom` in listed order > chart values.
pub fn of_app(model: &Model, app: &App, prefixes: &[ValuesPrefix]) -> Vec<EnvVar> {
    let mut vars = Vec::new();
    let ns = model.namespace_of(app.object);
    let refs = Refs {
        model,
        near: app.object,
        ns,
        release_name: model
            .release(app.object)
            .map(|_| release_name(model, app.object)),
    };
    if let Some(release) = model.release(app.object) {
        for p in prefixes {
            if let Some(tree) = release.values.get(&p.key) {
                flatten_prefixed(tree, &p.prefix, &mut Vec::new(), &mut vars);
            }
            for d in &release.deferred {
                if let Some(var) = deferred_var(&refs, d, p) {
                    vars.push(var);
                }
            }
        }
        collect_env_from(&refs, &release.values, &mut vars);
        collect_env_lists(&refs, &release.values, &mut vars);
    } else if let Some(containers) = workload_containers(model.object(app.object)) {
        for c in containers {
            collect_env_from(&refs, c, &mut vars);
            if let Some(env) = c.get("env") {
                push_env_entries(&refs, env, &mut vars);
            }
        }
    }
    vars
}

/// What a reference to a ConfigMap or Secret is resolved against.
struct Refs<'a, 'm> {
    model: &'a Model<'m>,
    near: ObjRef,
    ns: &'a str,
    /// For chart values: the Helm release name, which charts such as
    /// bjw-s app-template let names refer to (`{{ .Release.Name }}-secret`).
    release_name: Option<String>,
}

impl Refs<'_, '_> {
    /// A referenced name as the chart renders it; `None` when it holds a
    /// template expression other than the release name.
    fn name(&self, written: &str) -> Option<String> {
        match &self.release_name {
            Some(release) => with_release_name(written, release),
            None => (!written.contains("{{")).then(|| written.to_string()),
        }
    }

    /// The objects writing ConfigMap or Secret `name`
    /// ([`Model::secret_writers`]); empty when the repository has none.
    fn find(&self, secret: bool, name: &str) -> Vec<ObjRef> {
        match secret {
            true => self.model.secret_writers(self.near, self.ns, name),
            false => self
                .model
                .find(self.near, "", "ConfigMap", self.ns, name)
                .into_iter()
                .collect(),
        }
    }
}

/// helm-controller's release name (`HelmRelease.GetReleaseName`):
/// `spec.releaseName`, else `<targetNamespace>-<name>` when a target
/// namespace is set, else the object's name.
pub(super) fn release_name(model: &Model, r: ObjRef) -> String {
    let obj = model.object(r);
    let spec = |k: &str| obj.root.str_at(&["spec", k]).filter(|s| !s.is_empty());
    match (spec("releaseName"), spec("targetNamespace")) {
        (Some(name), _) => name.to_string(),
        (None, Some(ns)) => format!("{ns}-{}", obj.name()),
        (None, None) => obj.name().to_string(),
    }
}

/// A name written in chart values as the chart renders it, with the
/// release name the one template expression understood; `None` when it
/// holds another.
pub(super) fn with_release_name(written: &str, release: &str) -> Option<String> {
    let name = written
        .replace("{{ .Release.Name }}", release)
        .replace("{{.Release.Name}}", release);
    (!name.contains("{{")).then_some(name)
}

/// The effective value of `name`: the last one set.
pub fn lookup<'a>(vars: &'a [EnvVar], name: &str) -> Option<&'a EnvVar> {
    vars.iter().rev().find(|v| v.name == name)
}

/// Every `env` list or map anywhere in Helm values (charts put them under
/// `global`, `server`, `worker`, `controllers.*.containers.*`, ...).
fn collect_env_lists(refs: &Refs, values: &Node, vars: &mut Vec<EnvVar>) {
    values.walk(&mut |path, node| {
        if matches!(
            path.last(),
            Some(PathSeg::Key("env" | "extraEnv" | "extraEnvVars"))
        ) {
            push_env_entries(refs, node, vars);
        }
    });
}

fn push_env_entries(refs: &Refs, env: &Node, vars: &mut Vec<EnvVar>) {
    match &env.value {
        Value::Seq(items) => {
            for item in items.iter() {
                let Some(name) = item.get("name").and_then(Node::as_str) else {
                    continue;
                };
                vars.push(entry(
                    refs,
                    name,
                    item.get("value"),
                    item.get("valueFrom"),
                    item.span(),
                ));
            }
        }
        // The app-template form: `env: {NAME: value}` or `NAME: {valueFrom: …}`.
        Value::Map(entries) => {
            for (k, v) in entries.iter() {
                let Some(name) = k.as_str() else { continue };
                match &v.value {
                    Value::Map(_) => vars.push(entry(
                        refs,
                        name,
                        v.get("value"),
                        v.get("valueFrom"),
                        k.span(),
                    )),
                    _ => vars.push(entry(refs, name, Some(v), None, k.span())),
                }
            }
        }
        _ => {}
    }
}

fn entry(
    refs: &Refs,
    name: &str,
    value: Option<&Node>,
    value_from: Option<&Node>,
    fallback: Span,
) -> EnvVar {
    match (value.and_then(Node::scalar_text), value_from) {
        (Some(text), _) => EnvVar {
            name: name.to_string(),
            value: EnvValue::Known(text),
            span: value.map_or(fallback, |v| v.span()),
            node: value.cloned(),
            from: None,
            secret: false,
        },
        (None, Some(from)) => value_from_ref(refs, name, from),
        (None, None) => EnvVar {
            name: name.to_string(),
            value: EnvValue::Known(String::new()),
            span: fallback,
            node: value.cloned(),
            from: None,
            secret: false,
        },
    }
}

/// `valueFrom`: a key of a ConfigMap or Secret the repository may hold.
fn value_from_ref(refs: &Refs, name: &str, from: &Node) -> EnvVar {
    let hidden = |why: String| EnvVar {
        name: name.to_string(),
        value: EnvValue::Hidden(why),
        span: from.span(),
        node: None,
        from: None,
        secret: false,
    };
    let (secret, selector) = match (from.get("secretKeyRef"), from.get("configMapKeyRef")) {
        (Some(s), _) => (true, s),
        (None, Some(c)) => (false, c),
        (None, None) => return hidden("from a field or resource reference".to_string()),
    };
    let kind = if secret { "Secret" } else { "ConfigMap" };
    let written = selector.str_at(&["name"]).unwrap_or("");
    let key = selector.str_at(&["key"]).unwrap_or("");
    let Some(source) = refs.name(written) else {
        return hidden(format!(
            "from key {key} of {kind} {written}, a name the chart renders"
        ));
    };
    let writers = refs.find(secret, &source);
    match writers.first() {
        None => match secret
            .then(|| {
                conventions::operator_secret_value(refs.model, refs.near, refs.ns, &source, key)
            })
            .flatten()
        {
            Some(Ok(value)) => EnvVar {
                name: name.to_string(),
                value: EnvValue::Known(value),
                span: from.span(),
                node: None,
                from: Some(format!(
                    "key {key} of Secret {source}, which an operator makes"
                )),
                secret: false,
            },
            Some(Err(why)) => hidden(format!("from key {key} of Secret {source}: {why}")),
            None => hidden(format!(
                "from key {key} of {}",
                refs.model.absent(refs.near, kind, refs.ns, &source)
            )),
        },
        Some(&first) => {
            let holder = refs.model.object(first);
            let written = writers
                .iter()
                .rev()
                .find_map(|&w| refs.model.data_entry(w, key).map(|v| (w, v)));
            match written {
                Some((obj, value)) => keyed(refs.model, name, key, obj, value),
                None => hidden(match refs.model.writers_complete(&writers) {
                    Ok(()) => format!("from key {key} of {}, which has no such key", holder.id()),
                    Err(why) => format!(
                        "from key {key} of {}, which the repository does not show: {why}",
                        holder.id()
                    ),
                }),
            }
        }
    }
}

/// A variable set from one key of a ConfigMap or Secret-like object.
fn keyed(model: &Model, name: &str, key: &str, holder: ObjRef, value: DataValue) -> EnvVar {
    let node = value.node();
    let from = format!("key {key} of {}", model.object(holder).id());
    let value = match value {
        DataValue::Text { text, .. } => EnvValue::Known(text),
        DataValue::Template { template, .. } => {
            match conventions::template_value(model, holder, &template) {
                Some(Ok(derived)) => EnvValue::Known(derived),
                Some(Err(underived)) => EnvValue::Hidden(format!("from {from}, {underived}")),
                None => EnvValue::Hidden(format!("from {from}, {}", data::TEMPLATE)),
            }
        }
        DataValue::Unknown { why, .. } => EnvValue::Hidden(format!("from {from}, {why}")),
        DataValue::Concealed { value, .. } => EnvValue::Concealed {
            why: format!("from {from}, {}", data::CONCEALED),
            value: value.clone(),
        },
        DataValue::Invalid { message, .. } => EnvValue::Hidden(format!("from {from}: {message}")),
    };
    EnvVar {
        name: name.to_string(),
        value,
        span: node.span(),
        node: None,
        from: Some(from),
        // What the snippets show is shown here too: a Secret's or
        // SealedSecret's data is masked, while an ExternalSecret's
        // template literal (`USE_PGBOUNCER: "true"`) is plain text of the
        // repository that its snippet prints anyway; only what was
        // substituted into it from a Secret is hidden.
        secret: match model.object(holder).kind() {
            "ConfigMap" | "ExternalSecret" | "ClusterExternalSecret" => {
                model.sources.is_secret(node)
            }
            _ => true,
        },
    }
}

/// A `valuesFrom` `targetPath` value under a chart's variable prefix
/// that the repository does not hold: what an operator writes into that
/// Secret when it follows from the repository, else hidden with why.
fn deferred_var(
    refs: &Refs,
    d: &crate::source::helm::Deferred,
    p: &ValuesPrefix,
) -> Option<EnvVar> {
    let keys = d.keys()?;
    let (first, rest) = keys.split_first()?;
    if *first != p.key || rest.is_empty() {
        return None;
    }
    let name = prefixed_name(&p.prefix, rest.iter().map(String::as_str));
    let source = format!(
        "key {} of {} {} (valuesFrom targetPath {})",
        d.key, d.kind, d.name, d.path
    );
    let derived = (d.kind == "Secret")
        .then(|| {
            conventions::operator_secret_value(refs.model, refs.near, refs.ns, &d.name, &d.key)
        })
        .flatten();
    let (value, from) = match derived {
        Some(Ok(value)) => (
            EnvValue::Known(value),
            Some(format!("{source}, which an operator makes")),
        ),
        Some(Err(why)) => (EnvValue::Hidden(format!("from {source}: {why}")), None),
        None => (EnvValue::Hidden(format!("from {source}: {}", d.why)), None),
    };
    Some(EnvVar {
        name,
        value,
        span: d.at,
        node: None,
        from,
        secret: false,
    })
}

/// `AUTHENTIK` + `[postgresql, host]` -> `AUTHENTIK_POSTGRESQL__HOST`.
fn prefixed_name<'a>(prefix: &str, path: impl Iterator<Item = &'a str>) -> String {
    format!(
        "{prefix}_{}",
        path.map(str::to_ascii_uppercase)
            .collect::<Vec<_>>()
            .join("__")
    )
}

fn flatten_prefixed<'a>(
    node: &'a Node,
    prefix: &str,
    path: &mut Vec<&'a str>,
    vars: &mut Vec<EnvVar>,
) {
    match &node.value {
        Value::Map(entries) => {
            for (k, v) in entries.iter() {
                let Some(key) = k.as_str() else { continue };
                path.push(key);
                flatten_prefixed(v, prefix, path, vars);
                path.pop();
            }
        }
        Value::Seq(_) => {}
        // An empty value sets nothing: the Authentik chart writes a key
        // only `if $v` (goauthentik/helm charts/authentik/templates/
        // _helpers.tpl `authentik.secret`), so `postgresql.name: ""` leaves
        // the variable to envFrom or the app's default.
        _ if node.is_null() || node.as_str() == Some("") => {}
        _ => {
            let name = prefixed_name(prefix, path.iter().copied());
            vars.push(EnvVar {
                name,
                value: EnvValue::Known(node.scalar_text().unwrap_or_default()),
                span: node.span(),
                node: Some(node.clone()),
                from: None,
                secret: false,
            });
        }
    }
}

/// One `envFrom` source: a ConfigMap or Secret, the prefix its keys get,
/// and the object that holds it in the repository, if any.
struct EnvFromSource<'n> {
    secret: bool,
    name: String,
    prefix: &'n str,
}

fn env_from_sources<'n>(refs: &Refs, holder: &'n Node) -> Vec<EnvFromSource<'n>> {
    let mut out = Vec::new();
    holder.walk(&mut |path, node| {
        if !matches!(path.last(), Some(PathSeg::Key("envFrom"))) {
            return;
        }
        for source in node.as_seq().into_iter().flatten() {
            let (secret, name) = match (
                source.str_at(&["secretRef", "name"]),
                source.str_at(&["configMapRef", "name"]),
            ) {
                (Some(n), _) => (true, n),
                (None, Some(n)) => (false, n),
                (None, None) => continue,
            };
            out.push(EnvFromSource {
                secret,
                name: refs.name(name).unwrap_or_else(|| name.to_string()),
                prefix: source.str_at(&["prefix"]).unwrap_or(""),
            });
        }
    });
    out
}

/// `envFrom` sources contribute the keys the repository shows for them
/// (a Secret's, SealedSecret's or ExternalSecret's keys, with values
/// where the repository holds them).
fn collect_env_from(refs: &Refs, holder: &Node, vars: &mut Vec<EnvVar>) {
    for source in env_from_sources(refs, holder) {
        // Writers of one Secret: the creator's keys, then each Merge
        // writer's on top. Two writers giving one key different values
        // leave it to whichever ESO reconciled last: unknown here.
        // The last variable of each name this source gave: a search of
        // them per key made an `envFrom` of a ConfigMap of 20,000 keys
        // take 5.6 s.
        let mut given: HashMap<String, usize> = HashMap::new();
        for obj in refs.find(source.secret, &source.name) {
            for (key, value) in refs.model.data_entries(obj) {
                let name = format!("{}{key}", source.prefix);
                let var = keyed(refs.model, &name, &key, obj, value);
                let earlier = given.get(&name).map(|&i| &vars[i]);
                let var = match earlier {
                    Some(e) if e.value != var.value || e.from.is_none() => EnvVar {
                        value: EnvValue::Hidden(format!(
                            "from {} and from {}: both write Secret {}, which holds the value of whichever reconciled last",
                            e.from.as_deref().unwrap_or("another writer"),
                            var.from.as_deref().unwrap_or("another writer"),
                            source.name
                        )),
                        ..var
                    },
                    _ => var,
                };
                given.insert(name, vars.len());
                vars.push(var);
            }
        }
    }
}

/// Whether any variable may be set where we cannot see it (a Secret or a
/// ConfigMap outside the repository, or one whose keys the repository
/// does not all show): a rule that needs a variable to be absent cannot
/// be sure then. The text names the source and why.
pub fn has_hidden_sources(model: &Model, app: &App) -> Option<String> {
    let ns = model.namespace_of(app.object);
    let refs = Refs {
        model,
        near: app.object,
        ns,
        release_name: model
            .release(app.object)
            .map(|_| release_name(model, app.object)),
    };
    let holder = match model.release(app.object) {
        Some(r) => r.values.clone(),
        None => Node::clone(&model.object(app.object).root),
    };
    env_from_sources(&refs, &holder)
        .into_iter()
        .find_map(|source| {
            let kind = if source.secret { "Secret" } else { "ConfigMap" };
            let writers = refs.find(source.secret, &source.name);
            match writers.first().copied() {
                None if made_by_bucket_claim(model, app.object, ns, &source.name) => None,
                None => Some(format!(
                    "envFrom {},",
                    model.absent(app.object, kind, ns, &source.name)
                )),
                Some(obj) => model.writers_complete(&writers).err().map(|why| {
                    format!(
                        "envFrom {kind} {} ({}: {why})",
                        source.name,
                        model.object(obj).id()
                    )
                }),
            }
        })
}

/// Whether an ObjectBucketClaim of that name makes the ConfigMap or Secret
/// in `namespace`: the bucket provisioner (kube-object-storage
/// lib-bucket-provisioner, which Rook's and NooBaa's use) creates both,
/// named after the claim in its namespace, holding only the bucket's
/// `BUCKET_HOST`, `BUCKET_NAME`, `BUCKET_PORT`, `BUCKET_REGION`,
/// `BUCKET_SUBREGION` and its `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`:
/// none of an application's own settings.
fn made_by_bucket_claim(model: &Model, near: ObjRef, namespace: &str, name: &str) -> bool {
    model
        .find(
            near,
            "objectbucket.io",
            "ObjectBucketClaim",
            namespace,
            name,
        )
        .is_some()
}
