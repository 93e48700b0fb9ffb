//! `postgres`: every Postgres cluster the repository declares.

use serde::{Deserialize, Serialize};

use super::{Bindings, DatabaseFact, Described, Fact, Step, bind, variable_label};
use crate::model::Model;
use crate::model::database::{self, Database};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PostgresStep {
    /// Only clusters with at least this many instances; the finding then
    /// also points at where the count is written (binding `instances`).
    #[serde(default)]
    pub min_instances: Option<i64>,
}

impl Step for PostgresStep {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        database::all(cx.model)
            .into_iter()
            .filter(|db| self.min_instances.is_none_or(|m| db.instances >= m))
            .map(|db| match self.min_instances {
                Some(_) => vec![
                    bind("database", DatabaseFact(db.clone())),
                    bind("instances", InstancesFact(db)),
                ],
                None => vec![bind("database", DatabaseFact(db))],
            })
            .collect()
    }
}

/// How many instances a cluster runs, where that is written: the line a
/// user changes to run fewer.
#[derive(Clone, Debug)]
pub(crate) struct InstancesFact(pub Database);

impl Fact for InstancesFact {
    fn describe(&self, model: &Model) -> Described {
        let db = &self.0;
        let written = db.provider.instances_written(model, db.object);
        let text = match written.len() {
            1 => format!("{} instances, each with its own volume", db.instances),
            _ => format!("an instance set of the {} instances", db.instances),
        };
        let mut labels = Vec::new();
        for node in written {
            labels.push(Label {
                span: node.span(),
                text: text.clone(),
            });
            labels.extend(variable_label(node));
        }
        Described {
            labels,
            evidence: Vec::new(),
            identity: String::new(),
        }
    }

    /// Drawn with the database it counts.
    fn node(&self, _model: &Model) -> Option<String> {
        None
    }
}
