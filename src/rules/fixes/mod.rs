//! Fixes as rules propose them: byte-range edits at the place a value is
//! written, with ruff's applicability levels. A rule names a built-in
//! template (`templates`) and its steps hand it the typed facts they
//! bound (the database and setting, or the app and the variable that
//! triggered the finding); the edits travel with the finding to the `fix`
//! stage, which shows them as a diff or writes them.

pub mod shared;
pub mod templates;

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::engine::fill;
use super::schema::FixSpec;
use super::steps::{AppFact, Bindings, DatabaseFact, EnvFact, SettingFact, find, first};
use crate::model::{Model, env};
// The templates write through the YAML editing primitives.
use crate::yaml::edit as edits;
pub use crate::yaml::edit::Edit;

/// How sure a fix is to keep the configuration's meaning, as in ruff.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    /// Shown as advice only: the tool cannot write it (a value it cannot
    /// see, a choice only the user can make).
    DisplayOnly,
    /// Changes behaviour in a way the user must accept: applied only
    /// with `--unsafe-fixes`.
    Unsafe,
    /// Keeps the intent of the configuration: applied by `--fix`.
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::DisplayOnly => "display-only",
            Applicability::Unsafe => "unsafe",
            Applicability::Safe => "safe",
        }
    }
}

/// A finding's fix: edits to source files, or (display-only) advice.
#[derive(Clone, Debug, PartialEq)]
pub struct Fix {
    pub applicability: Applicability,
    /// What the fix does, one line.
    pub title: String,
    /// Empty for a display-only fix.
    pub edits: Vec<Edit>,
    /// What applying it can change or lose, why it is display-only, and
    /// narrower alternatives the user may prefer.
    pub notes: Vec<String>,
}

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
    let mut ignored = None;
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
                ignored = templates::ignored_copy(model, db, &p.name);
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
            Some(AppFact { app, .. }) if let Err(why) = read_by_release(app, &spec.set_app_env) => {
                Err(why)
            }
            Some(AppFact { app, prefixes }) => {
                let anchor = first::<EnvFact>(bindings).map(|e| &e.0);
                let (kept, left_out) = without_deprecated(app, &spec.set_app_env);
                notes.extend(left_out);
                let targets: Vec<(&str, templates::EnvTarget)> = kept
                    .into_iter()
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
        // A value fetched with --remote is in no file of the repository.
        if let Some(e) = edits.iter().find(|e| model.sources.is_virtual(e.file)) {
            return Err(format!(
                "the value is written in {}, which the repository only lists; set it with a \
                 patch in the kustomization that lists it",
                model.sources.path(e.file).display()
            ));
        }
        let shared =
            target.and_then(|t| edits.iter().find_map(|e| shared::why_shared(model, t, e)));
        match shared {
            Some(why) => Err(why),
            None => Ok(edits),
        }
    });
    let edits = edits.map(|mut edits| {
        if let Some(copy) = &ignored {
            let delete = copy.delete.as_ref().filter(|d| {
                !edits.is_empty()
                    && !edits.iter().any(|e| overlap(e, d))
                    && target.is_none_or(|t| shared::why_shared(model, t, d).is_none())
            });
            notes.push(copy.note(delete.is_some()));
            edits.extend(delete.cloned());
        }
        edits
    });
    if let (Err(_), Some(copy)) = (&edits, &ignored) {
        notes.push(copy.note(false));
    }
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

/// Whether two edits of one fix touch the same text, so that their
/// order would matter (an insertion at either end of a deletion does not).
fn overlap(a: &Edit, b: &Edit) -> bool {
    a.file == b.file
        && if a.start == a.end {
            b.start < a.start && a.start < b.end
        } else if b.start == b.end {
            a.start < b.start && b.start < a.end
        } else {
            a.start < b.end && b.start < a.end
        }
}

/// The variables worth writing for the app's release, and a note for
/// each deprecated one left out: it is written only when every release
/// the app's version allows is older than the deprecation.
fn without_deprecated<'a>(
    app: &crate::model::app::App,
    vars: &'a [super::schema::EnvFix],
) -> (Vec<&'a super::schema::EnvFix>, Vec<String>) {
    let allowed = app.releases();
    let mut notes = Vec::new();
    let kept = vars
        .iter()
        .filter(|e| {
            let Some(dep) = &e.deprecated else {
                return true;
            };
            let req = crate::model::version::parse_lenient(&dep.from)
                .and_then(|v| semver::VersionReq::parse(&format!(">={v}")).ok());
            let meets = match (&allowed, req) {
                (Ok(allowed), Some(req)) => allowed.meet(&req),
                _ => None,
            };
            let whose = match &allowed {
                Ok(allowed) => format!("{} {}", app.identity, allowed.describe()),
                Err(why) => format!("{} (its version {why})", app.identity),
            };
            let verb = match meets {
                Some(false) => return true,
                Some(true) => "is at or after",
                None => "may be at or after",
            };
            notes.push(format!(
                "{} is left out: {whose} {verb} {}, which deprecates it: {}",
                e.name,
                dep.from,
                dep.reason.trim()
            ));
            false
        })
        .collect();
    (kept, notes)
}

/// Whether the app's release reads every variable the fix sets: `Err`
/// names those it may not (a setting the release does not read would be
/// written for nothing, and the finding would stay).
fn read_by_release(
    app: &crate::model::app::App,
    vars: &[super::schema::EnvFix],
) -> Result<(), String> {
    let gated: Vec<(&str, &str)> = vars
        .iter()
        .filter_map(|e| Some((e.name.as_str(), e.since.as_deref()?)))
        .collect();
    if gated.is_empty() {
        return Ok(());
    }
    let allowed = app.releases().map_err(|why| {
        format!(
            "which variables {} reads cannot be told: its version {why}",
            app.identity
        )
    })?;
    let (mut unread, mut unknown) = (Vec::new(), Vec::new());
    for (name, since) in gated {
        let start = crate::model::version::parse_lenient(since);
        let req = start.and_then(|v| semver::VersionReq::parse(&format!(">={v}")).ok());
        match req.map(|r| allowed.meet(&r)) {
            Some(Some(true)) => {}
            Some(Some(false)) => unread.push(format!("{name} (read from {since})")),
            _ => unknown.push(format!("{name} (read from {since})")),
        }
    }
    let what = format!("{} {}", app.identity, allowed.describe());
    match (unread.is_empty(), unknown.is_empty()) {
        (true, true) => Ok(()),
        (false, _) => Err(format!(
            "{what} does not read {}, so setting {} changes nothing",
            unread.join(" or "),
            if unread.len() == 1 { "it" } else { "them" }
        )),
        (true, false) => Err(format!(
            "{what} allows releases before the one that reads {}",
            unknown.join(" or ")
        )),
    }
}
