//! The value of a setting in an app's own sessions, where it differs from
//! the server's: libpq `options` the app connects with, and the per-database
//! or per-role defaults (`ALTER DATABASE/ROLE ... SET`) that an operator's
//! bootstrap SQL writes. Postgres applies, lowest first: the server's
//! configuration, `ALTER DATABASE`, `ALTER ROLE`, `ALTER ROLE ... IN
//! DATABASE`, then the connection's own options (PostgreSQL docs, "Setting
//! Parameters" and ALTER ROLE).

use super::database::Database;
use super::env::{self, EnvValue, EnvVar};
use super::{Model, settings};
use crate::source::data::decode_base64;
use crate::yaml::Span;

/// How an app names its database and role, and passes connection options.
#[derive(Clone, Debug, Default)]
pub struct SessionQuery<'a> {
    /// Variable holding the database name, and the app's default.
    pub database_env: Option<&'a str>,
    pub default_database: Option<&'a str>,
    /// Variable holding the role (user) name, and the app's default.
    pub user_env: Option<&'a str>,
    pub default_user: Option<&'a str>,
    /// Variables holding libpq connection options: base64 of a JSON
    /// object with an `options` key (Authentik's CONN_OPTIONS), or the
    /// `options` string itself (`PGOPTIONS`).
    pub options_env: &'a [String],
}

/// A value of the setting in the app's sessions.
#[derive(Clone, Debug)]
pub struct SessionSetting {
    pub value: String,
    /// Where it is written.
    pub span: Span,
    /// What writes it, for messages.
    pub source: String,
    /// True for SQL that an operator ran once, when the cluster was
    /// created: the repository cannot tell whether it ran on this cluster
    /// or was changed since.
    pub bootstrap_only: bool,
}

/// Findings about the session value that the user must see even when it
/// changes nothing (an option the app ignores).
#[derive(Clone, Debug, Default)]
pub struct Session {
    pub setting: Option<SessionSetting>,
    pub notes: Vec<String>,
}

/// The value of `name` in the sessions of the app whose variables are
/// `vars`, on `db`, where the repository (or the cluster's Secrets) shows
/// one. `unseen_env` names where variables may be set out of sight
/// ([`env::has_hidden_sources`]): options there are a remedy the user is
/// told cannot be seen.
pub fn of_app(
    model: &Model,
    db: &Database,
    vars: &[EnvVar],
    query: &SessionQuery,
    name: &str,
    unseen_env: Option<&str>,
) -> Session {
    let mut session = Session::default();
    // Connection options win over every stored default.
    let mut options_set = false;
    for var_name in query.options_env {
        let Some(var) = env::lookup(vars, var_name) else {
            continue;
        };
        options_set = true;
        let (text, shown) = match &var.value {
            EnvValue::Known(text) => (text.as_str(), var_name.clone()),
            EnvValue::Concealed { why, value } => {
                (value.reveal(), format!("{var_name} (set {why})"))
            }
            EnvValue::Hidden(why) => {
                session.notes.push(format!(
                    "{var_name} is set {why}: whether it passes -c {name}=… (a remedy) cannot be seen"
                ));
                continue;
            }
        };
        match connection_options(var_name, text) {
            Ok(options) => {
                if let Some(value) = option_value(&options, name) {
                    session.setting = Some(SessionSetting {
                        value: settings::normalize(name, &value),
                        span: var.span,
                        source: format!("-c {name}={value} in {shown}"),
                        bootstrap_only: false,
                    });
                    return session;
                }
            }
            Err(why) => session.notes.push(why),
        }
    }
    if let Some(src) = unseen_env.filter(|_| !options_set && !query.options_env.is_empty()) {
        session.notes.push(format!(
            "{src} could set {}: whether that passes -c {name}=… (a remedy) cannot be seen",
            query.options_env.join(" or ")
        ));
    }
    let named = |env_name: Option<&str>, default: Option<&str>| match env_name
        .and_then(|e| env::lookup(vars, e))
    {
        Some(v) => v.known().map(str::to_string),
        None => default.map(str::to_string),
    };
    let database = named(query.database_env, query.default_database);
    let role = named(query.user_env, query.default_user);
    session.setting = db
        .provider
        .bootstrap_sql(model, db)
        .into_iter()
        .flat_map(|(node, source)| {
            let text = node.scalar_text().unwrap_or_default();
            alter_sets(&text, name)
                .into_iter()
                .map(move |set| (set, node.span(), source.clone()))
        })
        .filter(|(set, _, _)| set.applies_to(database.as_deref(), role.as_deref()))
        // The most specific scope wins; among equals, the last statement.
        .max_by_key(|(set, _, _)| set.rank())
        .map(|(set, span, source)| SessionSetting {
            value: settings::normalize(name, &set.value),
            span,
            source: format!("{} in {source}", set.shown(name)),
            bootstrap_only: true,
        });
    session
}

/// The libpq `options` string of a variable. Authentik reads CONN_OPTIONS
/// with `get_dict_from_b64_json` (authentik/lib/config.py): base64 of a
/// JSON object, and anything else is ignored with a warning in its log.
fn connection_options(var_name: &str, text: &str) -> Result<String, String> {
    if var_name == "PGOPTIONS" {
        return Ok(text.to_string());
    }
    let ignored = |why: &str| {
        format!("{var_name} is not base64 of a JSON object ({why}): Authentik ignores it")
    };
    let bytes = decode_base64(text.trim()).ok_or_else(|| ignored("not base64"))?;
    let json: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(|_| ignored("not JSON"))?;
    Ok(json
        .get("options")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("")
        .to_string())
}

/// `-c name=value`, `-cname=value` or `--name=value` in a libpq `options`
/// string (the server's command-line switches); the last one wins.
fn option_value(options: &str, name: &str) -> Option<String> {
    let mut words = options.split_whitespace();
    let mut found = None;
    while let Some(w) = words.next() {
        let assignment = if w == "-c" {
            words.next()
        } else {
            w.strip_prefix("-c").or_else(|| w.strip_prefix("--"))
        };
        if let Some((k, v)) = assignment.and_then(|a| a.split_once('='))
            && k.replace('-', "_") == name
        {
            found = Some(v.to_string());
        }
    }
    found
}

/// One `ALTER DATABASE/ROLE ... SET name = value` statement.
#[derive(Clone, Debug, PartialEq)]
struct AlterSet {
    database: Option<String>,
    role: Option<String>,
    value: String,
}

impl AlterSet {
    fn applies_to(&self, database: Option<&str>, role: Option<&str>) -> bool {
        let same = |want: &Option<String>, have: Option<&str>| {
            want.as_deref().is_none_or(|w| have == Some(w))
        };
        same(&self.database, database) && same(&self.role, role)
    }

    fn rank(&self) -> u8 {
        match (&self.role, &self.database) {
            (Some(_), Some(_)) => 3,
            (Some(_), None) => 2,
            _ => 1,
        }
    }

    fn shown(&self, name: &str) -> String {
        match (&self.role, &self.database) {
            (Some(r), Some(d)) => format!("ALTER ROLE {r} IN DATABASE {d} SET {name}"),
            (Some(r), None) => format!("ALTER ROLE {r} SET {name}"),
            (None, Some(d)) => format!("ALTER DATABASE {d} SET {name}"),
            (None, None) => format!("SET {name}"),
        }
        .to_string()
            + &format!(" = {}", self.value)
    }
}

/// The `ALTER DATABASE d SET name = v`, `ALTER ROLE r [IN DATABASE d] SET
/// name = v` (and `ALTER USER`, `TO` for `=`) statements of a SQL text,
/// parsed narrowly: anything else is no remedy.
fn alter_sets(sql: &str, name: &str) -> Vec<AlterSet> {
    // psql meta-commands (`\c authentik`, in Crunchy's init SQL, which
    // PGO runs with psql) and comments are not statements.
    let sql: String = sql
        .lines()
        .map(|l| match l.trim_start() {
            t if t.starts_with('\\') => "",
            t => t.split("--").next().unwrap_or(""),
        })
        .collect::<Vec<_>>()
        .join("\n");
    sql.split(';')
        .filter_map(|stmt| {
            let spaced = stmt.replace('=', " = ");
            let words: Vec<&str> = spaced.split_whitespace().collect();
            let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
            let ident = |w: &str| w.trim_matches('"').to_string();
            if lower.first().map(String::as_str) != Some("alter") {
                return None;
            }
            let (mut set, rest) = match lower.get(1).map(String::as_str) {
                Some("database") => (
                    AlterSet {
                        database: Some(ident(words.get(2)?)),
                        role: None,
                        value: String::new(),
                    },
                    3,
                ),
                Some("role" | "user") => {
                    let role = Some(ident(words.get(2)?));
                    if lower.get(3).map(String::as_str) == Some("in") {
                        (lower.get(4) == Some(&"database".to_string())).then_some(())?;
                        (
                            AlterSet {
                                role,
                                database: Some(ident(words.get(5)?)),
                                value: String::new(),
                            },
                            6,
                        )
                    } else {
                        (
                            AlterSet {
                                role,
                                database: None,
                                value: String::new(),
                            },
                            3,
                        )
                    }
                }
                _ => return None,
            };
            match lower.get(rest..)? {
                [set_kw, param, op, value] if set_kw == "set" && (op == "=" || op == "to") => {
                    (param.trim_matches('"') == name).then_some(())?;
                    set.value = value.trim_matches(['\'', '"']).to_string();
                    Some(set)
                }
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alter_statements_are_parsed_narrowly() {
        let sets = alter_sets(
            "ALTER DATABASE authentik SET synchronous_commit = off;\n\
             \\c authentik\n-- per role\n\
             alter role \"authentik\" in database authentik set synchronous_commit to 'local';\n\
             ALTER ROLE app SET work_mem = '64MB'; SELECT 1; ALTER DATABASE x RESET synchronous_commit",
            "synchronous_commit",
        );
        assert_eq!(
            sets,
            vec![
                AlterSet {
                    database: Some("authentik".into()),
                    role: None,
                    value: "off".into()
                },
                AlterSet {
                    database: Some("authentik".into()),
                    role: Some("authentik".into()),
                    value: "local".into()
                },
            ]
        );
        assert!(
            alter_sets(
                "ALTER DATABASE a SET synchronous_commit",
                "synchronous_commit"
            )
            .is_empty()
        );
    }

    #[test]
    fn connection_options_as_authentik_and_libpq_read_them() {
        // base64 of {"options": "-c synchronous_commit=off"}
        let b64 = "eyJvcHRpb25zIjogIi1jIHN5bmNocm9ub3VzX2NvbW1pdD1vZmYifQ==";
        let options = connection_options("AUTHENTIK_POSTGRESQL__CONN_OPTIONS", b64).unwrap();
        assert_eq!(
            option_value(&options, "synchronous_commit").as_deref(),
            Some("off")
        );
        assert!(
            connection_options(
                "AUTHENTIK_POSTGRESQL__CONN_OPTIONS",
                r#"{"options": "-c synchronous_commit=off"}"#
            )
            .unwrap_err()
            .contains("Authentik ignores it")
        );
        assert_eq!(
            option_value(
                "-csynchronous_commit=local --work-mem=4MB",
                "synchronous_commit"
            )
            .as_deref(),
            Some("local")
        );
        assert_eq!(
            option_value("--synchronous-commit=off", "synchronous_commit").as_deref(),
            Some("off")
        );
        assert_eq!(
            option_value("-c statement_timeout=5s", "synchronous_commit"),
            None
        );
    }
}
