//! A StatefulSet running a postgres image.

use super::{ParameterHome, PostgresOperator, int_at};
use crate::model::app::{split_image, workload_containers};
use crate::model::database::Database;
use crate::model::{Model, ObjRef, Unknown};
use crate::source::Object;
use crate::yaml::Node;

pub struct StatefulSet;

impl PostgresOperator for StatefulSet {
    fn name(&self) -> &'static str {
        "StatefulSet"
    }

    fn declares(&self, model: &Model, r: ObjRef) -> bool {
        let obj = model.object(r);
        obj.is("apps", "StatefulSet") && runs_postgres(obj)
    }

    fn instances(&self, model: &Model, object: ObjRef, _values_key: &str) -> i64 {
        int_at(&model.object(object).root, &["spec", "replicas"]).unwrap_or(1)
    }

    fn by_service(&self, model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<ObjRef> {
        model
            .find(near, "apps", "StatefulSet", ns, service)
            .filter(|r| runs_postgres(model.object(*r)))
    }

    /// `-c name=value` arguments of its containers.
    fn parameter_maps(&self, model: &Model, db: &Database) -> Vec<(Node, String)> {
        workload_containers(model.object(db.object))
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("args").cloned().map(|n| (n, "args".to_string())))
            .collect()
    }

    fn parameter_home<'m>(&self, model: &Model<'m>, db: &Database) -> Option<ParameterHome<'m>> {
        let containers = workload_containers(model.object(db.object)).unwrap_or_default();
        let postgres = containers
            .iter()
            .find(|c| c.str_at(&["image"]).is_some_and(|i| i.contains("postgres")))
            .or(containers.first())
            .copied();
        Some(ParameterHome::Args(
            postgres.ok_or_else(|| "the StatefulSet has no container".to_string()),
        ))
    }

    fn requested_class(&self, model: &Model, db: &Database) -> Result<Option<Node>, Unknown> {
        let root = &model.object(db.object).root;
        Ok(super::nonempty(
            root.path(&["spec", "volumeClaimTemplates"])
                .and_then(Node::as_seq)
                .and_then(|t| t.iter().find_map(|c| c.path(&["spec", "storageClassName"]))),
        ))
    }
}

fn runs_postgres(obj: &Object) -> bool {
    workload_containers(obj).is_some_and(|cs| {
        cs.iter().any(|c| {
            c.str_at(&["image"]).is_some_and(|i| {
                let repo = split_image(i).repository;
                repo.rsplit('/')
                    .next()
                    .is_some_and(|last| last == "postgres" || last == "postgresql")
            })
        })
    })
}
