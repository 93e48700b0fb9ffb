//! The chain of every app and database of the model, whether or not a
//! rule fires: app → database (its synchronous_commit, its synchronous
//! replication) → storage class. `inventory --graph` draws them; they are
//! made of the links a finding's chain is made of, so that the findings'
//! chains fall on the same nodes.

use std::collections::HashMap;

use super::Rule;
use super::finding::Link;
use super::steps::{
    AppFact, DatabaseFact, Fact, ReplicationFact, SettingFact, Spec, StorageFact, link,
};
use crate::model::database::{self, Database};
use crate::model::{Model, ObjRef, Unknown, app, replication, settings, storage};

/// The setting shown with every Postgres database: the one whose default
/// makes each commit wait for the storage (the flagship rules' setting).
const SETTING: &str = "synchronous_commit";

/// One chain per app and database it uses, one per app that uses none
/// the repository declares, and one per database no app is seen to use.
/// Which database an app uses is read from its environment
/// ([`database::named_in_env`]) and, for the apps a rule names, as that
/// rule reads it (its chart conventions, host variables, bundled chart).
pub fn of_repository(model: &Model, rules: &[Rule]) -> Vec<Vec<Link>> {
    let by_rules = databases_by_rules(model, rules);
    let mut chains = Vec::new();
    let mut used = std::collections::HashSet::new();
    for app in app::every(model) {
        let mut databases = database::named_in_env(model, &app);
        for db in by_rules.get(&app.object).into_iter().flatten() {
            if !databases.iter().any(|d| d.object == db.object) {
                databases.push(db.clone());
            }
        }
        let app_link = bound(model, "app", &AppFact::new(app));
        if databases.is_empty() {
            chains.push(vec![app_link]);
            continue;
        }
        for db in databases {
            used.insert(db.object);
            chains.push(
                std::iter::once(app_link.clone())
                    .chain(database_links(model, db))
                    .collect(),
            );
        }
    }
    for db in database::all(model) {
        if !used.contains(&db.object) {
            chains.push(database_links(model, db));
        }
    }
    chains
}

/// The databases of the apps each rule names, found as the rule's
/// `database` step after its `app` step finds them (any version).
fn databases_by_rules(model: &Model, rules: &[Rule]) -> HashMap<ObjRef, Vec<Database>> {
    let mut found: HashMap<ObjRef, Vec<Database>> = HashMap::new();
    for rule in rules {
        let app_step = rule.steps.iter().find_map(|s| match s {
            Spec::App(step) => Some(step),
            _ => None,
        });
        let db_step = rule.steps.iter().find_map(|s| match s {
            Spec::Database(step) => Some(step),
            _ => None,
        });
        let (Some(app_step), Some(db_step)) = (app_step, db_step) else {
            continue;
        };
        for fact in app_step.apps(model) {
            if let Ok(db) = db_step.of_app(model, &fact) {
                found.entry(fact.app.object).or_default().push(db);
            }
        }
    }
    found
}

/// A database, its setting, its synchronous replication when it has one,
/// and its storage, or why the repository does not tell its storage.
fn database_links(model: &Model, db: Database) -> Vec<Link> {
    let setting = SettingFact(settings::effective(model, &db, SETTING));
    let sync = replication::synchronous(model, &db).map(ReplicationFact);
    let storage = storage::of_database(model, &db);
    let mut links = vec![
        bound(model, "database", &DatabaseFact(db)),
        bound(model, "setting", &setting),
    ];
    links.extend(sync.map(|r| bound(model, "replication", &r)));
    links.push(match storage {
        Ok(st) => bound(model, "storage", &StorageFact(st)),
        Err(Unknown(why)) => Link {
            binding: "storage".into(),
            object: None,
            facts: vec![("unknown".into(), why)],
            group: None,
        },
    });
    links
}

fn bound(model: &Model, binding: &str, fact: &dyn Fact) -> Link {
    link(model, binding, fact, fact.describe(model).evidence)
}
