//! Go to definition: from a `${VAR}` to where each render that reads it
//! defines it, and from the name in a `valuesFrom`, `substituteFrom`,
//! `sourceRef` or `dependsOn` entry to the object it names.

use std::path::Path;

use lsp_types::Location;

use super::diagnostics;
use super::documents::Documents;
use super::lookup::{self, Hit};
use crate::pipeline::editor::Analysis;
use crate::source::Object;
use crate::source::repo::Repo;
use crate::yaml::{Origin, Span};

pub fn at(
    analysis: &Analysis,
    docs: &Documents,
    rel: &Path,
    text: &str,
    offset: usize,
) -> Vec<Location> {
    let repo = &analysis.loaded.repo;
    let sources = &repo.files.sources;
    let root = repo.files.root();
    let Some(file) = sources.find(rel) else {
        return Vec::new();
    };
    let hits = lookup::values_at(repo, file, offset);
    let mut spans: Vec<Span> = match lookup::variable_at(text, offset) {
        Some(var) => hits
            .iter()
            .filter_map(|h| match h.node.origin() {
                Some(Origin::Substituted {
                    variable,
                    defined_at: Some(at),
                    ..
                }) if *variable == var.name => Some(*at),
                _ => None,
            })
            .collect(),
        None => hits
            .iter()
            .filter_map(|h| named(repo, h))
            .map(|o| {
                o.root
                    .get("metadata")
                    .and_then(|m| m.get("name"))
                    .map_or(o.root.span(), |n| n.span())
            })
            .collect(),
    };
    spans.sort_by_key(|s| (s.file, s.start));
    spans.dedup();
    let mut ranges = diagnostics::Ranges::new(sources);
    spans
        .into_iter()
        .filter_map(|s| ranges.location(root, s, docs))
        .collect()
}

/// The object a reference names, when `hit` is the name of one.
fn named<'r>(repo: &'r Repo, hit: &Hit<'r>) -> Option<&'r Object> {
    let name = hit.node.as_str()?;
    let entry = hit.parent()?;
    let own_ns = hit.object.namespace();
    let ns = entry.str_at(&["namespace"]).or(own_ns);
    let find = |group: Option<&str>, kind: &str| {
        repo.objects.iter().find(|o| {
            group.is_none_or(|g| o.group() == g)
                && o.kind() == kind
                && o.name() == name
                && (ns.is_none() || o.namespace() == ns)
        })
    };
    if hit.ends_with(&[Some("valuesFrom"), None, Some("name")])
        || hit.ends_with(&[Some("substituteFrom"), None, Some("name")])
    {
        return find(Some(""), entry.str_at(&["kind"])?);
    }
    if hit.ends_with(&[Some("sourceRef"), Some("name")]) {
        return find(None, entry.str_at(&["kind"])?);
    }
    if hit.ends_with(&[Some("dependsOn"), None, Some("name")]) {
        // A dependency is of the same kind as the object that waits.
        return find(Some(hit.object.group()), hit.object.kind());
    }
    None
}
