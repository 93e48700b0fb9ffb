//! The built-in fix templates that rule files name: where each provider
//! keeps Postgres parameters, and the forms an app's environment is
//! written in. Each returns the edits, or why the tool cannot write the
//! fix (the fix is then display-only, with that reason).

use base64::Engine;

use super::Edit;
use super::edits::{
    NewItem, NewValue, append_block_line, append_items, insert_entries, quoted, remove_entry,
    replace_scalar, string_scalar,
};
use crate::model::Model;
use crate::model::app::App;
use crate::model::database::Database;
use crate::model::env::{self, EnvVar, ValuesPrefix};
use crate::model::postgres::{ParameterForm, ParameterHome, ParameterMap};
use crate::model::settings::Setting;
use crate::rules::steps::SessionSpec;
use crate::yaml::{Node, Origin, Span, Style, Value};

/// Why a fix cannot be written; shown as the display-only fix's note.
pub type Reason = String;

/// How many times `${name}` (with or without a default) is used in the
/// files the run read.
fn variable_uses(model: &Model, name: &str) -> usize {
    let plain = format!("${{{name}}}");
    let with_default = format!("${{{name}:");
    (0..model.sources.len() as u32)
        .map(|i| {
            let text = &model.sources.get(crate::yaml::FileId(i)).text;
            text.matches(&plain).count() + text.matches(&with_default).count()
        })
        .sum()
}

/// Rewrites a written scalar. A value that came from a Flux variable is
/// changed where the variable is defined when nothing else uses it and
/// the use site is quoted (so the result stays a string); otherwise the
/// use site gets the literal value.
fn rewrite_value(model: &Model, node: &Node, value: &str) -> Result<Edit, Reason> {
    if let Some(Origin::Substituted {
        variable,
        defined_at,
        unknown,
        ..
    }) = node.origin()
    {
        if *unknown {
            return Err(format!(
                "the value comes from ${{{variable}}}, defined in a source the repository \
                 does not show (encrypted?): set it to {value} there"
            ));
        }
        if let Some(def) = defined_at
            && node.style() == Style::Quoted
            && variable_uses(model, variable) == 1
            && let Some(edit) = replace_scalar(model.sources, *def, value)
        {
            return Ok(edit);
        }
    }
    replace_scalar(model.sources, node.span(), value).ok_or_else(|| {
        format!(
            "the value at {} is not written as a single scalar",
            model.sources.location(node.span())
        )
    })
}

/// `name: "value"` for a parameters map: operators want strings there.
fn parameter_entry(name: &str, value: &str) -> (String, NewValue) {
    (
        name.to_string(),
        NewValue::Scalar(string_scalar(value, '"')),
    )
}

/// Follows `path` from `root` through existing maps and inserts what is
/// missing under the deepest one: `leaf` under the last key.
fn ensure_path(
    model: &Model,
    root: &Node,
    path: &[&str],
    leaf: (String, NewValue),
) -> Result<Edit, Reason> {
    let mut node = root;
    let mut depth = 0;
    while depth < path.len() {
        match node.get(path[depth]) {
            Some(child) if child.as_map().is_some() => {
                node = child;
                depth += 1;
            }
            Some(_) => {
                return Err(format!(
                    "{} is not a map the tool can add to",
                    path[..=depth].join(".")
                ));
            }
            None => break,
        }
    }
    let mut value = vec![leaf];
    for key in path[depth..].iter().rev() {
        value = vec![(key.to_string(), NewValue::Map(value))];
    }
    insert_entries(model.sources, node, &value).ok_or_else(|| {
        format!(
            "{} is not written as a block the tool can add to",
            path[..depth].join(".")
        )
    })
}

/// Sets a Postgres parameter where the database's provider reads it:
/// replacing the written value, adding it to the parameter map, text
/// block or argument list, or creating the missing map.
pub fn postgres_parameter(
    model: &Model,
    db: &Database,
    setting: &Setting,
    value: &str,
) -> Result<Edit, Reason> {
    let sources = model.sources;
    let name = setting.name.as_str();
    let line = format!("{name} = {value}");
    // Flags in an env value (POSTGRESQL_EXTRA_FLAGS, POSTGRES_INITDB_ARGS)
    // are one string the tool does not edit: the provider's own home for
    // a setting (a plain workload's args, which win over both) takes the
    // new value, or says why it cannot.
    let from_env = setting
        .container
        .as_ref()
        .is_some_and(|m| m.path.starts_with("env "));
    let (written, map) = match from_env {
        true => (None, None),
        false => (setting.node.as_ref(), setting.container.as_ref()),
    };
    let container = map.map(|c| &c.node);
    if let Some(node) = written {
        return match container.map(|c| &c.value) {
            // A postgresql.conf block: the span is the setting's line when
            // it could be found, else the whole block (a later line wins).
            Some(Value::Str(_)) => {
                let text = &sources.get(node.span().file).text;
                let at = text.get(node.span().start as usize..node.span().end as usize);
                match (at, container) {
                    (Some(t), _) if t.starts_with(name) && !t.contains('\n') => Ok(Edit {
                        file: node.span().file,
                        start: node.span().start,
                        end: node.span().end,
                        replacement: line,
                    }),
                    (_, Some(block)) => append_block_line(sources, block, &line)
                        .ok_or_else(|| "the postgresql.conf block is not a literal block".into()),
                    _ => Err("the postgresql.conf block cannot be located".into()),
                }
            }
            // `-c name=value` or `--name=value`: keep the form, change the value.
            Some(Value::Seq(_)) => {
                let arg = node.as_str().unwrap_or_default();
                let (head, _) = arg
                    .split_once('=')
                    .ok_or_else(|| format!("argument {arg:?} has no value"))?;
                rewrite_value(model, node, &format!("{head}={value}"))
            }
            _ => rewrite_value(model, node, value),
        };
    }
    let provider_root = &model.object(db.object).root;
    match map {
        Some(ParameterMap { node: c, path, .. }) if matches!(c.value, Value::Str(_)) => {
            append_block_line(sources, c, &line)
                .ok_or_else(|| format!("{path} is not a literal block"))
        }
        Some(ParameterMap { node: c, .. }) if matches!(c.value, Value::Seq(_)) => {
            let quote = c
                .as_seq()
                .and_then(|s| s.first())
                .and_then(|n| {
                    sources
                        .get(n.span().file)
                        .text
                        .get(n.span().start as usize..)
                })
                .and_then(|t| t.chars().next())
                .filter(|q| matches!(q, '"' | '\''));
            let item = |s: &str| match quote {
                Some(q) => NewItem::Scalar(quoted(s, q)),
                None => NewItem::Scalar(string_scalar(s, '"')),
            };
            append_items(sources, c, &[item("-c"), item(&format!("{name}={value}"))])
                .ok_or_else(|| "the container's args are not a list the tool can add to".into())
        }
        Some(ParameterMap {
            node: c,
            path,
            form: ParameterForm::Map,
        }) => insert_entries(sources, c, &[parameter_entry(name, value)])
            .ok_or_else(|| format!("{path} is not written as a map")),
        _ => match db.provider.parameter_home(model, db) {
            Some(ParameterHome::Map(path)) => {
                ensure_path(model, provider_root, path, parameter_entry(name, value))
            }
            Some(ParameterHome::ConfBlock { path, key, keep }) => {
                let path: Vec<&str> = path.iter().map(String::as_str).collect();
                let mut lines: Vec<String> = keep.iter().map(|l| l.to_string()).collect();
                lines.push(line.clone());
                ensure_path(
                    model,
                    provider_root,
                    &path,
                    (key.into(), NewValue::Block(lines)),
                )
            }
            Some(ParameterHome::Args(c)) => {
                let args = format!(
                    "[{}, {}]",
                    quoted("-c", '"'),
                    quoted(&format!("{name}={value}"), '"')
                );
                insert_entries(sources, c?, &[("args".into(), NewValue::Scalar(args))])
                    .ok_or_else(|| "the postgres container is not written as a map".into())
            }
            Some(ParameterHome::Undecided(why)) => Err(why),
            None => Err(format!(
                "the {} keeps no parameters where the tool can write them",
                db.provider.as_str()
            )),
        },
    }
}

/// A copy of the setting where the operator does not read it
/// ([`crate::model::postgres::PostgresOperator::ignored_copy`]): left
/// beside the fix's edit, it reads as the setting to anyone who opens the
/// file. The edit deleting it when its lines can be deleted alone, and
/// the note for either case ([`IgnoredCopy::note`]).
pub struct IgnoredCopy {
    pub delete: Option<Edit>,
    unread: String,
}

impl IgnoredCopy {
    pub fn note(&self, deleted: bool) -> String {
        if deleted {
            format!(
                "{}: the fix deletes it, so that it is not taken for the setting",
                self.unread
            )
        } else {
            format!(
                "{}: delete it with this change, so that it is not taken for the setting",
                self.unread
            )
        }
    }
}

pub fn ignored_copy(model: &Model, db: &Database, name: &str) -> Option<IgnoredCopy> {
    let copy = db.provider.ignored_copy(model, db, name)?;
    Some(IgnoredCopy {
        delete: remove_entry(model.sources, &copy.entries),
        unread: format!(
            "{} at {} {}",
            copy.path,
            model.sources.location(copy.at),
            copy.why
        ),
    })
}

/// A variable to set, with its value as the rule gives it.
pub enum EnvTarget<'a> {
    Value(&'a str),
    /// Keys merged into a base64 JSON object, keeping the keys it has.
    Base64Json(&'a serde_json::Map<String, serde_json::Value>),
}

fn encode_json(map: &serde_json::Map<String, serde_json::Value>) -> String {
    let json = serde_json::Value::Object(map.clone()).to_string();
    base64::engine::general_purpose::STANDARD.encode(json)
}

/// The value the variable should have, given the current one.
fn target_value(name: &str, target: &EnvTarget, current: Option<&str>) -> Result<String, Reason> {
    match target {
        EnvTarget::Value(v) => Ok(v.to_string()),
        EnvTarget::Base64Json(keys) => {
            let mut map = match current.map(str::trim).filter(|c| !c.is_empty()) {
                None => serde_json::Map::new(),
                Some(c) => base64::engine::general_purpose::STANDARD
                    .decode(c)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                    .and_then(|j| match j {
                        serde_json::Value::Object(m) => Some(m),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        format!("{name} is not base64 of a JSON object; not replacing it")
                    })?,
            };
            for (k, v) in keys.iter() {
                map.entry(k.clone()).or_insert_with(|| v.clone());
            }
            Ok(encode_json(&map))
        }
    }
}

/// The nodes from a root down to the node written at `span`, each with
/// the key it is under (`None` for sequence items and the root).
fn chain_to(root: &Node, span: Span) -> Option<Vec<(Option<&str>, &Node)>> {
    if root.span() == span && !matches!(root.value, Value::Map(_) | Value::Seq(_)) {
        return Some(vec![(None, root)]);
    }
    let children: Vec<(Option<&str>, &Node)> = match &root.value {
        Value::Map(m) => m.iter().map(|(k, v)| (k.as_str(), v)).collect(),
        Value::Seq(s) => s.iter().map(|n| (None, n)).collect(),
        _ => return None,
    };
    for (key, child) in children {
        if let Some(mut rest) = chain_to(child, span) {
            rest[0].0 = key;
            rest.insert(0, (None, root));
            return Some(rest);
        }
    }
    None
}

/// Where the variable that triggered the finding is written, searched in
/// the files as written first (inline values, workloads, ConfigMaps) and
/// then in the release's merged values (values from a ConfigMap key).
fn locate<'m>(model: &'m Model, app: &App, span: Span) -> Option<Vec<(Option<&'m str>, &'m Node)>> {
    // The objects of the value's own file first, by the model's index: a
    // search through every object per finding made large repos quadratic.
    // Values patched in from another file are still found by the full
    // search after it.
    model
        .written_in(span.file)
        .find_map(|r| chain_to(&model.object(r).root, span))
        .or_else(|| chain_to(&model.release(app.object)?.values, span))
        .or_else(|| {
            model
                .objects
                .iter()
                .filter(|o| o.file != span.file)
                .find_map(|o| chain_to(&o.root, span))
        })
}

/// Sets variables of `app`: a variable already written gets its new
/// value where it is written; a missing one is added next to `anchor`
/// (the variable that triggered the finding), in the same form.
pub fn app_env(
    model: &Model,
    app: &App,
    prefixes: &[ValuesPrefix],
    anchor: Option<&EnvVar>,
    targets: &[(&str, EnvTarget)],
) -> Result<Vec<Edit>, Reason> {
    let vars = env::of_app(model, app, prefixes);
    let mut out = Vec::new();
    let mut missing: Vec<(&str, String)> = Vec::new();
    for (name, target) in targets {
        match env::lookup(&vars, name) {
            Some(v) => {
                let current = v.known().ok_or_else(|| {
                    format!(
                        "{name} is set {}; set it there",
                        v.unshown().unwrap_or_default()
                    )
                })?;
                let new = target_value(name, target, Some(current))?;
                if new == current {
                    continue;
                }
                let node = v.node.as_ref().ok_or_else(|| match &v.from {
                    Some(from) => format!("{name} is set from {from}; change it there"),
                    None => format!("{name} has no value node"),
                })?;
                out.push(rewrite_value(model, node, &new)?);
            }
            None => missing.push((name, target_value(name, target, None)?)),
        }
    }
    if missing.is_empty() {
        return Ok(out);
    }
    let anchor = anchor.ok_or("no variable of the app is written in the repository")?;
    let node = anchor.node.as_ref().ok_or_else(|| match &anchor.from {
        Some(from) => format!(
            "{} is set from {from}, not in the app's own values; add the variables next to it there",
            anchor.name
        ),
        None => format!("{} has no value in the repository", anchor.name),
    })?;
    let chain = locate(model, app, node.span())
        .ok_or_else(|| format!("cannot find where {} is written", anchor.name))?;
    let n = chain.len();
    let (key, parent) = match (chain.get(n.wrapping_sub(1)), chain.get(n.wrapping_sub(2))) {
        (Some((key, _)), Some((_, parent))) => (*key, *parent),
        _ => return Err(format!("cannot find where {} is written", anchor.name)),
    };
    let grand = n.checked_sub(3).and_then(|i| chain.get(i)).map(|(_, g)| *g);
    let scalar = |v: &str| NewValue::Scalar(string_scalar(v, '"'));
    let edit = match (key, grand.map(|g| &g.value)) {
        // `- name: X` / `value: …` items of an env list.
        (Some("value"), Some(Value::Seq(_))) => {
            let items: Vec<NewItem> = missing
                .iter()
                .map(|(name, v)| {
                    NewItem::Map(vec![
                        ("name".into(), NewValue::Scalar(string_scalar(name, '"'))),
                        ("value".into(), scalar(v)),
                    ])
                })
                .collect();
            append_items(model.sources, grand.unwrap_or(parent), &items)
        }
        // `X: {value: …}` entries of an env map.
        (Some("value"), Some(Value::Map(_))) => {
            let entries: Vec<(String, NewValue)> = missing
                .iter()
                .map(|(name, v)| (name.to_string(), scalar(v)))
                .collect();
            insert_entries(model.sources, grand.unwrap_or(parent), &entries)
        }
        // `X: …` in an env map or a ConfigMap's data.
        (Some(k), _) if k == anchor.name => {
            let entries: Vec<(String, NewValue)> = missing
                .iter()
                .map(|(name, v)| (name.to_string(), scalar(v)))
                .collect();
            insert_entries(model.sources, parent, &entries)
        }
        // Chart values the chart turns into variables
        // (`authentik.postgresql.conn_max_age`): the new keys go next to
        // it, named the same way.
        (Some(k), _) => {
            let scope = anchor
                .name
                .strip_suffix(&k.to_ascii_uppercase())
                .ok_or_else(|| format!("{} is written under an unexpected key {k}", anchor.name))?;
            let entries = missing
                .iter()
                .map(|(name, v)| {
                    let key = name
                        .strip_prefix(scope)
                        .filter(|rest| !rest.contains("__"))
                        .ok_or_else(|| format!("{name} is not a sibling of {}", anchor.name))?;
                    Ok((key.to_ascii_lowercase(), scalar(v)))
                })
                .collect::<Result<Vec<_>, Reason>>()?;
            insert_entries(model.sources, parent, &entries)
        }
        (None, _) => None,
    };
    out.push(edit.ok_or_else(|| {
        format!(
            "{} is not written in a form the tool can add to",
            anchor.name
        )
    })?);
    Ok(out)
}

/// The narrower alternative to a cluster-wide parameter: the same setting
/// for the app's database and role only, with the names the repo gives,
/// else placeholders. Display-only: it is SQL (or an operator's bootstrap
/// SQL), not a file edit.
pub fn per_database_notes(
    db: &Database,
    app_vars: &[EnvVar],
    hidden_sources: bool,
    per: &SessionSpec,
    name: &str,
    value: &str,
) -> Vec<String> {
    // The name the app is given, or its default when the variable is set
    // nowhere (not even, perhaps, in a Secret the repository does not
    // hold); never the cluster's bootstrap database (CNPG
    // `initdb.database`), which may be another app's on a shared cluster.
    let named = |env: &Option<String>, default: &Option<String>| {
        let Some(env) = env else {
            return default.clone();
        };
        match env::lookup(app_vars, env) {
            None if hidden_sources => None,
            None => default.clone(),
            Some(v) => v
                .known()
                .filter(|v| !v.is_empty() && !v.contains("${"))
                .map(str::to_string),
        }
    };
    let database =
        named(&per.database_env, &per.default_database).unwrap_or_else(|| "<database>".into());
    let user = named(&per.user_env, &per.default_user).unwrap_or_else(|| "<role>".into());
    let mut notes = vec![format!(
        "narrower alternative (display-only): only the app's database or role, as a superuser: \
         ALTER DATABASE {database} SET {name} = {value}; or ALTER ROLE {user} SET {name} = {value}; \
         new sessions pick it up"
    )];
    if let Some(m) = db.provider.init_sql_home() {
        notes.push(format!("for a new cluster, {m}"));
    }
    if database.starts_with('<') || user.starts_with('<') {
        notes.push(
            "<database> and <role> stand for names the repository does not show (a Secret?)".into(),
        );
    }
    notes
}

/// For a database that exists only in the cluster (nothing in the repo to
/// edit): the `kubectl patch` that sets the parameter, where the provider
/// reads parameters from a patchable field, plus a warning when Flux
/// manages the object and would undo the patch.
pub fn live_postgres_parameter(
    model: &Model,
    db: &Database,
    name: &str,
    value: &str,
) -> Vec<String> {
    let obj = model.object(db.object);
    let mut notes = Vec::new();
    match db.provider.parameter_fields().first() {
        Some(path) => {
            let mut patch = serde_json::json!({ name: value });
            for key in path.iter().rev() {
                patch = serde_json::json!({ *key: patch });
            }
            let resource = format!("{}.{}", obj.kind().to_ascii_lowercase(), obj.group());
            let ns = obj
                .namespace()
                .map(|n| format!(" -n {n}"))
                .unwrap_or_default();
            notes.push(format!(
                "the cluster is not declared in the repository; patch it live: kubectl patch {resource} {}{ns} --type merge -p '{patch}'",
                obj.name()
            ));
        }
        None => notes.push(format!(
            "the {} is not declared in the repository; set {name} = {value} where it is installed",
            db.provider.as_str()
        )),
    }
    notes.extend(flux_managed_note(obj));
    notes
}

/// The warning for a live object that Flux manages: a patch made in the
/// cluster is reverted at the next reconciliation.
pub fn flux_managed_note(obj: &crate::source::Object) -> Option<String> {
    let labels = obj.root.path(&["metadata", "labels"]);
    let owner = ["kustomize.toolkit.fluxcd.io", "helm.toolkit.fluxcd.io"]
        .iter()
        .find_map(|g| {
            let label = |k: &str| {
                labels
                    .and_then(|l| l.get(&format!("{g}/{k}")))
                    .and_then(Node::as_str)
            };
            Some(format!("{}/{}", label("namespace")?, label("name")?))
        })?;
    Some(format!(
        "Flux manages this object ({owner}): it reverts a live patch at its next reconciliation; change the manifest in the repository that {owner} applies"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_json_keeps_existing_keys() {
        let mut keys = serde_json::Map::new();
        keys.insert("keepalives".into(), 1.into());
        keys.insert("connect_timeout".into(), 99.into());
        let current = encode_json(&serde_json::from_str(r#"{"connect_timeout": 10}"#).unwrap());
        let out = target_value("X", &EnvTarget::Base64Json(&keys), Some(&current)).unwrap();
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(out)
            .unwrap();
        assert_eq!(
            String::from_utf8(decoded).unwrap(),
            r#"{"connect_timeout":10,"keepalives":1}"#
        );
        assert!(target_value("X", &EnvTarget::Base64Json(&keys), Some("%%")).is_err());
    }
}
