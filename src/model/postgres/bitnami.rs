//! The Bitnami `postgresql` (and `postgresql-ha`) Helm chart: installed
//! on its own, or bundled as a subchart of an app's chart under a values
//! key (`postgresql`).

use super::{IgnoredCopy, ParameterForm, ParameterHome, ParameterMap, PostgresOperator};
use crate::model::database::Database;
use crate::model::replication::Synchronous;
use crate::model::storage::pvc_class;
use crate::model::{Model, ObjRef, Unknown, is_helm_release};
use crate::yaml::Node;

pub struct Bitnami;

impl PostgresOperator for Bitnami {
    fn name(&self) -> &'static str {
        "Bitnami chart"
    }

    fn declared_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[("helm.toolkit.fluxcd.io", "HelmRelease")]
    }

    fn declares(&self, model: &Model, r: ObjRef) -> bool {
        is_helm_release(model.object(r)) && is_bitnami_postgres(model, r)
    }

    /// One primary, plus `readReplicas.replicaCount` in replication
    /// architecture.
    fn instances(&self, model: &Model, object: ObjRef, values_key: &str) -> i64 {
        model
            .release(object)
            .map(|r| {
                let values = sub_values(&r.values, values_key);
                let replication =
                    values.and_then(|v| v.str_at(&["architecture"])) == Some("replication");
                let replicas = values
                    .and_then(|v| v.path(&["readReplicas", "replicaCount"]))
                    .and_then(|n| n.scalar_text())
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(1);
                if replication { 1 + replicas } else { 1 }
            })
            .unwrap_or(1)
    }

    /// The Service is the chart's fullname.
    fn by_service(&self, model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<ObjRef> {
        model
            .of_kind("helm.toolkit.fluxcd.io", "HelmRelease")
            .find(|&r| {
                is_bitnami_postgres(model, r)
                    && model.object(r).same_tree(model.object(near))
                    && model.namespace_of(r) == ns
                    && fullname(model, r) == service
            })
    }

    /// The chart's configuration blocks ([`conf_blocks`]), unless the
    /// image it runs does not read them ([`foreign_image`]).
    fn parameter_maps(&self, model: &Model, db: &Database) -> Vec<ParameterMap> {
        match release_image(model, db) {
            Some(_) => Vec::new(),
            None => conf_blocks(model, db),
        }
    }

    /// A line of the chart's configuration blocks that an image of
    /// another entrypoint does not read ([`foreign_image`]).
    fn ignored_copy<'m>(
        &self,
        model: &'m Model,
        db: &Database,
        name: &str,
    ) -> Option<IgnoredCopy<'m>> {
        let image = release_image(model, db)?;
        conf_blocks(model, db).into_iter().find_map(|m| {
            let (_, node) = crate::model::settings::lookup(&m.node, name)?;
            Some(IgnoredCopy {
                path: m.path,
                at: node.span(),
                why: format!("is not read by image {image}, whose entrypoint is not Bitnami's"),
                entries: Vec::new(),
            })
        })
    }

    /// Helm replaces a string value, it does not add to it: a block
    /// written here drops what the parent chart's own default block
    /// holds, so that goes in too.
    fn parameter_home<'m>(&self, model: &Model<'m>, db: &Database) -> Option<ParameterHome<'m>> {
        if let Some(image) = release_image(model, db) {
            let at = dotted(&db.values_key, "primary.args");
            return Some(ParameterHome::Undecided(format!(
                "the chart runs image {image}, whose entrypoint reads neither \
                 primary.extendedConfiguration nor primary.configuration (Bitnami's image \
                 scripts do): pass the setting to the server as [\"-c\", \"name=value\"] in {at}"
            )));
        }
        let mut path = vec!["spec".to_string(), "values".to_string()];
        path.extend(
            db.values_key
                .split('.')
                .filter(|k| !k.is_empty())
                .map(str::to_string),
        );
        path.push("primary".to_string());
        Some(ParameterHome::ConfBlock {
            path,
            key: "extendedConfiguration",
            keep: chart_extended_configuration(model, db),
        })
    }

    fn init_sql_home(&self) -> Option<&'static str> {
        Some("put the statement into primary.initdb.scripts (runs once, on an empty volume)")
    }

    /// Chart 11+ keeps persistence under `primary`; older charts (still
    /// pinned as Authentik's subchart) at the top.
    fn requested_class(&self, model: &Model, db: &Database) -> Result<Option<Node>, Unknown> {
        let release = model.release(db.object);
        let values = release.and_then(|r| sub_values(&r.values, &db.values_key));
        let Some(values) = values else {
            return Ok(None);
        };
        let persistence = |key: &str| {
            values
                .path(&["primary", "persistence", key])
                .or_else(|| values.path(&["persistence", key]))
                .filter(|n| n.scalar_text().is_some_and(|s| !s.is_empty()))
        };
        if let Some(claim) = persistence("existingClaim").and_then(Node::as_str) {
            return pvc_class(model, db.object, model.namespace_of(db.object), claim);
        }
        Ok(super::nonempty(
            persistence("storageClass")
                .or_else(|| values.path(&["global", "storageClass"]))
                .or_else(|| values.path(&["global", "defaultStorageClass"]))
                .or_else(|| release.and_then(|r| r.values.path(&["global", "storageClass"]))),
        ))
    }

    /// `replication.numSynchronousReplicas` with
    /// `replication.synchronousCommit` other than off (chart values.yaml),
    /// in replication architecture (counted in `instances`).
    fn synchronous(&self, model: &Model, db: &Database) -> Option<Synchronous> {
        let r = model.release(db.object)?;
        let values = sub_values(&r.values, &db.values_key)?;
        let commit = values
            .str_at(&["replication", "synchronousCommit"])
            .unwrap_or("off");
        if commit == "off" {
            return None;
        }
        let n = values.path(&["replication", "numSynchronousReplicas"])?;
        crate::model::replication::positive(n).then(|| Synchronous {
            node: n.clone(),
            setting: format!(
                "replication.numSynchronousReplicas: {}",
                n.scalar_text().unwrap_or_default()
            ),
        })
    }
}

/// The database an app's chart bundles under values key `key`, when
/// `<key>.enabled` is true.
pub fn bundled(model: &Model, app: ObjRef, key: &str) -> Option<Database> {
    let release = model.release(app)?;
    let enabled = release.values.path(&[key, "enabled"]);
    if !enabled.and_then(Node::as_bool_lenient).unwrap_or(false) {
        return None;
    }
    let mut db = Database::new(model, super::Provider(&Bitnami), app, key.to_string());
    db.host = enabled.cloned();
    Some(db)
}

/// The values of a bundled subchart, or the release's own values.
fn sub_values<'a>(values: &'a Node, key: &str) -> Option<&'a Node> {
    if key.is_empty() {
        Some(values)
    } else {
        values.get(key)
    }
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

/// `primary.extendedConfiguration` (appended to the chart's
/// postgresql.conf) before `primary.configuration` (which replaces it).
fn conf_blocks(model: &Model, db: &Database) -> Vec<ParameterMap> {
    let Some(release) = model.release(db.object) else {
        return Vec::new();
    };
    let Some(values) = sub_values(&release.values, &db.values_key) else {
        return Vec::new();
    };
    let prefix = if db.values_key.is_empty() {
        "spec.values".to_string()
    } else {
        format!("spec.values.{}", db.values_key)
    };
    ["extendedConfiguration", "configuration"]
        .iter()
        .filter_map(|k| {
            values.path(&["primary", k]).cloned().map(|n| {
                ParameterMap::new(n, format!("{prefix}.primary.{k}"), ParameterForm::ConfBlock)
            })
        })
        .collect()
}

/// [`foreign_image`] of the release's values for the database.
fn release_image(model: &Model, db: &Database) -> Option<String> {
    let release = model.release(db.object)?;
    foreign_image(sub_values(&release.values, &db.values_key)?).map(str::to_string)
}

/// The server image a Bitnami PostgreSQL chart's values swap in when it
/// is the official `postgres` or one built on it (`image.repository`, as
/// repositories did when Bitnami's images moved to `bitnamilegacy`). Its
/// entrypoint (docker-library/postgres `docker-entrypoint.sh`) starts the
/// server on the postgresql.conf initdb wrote into the data directory; the
/// chart's `primary.extendedConfiguration` (mounted into
/// /bitnami/postgresql/conf/conf.d) and `primary.configuration` are read
/// only by Bitnami's image scripts (bitnami/containers
/// `libpostgresql.sh`), so they take no effect.
fn foreign_image(values: &Node) -> Option<&str> {
    let repository = values.str_at(&["image", "repository"])?;
    super::plain::official_based(repository).then_some(repository)
}

/// `key.rest`, or `rest` for a standalone release.
fn dotted(key: &str, rest: &str) -> String {
    if key.is_empty() {
        rest.to_string()
    } else {
        format!("{key}.{rest}")
    }
}

/// Helm's fullname template: `fullnameOverride`, else the release name
/// when it already contains the chart name, else `<release>-<chart>`.
fn fullname(model: &Model, r: ObjRef) -> String {
    let obj = model.object(r);
    let release_name = obj
        .root
        .str_at(&["spec", "releaseName"])
        .unwrap_or(obj.name());
    postgresql_fullname(release_name, model.release(r).map(|rel| &rel.values))
}

/// The Service of the subchart an app's chart bundles under values key
/// `key`: the same fullname template, over the parent's release name and
/// the subchart's values.
pub fn bundled_service(model: &Model, app: ObjRef, key: &str) -> String {
    let values = model.release(app).and_then(|r| r.values.get(key));
    postgresql_fullname(&crate::model::env::release_name(model, app), values)
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

/// The lines a parent chart's own values put in its Bitnami PostgreSQL
/// subchart's `primary.extendedConfiguration`: goauthentik/helm
/// charts/authentik/values.yaml sets `max_connections = 500` there, which
/// a block of the user's own would silently take back to Postgres' 100.
/// The fix keeps them, each with a comment that says why it is there.
fn chart_extended_configuration(model: &Model, db: &Database) -> &'static [&'static str] {
    let chart = model
        .release(db.object)
        .and_then(|r| r.chart.as_ref())
        .and_then(Node::as_str);
    match (chart, db.values_key.as_str()) {
        (Some("authentik"), "postgresql") => &[
            "# kept from the authentik chart's values, which this block replaces",
            "max_connections = 500",
        ],
        _ => &[],
    }
}
