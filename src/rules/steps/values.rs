//! `values`: a value in the bound app's effective Helm values.

use serde::{Deserialize, Serialize};

use super::test::path_test;
use super::{AppFact, Bindings, Step, ValueFact, ValueTest, bind, find};
use crate::rules::engine::Ctx;
use crate::yaml::jsonpath::JsonPath;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValuesStep {
    /// JSONPath (RFC 9535) into the merged values, e.g. `$.redis.enabled`.
    #[schemars(with = "String")]
    pub path: JsonPath,
    pub is: ValueTest,
}

impl Step for ValuesStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let Some(AppFact { app, .. }) = find(bound, "app") else {
            return Vec::new();
        };
        let Some(release) = cx.model.release(app.object) else {
            return Vec::new();
        };
        match path_test(&self.path, &self.is, &release.values, &mut cx.work) {
            Some(hit) => {
                let path = hit
                    .as_ref()
                    .map_or(self.path.as_str().to_string(), |(_, shown)| shown.clone());
                let fact = ValueFact::at(app.object, hit.map(|(n, _)| n), path);
                vec![vec![bind("value", fact)]]
            }
            None => Vec::new(),
        }
    }
}
