//! `synchronousReplication`: the bound database waits for a standby on
//! every commit.

use super::{Bindings, DatabaseFact, Described, Fact, Step, bind, find};
use crate::model::Model;
use crate::model::replication::{self, Synchronous};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

pub struct SynchronousReplication;

/// Where the database is set to replicate synchronously.
#[derive(Clone, Debug)]
pub(crate) struct ReplicationFact(pub Synchronous);

impl Step for SynchronousReplication {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let Some(DatabaseFact(db)) = find(bound, "database") else {
            return Vec::new();
        };
        replication::synchronous(cx.model, db)
            .map(|s| vec![bind("replication", ReplicationFact(s))])
            .into_iter()
            .collect()
    }
}

impl Fact for ReplicationFact {
    fn describe(&self, _model: &Model) -> Described {
        let r = &self.0;
        Described {
            labels: vec![Label {
                span: r.node.span(),
                text: format!("synchronous replication: {}", r.setting),
            }],
            evidence: vec![("setting".into(), r.setting.clone())],
            identity: r.setting.clone(),
        }
    }
}
