//! Synchronous replication: a commit that waits for a standby to flush
//! its WAL over the network, whatever disk the primary writes to. Each
//! provider turns it on in its own place; a standby must exist for a
//! commit to wait on it.

use super::Model;
use super::database::Database;
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
    db.provider.synchronous(model, db).or_else(|| {
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

/// The field at `path` of the declaring object, when `holds` says it
/// turns synchronous replication on.
fn found(
    model: &Model,
    db: &Database,
    path: &[&str],
    holds: fn(&Node) -> bool,
) -> Option<Synchronous> {
    let root = &model.object(db.object).root;
    root.path(path).filter(|n| holds(n)).map(|n| Synchronous {
        node: n.clone(),
        setting: format!(
            "{}: {}",
            path.join("."),
            n.scalar_text().unwrap_or_else(|| n.to_json().to_string())
        ),
    })
}

/// A count above zero.
pub(crate) fn positive(n: &Node) -> bool {
    n.scalar_text().and_then(|t| t.parse::<i64>().ok()) > Some(0)
}

/// Synchronous replication turned on by a count above zero at `path`.
pub(crate) fn positive_at(model: &Model, db: &Database, path: &[&str]) -> Option<Synchronous> {
    found(model, db, path, positive)
}

/// Synchronous replication turned on by a true flag at `path`.
pub(crate) fn enabled_at(model: &Model, db: &Database, path: &[&str]) -> Option<Synchronous> {
    found(model, db, path, |n| n.as_bool_lenient() == Some(true))
}
