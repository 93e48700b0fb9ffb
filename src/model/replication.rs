//! Synchronous replication: a commit that waits for a standby to flush
//! its WAL over the network, whatever disk the primary writes to. Each
//! provider turns it on in its own place; a standby must exist for a
//! commit to wait on it.

use super::Model;
use super::database::{Database, Provider, sub_values};
use super::settings;
use crate::yaml::Node;

/// Where a database's synchronous replication is turned on.
#[derive(Clone, Debug)]
pub struct Synchronous {
    /// The field that turns it on.
    pub node: Node,
    /// `minSyncReplicas: 1`, `synchronous_mode: true`, ...: for messages.
    pub setting: String,
}

/// Whether `db` replicates synchronously, as its declaration says.
pub fn synchronous(model: &Model, db: &Database) -> Option<Synchronous> {
    if db.instances < 2 {
        return None;
    }
    let root = &model.object(db.object).root;
    let found = |path: &[&str], holds: &dyn Fn(&Node) -> bool| {
        root.path(path).filter(|n| holds(n)).map(|n| Synchronous {
            node: n.clone(),
            setting: format!(
                "{}: {}",
                path.join("."),
                n.scalar_text().unwrap_or_else(|| n.to_json().to_string())
            ),
        })
    };
    let positive = |n: &Node| n.scalar_text().and_then(|t| t.parse::<i64>().ok()) > Some(0);
    let enabled = |n: &Node| n.as_bool_lenient() == Some(true);
    let declared = match db.provider {
        // CloudNativePG docs, "Synchronous Replication": the
        // `spec.postgresql.synchronous` stanza (1.24+), or the older
        // `minSyncReplicas`/`maxSyncReplicas`, where a `maxSyncReplicas`
        // above 0 turns quorum-based synchronous replication on.
        Provider::Cnpg => found(&["spec", "postgresql", "synchronous", "number"], &positive)
            .or_else(|| found(&["spec", "maxSyncReplicas"], &positive))
            .or_else(|| found(&["spec", "minSyncReplicas"], &positive)),
        // Patroni `synchronous_mode` (Patroni docs, "Replication modes"),
        // as Zalando passes it (`spec.patroni.synchronous_mode`) and
        // Crunchy PGO (`spec.patroni.dynamicConfiguration.synchronous_mode`).
        Provider::Zalando => found(&["spec", "patroni", "synchronous_mode"], &enabled),
        Provider::Crunchy => found(
            &[
                "spec",
                "patroni",
                "dynamicConfiguration",
                "synchronous_mode",
            ],
            &enabled,
        ),
        // Bitnami postgresql chart: `replication.numSynchronousReplicas`
        // with `replication.synchronousCommit` other than off (chart
        // values.yaml), in replication architecture (counted in
        // `instances`).
        Provider::Bitnami => model.release(db.object).and_then(|r| {
            let values = sub_values(&r.values, &db.values_key)?;
            let commit = values
                .str_at(&["replication", "synchronousCommit"])
                .unwrap_or("off");
            if commit == "off" {
                return None;
            }
            let n = values.path(&["replication", "numSynchronousReplicas"])?;
            positive(n).then(|| Synchronous {
                node: n.clone(),
                setting: format!(
                    "replication.numSynchronousReplicas: {}",
                    n.scalar_text().unwrap_or_default()
                ),
            })
        }),
        Provider::StatefulSet => None,
    };
    declared.or_else(|| {
        // Any provider: the server parameter itself.
        let names = settings::effective(model, db, "synchronous_standby_names");
        let node = names.node?;
        let value = names.value.trim_matches(['\'', '"']).trim().to_string();
        (!value.is_empty()).then(|| Synchronous {
            setting: format!("synchronous_standby_names = {value}"),
            node,
        })
    })
}
