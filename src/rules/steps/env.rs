//! `env`: an environment variable of the bound app, and the test it must
//! pass.

use serde::{Deserialize, Serialize};

use super::test::{Seen, passes};
use super::{AppFact, Bindings, Described, Fact, Shape, Step, ValueTest, find};
use crate::model::Model;
use crate::model::env::{self, EnvVar};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvStep {
    /// Variable name.
    pub name: String,
    /// Name to bind the variable under (default `env`).
    #[serde(default, rename = "as")]
    pub bind_as: Option<String>,
    /// The test the variable must pass.
    pub is: ValueTest,
}

/// A variable of the app, as the repository writes it.
#[derive(Clone, Debug)]
pub(crate) struct EnvFact(pub EnvVar);

/// A variable a test expected to be absent, and is.
#[derive(Clone, Debug)]
pub(crate) struct EnvAbsent {
    pub name: String,
    pub hidden_source: Option<String>,
}

impl Step for EnvStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let model = cx.model;
        let Some(AppFact { app, prefixes }) = find(bound, "app") else {
            return Vec::new();
        };
        let vars = env::of_app(model, app, prefixes);
        let name = self.bind_as.as_deref().unwrap_or("env");
        let (seen, fact) = match env::lookup(&vars, &self.name) {
            None => (
                Seen::Absent,
                super::bind(
                    name,
                    EnvAbsent {
                        name: self.name.clone(),
                        hidden_source: env::has_hidden_sources(model, app),
                    },
                ),
            ),
            Some(v) => (
                match v.known() {
                    Some(text) => Seen::Known {
                        text: text.to_string(),
                        node: v.node.as_ref(),
                    },
                    None => Seen::Hidden,
                },
                super::bind(name, EnvFact(v.clone())),
            ),
        };
        if passes(&self.is, &seen) {
            vec![vec![fact]]
        } else {
            Vec::new()
        }
    }
}

impl Fact for EnvFact {
    fn describe(&self, model: &Model) -> Described {
        let v = &self.0;
        let secret = v.secret
            || model.sources.is_secret_span(v.span)
            || v.node.as_ref().is_some_and(|n| model.sources.is_secret(n));
        let value = |unknown: &str| match v.known() {
            Some(text) if secret => crate::yaml::redacted(text),
            known => known.unwrap_or(unknown).to_string(),
        };
        Described {
            labels: vec![Label {
                span: v.span,
                text: format!("{}={}", v.name, value("?")),
            }],
            evidence: vec![("name".into(), v.name.clone()), ("value".into(), value(""))],
            identity: v.name.clone(),
        }
    }
}

impl Fact for EnvAbsent {
    fn describe(&self, _model: &Model) -> Described {
        Described {
            labels: Vec::new(),
            evidence: vec![
                ("name".into(), self.name.clone()),
                ("value".into(), "(not set)".into()),
            ],
            identity: format!("!{}", self.name),
        }
    }

    fn shape(&self, finding: &mut Shape) {
        if let Some(src) = &self.hidden_source {
            finding.notes.push(format!(
                "{} is not set in the repository; {src} could still set it",
                self.name
            ));
        }
    }
}
