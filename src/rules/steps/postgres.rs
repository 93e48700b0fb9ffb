//! `postgres`: every Postgres cluster the repository declares.

use serde::{Deserialize, Serialize};

use super::{Bindings, DatabaseFact, Step, bind};
use crate::model::database;
use crate::rules::engine::Ctx;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PostgresStep {
    /// Only clusters with at least this many instances.
    #[serde(default)]
    pub min_instances: Option<i64>,
}

impl Step for PostgresStep {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        database::all(cx.model)
            .into_iter()
            .filter(|db| self.min_instances.is_none_or(|m| db.instances >= m))
            .map(|db| vec![bind("database", DatabaseFact(db))])
            .collect()
    }
}
