//! `database`: the Postgres an app uses, from its host setting through
//! the operator's Service names.

use serde::{Deserialize, Serialize};

use super::{AppFact, Bindings, Described, Fact, Step, bind, find, object_span, variable_label};
use crate::model::database::{self, Database, HostQuery};
use crate::model::{Model, ObjRef, Unknown};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DatabaseStep {
    /// Environment variables that hold the database host.
    #[serde(default)]
    pub host_env: Vec<String>,
    /// Values key of a chart-bundled Bitnami Postgres, used when
    /// `<key>.enabled` is true.
    #[serde(default)]
    pub bundled: Option<String>,
}

impl DatabaseStep {
    /// The database the app uses, by the host variables and bundled
    /// chart the step names.
    pub(crate) fn of_app(&self, model: &Model, fact: &AppFact) -> Result<Database, Unknown> {
        let query = HostQuery {
            env: &self.host_env,
            bundled: self.bundled.as_deref(),
            prefixes: &fact.prefixes,
        };
        database::of_app(model, &fact.app, &query)
    }
}

/// A Postgres cluster (of the repository, or of the live cluster).
#[derive(Clone, Debug)]
pub(crate) struct DatabaseFact(pub Database);

impl Step for DatabaseStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let Some(fact) = find::<AppFact>(bound, "app") else {
            return Vec::new();
        };
        match self.of_app(cx.model, fact) {
            Ok(db) => vec![vec![bind("database", DatabaseFact(db))]],
            Err(unknown) => {
                let subject = cx.model.object(fact.app.object).id();
                cx.note_unknown(subject, unknown);
                Vec::new()
            }
        }
    }
}

impl Fact for DatabaseFact {
    fn describe(&self, model: &Model) -> Described {
        let db = &self.0;
        let name = db.name(model).to_string();
        let mut labels = Vec::new();
        if let Some(host) = &db.host {
            labels.push(Label {
                span: host.span(),
                text: format!("uses database {name}"),
            });
        }
        labels.push(Label {
            span: object_span(model, db.object),
            text: if db.values_key.is_empty() {
                format!("{} cluster {name}", db.provider.as_str())
            } else {
                format!(
                    "{name}'s bundled Postgres (Bitnami subchart, values `{}`)",
                    db.values_key
                )
            },
        });
        // A cluster named through a Flux variable (`name: ${APP}`, the
        // name the app's host matched) shows where the variable is set.
        if db.values_key.is_empty() {
            let root = &model.object(db.object).root;
            labels.extend(root.path(&["metadata", "name"]).and_then(variable_label));
        }
        Described {
            labels,
            evidence: vec![
                ("name".into(), name),
                ("provider".into(), db.provider.as_str().into()),
                ("instances".into(), db.instances.to_string()),
                ("object".into(), model.object(db.object).id()),
            ],
            identity: format!("{}#{}", model.object(db.object).id(), db.values_key),
        }
    }

    fn object(&self) -> Option<ObjRef> {
        Some(self.0.object)
    }
}
