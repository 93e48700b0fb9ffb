//! `setting`: an effective Postgres setting of the bound database, and
//! the value the bound app's own sessions run with when the repository
//! shows one.

use serde::{Deserialize, Serialize};

use super::{
    AppFact, Bindings, DatabaseFact, Described, Fact, Shape, Step, bind, find, first_line, shown,
};
use crate::model::Model;
use crate::model::env;
use crate::model::session::{self, SessionQuery, SessionSetting};
use crate::model::settings::{self, Setting};
use crate::rules::Severity;
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SettingStep {
    /// Postgres parameter name.
    pub name: String,
    /// The step holds when the effective value is one of these
    /// (compared after Postgres' boolean normalisation: off, on).
    #[serde(rename = "in")]
    pub values: Vec<String>,
    /// With an app bound: the value in the app's own sessions wins when
    /// the repository shows one (connection options, or bootstrap SQL
    /// `ALTER DATABASE/ROLE ... SET`, which turns the finding into info).
    #[serde(default)]
    pub session: Option<SessionSpec>,
}

// How an app names its database and role and passes connection options:
// read from its environment for `setting.session`, and for the
// per-database alternative of a parameter fix
// (`setPostgresParameter.perDatabase`, which takes no `optionsEnv`). No
// doc comment: it would become the type's description in the rule
// schema.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionSpec {
    /// Variable with the app's database name, and the app's default.
    #[serde(default)]
    pub database_env: Option<String>,
    #[serde(default)]
    pub default_database: Option<String>,
    /// Variable with the app's role (user) name, and the app's default.
    #[serde(default)]
    pub user_env: Option<String>,
    #[serde(default)]
    pub default_user: Option<String>,
    /// Variables with libpq connection options: Authentik's CONN_OPTIONS
    /// (base64 JSON with an `options` key) or `PGOPTIONS`.
    #[serde(default)]
    pub options_env: Vec<String>,
}

impl SessionSpec {
    /// The model's question for an app's sessions.
    pub fn query(&self) -> SessionQuery<'_> {
        SessionQuery {
            database_env: self.database_env.as_deref(),
            default_database: self.default_database.as_deref(),
            user_env: self.user_env.as_deref(),
            default_user: self.default_user.as_deref(),
            options_env: &self.options_env,
        }
    }
}

/// The effective value of a setting, and where it is or would be written.
#[derive(Clone, Debug)]
pub(crate) struct SettingFact(pub Setting);

/// A per-database or per-role value from bootstrap SQL that the rule
/// does not flag, with caveats: the finding stands as info.
#[derive(Clone, Debug)]
pub(crate) struct SessionFact {
    pub setting: SessionSetting,
    pub caveats: Vec<String>,
}

/// Caveats about the app's session settings (an option it ignores).
#[derive(Clone, Debug)]
pub(crate) struct SessionNotes(pub Vec<String>);

impl Step for SettingStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let model = cx.model;
        let Some(DatabaseFact(db)) = find(bound, "database") else {
            return Vec::new();
        };
        let setting = settings::effective(model, db, &self.name);
        let wanted: Vec<String> = self
            .values
            .iter()
            .map(|v| settings::normalize(&self.name, v))
            .collect();
        if !wanted.contains(&setting.value) {
            return Vec::new();
        }
        let mut found = vec![bind("setting", SettingFact(setting))];
        if let (Some(spec), Some(AppFact { app, prefixes })) = (&self.session, find(bound, "app")) {
            let query = spec.query();
            let vars = env::of_app(model, app, prefixes);
            let unseen = env::has_hidden_sources(model, app);
            let session = session::of_app(model, db, &vars, &query, &self.name, unseen.as_deref());
            match session.setting {
                // The app's sessions run with a value the rule does not
                // flag, on every connection: no finding.
                Some(s) if !s.bootstrap_only && !wanted.contains(&s.value) => {
                    return Vec::new();
                }
                Some(setting) if !wanted.contains(&setting.value) => {
                    found.push(bind(
                        "session",
                        SessionFact {
                            setting,
                            caveats: session.notes,
                        },
                    ));
                }
                _ if !session.notes.is_empty() => {
                    found.push(bind("session", SessionNotes(session.notes)));
                }
                _ => {}
            }
        }
        vec![found]
    }
}

impl Fact for SettingFact {
    fn describe(&self, model: &Model) -> Described {
        let s = &self.0;
        let value = shown(model, s.node.as_ref(), s.value.clone());
        let label = match (&s.node, &s.container) {
            (Some(n), _) => Some(Label {
                span: n.span(),
                text: format!("{} = {value}", s.name),
            }),
            (None, Some(c)) => Some(Label {
                span: first_line(model, c.node.span()),
                text: format!(
                    "{} is not set here, so it is {} (the default)",
                    s.name, s.value
                ),
            }),
            (None, None) => None,
        };
        let source = if s.node.is_some() {
            "written"
        } else {
            "default"
        };
        Described {
            labels: label.into_iter().collect(),
            evidence: vec![
                ("name".into(), s.name.clone()),
                ("value".into(), value),
                ("source".into(), source.into()),
            ],
            identity: s.name.clone(),
        }
    }
}

impl Fact for SessionFact {
    fn describe(&self, _model: &Model) -> Described {
        let s = &self.setting;
        Described {
            labels: vec![Label {
                span: s.span,
                text: format!("run once at bootstrap: {}", s.source),
            }],
            evidence: vec![
                ("value".into(), s.value.clone()),
                ("source".into(), s.source.clone()),
            ],
            identity: String::new(),
        }
    }

    fn shape(&self, finding: &mut Shape) {
        finding.severity = Severity::Info;
        finding.notes.push(format!(
            "a remedy the repository only partly shows: {}; that SQL runs once, when \
             the cluster is created, so whether this cluster has it (or had it changed \
             since) is not in the repository; the commit probe (--probe-dsn, or --live \
             with probes), connected as the app, sees the value its sessions get \
             (pg_db_role_setting)",
            self.setting.source
        ));
        finding.notes.extend(self.caveats.iter().cloned());
    }
}

impl Fact for SessionNotes {
    fn describe(&self, _model: &Model) -> Described {
        Described::default()
    }

    fn shape(&self, finding: &mut Shape) {
        finding.notes.extend(self.0.iter().cloned());
    }
}
