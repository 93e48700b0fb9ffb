//! Crunchy PGO v5: a `PostgresCluster`
//! (`postgres-operator.crunchydata.com`) per cluster, run by Patroni.

use super::{
    ApiResource, Derived, IgnoredCopy, Naming, ParameterHome, ParameterMap, PostgresOperator, maps_at,
    named_by_service, secret, strip,
};
use crate::model::app::{self, App, AppQuery};
use crate::model::database::Database;
use crate::model::replication::{self, Synchronous};
use crate::model::{Model, ObjRef, Unknown};
use crate::source::Object;
use crate::yaml::Node;

const KIND: (&str, &str) = ("postgres-operator.crunchydata.com", "PostgresCluster");

/// The operator's image, for its release when no `pgo` chart installs it.
const PGO_IMAGE: &str = "registry.developers.crunchydata.com/crunchydata/postgres-operator";

pub struct Crunchy;

impl PostgresOperator for Crunchy {
    fn name(&self) -> &'static str {
        "Crunchy PGO"
    }

    fn declared_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[KIND]
    }

    fn declares(&self, model: &Model, r: ObjRef) -> bool {
        model.object(r).is(KIND.0, KIND.1)
    }

    /// The replicas of every instance set.
    /// One per instance set without `replicas`, which defaults to 1.
    fn instances(&self, model: &Model, object: ObjRef, _values_key: &str) -> i64 {
        instance_sets(model, object)
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
            .unwrap_or(1)
    }

    /// Each set's `replicas`, or the set itself where it takes the default.
    fn instances_written<'m>(&self, model: &Model<'m>, object: ObjRef) -> Vec<&'m Node> {
        instance_sets(model, object)
            .map(|sets| sets.iter().map(|s| s.get("replicas").unwrap_or(s)).collect())
            .unwrap_or_default()
    }

    fn by_service(&self, model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<ObjRef> {
        let names = strip(service, &["-primary", "-ha", "-replicas", "-pgbouncer"]);
        named_by_service(model, near, KIND, names, ns)
    }

    fn parameter_maps(&self, model: &Model, db: &Database) -> Vec<ParameterMap> {
        maps_at(model, db, self.parameter_fields())
    }

    /// `spec.config.parameters` (PGO 5.7+) first, where a new setting
    /// belongs; the Patroni dynamic configuration of older releases after.
    fn parameter_fields(&self) -> &'static [&'static [&'static str]] {
        &[
            &["spec", "config", "parameters"],
            &[
                "spec",
                "patroni",
                "dynamicConfiguration",
                "postgresql",
                "parameters",
            ],
        ]
    }

    /// `spec.config.parameters` from PGO 5.7, the Patroni dynamic
    /// configuration before (the CRD of older releases has no
    /// `spec.config`): the operator's release decides, read from its
    /// HelmRelease (chart `pgo`) or image in the cluster's tree.
    fn parameter_home<'m>(&self, model: &Model<'m>, db: &Database) -> Option<ParameterHome<'m>> {
        let [config, patroni] = self.parameter_fields() else {
            return None;
        };
        let req = semver::VersionReq::parse(">=5.7").ok()?;
        let near = model.object(db.object);
        let operators: Vec<App> = app::find(
            model,
            &AppQuery {
                charts: &["pgo".to_string()],
                images: &[PGO_IMAGE.to_string()],
            },
        )
        .into_iter()
        .filter(|a| model.object(a.object).same_tree(near))
        .collect();
        let Some(operator) = operators.first() else {
            return Some(ParameterHome::Undecided(
                "the Crunchy PGO release is not in the repository: spec.config.parameters \
                 needs PGO 5.7 or later, older releases read \
                 spec.patroni.dynamicConfiguration.postgresql.parameters"
                    .into(),
            ));
        };
        let decided = operator.releases().map(|r| (r.meet(&req), r.describe()));
        Some(match decided {
            Ok((Some(true), _)) => ParameterHome::Map(config),
            Ok((Some(false), _)) => ParameterHome::Map(patroni),
            Ok((None, shown)) | Err(shown) => ParameterHome::Undecided(format!(
                "which Crunchy PGO release runs is unknown ({} {shown}): \
                 spec.config.parameters needs 5.7 or later, older releases read \
                 spec.patroni.dynamicConfiguration.postgresql.parameters",
                model.object(operator.object).id()
            )),
        })
    }

    fn init_sql_home(&self) -> Option<&'static str> {
        Some("put the statement into the ConfigMap that spec.databaseInitSQL names (runs once)")
    }

    /// `spec.databaseInitSQL`, a ConfigMap key run once after the cluster
    /// is initialised (PGO docs, "Database Initialization SQL").
    fn bootstrap_sql(&self, model: &Model, db: &Database) -> Vec<(Node, String)> {
        let root = &model.object(db.object).root;
        let (Some(name), Some(key)) = (
            root.str_at(&["spec", "databaseInitSQL", "name"]),
            root.str_at(&["spec", "databaseInitSQL", "key"]),
        ) else {
            return Vec::new();
        };
        model
            .find(
                db.object,
                "",
                "ConfigMap",
                model.namespace_of(db.object),
                name,
            )
            .and_then(|cm| model.object(cm).root.path(&["data", key]).cloned())
            .map(|n| {
                (
                    n,
                    format!("ConfigMap {name} key {key} (spec.databaseInitSQL)"),
                )
            })
            .into_iter()
            .collect()
    }

    fn requested_class(&self, model: &Model, db: &Database) -> Result<Option<Node>, Unknown> {
        let root = &model.object(db.object).root;
        Ok(super::nonempty(
            root.path(&["spec", "instances"])
                .and_then(Node::as_seq)
                .and_then(|sets| {
                    sets.iter()
                        .find_map(|s| s.path(&["dataVolumeClaimSpec", "storageClassName"]))
                }),
        ))
    }

    fn claim_label(&self) -> Option<&'static str> {
        Some("postgres-operator.crunchydata.com/cluster")
    }

    /// `spec.patroni.dynamicConfiguration.postgresql.<name>`, beside its
    /// `parameters`: Patroni reads only the latter.
    fn ignored_copy<'m>(
        &self,
        model: &'m Model,
        db: &Database,
        name: &str,
    ) -> Option<IgnoredCopy<'m>> {
        IgnoredCopy::entry(
            &model.object(db.object).root,
            &["spec", "patroni", "dynamicConfiguration", "postgresql", name],
            "is read by neither the operator nor Patroni",
        )
    }

    /// Patroni `synchronous_mode` (Patroni docs, "Replication modes"), in
    /// PGO's Patroni dynamic configuration.
    fn synchronous(&self, model: &Model, db: &Database) -> Option<Synchronous> {
        replication::enabled_at(
            model,
            db,
            &[
                "spec",
                "patroni",
                "dynamicConfiguration",
                "synchronous_mode",
            ],
        )
    }

    /// `internal/controller/postgrescluster/postgres.go`
    /// (`generatePostgresUserSecret`): Secret `<cluster>-pguser-<user>`,
    /// `host` = `<cluster>-primary.<ns>.svc`, and with `spec.proxy.pgBouncer`
    /// `pgbouncer-host` = `<cluster>-pgbouncer.<ns>.svc`.
    fn secret_value(
        &self,
        model: &Model,
        near: ObjRef,
        ns: &str,
        secret: &str,
        key: &str,
    ) -> Option<Derived> {
        let (cluster, _user) = secret.split_once("-pguser-")?;
        let r = model.find(near, KIND.0, KIND.1, ns, cluster)?;
        let obj = model.object(r);
        Some(match key {
            "host" => Ok(format!("{cluster}-primary.{ns}.svc")),
            "pgbouncer-host" if obj.root.path(&["spec", "proxy", "pgBouncer"]).is_some() => {
                Ok(format!("{cluster}-pgbouncer.{ns}.svc"))
            }
            "pgbouncer-host" => Err(format!(
                "{} has no spec.proxy.pgBouncer, so Crunchy PGO writes no key pgbouncer-host into Secret {secret}",
                obj.id()
            )),
            _ => Err(format!(
                "Crunchy PGO generates key {key} of Secret {secret} itself"
            )),
        })
    }

    fn live_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[KIND]
    }

    fn api_resource(&self) -> Option<ApiResource> {
        Some(ApiResource {
            group: KIND.0,
            version: "v1beta1",
            plural: "postgresclusters",
        })
    }

    /// The primary is labelled `role=master`; a Secret
    /// `<cluster>-pguser-<user>` per user (`users: [{name, databases}]`),
    /// and without users, PGO makes one named after the cluster.
    fn probe_naming(&self, object: &Object) -> Option<Naming> {
        if !object.is(KIND.0, KIND.1) {
            return None;
        }
        let n = object.name();
        let mut users: Vec<(String, Option<String>)> = object
            .root
            .path(&["spec", "users"])
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .filter_map(|user| {
                let name = user.get("name")?.scalar_text()?;
                let db = user
                    .get("databases")
                    .and_then(Node::as_seq)
                    .and_then(|d| d.first())
                    .and_then(Node::scalar_text);
                Some((name, db))
            })
            .collect();
        super::owners_first(&mut users);
        Some(Naming {
            selectors: vec![format!(
                "postgres-operator.crunchydata.com/cluster={n},\
                 postgres-operator.crunchydata.com/role=master"
            )],
            secrets: if users.is_empty() {
                vec![secret(format!("{n}-pguser-{n}"), "user", Some("dbname"), n)]
            } else {
                users
                    .iter()
                    .map(|(u, db)| {
                        secret(
                            format!("{n}-pguser-{u}"),
                            "user",
                            Some("dbname"),
                            db.as_deref().unwrap_or("postgres"),
                        )
                    })
                    .collect()
            },
        })
    }
}


/// `spec.instances`: the cluster's instance sets.
fn instance_sets<'m>(model: &Model<'m>, object: ObjRef) -> Option<&'m [Node]> {
    model
        .object(object)
        .root
        .path(&["spec", "instances"])
        .and_then(Node::as_seq)
        .map(Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_users_the_probe_reads_the_secret_named_after_the_cluster() {
        let repo = crate::source::test_repo::TestRepo::new(&[(
            "pg.yaml",
            "apiVersion: postgres-operator.crunchydata.com/v1beta1\nkind: PostgresCluster\nmetadata: {name: pg, namespace: auth}\n",
        )]);
        let naming = Crunchy.probe_naming(&repo.objects[0]).unwrap();
        assert_eq!(naming.secrets[0].name, "pg-pguser-pg");
        assert_eq!(naming.secrets[0].user_key, "user");
    }
}
