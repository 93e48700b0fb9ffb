//! `storageClasses`: storage classes the repository declares, when
//! several of one cluster are marked default.

use serde::{Deserialize, Serialize};

use super::{Bindings, Described, Fact, Step, bind};
use crate::model::Model;
use crate::model::storage::{self, ClassDecl};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageClassesStep {
    pub min_defaults: usize,
}

/// Storage classes marked default in one cluster.
#[derive(Clone, Debug)]
pub(crate) struct ClassesFact(pub Vec<ClassDecl>);

impl Step for StorageClassesStep {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        let model = cx.model;
        // Per cluster: several trees of one repo each have their own default.
        let defaults: Vec<ClassDecl> = storage::classes(model, None)
            .into_iter()
            .filter(|c| c.is_default)
            .collect();
        let mut trees: Vec<Option<u32>> = defaults
            .iter()
            .map(|c| model.object(c.object).tree)
            .collect();
        trees.sort();
        trees.dedup();
        trees
            .into_iter()
            .filter_map(|t| {
                let mut group: Vec<ClassDecl> = defaults
                    .iter()
                    .filter(|c| {
                        let tree = model.object(c.object).tree;
                        tree == t || tree.is_none() || t.is_none()
                    })
                    .cloned()
                    .collect();
                // One name is one cluster object: two releases that
                // declare the same class do not make two defaults (Helm
                // refuses to adopt an object another release owns), so
                // count each name once, first declaration kept.
                let mut seen = std::collections::HashSet::new();
                group.retain(|c| seen.insert(c.name.clone()));
                (group.len() >= self.min_defaults.max(1))
                    .then(|| vec![bind("classes", ClassesFact(group))])
            })
            .collect()
    }
}

impl Fact for ClassesFact {
    fn describe(&self, _model: &Model) -> Described {
        let classes = &self.0;
        let names: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
        Described {
            labels: classes
                .iter()
                .map(|c| Label {
                    span: c.span,
                    text: format!("{} is marked default", c.name),
                })
                .collect(),
            evidence: vec![
                ("names".into(), names.join(", ")),
                ("count".into(), classes.len().to_string()),
            ],
            identity: names.join(","),
        }
    }
}
