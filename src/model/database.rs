//! The Postgres clusters in the repo, whatever runs them, and which one an
//! app uses: from the host the app is given, through the Service name each
//! operator creates, to the object that declares the cluster.

use super::app::{App, workload_containers};
use super::env::{self, EnvValue};
use super::{Model, ObjRef, Unknown, is_helm_release};
use crate::yaml::Node;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    /// Zalando postgres-operator, `acid.zalan.do` `postgresql`.
    Zalando,
    /// CloudNativePG `Cluster`.
    Cnpg,
    /// Crunchy PGO v5 `PostgresCluster`.
    Crunchy,
    /// Bitnami chart, standalone or as an app chart's subchart.
    Bitnami,
    /// A StatefulSet running a postgres image.
    StatefulSet,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Zalando => "Zalando postgres-operator",
            Provider::Cnpg => "CloudNativePG",
            Provider::Crunchy => "Crunchy PGO",
            Provider::Bitnami => "Bitnami chart",
            Provider::StatefulSet => "StatefulSet",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Database {
    pub provider: Provider,
    /// The object that declares the cluster.
    pub object: ObjRef,
    /// For a chart-bundled database: the values key of the subchart
    /// (`postgresql`); empty for a standalone release.
    pub values_key: String,
    /// Where the app names this database (its host setting), if known.
    pub host: Option<Node>,
    /// Number of Postgres instances (primary plus replicas) declared.
    pub instances: i64,
}

impl Database {
    pub fn name<'m>(&self, model: &Model<'m>) -> &'m str {
        model.object(self.object).name()
    }
}

/// How a rule tells where an app's database host is set.
#[derive(Clone, Debug, Default)]
pub struct HostQuery<'a> {
    /// Variables holding the host (`AUTHENTIK_POSTGRESQL__HOST`).
    pub env: &'a [String],
    /// Values key of a chart-bundled Bitnami Postgres (`postgresql`),
    /// used when `<key>.enabled` is true.
    pub bundled: Option<&'a str>,
    pub prefixes: &'a [env::ValuesPrefix],
}

/// Every Postgres cluster the repo declares.
pub fn all(model: &Model) -> Vec<Database> {
    let mut out = Vec::new();
    for (i, obj) in model.objects.iter().enumerate() {
        let provider = match (obj.group(), obj.kind()) {
            ("acid.zalan.do", "postgresql") => Provider::Zalando,
            ("postgresql.cnpg.io", "Cluster") => Provider::Cnpg,
            ("postgres-operator.crunchydata.com", "PostgresCluster") => Provider::Crunchy,
            ("apps", "StatefulSet") if runs_postgres(obj) => Provider::StatefulSet,
            _ if is_helm_release(obj) && is_bitnami_postgres(model, i) => Provider::Bitnami,
            _ => continue,
        };
        out.push(declared(model, provider, i, String::new()));
    }
    out
}

fn declared(model: &Model, provider: Provider, object: ObjRef, values_key: String) -> Database {
    let root = &model.object(object).root;
    let int_at = |path: &[&str]| {
        root.path(path)
            .and_then(|n| n.scalar_text())
            .and_then(|t| t.parse().ok())
    };
    let instances = match provider {
        Provider::Zalando => int_at(&["spec", "numberOfInstances"]).unwrap_or(1),
        Provider::Cnpg => int_at(&["spec", "instances"]).unwrap_or(1),
        Provider::Crunchy => root
            .path(&["spec", "instances"])
            .and_then(Node::as_seq)
            .map(|sets| {
                sets.iter()
                    .map(|s| {
                        s.get("replicas")
                            .and_then(|r| r.scalar_text())
                            .and_then(|t| t.parse().ok())
                            .unwrap_or(1)
                    })
                    .sum()
            })
            .unwrap_or(1),
        Provider::StatefulSet => int_at(&["spec", "replicas"]).unwrap_or(1),
        Provider::Bitnami => model
            .release(object)
            .map(|r| {
                let values = sub_values(&r.values, &values_key);
                let replication =
                    values.and_then(|v| v.str_at(&["architecture"])) == Some("replication");
                let replicas = values
                    .and_then(|v| v.path(&["readReplicas", "replicaCount"]))
                    .and_then(|n| n.scalar_text())
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(1);
                if replication { 1 + replicas } else { 1 }
            })
            .unwrap_or(1),
    };
    Database {
        provider,
        object,
        values_key,
        host: None,
        instances,
    }
}

/// The values of a bundled subchart, or the release's own values.
pub fn sub_values<'a>(values: &'a Node, key: &str) -> Option<&'a Node> {
    if key.is_empty() {
        Some(values)
    } else {
        values.get(key)
    }
}

fn runs_postgres(obj: &crate::source::Object) -> bool {
    workload_containers(obj).is_some_and(|cs| {
        cs.iter().any(|c| {
            c.str_at(&["image"]).is_some_and(|i| {
                let repo = super::app::split_image(i).repository;
                repo.rsplit('/')
                    .next()
                    .is_some_and(|last| last == "postgres" || last == "postgresql")
            })
        })
    })
}

fn is_bitnami_postgres(model: &Model, r: ObjRef) -> bool {
    model
        .release(r)
        .and_then(|rel| {
            rel.chart
                .as_ref()
                .and_then(Node::as_str)
                .map(str::to_string)
        })
        .is_some_and(|c| c == "postgresql" || c == "postgresql-ha")
}

/// The database `app` uses, or why it cannot be told. The host the app
/// reads wins ([`env::of_app`] orders its sources as the container sees
/// them); a chart-bundled Postgres still `enabled: true` is the database
/// only when nothing overrides the host, or the host names its Service:
/// a subchart kept running as a rollback copy is not the one in use.
pub fn of_app(model: &Model, app: &App, query: &HostQuery) -> Result<Database, Unknown> {
    let vars = env::of_app(model, app, query.prefixes);
    let host_var = query.env.iter().find_map(|name| env::lookup(&vars, name));
    let bundled = bundled(model, app, query);
    let Some(var) = host_var else {
        let names = query.env.join(", ");
        let hidden = env::has_hidden_sources(model, app);
        return match (bundled, hidden) {
            (Some(db), None) => Ok(db),
            (Some(db), Some(src)) => Err(Unknown(format!(
                "{names} is not set in the repository, so {} of {} would be the database, but {src} could set it",
                db.values_key,
                model.object(db.object).id()
            ))),
            (None, Some(src)) => Err(Unknown(format!(
                "none of {names} is set in the repository; {src} could set it"
            ))),
            (None, None) => Err(Unknown(format!("none of {names} is set"))),
        };
    };
    let host = match &var.value {
        EnvValue::Known(h) if !h.is_empty() => h.clone(),
        EnvValue::Known(_) => return Err(Unknown(format!("{} is empty", var.name))),
        EnvValue::Hidden(why) | EnvValue::Concealed { why, .. } => {
            return Err(Unknown(format!("{} is set {why}", var.name)));
        }
    };
    let shown = match &var.from {
        Some(from) => format!("{host} ({} from {from})", var.name),
        None => host.clone(),
    };
    let ns = model.namespace_of(app.object);
    let (service, namespace) = split_host(&host, ns);
    if let Some(db) = bundled
        && namespace == ns
        && env::with_release_name(service, &env::release_name(model, app.object))
            .is_some_and(|s| s == bundled_service(model, app.object, &db.values_key))
    {
        return Ok(db);
    }
    let mut db = by_service(model, app.object, service, namespace).ok_or_else(|| {
        Unknown(format!(
            "host {shown} matches no Postgres cluster in the repository"
        ))
    })?;
    // A host from a Secret is labelled where that Secret writes it.
    db.host = var
        .node
        .clone()
        .or_else(|| Some(Node::synthetic_str(host, var.span)));
    Ok(db)
}

/// The chart-bundled Postgres of `app`'s release, when its subchart is
/// enabled; labelled at `<key>.enabled`.
fn bundled(model: &Model, app: &App, query: &HostQuery) -> Option<Database> {
    let key = query.bundled?;
    let enabled = model.release(app.object)?.values.path(&[key, "enabled"])?;
    if !enabled.as_bool_lenient().unwrap_or(false) {
        return None;
    }
    let mut db = declared(model, Provider::Bitnami, app.object, key.to_string());
    db.host = Some(enabled.clone());
    Some(db)
}

/// `svc`, `svc.ns`, `svc.ns.svc`, `svc.ns.svc.cluster.local`, each maybe
/// with `:port` (ext-postgres-operator's POSTGRES_HOST carries one).
fn split_host<'a>(host: &'a str, default_ns: &'a str) -> (&'a str, &'a str) {
    let host = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let mut parts = host.split('.');
    let service = parts.next().unwrap_or(host);
    match parts.next() {
        Some(ns) if ns != "svc" => (service, ns),
        _ => (service, default_ns),
    }
}

/// The cluster behind a Service name, by each operator's naming scheme.
fn by_service(model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<Database> {
    let strip = |suffixes: &[&str]| -> Vec<String> {
        suffixes
            .iter()
            .filter_map(|s| service.strip_suffix(s).map(str::to_string))
            .collect()
    };
    let candidates: [(Provider, &str, &str, Vec<String>); 3] = [
        (
            Provider::Zalando,
            "acid.zalan.do",
            "postgresql",
            [vec![service.to_string()], strip(&["-repl", "-pooler"])].concat(),
        ),
        (
            Provider::Cnpg,
            "postgresql.cnpg.io",
            "Cluster",
            strip(&["-rw", "-ro", "-r"]),
        ),
        (
            Provider::Crunchy,
            "postgres-operator.crunchydata.com",
            "PostgresCluster",
            strip(&["-primary", "-ha", "-replicas", "-pgbouncer"]),
        ),
    ];
    for (provider, group, kind, names) in candidates {
        for name in names {
            if let Some(r) = model.find(near, group, kind, ns, &name) {
                return Some(declared(model, provider, r, String::new()));
            }
        }
    }
    // A CNPG Pooler's Service carries the Pooler's name.
    if let Some(p) = model.find(near, "postgresql.cnpg.io", "Pooler", ns, service)
        && let Some(cluster) = model.object(p).root.str_at(&["spec", "cluster", "name"])
        && let Some(r) = model.find(near, "postgresql.cnpg.io", "Cluster", ns, cluster)
    {
        return Some(declared(model, Provider::Cnpg, r, String::new()));
    }
    // Bitnami: the Service is the chart's fullname.
    for r in model.of_kind("helm.toolkit.fluxcd.io", "HelmRelease") {
        if is_bitnami_postgres(model, r)
            && model.object(r).same_tree(model.object(near))
            && model.namespace_of(r) == ns
            && bitnami_fullname(model, r) == service
        {
            return Some(declared(model, Provider::Bitnami, r, String::new()));
        }
    }
    model
        .find(near, "apps", "StatefulSet", ns, service)
        .filter(|r| runs_postgres(model.object(*r)))
        .map(|r| declared(model, Provider::StatefulSet, r, String::new()))
}

/// Helm's fullname template: `fullnameOverride`, else the release name
/// when it already contains the chart name, else `<release>-<chart>`.
fn bitnami_fullname(model: &Model, r: ObjRef) -> String {
    let obj = model.object(r);
    let release_name = obj
        .root
        .str_at(&["spec", "releaseName"])
        .unwrap_or(obj.name());
    postgresql_fullname(release_name, model.release(r).map(|rel| &rel.values))
}

/// The Service of a bundled Bitnami subchart under values key `key`: the
/// same fullname template, over the parent's release name and the
/// subchart's values.
fn bundled_service(model: &Model, app: ObjRef, key: &str) -> String {
    let values = model.release(app).and_then(|r| r.values.get(key));
    postgresql_fullname(&env::release_name(model, app), values)
}

fn postgresql_fullname(release_name: &str, values: Option<&Node>) -> String {
    if let Some(o) = values.and_then(|v| v.str_at(&["fullnameOverride"])) {
        return o.to_string();
    }
    if release_name.contains("postgresql") {
        release_name.to_string()
    } else {
        format!("{release_name}-postgresql")
    }
}
