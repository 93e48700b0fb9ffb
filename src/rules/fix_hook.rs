//! A rule's fix for one finding: the typed facts its steps bound (the
//! database and setting, or the app and the variable that triggered it)
//! handed to the fix template the rule names.

use std::collections::BTreeMap;

use super::engine::fill;
use super::schema::FixSpec;
use super::steps::{AppFact, Bindings, DatabaseFact, EnvFact, SettingFact, find, first};
use crate::fix::{Applicability, Edit, Fix, templates};
use crate::model::{Model, env};

/// The rule's fix for these bindings. A fix the tool cannot write (a
/// value it cannot see, a form it cannot edit) becomes display-only and
/// says why, rather than guessing.
pub(super) fn build(
    model: &Model,
    spec: &FixSpec,
    bindings: &Bindings,
    fields: &BTreeMap<String, String>,
) -> Fix {
    let mut notes = vec![spec.safety.trim().to_string()];
    let app = find::<AppFact>(bindings, "app");
    let database = find::<DatabaseFact>(bindings, "database").map(|d| &d.0);
    let edits: Result<Vec<Edit>, String> = if let Some(p) = &spec.set_postgres_parameter {
        match (database, find::<SettingFact>(bindings, "setting")) {
            (Some(db), Some(_)) if model.object(db.object).is_live() => {
                notes.extend(templates::live_postgres_parameter(
                    model, db, &p.name, &p.value,
                ));
                Ok(Vec::new())
            }
            (Some(db), Some(SettingFact(setting))) => {
                if let Some(per) = &p.per_database {
                    let (vars, hidden) = match app {
                        Some(AppFact { app, prefixes }) => (
                            env::of_app(model, app, prefixes),
                            env::has_hidden_sources(model, app).is_some(),
                        ),
                        _ => (Vec::new(), true),
                    };
                    notes.extend(templates::per_database_notes(
                        db, &vars, hidden, per, &p.name, &p.value,
                    ));
                }
                templates::postgres_parameter(model, db, setting, &p.value).map(|e| vec![e])
            }
            _ => Err("the rule binds no database setting to change".into()),
        }
    } else {
        match app {
            Some(AppFact { app, .. }) if model.object(app.object).is_live() => {
                notes.extend(templates::flux_managed_note(model.object(app.object)));
                Err("the app is not declared in the repository; change its values where it is installed".into())
            }
            Some(AppFact { app, prefixes }) => {
                let anchor = first::<EnvFact>(bindings).map(|e| &e.0);
                let targets: Vec<(&str, templates::EnvTarget)> = spec
                    .set_app_env
                    .iter()
                    .map(|e| {
                        let target = match (&e.base64_json, &e.value) {
                            (Some(keys), _) => templates::EnvTarget::Base64Json(keys),
                            (None, v) => templates::EnvTarget::Value(v.as_deref().unwrap_or("")),
                        };
                        (e.name.as_str(), target)
                    })
                    .collect();
                templates::app_env(model, app, prefixes, anchor, &targets)
            }
            _ => Err("the rule binds no app to change".into()),
        }
    };
    // The object whose value the fix is for: an edit that also changes
    // text other objects or other places render is not written.
    let target = match (database, app) {
        (Some(db), _) if spec.set_postgres_parameter.is_some() => Some(db.object),
        (_, Some(AppFact { app, .. })) => Some(app.object),
        _ => None,
    };
    let edits = edits.and_then(|edits| {
        let shared = target.and_then(|t| {
            edits
                .iter()
                .find_map(|e| crate::fix::shared::why_shared(model, t, e))
        });
        match shared {
            Some(why) => Err(why),
            None => Ok(edits),
        }
    });
    let title = fill(&spec.title, fields);
    match edits {
        Ok(edits) if !edits.is_empty() => Fix {
            applicability: spec.applicability,
            title,
            edits,
            notes,
        },
        Ok(_) => Fix {
            applicability: Applicability::DisplayOnly,
            title,
            edits: Vec::new(),
            notes,
        },
        Err(reason) => {
            notes.insert(0, format!("not applied automatically: {reason}"));
            Fix {
                applicability: Applicability::DisplayOnly,
                title,
                edits: Vec::new(),
                notes,
            }
        }
    }
}
