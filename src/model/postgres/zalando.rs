//! Zalando postgres-operator: a `postgresql` (`acid.zalan.do`) object
//! per cluster, run by Patroni in Spilo pods.

use super::{
    ApiResource, Derived, IgnoredCopy, Naming, ParameterMap, PostgresOperator, int_at, named_by_service, postgresql_section,
    secret, strip,
};
use crate::model::database::Database;
use crate::model::replication::{self, Synchronous};
use crate::model::{Model, ObjRef, Unknown};
use crate::source::Object;
use crate::yaml::Node;

const KIND: (&str, &str) = ("acid.zalan.do", "postgresql");
const INSTANCES: &[&str] = &["spec", "numberOfInstances"];

pub struct Zalando;

impl PostgresOperator for Zalando {
    fn name(&self) -> &'static str {
        "Zalando postgres-operator"
    }

    fn short_name(&self) -> &'static str {
        "Zalando"
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

    /// The primary's Service is named after the cluster; `-repl` serves
    /// the replicas, `-pooler` the connection pooler.
    fn by_service(&self, model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<ObjRef> {
        let names = [vec![service.to_string()], strip(service, &["-repl", "-pooler"])].concat();
        named_by_service(model, near, KIND, names, ns)
    }

    fn parameter_maps(&self, model: &Model, db: &Database) -> Vec<ParameterMap> {
        postgresql_section(model, db)
    }

    fn parameter_fields(&self) -> &'static [&'static [&'static str]] {
        &[&["spec", "postgresql", "parameters"]]
    }

    fn requested_class(&self, model: &Model, db: &Database) -> Result<Option<Node>, Unknown> {
        let root = &model.object(db.object).root;
        Ok(super::nonempty(root.path(&["spec", "volume", "storageClass"])))
    }

    fn claim_label(&self) -> Option<&'static str> {
        Some("cluster-name")
    }

    /// `spec.postgresql.<name>`, beside its `parameters`: the CRD declares
    /// only `version` and `parameters` there, so the API server prunes it.
    fn ignored_copy<'m>(
        &self,
        model: &'m Model,
        db: &Database,
        name: &str,
    ) -> Option<IgnoredCopy<'m>> {
        IgnoredCopy::entry(
            &model.object(db.object).root,
            &["spec", "postgresql", name],
            "is pruned by the operator's CRD, so neither the operator nor Patroni reads it",
        )
    }

    /// Patroni `synchronous_mode` (Patroni docs, "Replication modes"), as
    /// Zalando passes it.
    fn synchronous(&self, model: &Model, db: &Database) -> Option<Synchronous> {
        replication::enabled_at(model, db, &["spec", "patroni", "synchronous_mode"])
    }

    /// `pkg/cluster/k8sres.go` (`generateSingleUserSecret`) and
    /// `pkg/cluster/util.go` (`credentialSecretNameForCluster`, default
    /// `secret_name_template`
    /// `{username}.{cluster}.credentials.{tprkind}.{tprgroup}`, `_` in the
    /// user name written as `-`): only `username` and `password`; the host
    /// is the Service named after the cluster.
    fn secret_value(
        &self,
        model: &Model,
        near: ObjRef,
        ns: &str,
        secret: &str,
        key: &str,
    ) -> Option<Derived> {
        let rest = secret.strip_suffix(".credentials.postgresql.acid.zalan.do")?;
        let (user, cluster) = rest.rsplit_once('.')?;
        let r = model.find(near, KIND.0, KIND.1, ns, cluster)?;
        let obj = model.object(r);
        Some(match key {
            "username" => zalando_user(&obj.root, user).ok_or_else(|| {
                format!(
                    "{} declares no user whose name gives Secret {secret}",
                    obj.id()
                )
            }),
            "password" => Err(format!(
                "Zalando postgres-operator generates key {key} of Secret {secret} itself"
            )),
            _ => Err(format!(
                "Zalando postgres-operator writes only username and password into Secret {secret}, no key {key}"
            )),
        })
    }

    fn live_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[KIND]
    }

    fn api_resource(&self) -> Option<ApiResource> {
        Some(ApiResource {
            group: KIND.0,
            version: "v1",
            plural: "postgresqls",
        })
    }

    /// Spilo labels its primary `spilo-role=master`; a Secret per user
    /// (`users: {name: [flags]}`), with the database it owns
    /// (`databases: {db: owner}`), and the superuser's.
    fn probe_naming(&self, object: &Object) -> Option<Naming> {
        if !object.is(KIND.0, KIND.1) {
            return None;
        }
        let n = object.name();
        let spec = object.root.get("spec");
        let text = |n: Option<&Node>| n.and_then(|n| n.scalar_text());
        let owned = |user: &str| {
            spec.and_then(|s| s.get("databases"))
                .and_then(|d| d.as_map())
                .into_iter()
                .flatten()
                .find(|(_, owner)| text(Some(owner)).as_deref() == Some(user))
                .and_then(|(db, _)| db.scalar_text())
        };
        let mut users: Vec<(String, Option<String>)> = spec
            .and_then(|s| s.get("users"))
            .and_then(|u| u.as_map())
            .into_iter()
            .flatten()
            .filter_map(|(user, _)| user.scalar_text())
            .map(|user| {
                let db = owned(&user);
                (user, db)
            })
            .collect();
        super::owners_first(&mut users);
        Some(Naming {
            selectors: vec![format!("cluster-name={n},spilo-role=master")],
            secrets: users
                .iter()
                .map(|(u, db)| (u.as_str(), db.as_deref().unwrap_or("postgres")))
                .chain([("postgres", "postgres")])
                .map(|(u, db)| {
                    secret(
                        format!(
                            "{}.{n}.credentials.postgresql.acid.zalan.do",
                            u.replace('_', "-")
                        ),
                        "username",
                        None,
                        db,
                    )
                })
                .collect(),
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_write_underscores_as_dashes() {
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
    fn probe_secrets_of_users_owning_a_database_come_first() {
        let repo = crate::source::test_repo::TestRepo::new(&[(
            "pg.yaml",
            "apiVersion: acid.zalan.do/v1\nkind: postgresql\nmetadata: {name: pg, namespace: auth}\n\
             spec:\n  users:\n    admin: [superuser]\n    authentik_user: []\n  databases:\n    authentik: authentik_user\n",
        )]);
        let naming = Zalando.probe_naming(&repo.objects[0]).unwrap();
        assert_eq!(naming.selectors, ["cluster-name=pg,spilo-role=master"]);
        let names: Vec<(&str, &str)> = naming
            .secrets
            .iter()
            .map(|s| (s.name.as_str(), s.dbname.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("authentik-user.pg.credentials.postgresql.acid.zalan.do", "authentik"),
                ("admin.pg.credentials.postgresql.acid.zalan.do", "postgres"),
                ("postgres.pg.credentials.postgresql.acid.zalan.do", "postgres")
            ]
        );
    }
}
