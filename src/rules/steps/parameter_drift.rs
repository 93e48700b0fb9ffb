//! `parameterDrift`: Postgres parameters whose value in the cluster
//! differs from the repository's.

use serde::{Deserialize, Serialize};

use super::{Bindings, Described, Fact, Step, bind, first_line, object_span};
use crate::model::postgres::drift::{self, Drift};
use crate::model::{Model, ObjRef};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;
use crate::yaml::Node;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ParameterDriftStep {
    /// Only these parameters (default: every one).
    #[serde(default)]
    pub names: Vec<String>,
}

/// A Postgres parameter the repository and the cluster disagree on.
#[derive(Clone, Debug)]
pub(crate) struct DriftFact {
    pub object: ObjRef,
    pub drift: Drift,
}

impl Step for ParameterDriftStep {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        cx.model
            .objects
            .iter()
            .enumerate()
            .filter_map(|(i, o)| Some((i, o, o.live.as_deref()?)))
            .flat_map(|(i, o, live)| {
                drift::parameter_drift(&o.root, live)
                    .into_iter()
                    .map(move |drift| (i, drift))
            })
            .filter(|(_, d)| self.names.is_empty() || self.names.contains(&d.name))
            .map(|(object, drift)| vec![bind("drift", DriftFact { object, drift })])
            .collect()
    }
}

impl Fact for DriftFact {
    fn describe(&self, model: &Model) -> Described {
        let drift = &self.drift;
        let show = |v: Option<String>| v.map_or("unset".to_string(), |v| format!("{v:?}"));
        let (repo, cluster) = (
            show(drift.declared.as_ref().and_then(Node::scalar_text)),
            show(drift.live.clone()),
        );
        let span = drift
            .declared
            .as_ref()
            .or(drift.container.as_ref())
            .map_or_else(
                || object_span(model, self.object),
                |n| first_line(model, n.span()),
            );
        let id = model.object(self.object).id();
        Described {
            labels: vec![Label {
                span,
                text: format!("{} is {repo} here but {cluster} in the cluster", drift.name),
            }],
            evidence: vec![
                ("name".into(), drift.name.clone()),
                ("repo".into(), repo),
                ("cluster".into(), cluster),
                ("path".into(), drift.path.clone()),
                ("object".into(), id.clone()),
            ],
            identity: format!("{id}#{}.{}", drift.path, drift.name),
        }
    }

    fn object(&self) -> Option<ObjRef> {
        Some(self.object)
    }
}
