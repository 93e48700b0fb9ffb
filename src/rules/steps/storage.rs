//! `storage`: the storage under the bound volume, at the bound object's
//! (or app's) `classAt`, or under the bound database.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{
    AppFact, Bindings, DatabaseFact, Described, Fact, Step, ValueFact, VolumeFact, bind, find,
    shown, variable_label,
};
use crate::model::storage::{self, Category, Storage};
use crate::model::{Model, ObjRef, Unknown, volume};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;
use crate::yaml::Node;
use crate::yaml::jsonpath::select;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageStep {
    /// The step holds when the storage is of one of these categories.
    pub category: Vec<StorageCategory>,
    /// JSONPath (RFC 9535) to a storage class name in the bound `object`
    /// (`$.spec.storage.storageClassName`), or else in the bound app's
    /// Helm values. Nothing written there: the step does not hold.
    #[serde(default)]
    pub class_at: Option<String>,
    /// Only storage mounted with one of these options (`soft`), as the
    /// StorageClass or PersistentVolume `mountOptions` write them
    /// (`nfsvers=4.1` matches `nfsvers`).
    #[serde(default)]
    pub mount_options: Vec<String>,
}

/// The storage categories a rule can ask for: a name outside them is an
/// error when the rule is read, not a step that never holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum StorageCategory {
    /// Block storage that replicates every write over the network (Ceph
    /// RBD, Longhorn, ...).
    NetworkReplicatedBlock,
    /// Block storage over the network that keeps one copy.
    NetworkBlock,
    /// NFS, CephFS and the like.
    NetworkFilesystem,
    /// Disks of the node itself.
    Local,
}

impl StorageCategory {
    fn category(self) -> Category {
        match self {
            StorageCategory::NetworkReplicatedBlock => Category::NetworkReplicatedBlock,
            StorageCategory::NetworkBlock => Category::NetworkBlock,
            StorageCategory::NetworkFilesystem => Category::NetworkFilesystem,
            StorageCategory::Local => Category::Local,
        }
    }
}

/// The storage class a volume or a database's data is on.
#[derive(Clone, Debug)]
pub(crate) struct StorageFact(pub Storage);

impl Step for StorageStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let model = cx.model;
        let (subject, found) = match (
            find::<VolumeFact>(bound, "volume"),
            &self.class_at,
            find::<ValueFact>(bound, "object"),
            find::<AppFact>(bound, "app"),
            find::<DatabaseFact>(bound, "database"),
        ) {
            (Some(VolumeFact { mount, .. }), ..) => (mount.object, volume::storage(model, mount)),
            (None, Some(path), Some(ValueFact { object, .. }), ..) => (
                *object,
                class_at(model, *object, path, &model.object(*object).root),
            ),
            (None, Some(path), _, Some(AppFact { app, .. }), _) => {
                match model.release(app.object) {
                    Some(release) => (
                        app.object,
                        class_at(model, app.object, path, &release.values),
                    ),
                    None => return Vec::new(),
                }
            }
            (None, None, _, _, Some(DatabaseFact(db))) => {
                (db.object, storage::of_database(model, db).map(Some))
            }
            _ => return Vec::new(),
        };
        match found {
            Ok(Some(s))
                if self.category.iter().any(|c| c.category() == s.category)
                    && (self.mount_options.is_empty()
                        || storage::mount_options(model, &s.decl)
                            .iter()
                            .any(|o| self.mount_options.contains(o))) =>
            {
                vec![vec![bind("storage", StorageFact(s))]]
            }
            Ok(_) => Vec::new(),
            Err(unknown) => {
                let subject = model.object(subject).id();
                cx.note_unknown(subject, unknown);
                Vec::new()
            }
        }
    }
}

/// The storage of the class named at `path` in `root` (an object, or a
/// release's values); `Ok(None)` when nothing is written there.
fn class_at(
    model: &Model,
    object: ObjRef,
    path: &str,
    root: &Node,
) -> Result<Option<Storage>, Unknown> {
    let written = select(path, root)
        .unwrap_or_default()
        .into_iter()
        .find(|n| n.scalar_text().is_some_and(|t| !t.is_empty()));
    match written {
        Some(node) => storage::of_request(model, object, Some(node.clone())).map(Some),
        None => Ok(None),
    }
}

impl Fact for StorageFact {
    /// The class, wherever it is declared (a StorageClass, or a chart's
    /// values), with the copies it keeps of each block when it says.
    fn node(&self, model: &Model) -> Option<String> {
        let st = &self.0;
        let class = shown(model, st.requested_at.as_ref(), st.class.clone());
        Some(match &st.decl.copies {
            Some(copies) => format!("StorageClass/{class} ({}: {})", copies.key, copies.count),
            None => format!("StorageClass/{class}"),
        })
    }

    fn describe(&self, model: &Model) -> Described {
        let st = &self.0;
        let class = shown(model, st.requested_at.as_ref(), st.class.clone());
        let mut labels = Vec::new();
        if let Some(req) = &st.requested_at {
            labels.push(Label {
                span: req.span(),
                text: format!("storage class {class}"),
            });
            labels.extend(variable_label(req));
        }
        labels.push(Label {
            span: st.decl.span,
            text: format!(
                "{}{}: {}",
                st.decl.provisioner,
                if st.decl.is_default && st.requested_at.is_none() {
                    " (default class)"
                } else {
                    ""
                },
                st.category.as_str()
            ),
        });
        if let Some(copies) = &st.decl.copies {
            labels.push(Label {
                span: copies.span,
                text: format!("{}: {} (copies of each block)", copies.key, copies.count),
            });
        }
        Described {
            labels,
            evidence: vec![
                ("class".into(), class.clone()),
                ("provisioner".into(), st.decl.provisioner.clone()),
                ("category".into(), st.category.as_str().into()),
            ],
            identity: class,
        }
    }

    /// `{storage.replication}`: how sure the repository lets a message be
    /// that a class copies every write to other nodes. A class of an
    /// external Ceph cluster (ceph-csi's `rbd.csi.ceph.com` with a
    /// `clusterID`) names a pool whose size only that cluster knows; it
    /// could be size 1. Wording for messages only, not evidence: the facts
    /// behind it (the copies label) are shown already.
    fn message_fields(&self, name: &str, fields: &mut BTreeMap<String, String>) {
        let replication = match &self.0.decl.copies {
            Some(_) => "already replicates every write over the network",
            None => {
                "usually replicates every write over the network (how many copies it keeps is \
                 not in the repository)"
            }
        };
        fields.insert(format!("{name}.replication"), replication.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_misspelt_category_is_an_error_when_the_rule_is_read() {
        let parsed: Result<StorageStep, _> =
            serde_saphyr::from_str("category: [network-replicated-blok]\n");
        let err = parsed.expect_err("a misspelt category must not load");
        assert!(err.to_string().contains("network-replicated-blok"), "{err}");
    }

    #[test]
    fn every_category_a_rule_names_is_one_the_model_assigns() {
        let step: StorageStep = serde_saphyr::from_str(
            "category: [network-replicated-block, network-block, network-filesystem, local]\n",
        )
        .unwrap();
        let names: Vec<&str> = step
            .category
            .iter()
            .map(|c| c.category().as_str())
            .collect();
        assert_eq!(
            names,
            [
                "network-replicated-block",
                "network-block",
                "network-filesystem",
                "local"
            ]
        );
    }
}
