//! A database's effective Postgres settings: where each is written for its
//! provider, or the server default when it is not.

use super::Model;
use super::database::Database;
use super::postgres::{ParameterForm, ParameterMap};
use crate::yaml::{Node, Span, Style, Value};

/// A setting as the server will run with it.
#[derive(Clone, Debug)]
pub struct Setting {
    pub name: String,
    /// Normalised value (`on`/`off` for booleans, lower case).
    pub value: String,
    /// Where the value is written; `None` when the default applies.
    pub node: Option<Node>,
    /// The map (or text block, or command line) where the setting is or
    /// would be written: where a fix goes.
    pub container: Option<ParameterMap>,
}

/// PostgreSQL defaults for the settings rules look at (postgresql.conf.sample;
/// the same in PostgreSQL 15, 16 and 17: docs/<v>/runtime-config-wal.html,
/// runtime-config-connection.html, runtime-config-client.html).
const DEFAULTS: &[(&str, &str)] = &[
    ("synchronous_commit", "on"),
    ("fsync", "on"),
    ("full_page_writes", "on"),
    ("max_connections", "100"),
    ("tcp_keepalives_idle", "0"),
    ("idle_session_timeout", "0"),
    ("ssl_min_protocol_version", "TLSv1.2"),
];

pub fn default_of(name: &str) -> Option<&'static str> {
    DEFAULTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

/// Normalises a value the way Postgres reads it: booleans accept
/// on/off/true/false/yes/no/1/0 in any case.
pub fn normalize(name: &str, value: &str) -> String {
    let lower = value.trim().trim_matches(['\'', '"']).to_ascii_lowercase();
    let boolean = matches!(name, "fsync" | "full_page_writes" | "synchronous_commit");
    match lower.as_str() {
        "true" | "yes" | "1" if boolean => "on".into(),
        "false" | "no" | "0" if boolean => "off".into(),
        _ => lower,
    }
}

/// The effective value of `name` on `db`.
pub fn effective(model: &Model, db: &Database, name: &str) -> Setting {
    // A section that would hold the parameter map holds no parameter
    // itself: `spec.postgresql.synchronous_commit` beside no `parameters`
    // is pruned by the operator's CRD, not read.
    let holds = |m: &ParameterMap| m.form != ParameterForm::Section;
    let container = db
        .provider
        .parameter_maps(model, db)
        .into_iter()
        .find(|m| holds(m) && lookup(&m.node, name).is_some())
        .or_else(|| db.provider.parameter_maps(model, db).into_iter().next());
    let written = container
        .as_ref()
        .filter(|c| holds(c))
        .and_then(|c| lookup(&c.node, name))
        .map(|(value, node)| {
            let mut node = node;
            if let Some(span) = line_span(model, &node, name) {
                node.set_span(span);
            }
            (value, node)
        });
    match written {
        Some((value, node)) => Setting {
            name: name.to_string(),
            value: normalize(name, &value),
            node: Some(node),
            container,
        },
        None => Setting {
            name: name.to_string(),
            value: default_of(name).unwrap_or("").to_string(),
            node: None,
            container,
        },
    }
}

/// In a postgresql.conf text block (`extendedConfiguration: |`), the span
/// of the last line that sets `name`, so that a finding points at
/// `fsync = off` rather than at the whole block. `None` for anything but
/// a block scalar written as is in its file.
fn line_span(model: &Model, node: &Node, name: &str) -> Option<Span> {
    if node.style() != Style::Block || node.has_origin() {
        return None;
    }
    let text: &str = &model.sources.get(node.span().file).text;
    let (start, end) = (node.span().start as usize, node.span().end as usize);
    let block = text.get(start..end.min(text.len()))?;
    let mut found = None;
    let mut offset = start;
    for raw in block.split_inclusive('\n') {
        let content = raw.trim_end_matches(['\n', '\r']);
        let setting = content.split('#').next().unwrap_or("");
        if let Some((k, _)) = setting.split_once('=')
            && k.trim() == name
        {
            let indent = content.len() - content.trim_start().len();
            let line_start = offset + indent;
            let line_end = offset + setting.trim_end().len();
            found = Some((line_start, line_end));
        }
        offset += raw.len();
    }
    let (line_start, line_end) = found?;
    let before = text.get(..line_start)?;
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    Some(Span {
        file: node.span().file,
        start: u32::try_from(line_start).ok()?,
        end: u32::try_from(line_end).ok()?,
        line: u32::try_from(line).ok()?,
        col: u32::try_from(col).ok()?,
    })
}

/// A setting in a parameters map, a postgresql.conf text block, or a
/// container's `-c name=value` arguments.
pub(crate) fn lookup(container: &Node, name: &str) -> Option<(String, Node)> {
    match &container.value {
        Value::Map(_) => {
            let node = container.get(name)?;
            let text = match &node.value {
                Value::Bool(b) => if *b { "on" } else { "off" }.to_string(),
                _ => node.scalar_text()?,
            };
            Some((text, node.clone()))
        }
        Value::Str(text) => text.lines().rev().find_map(|line| {
            let line = line.split('#').next()?.trim();
            let (k, v) = line.split_once('=')?;
            (k.trim() == name).then(|| (v.trim().to_string(), container.clone()))
        }),
        // `-c name=value`, `-c` `name=value` as two arguments, `--name=value`.
        Value::Seq(args) => {
            let texts: Vec<(&str, &Node)> =
                args.iter().filter_map(|a| Some((a.as_str()?, a))).collect();
            texts
                .iter()
                .enumerate()
                .rev()
                .find_map(|(i, (text, node))| {
                    let kv = match (text.strip_prefix("-c"), text.strip_prefix("--")) {
                        (Some(rest), _) if !rest.is_empty() => rest.trim_start(),
                        (_, Some(rest)) => rest,
                        _ if i > 0 && texts[i - 1].0 == "-c" => text,
                        _ => return None,
                    };
                    let (k, v) = kv.split_once('=')?;
                    (k.trim().replace('-', "_") == name)
                        .then(|| (v.trim().to_string(), (*node).clone()))
                })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booleans_read_as_postgres_reads_them() {
        assert_eq!(normalize("synchronous_commit", "OFF"), "off");
        assert_eq!(normalize("fsync", "false"), "off");
        assert_eq!(
            normalize("synchronous_commit", "'remote_apply'"),
            "remote_apply"
        );
        assert_eq!(normalize("max_connections", "200"), "200");
    }

    #[test]
    fn settings_in_text_and_args() {
        let conf = crate::yaml::Node::new(
            Value::Str("fsync = off # dangerous\nsynchronous_commit=off\n".into()),
            Default::default(),
        );
        assert_eq!(lookup(&conf, "fsync").unwrap().0, "off");
        let args = crate::yaml::Node::new(
            Value::Seq(std::sync::Arc::new(vec![
                crate::yaml::Node::new(Value::Str("-c".into()), Default::default()),
                crate::yaml::Node::new(
                    Value::Str("synchronous_commit=off".into()),
                    Default::default(),
                ),
            ])),
            Default::default(),
        );
        assert_eq!(lookup(&args, "synchronous_commit").unwrap().0, "off");
    }
}
