//! CloudNativePG: a `Cluster` (`postgresql.cnpg.io`) per cluster, with
//! `Pooler`s in front of it.

use super::{
    ApiResource, Derived, Naming, ParameterMap, PostgresOperator, int_at, named_by_service, postgresql_section,
    secret, strip,
};
use crate::model::database::Database;
use crate::model::replication::{self, Synchronous};
use crate::model::{Model, ObjRef, Unknown};
use crate::source::Object;
use crate::yaml::Node;

const GROUP: &str = "postgresql.cnpg.io";
const KIND: (&str, &str) = (GROUP, "Cluster");
const INSTANCES: &[&str] = &["spec", "instances"];

pub struct Cnpg;

impl PostgresOperator for Cnpg {
    fn name(&self) -> &'static str {
        "CloudNativePG"
    }

    fn declared_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[KIND]
    }

    fn declares(&self, model: &Model, r: ObjRef) -> bool {
        model.object(r).is(KIND.0, KIND.1)
    }

    fn instances(&self, model: &Model, object: ObjRef, _values_key: &str) -> i64 {
        int_at(&model.object(object).root, INSTANCES).unwrap_or(1)
    }

    fn instances_written<'m>(&self, model: &Model<'m>, object: ObjRef) -> Vec<&'m Node> {
        model.object(object).root.path(INSTANCES).into_iter().collect()
    }

    /// Services `<cluster>-rw`, `-ro` and `-r`; a `Pooler`'s Service
    /// carries the Pooler's name.
    fn by_service(&self, model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<ObjRef> {
        named_by_service(model, near, KIND, strip(service, &["-rw", "-ro", "-r"]), ns).or_else(
            || {
                let p = model.find(near, GROUP, "Pooler", ns, service)?;
                let cluster = model.object(p).root.str_at(&["spec", "cluster", "name"])?;
                model.find(near, KIND.0, KIND.1, ns, cluster)
            },
        )
    }

    fn parameter_maps(&self, model: &Model, db: &Database) -> Vec<ParameterMap> {
        postgresql_section(model, db)
    }

    fn parameter_fields(&self) -> &'static [&'static [&'static str]] {
        &[&["spec", "postgresql", "parameters"]]
    }

    fn init_sql_home(&self) -> Option<&'static str> {
        Some(
            "put the statement into spec.bootstrap.initdb.postInitApplicationSQL (runs once, when the cluster is created)",
        )
    }

    /// `spec.bootstrap.initdb.postInitSQL` (in `postgres`),
    /// `postInitApplicationSQL` (in the app database) and
    /// `postInitTemplateSQL` (in `template1`) (CloudNativePG docs,
    /// "Bootstrap").
    fn bootstrap_sql(&self, model: &Model, db: &Database) -> Vec<(Node, String)> {
        let root = &model.object(db.object).root;
        [
            "postInitSQL",
            "postInitApplicationSQL",
            "postInitTemplateSQL",
        ]
        .iter()
        .flat_map(|key| {
            root.path(&["spec", "bootstrap", "initdb", key])
                .and_then(Node::as_seq)
                .into_iter()
                .flatten()
                .map(move |n| (n.clone(), format!("spec.bootstrap.initdb.{key}")))
        })
        .collect()
    }

    fn requested_class(&self, model: &Model, db: &Database) -> Result<Option<Node>, Unknown> {
        let root = &model.object(db.object).root;
        Ok(super::nonempty(
            root.path(&["spec", "storage", "storageClass"])
                .or_else(|| root.path(&["spec", "storage", "pvcTemplate", "storageClassName"])),
        ))
    }

    fn claim_label(&self) -> Option<&'static str> {
        Some("cnpg.io/cluster")
    }

    /// CloudNativePG docs, "Synchronous Replication": the
    /// `spec.postgresql.synchronous` stanza (1.24+), or the older
    /// `minSyncReplicas`/`maxSyncReplicas`, where a `maxSyncReplicas`
    /// above 0 turns quorum-based synchronous replication on.
    fn synchronous(&self, model: &Model, db: &Database) -> Option<Synchronous> {
        replication::positive_at(model, db, &["spec", "postgresql", "synchronous", "number"])
            .or_else(|| replication::positive_at(model, db, &["spec", "maxSyncReplicas"]))
            .or_else(|| replication::positive_at(model, db, &["spec", "minSyncReplicas"]))
    }

    /// `pkg/specs/secrets.go` (`CreateSecret`, called with the read-write
    /// Service name): Secrets `<cluster>-app` and `<cluster>-superuser`,
    /// `host` = `<cluster>-rw`.
    fn secret_value(
        &self,
        model: &Model,
        near: ObjRef,
        ns: &str,
        secret: &str,
        key: &str,
    ) -> Option<Derived> {
        let cluster = secret
            .strip_suffix("-app")
            .or_else(|| secret.strip_suffix("-superuser"))?;
        model.find(near, KIND.0, KIND.1, ns, cluster)?;
        Some(match key {
            "host" => Ok(format!("{cluster}-rw")),
            _ => Err(format!(
                "CloudNativePG generates key {key} of Secret {secret} itself"
            )),
        })
    }

    /// Its clusters, and the poolers in front of them.
    fn live_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[(GROUP, "Cluster"), (GROUP, "Pooler")]
    }

    fn api_resource(&self) -> Option<ApiResource> {
        Some(ApiResource {
            group: GROUP,
            version: "v1",
            plural: "clusters",
        })
    }

    fn probe_naming(&self, object: &Object) -> Option<Naming> {
        if !object.is(KIND.0, KIND.1) {
            return None;
        }
        let n = object.name();
        Some(Naming {
            selectors: vec![
                format!("cnpg.io/cluster={n},cnpg.io/instanceRole=primary"),
                // Before CloudNativePG 1.18.
                format!("cnpg.io/cluster={n},role=primary"),
            ],
            secrets: vec![
                secret(format!("{n}-app"), "username", Some("dbname"), "app"),
                secret(format!("{n}-superuser"), "username", None, "postgres"),
            ],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probe_finds_the_primary_and_the_app_secret() {
        let repo = crate::source::test_repo::TestRepo::new(&[(
            "pg.yaml",
            "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {name: pg, namespace: auth}\n",
        )]);
        let naming = Cnpg.probe_naming(&repo.objects[0]).unwrap();
        assert_eq!(
            naming.selectors[0],
            "cnpg.io/cluster=pg,cnpg.io/instanceRole=primary"
        );
        assert_eq!(naming.secrets[0].name, "pg-app");
        assert_eq!(naming.secrets[0].dbname_key.as_deref(), Some("dbname"));
    }
}
