//! The Postgres clusters in the repo, whatever runs them, and which one an
//! app uses: from the host the app is given, through the Service name each
//! operator creates, to the object that declares the cluster.

use super::app::App;
use super::env::{self, EnvValue};
use super::postgres::{OPERATORS, Provider, bitnami, declaring};
use super::{Model, ObjRef, Unknown};
use crate::yaml::Node;

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
    /// The cluster `provider` runs, declared by `object`.
    pub fn new(model: &Model, provider: Provider, object: ObjRef, values_key: String) -> Database {
        Database {
            instances: provider.instances(model, object, &values_key),
            provider,
            object,
            values_key,
            host: None,
        }
    }

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
    model
        .memo(|| Declared::of(model))
        .0
        .iter()
        .map(|&(i, provider)| Database::new(model, provider, i, String::new()))
        .collect()
}

/// The objects that declare a Postgres cluster, with the operator of
/// each, in model order: each `postgres` step asked every operator about
/// every object again (3.4 M instructions a step on
/// joryirving__home-ops). Only objects of a kind some operator declares
/// are asked.
struct Declared(Vec<(ObjRef, Provider)>);

impl Declared {
    fn of(model: &Model) -> Declared {
        let mut candidates: Vec<ObjRef> = OPERATORS
            .iter()
            .flat_map(|o| o.declared_kinds())
            .flat_map(|&(group, kind)| model.of_kind(group, kind))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        Declared(
            candidates
                .into_iter()
                .filter_map(|i| Some((i, declaring(model, i)?)))
                .collect(),
        )
    }
}

/// The database `app` uses, or why it cannot be told. The host the app
/// reads wins ([`env::of_app`] orders its sources as the container sees
/// them); a chart-bundled Postgres still `enabled: true` is the database
/// only when nothing overrides the host, or the host names its Service:
/// a subchart kept running as a rollback copy is not the one in use.
pub fn of_app(model: &Model, app: &App, query: &HostQuery) -> Result<Database, Unknown> {
    let vars = env::of_app(model, app, query.prefixes);
    let host_var = query.env.iter().find_map(|name| env::lookup(&vars, name));
    let bundled = query
        .bundled
        .and_then(|key| bitnami::bundled(model, app.object, key));
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
            .is_some_and(|s| s == bitnami::bundled_service(model, app.object, &db.values_key))
    {
        return Ok(db);
    }
    let mut db = by_service(model, app.object, service, namespace)
        .ok_or_else(|| Unknown(not_matched(model, app.object, &shown, service, namespace)))?;
    // A host from a Secret is labelled where that Secret writes it.
    db.host = var
        .node
        .clone()
        .or_else(|| Some(Node::synthetic_str(host, var.span)));
    Ok(db)
}

/// The clusters an app's environment names, whatever rule asks: a
/// variable whose name says it holds a host (`DB_HOST`, `PGHOST`,
/// `AUTHENTIK_POSTGRESQL__HOST`) or a `postgres://` connection URI
/// (libpq's URI form, postgresql.org/docs/current/libpq-connect.html
/// 34.1.1.2), and a chart-bundled Postgres still enabled. Values the
/// repository does not hold name nothing. Each cluster once.
pub fn named_in_env(model: &Model, app: &App) -> Vec<Database> {
    let mut found: Vec<Database> = Vec::new();
    for var in env::of_app(model, app, &[]) {
        let Some(value) = var.known() else { continue };
        let host = match uri_host(value) {
            Some(host) => host,
            None if var.name.to_ascii_uppercase().contains("HOST") => value.trim(),
            None => continue,
        };
        let (service, namespace) = split_host(host, model.namespace_of(app.object));
        if let Some(db) = by_service(model, app.object, service, namespace)
            && !found.iter().any(|d| d.object == db.object)
        {
            found.push(db);
        }
    }
    if let Some(db) = bitnami::bundled(model, app.object, "postgresql")
        && !found.iter().any(|d| d.object == db.object)
    {
        found.push(db);
    }
    found
}

/// The host of a `postgres://` or `postgresql://` URI: after the user
/// info, before the path or query.
fn uri_host(value: &str) -> Option<&str> {
    let rest = value
        .trim()
        .strip_prefix("postgresql://")
        .or_else(|| value.trim().strip_prefix("postgres://"))?;
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    (!host.is_empty()).then_some(host)
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

/// Why no cluster `near` sees makes Service `service`: one that another
/// Flux root applies (a repository of several clusters) is named as that
/// root's, never said to be missing from the repository.
fn not_matched(model: &Model, near: ObjRef, shown: &str, service: &str, ns: &str) -> String {
    let trees = model.memo(|| TreeSamples::of(model));
    let tree = model.object(near).tree;
    let elsewhere = trees
        .0
        .iter()
        .filter(|&&(t, _)| Some(t) != tree)
        .find_map(|&(_, sample)| by_service(model, sample, service, ns));
    match elsewhere {
        Some(db) => {
            let other = model.object(db.object);
            let mut why = format!(
                "host {shown} names {} cluster {}, which is in the repository only under {}, which another Flux root applies, so it is taken for another cluster than {}'s",
                db.provider.as_str(),
                other.id(),
                super::applier(other),
                model.object(near).id()
            );
            // The same Flux Kustomization may be applied under this root
            // too, and not render here: that is why the cluster is absent.
            let by = other
                .chain
                .iter()
                .rfind(|s| s.kind == crate::source::StepKind::FluxKustomization);
            if let Some(render) = model.flux.iter().find(|r| {
                Some(r.tree) == tree
                    && by.is_some_and(|s| *s.detail == *format!("{}/{}", r.namespace, r.name))
                    && !r.outcome.is_complete()
            }) {
                why.push_str(&format!(
                    "; under this one's root it is {}: {}",
                    render.outcome.key(),
                    render.outcome.why()
                ));
            }
            why
        }
        None => format!("host {shown} matches no Postgres cluster in the repository"),
    }
}

/// One object of each Flux tree, to look a cluster up as that tree sees
/// it: made once per model, since a scan of every object per unmatched
/// host made many such apps quadratic.
struct TreeSamples(Vec<(u32, ObjRef)>);

impl TreeSamples {
    fn of(model: &Model) -> TreeSamples {
        let mut seen: Vec<(u32, ObjRef)> = Vec::new();
        for (i, o) in model.objects.iter().enumerate() {
            if let Some(t) = o.tree
                && !seen.iter().any(|&(s, _)| s == t)
            {
                seen.push((t, i));
            }
        }
        TreeSamples(seen)
    }
}

/// The cluster behind a Service name, by each operator's naming scheme.
fn by_service(model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<Database> {
    OPERATORS.iter().find_map(|o| {
        let r = o.by_service(model, near, service, ns)?;
        Some(Database::new(model, Provider(*o), r, String::new()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operator's clusters are found through its declared kinds,
    /// as asking every object found them: a kind missing from an
    /// operator's list loses its clusters.
    #[test]
    fn clusters_are_found_by_their_operators_kinds_as_by_every_object() {
        let files = [
            (
                "zalando.yaml",
                "apiVersion: acid.zalan.do/v1\nkind: postgresql\nmetadata: {name: z, namespace: db}\n",
            ),
            (
                "cnpg.yaml",
                "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {name: c, namespace: db}\n",
            ),
            (
                "crunchy.yaml",
                "apiVersion: postgres-operator.crunchydata.com/v1beta1\nkind: PostgresCluster\nmetadata: {name: k, namespace: db}\n",
            ),
            (
                "bitnami.yaml",
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: b, namespace: db}\nspec: {chart: {spec: {chart: postgresql}}}\n",
            ),
            (
                "sts.yaml",
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: s, namespace: db}\nspec: {template: {spec: {containers: [{name: pg, image: 'postgres:16'}]}}}\n",
            ),
            (
                "deploy.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: db}\nspec: {template: {spec: {containers: [{name: pg, image: 'postgres:16'}]}}}\n",
            ),
            (
                "other.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: o, namespace: db}\n",
            ),
        ];
        let repo = crate::source::test_repo::TestRepo::new(&files);
        let model = Model::from_parts(&repo.objects, &repo.sources);
        let found: Vec<_> = Declared::of(&model)
            .0
            .into_iter()
            .map(|(i, p)| (i, p.0.name()))
            .collect();
        let every: Vec<_> = (0..model.objects.len())
            .filter_map(|i| Some((i, declaring(&model, i)?.0.name())))
            .collect();
        assert_eq!(found, every);
        assert_eq!(found.len(), 6, "{found:?}");
    }

    #[test]
    fn the_host_of_a_connection_uri() {
        assert_eq!(
            uri_host("postgresql://user:secret@pg-rw.db:5432/app?sslmode=require"),
            Some("pg-rw.db:5432")
        );
        assert_eq!(uri_host("postgres://pg-rw/app"), Some("pg-rw"));
        assert_eq!(uri_host("postgres:///app"), None);
        assert_eq!(uri_host("pg-rw.db"), None);
    }
}
