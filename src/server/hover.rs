//! Hover: on a `${VAR}`, its value and where it is defined (or why it is
//! not); on a value, what it renders to and the chain of builds and
//! patches it went through; on a HelmRelease's `values`, the final value
//! once `valuesFrom` is merged in.

use std::collections::HashSet;
use std::path::Path;

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};

use super::diagnostics::{Ranges, shown as shown_text};
use super::lookup::{self, Hit, Seg};
use crate::pipeline::editor::Analysis;
use crate::source::repo::Repo;
use crate::source::{helm, quoted};
use crate::yaml::{Node, Origin, SourceMap, Span, Value};

/// At most this many renders of one place are listed.
const MAX_RENDERS: usize = 5;

/// A value longer than this is quoted and cut.
const MAX_VALUE_BYTES: usize = 120;

/// At most this many lines of a HelmRelease's values are shown.
const MAX_VALUE_LINES: usize = 60;

pub fn at(analysis: &Analysis, rel: &Path, text: &str, offset: usize) -> Option<Hover> {
    let repo = &analysis.loaded.repo;
    let sources = &repo.files.sources;
    let file = sources.find(rel);
    let hits = file.map_or_else(Vec::new, |f| lookup::values_at(repo, f, offset));
    if let Some(var) = lookup::variable_at(text, offset) {
        let mut lines = vec![format!("**`${{{}}}`**", var.name)];
        match lookup::in_comment(text, var.start) {
            true => lines.push(
                "in a comment: Flux substitutes the objects kustomize built, which keep no \
                 comments, so this is never substituted"
                    .into(),
            ),
            false => lines.extend(variable(repo, &hits, &var.name, rel)),
        }
        let range = super::documents::Lines::new(text).range(var.start, var.end);
        return Some(markdown(lines.join("\n\n"), Some(range)));
    }
    let hit = hits.first()?;
    let mut lines = value(sources, hit);
    // The same place rendered differently elsewhere (a base built by
    // several Flux Kustomizations with other variables).
    let mut values = HashSet::from([shown(sources, hit.node)]);
    let mut more = 0;
    for other in hits
        .iter()
        .skip(1)
        .filter(|h| h.node.span() == hit.node.span())
    {
        let value = shown(sources, other.node);
        if values.contains(&value) {
            continue;
        }
        match values.len() < MAX_RENDERS {
            true => lines.push(format!("also renders as {value} in {}", other.object.id())),
            false => more += 1,
        }
        values.insert(value);
    }
    lines.extend(more_renders(more));
    lines.extend(helm_final(repo, hit));
    lines.extend(helm_values(repo, hit));
    if on_identity(hit) {
        lines.extend(super::postgres::facts(repo, hit.object));
    }
    Some(markdown(
        lines.join("\n\n"),
        Some(Ranges::new(sources).range(hit.node.span())),
    ))
}

/// What each render that read the file made of the variable.
fn variable(repo: &Repo, hits: &[Hit], name: &str, rel: &Path) -> Vec<String> {
    let sources = &repo.files.sources;
    let mut out: Vec<String> = Vec::new();
    let mut seen = HashSet::new();
    let mut more = 0;
    for hit in hits {
        let Some(Origin::Substituted {
            variable,
            defined_at,
            unknown,
            undefined,
            ..
        }) = hit.node.origin()
        else {
            continue;
        };
        let by = rendered_by(hit);
        let line = if undefined.iter().any(|u| u == name) {
            format!(
                "undefined{by}: no inline `substitute` or `substituteFrom` source defines it and \
                 it has no default, so Flux renders it as an empty string"
            )
        } else if variable == name {
            match defined_at {
                Some(at) => format!(
                    "= `{}`{by}, defined at {}",
                    written(sources, *at),
                    sources.location(*at)
                ),
                None if *unknown => format!(
                    "unknown{by}: a `substituteFrom` source is encrypted or not in the \
                     repository"
                ),
                None => format!("not defined{by}: its default is used"),
            }
        } else {
            format!("used{by} in a value that also reads `${{{variable}}}`")
        };
        let line = format!("{line}; the value renders as {}", shown(sources, hit.node));
        if seen.insert(line.clone()) {
            match out.len() < MAX_RENDERS {
                true => out.push(line),
                false => more += 1,
            }
        }
    }
    out.extend(more_renders(more));
    if out.is_empty() {
        let why = repo
            .fates
            .iter()
            .find(|f| f.path == rel)
            .map_or_else(|| "it is not loaded".to_string(), |f| f.fate.reason());
        out.push(match hits.is_empty() {
            true => {
                format!("not substituted here: no object rendered from this file holds it ({why})")
            }
            false => format!(
                "not substituted here: no Flux Kustomization with `postBuild` renders this value \
                 ({why})"
            ),
        });
    }
    out
}

/// What is left out when a place renders more ways than are listed.
fn more_renders(more: usize) -> Option<String> {
    (more > 0).then(|| {
        format!(
            "and {more} more render(s) of this place (`kubectl homelab-lint inventory \
             --provenance` lists every value)"
        )
    })
}

/// The value, where it was written, and the steps of its object.
fn value(sources: &SourceMap, hit: &Hit) -> Vec<String> {
    let mut lines = vec![format!(
        "**{}** `{}` renders as {}",
        hit.object.id(),
        path_text(&hit.path),
        shown(sources, hit.node)
    )];
    if let Some(Origin::Substituted {
        variable,
        defined_at: Some(at),
        ..
    }) = hit.node.origin()
    {
        lines.push(format!(
            "`${{{variable}}}` is defined at {}",
            sources.location(*at)
        ));
    }
    if !hit.object.chain.is_empty() {
        let chain: Vec<String> = hit
            .object
            .chain
            .iter()
            .map(|s| match s.at {
                Some(at) => format!(
                    "- {} {} ({})",
                    s.kind.as_str(),
                    s.detail,
                    sources.location(at)
                ),
                None => format!("- {} {}", s.kind.as_str(), s.detail),
            })
            .collect();
        lines.push(chain.join("\n"));
    }
    lines
}

/// In a HelmRelease's `spec.values`: the value Helm gets once
/// `valuesFrom` is merged, when it is not the one written here.
fn helm_final(repo: &Repo, hit: &Hit) -> Option<String> {
    if !is_helm_release(hit) {
        return None;
    }
    let under = match hit.path.as_slice() {
        [Seg::Key(spec), Seg::Key(values), rest @ ..] if spec == "spec" && values == "values" => {
            rest
        }
        _ => return None,
    };
    let sources = &repo.files.sources;
    let release = helm::resolve(sources, hit.object, &|kind, ns, name| {
        find(repo, kind, ns, name)
    });
    let mut node = &release.values;
    for seg in under {
        node = match seg {
            Seg::Key(k) => node.get(k)?,
            Seg::Index(i) => node.as_seq()?.get(*i)?,
        };
    }
    (node.span() != hit.node.span()).then(|| {
        format!(
            "Helm gets {} from `valuesFrom`, written at {}",
            shown(sources, node),
            sources.location(node.span())
        )
    })
}

/// On a HelmRelease's `kind` or name: the values Helm gets, `values`
/// and `valuesFrom` merged.
fn helm_values(repo: &Repo, hit: &Hit) -> Option<String> {
    if !(on_identity(hit) && is_helm_release(hit)) {
        return None;
    }
    let sources = &repo.files.sources;
    let release = helm::resolve(sources, hit.object, &|kind, ns, name| {
        find(repo, kind, ns, name)
    });
    let json = serde_json::to_string_pretty(&sources.shown_json(&release.values)).ok()?;
    let mut lines: Vec<&str> = json.lines().collect();
    let more = lines.len().saturating_sub(MAX_VALUE_LINES);
    lines.truncate(MAX_VALUE_LINES);
    let mut out = format!(
        "Helm values (`values` and `valuesFrom` merged):\n```json\n{}\n```",
        lines.join("\n")
    );
    if more > 0 {
        out.push_str(&format!(
            "\n({more} more lines: `kubectl homelab-lint inventory --kind HelmRelease`)"
        ));
    }
    if release.values_incomplete {
        out.push_str("\n\nSome `valuesFrom` source is encrypted or not in the repository: Helm may get more.");
    }
    // Often made in the cluster (an operator's Secret), so not a problem
    // of the repository; but Helm gets none of their values here.
    if !release.absent.is_empty() {
        out.push('\n');
    }
    for absent in &release.absent {
        out.push_str(&format!("\n- line {}: {}", absent.line, absent.message));
    }
    Some(out)
}

/// Whether the value is an object's `kind` or name, where what is known
/// of the whole object is shown.
fn on_identity(hit: &Hit) -> bool {
    match hit.path.as_slice() {
        [Seg::Key(k)] => k == "kind",
        [Seg::Key(m), Seg::Key(n)] => m == "metadata" && n == "name",
        _ => false,
    }
}

fn is_helm_release(hit: &Hit) -> bool {
    hit.object.group() == "helm.toolkit.fluxcd.io" && hit.object.kind() == "HelmRelease"
}

/// An object by kind, namespace and name, as `helm::resolve` looks its
/// `valuesFrom` sources up (no namespace written: the release's).
fn find<'r>(repo: &'r Repo, kind: &str, ns: &str, name: &str) -> Option<&'r crate::source::Object> {
    repo.objects
        .iter()
        .find(|o| o.kind() == kind && o.name() == name && o.namespace().unwrap_or(ns) == ns)
}

fn rendered_by(hit: &Hit) -> String {
    hit.object
        .chain
        .first()
        .filter(|s| s.kind == crate::source::StepKind::FluxKustomization)
        .map_or_else(String::new, |s| {
            format!(" (Flux Kustomization {})", s.detail)
        })
}

/// A rendered value as reports show it (a Secret's masked), in backticks;
/// a long or multi-line one quoted and cut as messages quote text from
/// the repository ([`quoted`]): a dashboard kept in a ConfigMap, hovered
/// anywhere, would otherwise be a hover of hundreds of kilobytes.
fn shown(sources: &SourceMap, node: &Node) -> String {
    let text = match &node.value {
        Value::Seq(_) | Value::Map(_) => sources.shown_json(node).to_string(),
        _ => node
            .scalar_text()
            .map_or_else(|| "null".into(), |t| sources.shown_value(node, t)),
    };
    let text = match text.len() > MAX_VALUE_BYTES || text.contains('\n') {
        true => quoted(&text),
        false => text,
    };
    format!("`{}`", text.replace('`', "'"))
}

/// The value written at `span`, a Secret's masked, without the anchor
/// or tag written before it (`name: &app authentik` defines `authentik`,
/// which `APP: *app` then names).
fn written(sources: &SourceMap, span: Span) -> String {
    let mut text = sources
        .get(span.file)
        .text_to_show()
        .get(span.start as usize..span.end as usize)
        .unwrap_or_default()
        .trim();
    while text.starts_with(['&', '!']) {
        text = text
            .split_once([' ', '\t', '\n'])
            .map_or("", |(_, rest)| rest.trim_start());
    }
    text.replace('`', "'")
}

fn path_text(path: &[Seg]) -> String {
    let mut out = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) if out.is_empty() => out.push_str(k),
            Seg::Key(k) => {
                out.push('.');
                out.push_str(k);
            }
            Seg::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn markdown(value: String, range: Option<lsp_types::Range>) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: shown_text(&value),
        }),
        range,
    }
}
