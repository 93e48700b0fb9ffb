//! Hover on a Postgres cluster's declaration: its effective settings
//! (the ones the rules weigh), the storage under it and how it
//! replicates, as the model derives them.

use crate::model::{Model, database, replication, settings, storage};
use crate::source::Object;
use crate::source::repo::Repo;

/// The settings shown: those the built-in rules read.
const SETTINGS: &[&str] = &[
    "synchronous_commit",
    "fsync",
    "wal_level",
    "max_connections",
];

/// What the model knows of the database `object` declares, if it
/// declares one.
pub fn facts(repo: &Repo, object: &Object) -> Option<String> {
    let model = Model::new(repo);
    let index = repo.objects.iter().position(|o| std::ptr::eq(o, object))?;
    let db = database::all(&model)
        .into_iter()
        .find(|d| d.object == index)?;
    let sources = &repo.files.sources;
    let mut lines = vec![format!(
        "**Postgres** ({}), {} instance(s)",
        db.provider.as_str(),
        db.instances
    )];
    for name in SETTINGS {
        let s = settings::effective(&model, &db, name);
        lines.push(match &s.node {
            Some(node) => format!(
                "- `{name}` = `{}` ({})",
                s.value,
                sources.location(node.span())
            ),
            None if s.value.is_empty() => format!("- `{name}` not set: Postgres's default"),
            None => format!("- `{name}` = `{}` (the default)", s.value),
        });
    }
    lines.push(match storage::of_database(&model, &db) {
        Ok(st) => format!(
            "- storage: class `{}` ({}, provisioner `{}`)",
            st.class,
            st.category.as_str(),
            st.decl.provisioner
        ),
        Err(unknown) => format!("- storage: unknown ({})", unknown.0),
    });
    lines.push(match replication::synchronous(&model, &db) {
        Some(sync) => format!(
            "- replicates synchronously: {} ({})",
            sync.setting,
            sources.location(sync.node.span())
        ),
        None => "- replicates asynchronously, or not at all".into(),
    });
    Some(lines.join("\n"))
}
