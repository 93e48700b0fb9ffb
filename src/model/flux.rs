//! Facts about the Flux tree itself: Kustomization paths and postBuild
//! variables, as rendered.

use super::{Model, ObjRef};
use crate::source::Gap;
use crate::source::coverage::Outcome;
use crate::source::flux::{path_in_source, source_of};
use crate::yaml::{Node, Origin, Span};

/// Flux Kustomizations whose `spec.path` names no directory of the repo,
/// with the path node. Only those that build from this repository (the
/// source of a root Kustomization), and only paths the repo fully
/// determines (no variable left unresolved).
pub fn missing_paths(model: &Model) -> Vec<(ObjRef, Node)> {
    let (Some(files), Some(local)) = (model.files, model.local_sources) else {
        return Vec::new();
    };
    model
        .of_kind("kustomize.toolkit.fluxcd.io", "Kustomization")
        .filter_map(|r| {
            let obj = model.object(r);
            if obj.is_live() {
                return None;
            }
            let source = source_of(obj);
            let base = local.get(&source)?;
            let node = obj.root.path(&["spec", "path"])?;
            let text = node.as_str().filter(|t| !t.contains("${"))?;
            let exists = path_in_source(files, &source, base, text.trim_start_matches('/'))
                .is_some_and(|p| files.is_dir(&p));
            (!exists).then(|| (r, node.clone()))
        })
        .collect()
}

/// Flux Kustomizations that Flux fails because a local entry of their
/// build is missing, malformed or of the wrong kind, each with a node at
/// the entry that holds kustomize's error and what is wrong with it.
/// The rest of the Kustomization was rendered anyway.
pub fn failed_builds(model: &Model) -> Vec<(ObjRef, Node, Option<Gap>)> {
    let mut out = Vec::new();
    for r in model.flux {
        let Outcome::Failed(missing) = &r.outcome else {
            continue;
        };
        let Some(object) = model
            .of_kind("kustomize.toolkit.fluxcd.io", "Kustomization")
            .find(|&i| {
                let o = model.object(i);
                o.tree == Some(r.tree) && o.name() == r.name && o.file == r.file
            })
        else {
            continue;
        };
        for issue in missing {
            let Some(file) = model.sources.find(std::path::Path::new(&issue.path)) else {
                continue;
            };
            let start = offset_of(&model.sources.get(file).text, issue.line, issue.col);
            let span = Span {
                file,
                start,
                end: start,
                line: issue.line,
                col: issue.col,
            };
            out.push((object, Node::synthetic_str(&issue.message, span), issue.gap));
        }
    }
    out
}

/// Byte offset of a 1-based line and character column.
fn offset_of(text: &str, line: u32, col: u32) -> u32 {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1) as usize)
        .map(str::len)
        .sum();
    let in_line: usize = text[line_start..]
        .chars()
        .take(col.saturating_sub(1) as usize)
        .map(char::len_utf8)
        .sum();
    (line_start + in_line) as u32
}

/// The first `needle` (`${NAME}`) in `span` that Flux expands: not one
/// escaped as `$${NAME}`, where envsubst reads `$$` as a `$` (an odd run
/// of `$` before the `{` ends with a live one).
fn bare_within(model: &Model, span: Span, needle: &str) -> Option<Span> {
    let text = &model.sources.get(span.file).text;
    let mut within = span;
    loop {
        let found = model.sources.find_within(within, needle)?;
        let dollars = text[..found.start as usize + 1]
            .bytes()
            .rev()
            .take_while(|&b| b == b'$')
            .count();
        if dollars % 2 == 1 {
            return Some(found);
        }
        within = Span {
            start: found.start + 1,
            line: found.line,
            col: found.col + 1,
            ..within
        };
    }
}

/// Values that used a Flux variable which is defined nowhere and has no
/// default: Flux renders it as an empty string. Variables whose source
/// could not be read (SOPS, a ConfigMap only in the cluster) are not
/// counted: they may well be defined.
/// The node, with its span narrowed to where `${name` is written in it
/// (a variable in a block scalar is on a line of its own, not at the
/// block's first line); as it is when the text does not show it.
fn at_variable(model: &Model, node: &Node, name: &str) -> Node {
    let mut node = node.clone();
    // `${name` then what may follow a name in Flux's envsubst: the end,
    // or an operator (`${APP}` must not be found in `${APP_NAME}`).
    if let Some(span) = "}:-=+?#%/^,"
        .chars()
        .find_map(|next| bare_within(model, node.span(), &format!("${{{name}{next}")))
    {
        node.set_span(Span {
            end: span.start + 2 + name.len() as u32,
            ..span
        });
    }
    node
}

pub fn undefined_variables(model: &Model) -> Vec<(ObjRef, String, Node)> {
    let mut out = Vec::new();
    // Most repositories define every variable they use: then no live
    // node's origin names one undefined, and no object needs a walk.
    if !crate::yaml::any_origin(
        |o| matches!(o, Origin::Substituted { undefined, .. } if !undefined.is_empty()),
    ) {
        return out;
    }
    for (i, obj) in model.objects.iter().enumerate() {
        obj.root.walk(&mut |_, node| {
            if let Some(Origin::Substituted { undefined, .. }) = node.origin() {
                out.extend(
                    undefined
                        .iter()
                        .map(|v| (i, v.clone(), at_variable(model, node, v))),
                );
            }
        });
    }
    out
}
