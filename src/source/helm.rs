//! HelmRelease (`helm.toolkit.fluxcd.io` v2, v2beta2, v2beta1): which chart
//! and version it installs, and the values Helm receives, every leaf
//! keeping the span where it was written.
//!
//! Values follow helm-controller `internal/chartutil/values.go`
//! (`ChartValuesFromReferences`): `valuesFrom` in order, each either
//! deep-merged (`transform.MergeMaps`: maps merge, anything else replaces)
//! or, with `targetPath`, set at one path in place; then inline
//! `spec.values` merged last, so inline values win even over `targetPath`.

use std::sync::Arc;

use crate::source::data::{self, DataValue};
use crate::source::{Issue, Object, quoted};
use crate::yaml::{Limits, Node, SourceMap, Span, Value, parse_values};

mod set_path;
mod shared;
mod values;
use set_path::{RELEASE_LIST_ITEMS, Seg, parse_path, set_path, target_value};
pub use shared::Shared;
use values::Values;

/// Where the chart comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct ChartSource {
    /// `HelmRepository`, `GitRepository`, `Bucket`, `OCIRepository`,
    /// `HelmChart`.
    pub kind: String,
    pub name: String,
    pub namespace: String,
    /// The `sourceRef`/`chartRef` in the HelmRelease.
    pub at: Span,
    /// `spec.url` of the source object, when the repo has it.
    pub url: Option<Node>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Release {
    /// The chart name as written (for an OCIRepository, a node spanning
    /// its `spec.url`).
    pub chart: Option<Node>,
    /// The version, semver range, OCI tag or digest as written.
    pub version: Option<Node>,
    pub source: Option<ChartSource>,
    /// Effective values: always a mapping.
    pub values: Node,
    /// Some `valuesFrom` source could not be read here (encrypted, or not
    /// in the repo), so the cluster may see more than `values`.
    pub values_incomplete: bool,
    /// `targetPath` values from a ConfigMap or Secret whose key the
    /// repository does not show, and that nothing later overrides: the
    /// path is absent from `values`, and the model may still derive the
    /// value from an operator's convention
    /// ([`crate::model::conventions`]).
    pub deferred: Vec<Deferred>,
    /// What of the repository the values could not take in: these are
    /// shown with the repository's problems.
    pub issues: Vec<Issue>,
    /// `valuesFrom` sources, not optional, that the repository does not
    /// hold: often made in the cluster (an ObjectBucketClaim's ConfigMap,
    /// an operator's Secret), so kept for who asks (hover) and not shown
    /// as problems.
    pub absent: Vec<Issue>,
}

/// One `valuesFrom` entry with `targetPath` whose value is not in the
/// repository.
#[derive(Clone, Debug, PartialEq)]
pub struct Deferred {
    /// The `targetPath` as written (`authentik.postgresql.host`).
    pub path: String,
    /// `ConfigMap` or `Secret`.
    pub kind: String,
    pub name: String,
    pub namespace: String,
    pub key: String,
    /// The `valuesFrom` entry.
    pub at: Span,
    /// Why the repository does not show the value.
    pub why: String,
}

impl Deferred {
    /// The path's keys, when it has no list index (`a.b` -> `[a, b]`).
    pub fn keys(&self) -> Option<Vec<String>> {
        parse_path(&self.path)
            .ok()?
            .into_iter()
            .map(|s| match s {
                Seg::Key(k) => Some(k),
                Seg::Index(_) => None,
            })
            .collect()
    }
}

/// Resolves a HelmRelease. `lookup` finds an object by kind, namespace and
/// name; references without a namespace use the HelmRelease's (`""` when
/// it has none).
pub fn resolve<'a>(
    sources: &SourceMap,
    hr: &Object,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
) -> Release {
    let bytes = crate::source::Limits::default()
        .kustomize
        .max_run_output_bytes;
    resolve_sharing(sources, hr, lookup, &Shared::new(bytes))
}

/// [`resolve`], with what the releases of one model share: values
/// documents parsed once, and one budget on what their merges copy.
pub fn resolve_sharing<'a>(
    sources: &SourceMap,
    hr: &Object,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
    shared: &Shared,
) -> Release {
    resolve_in_tree(sources, hr, lookup, &|_, _, _| None, shared)
}

/// The Flux Kustomization of another cluster's tree that applies an
/// object (kind, namespace, name) which `lookup` does not give.
pub type Elsewhere<'e> = &'e dyn Fn(&str, &str, &str) -> Option<String>;

/// [`resolve_sharing`] for a release that sees only its own cluster's objects:
/// a source only another cluster's tree holds is said to be there, not missing.
pub fn resolve_in_tree<'a>(
    sources: &SourceMap,
    hr: &Object,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
    elsewhere: Elsewhere,
    shared: &Shared,
) -> Release {
    let why = |kind: &str, namespace: &str, name: &str| match elsewhere(kind, namespace, name) {
        Some(applier) => format!(
            "{kind} {namespace}/{name} is in the repository only under {applier}, which another \
             Flux root applies, so it is taken for another cluster than {}'s",
            hr.id()
        ),
        None => format!("{kind} {namespace}/{name} is not in the repository"),
    };
    let namespace = hr.namespace().unwrap_or("");
    let mut release = Release {
        chart: None,
        version: None,
        source: None,
        values: Node::new(Value::Map(Default::default()), hr.root.span()),
        values_incomplete: false,
        deferred: Vec::new(),
        issues: Vec::new(),
        absent: Vec::new(),
    };
    resolve_chart(sources, hr, namespace, lookup, &why, &mut release);
    resolve_values(sources, hr, namespace, lookup, &why, shared, &mut release);
    release
}

/// Why a source is not found: not in the repository, or where else it is.
type Missing<'m> = &'m dyn Fn(&str, &str, &str) -> String;

fn resolve_chart<'a>(
    sources: &SourceMap,
    hr: &Object,
    namespace: &str,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
    missing: Missing,
    release: &mut Release,
) {
    if let Some(spec) = hr.root.path(&["spec", "chart", "spec"]) {
        release.chart = spec.get("chart").cloned();
        release.version = spec.get("version").cloned();
        if let Some(r) = spec.get("sourceRef") {
            let mut source = chart_source(r, namespace);
            source.url = lookup(&source.kind, &source.namespace, &source.name)
                .and_then(|o| o.root.path(&["spec", "url"]))
                .cloned();
            release.source = Some(source);
        }
        return;
    }
    let Some(r) = hr.root.path(&["spec", "chartRef"]) else {
        return;
    };
    let mut source = chart_source(r, namespace);
    match lookup(&source.kind, &source.namespace, &source.name) {
        None => release.issues.push(Issue::at(
            sources,
            r.span(),
            format!(
                "chartRef {}: chart and version are unknown",
                missing(&source.kind, &source.namespace, &source.name)
            ),
        )),
        Some(obj) => {
            let spec = obj.root.get("spec");
            source.url = spec.and_then(|s| s.get("url")).cloned();
            match source.kind.as_str() {
                "OCIRepository" => {
                    release.chart = source.url.as_ref().and_then(|url| {
                        let last = url.as_str()?.trim_end_matches('/').rsplit('/').next()?;
                        Some(Node::synthetic_str(last, url.span()))
                    });
                    // source-controller (api/v1 ocirepository_types.go,
                    // OCIRepositoryRef): the digest wins over semver,
                    // semver over the tag. A tag written beside the
                    // digest is Renovate's digest pinning, which updates
                    // both together: the tag names the release the digest
                    // is, where the digest alone names none.
                    let at = |k: &str| spec.and_then(|s| s.path(&["ref", k]));
                    release.version = match (at("digest"), at("semver"), at("tag")) {
                        (Some(_), _, Some(tag)) => Some(tag),
                        (Some(digest), _, None) => Some(digest),
                        (None, semver, tag) => semver.or(tag),
                    }
                    .cloned();
                }
                "HelmChart" => {
                    release.chart = spec.and_then(|s| s.get("chart")).cloned();
                    release.version = spec.and_then(|s| s.get("version")).cloned();
                }
                _ => {}
            }
        }
    }
    release.source = Some(source);
}

fn chart_source(r: &Node, namespace: &str) -> ChartSource {
    ChartSource {
        kind: r.str_at(&["kind"]).unwrap_or("").to_string(),
        name: r.str_at(&["name"]).unwrap_or("").to_string(),
        namespace: r.str_at(&["namespace"]).unwrap_or(namespace).to_string(),
        at: r.span(),
        url: None,
    }
}

fn resolve_values<'a>(
    sources: &SourceMap,
    hr: &Object,
    namespace: &str,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
    missing: Missing,
    shared: &Shared,
    release: &mut Release,
) {
    let list_items = std::cell::Cell::new(RELEASE_LIST_ITEMS);
    let held = data::ReadOnce::default();
    let mut built = Values::map(release.values.span());
    for entry in hr
        .root
        .path(&["spec", "valuesFrom"])
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
    {
        let kind = entry.str_at(&["kind"]).unwrap_or("");
        let name = entry.str_at(&["name"]).unwrap_or("");
        let key = entry.str_at(&["valuesKey"]).unwrap_or("values.yaml");
        let target_path = entry.str_at(&["targetPath"]).filter(|p| !p.is_empty());
        let optional = entry
            .get("optional")
            .and_then(Node::as_bool_lenient)
            .unwrap_or(false);
        let mut report = |message: String| {
            release
                .issues
                .push(Issue::at(sources, entry.span(), message));
        };
        if kind != "ConfigMap" && kind != "Secret" {
            report(format!(
                "valuesFrom kind {} is not ConfigMap or Secret: helm-controller fails",
                quoted(kind)
            ));
            continue;
        }
        let defer = |release: &mut Release, built: &mut Values, why: String| {
            if let Some(path) = target_path {
                // A placeholder, so that a later source that sets the
                // path is seen to override it.
                let placeholder = Node::new(Value::Null, entry.span());
                if set_path(built, path, placeholder, &list_items).is_ok() {
                    release.deferred.push(Deferred {
                        path: path.to_string(),
                        kind: kind.to_string(),
                        name: name.to_string(),
                        namespace: namespace.to_string(),
                        key: key.to_string(),
                        at: entry.span(),
                        why,
                    });
                }
            }
        };
        let Some(obj) = lookup(kind, namespace, name) else {
            // Whether optional or not, it may exist in the cluster only.
            release.values_incomplete = true;
            let (absent, why) = match bucket_claim(lookup, namespace, name) {
                Some(claim) => {
                    let made = format!(
                        "{kind} {namespace}/{name} is made in the cluster by {}, whose bucket \
                         provisioner names its ConfigMap and Secret after the claim",
                        claim.id()
                    );
                    (
                        format!("valuesFrom {made}: its values are not in the repository"),
                        made,
                    )
                }
                None => (
                    format!(
                        "valuesFrom {} and not optional: helm-controller fails unless it \
                         exists in the cluster",
                        missing(kind, namespace, name)
                    ),
                    format!(
                        "{} (it may exist only in the cluster)",
                        missing(kind, namespace, name)
                    ),
                ),
            };
            if !optional {
                release
                    .absent
                    .push(Issue::at(sources, entry.span(), absent));
            }
            defer(release, &mut built, why);
            continue;
        };
        let (text, node) = match held.entry(obj, key, lookup) {
            None if let Err(why) = data::keys_complete(obj, lookup) => {
                // The key may be one the repository does not show (an
                // ExternalSecret's dataFrom, a Secret of unknown keys).
                release.values_incomplete = true;
                defer(
                    release,
                    &mut built,
                    format!("key {key} of {} may exist: {why}", obj.id()),
                );
                continue;
            }
            None => {
                if !optional {
                    report(format!(
                        "valuesFrom {kind}/{name} has no key {}: helm-controller fails",
                        quoted(key)
                    ));
                }
                continue;
            }
            Some(DataValue::Unknown { why, .. }) => {
                release.values_incomplete = true;
                defer(
                    release,
                    &mut built,
                    format!("key {key} of {} is {why}", obj.id()),
                );
                continue;
            }
            Some(DataValue::Template { .. } | DataValue::Concealed { .. }) => {
                release.values_incomplete = true;
                let why = match obj.is_live() {
                    true => data::CONCEALED,
                    false => data::TEMPLATE,
                };
                defer(
                    release,
                    &mut built,
                    format!("key {key} of {} is {why}", obj.id()),
                );
                continue;
            }
            Some(DataValue::Invalid { node, message }) => {
                release
                    .issues
                    .push(Issue::at(sources, node.span(), message));
                continue;
            }
            Some(DataValue::Text { text, node }) => (text, node),
        };
        let secret = kind == "Secret";
        if let Some(path) = target_path {
            // The value is copied whole into each release that sets it:
            // 2,000 releases setting one 1 MB key took 2.2 GB.
            if !spent(shared, release, sources, entry.span(), text.len()) {
                continue;
            }
            let set = target_value(&text, node.span())
                .map(|mut value| {
                    if secret {
                        mark_secret(&mut value);
                    }
                    value
                })
                .and_then(|value| set_path(&mut built, path, value, &list_items));
            if let Err(message) = set {
                release.issues.push(Issue::at(
                    sources,
                    entry.span(),
                    format!("valuesFrom targetPath {}: {message}", quoted(path)),
                ));
            }
            continue;
        }
        let document = shared.document(obj, key, &text, || {
            values_document(sources, &text, node).map(|doc| doc.map(Arc::new))
        });
        let values = match document {
            Ok(values) => values,
            Err(issue) => {
                release.issues.push(issue);
                continue;
            }
        };
        if let Some(values) = values {
            // Each merge copies the document again: 200 entries naming
            // one 12 MB key copied 2.4 GB.
            if !spent(shared, release, sources, entry.span(), text.len()) {
                continue;
            }
            let mut values = Node::clone(&values);
            if secret {
                mark_secret(&mut values);
            }
            built.merge(values);
        }
    }
    if let Some(inline) = hr.root.path(&["spec", "values"])
        && matches!(inline.value, Value::Map(_))
    {
        built.merge(inline.clone());
    }
    release
        .deferred
        .retain(|d| parse_path(&d.path).is_ok_and(|segs| built.holds_placeholder(&segs, d.at)));
    // The surviving placeholders are taken out of map entries, so that no
    // reader takes them for an explicit null. In a list one stays a null
    // (taking it out would renumber the items after it).
    let placeholders = release.deferred.iter().map(|d| d.at).collect();
    release.values = built.into_node(&placeholders);
}

/// The ObjectBucketClaim that makes a ConfigMap or Secret the repository
/// does not hold: the bucket provisioner (kube-object-storage
/// lib-bucket-provisioner, which Rook's and NooBaa's use) creates both in
/// the claim's namespace, named after it, holding the bucket's
/// `BUCKET_HOST`, `BUCKET_NAME`, `BUCKET_PORT`... and its
/// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`.
fn bucket_claim<'a>(
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
    namespace: &str,
    name: &str,
) -> Option<&'a Object> {
    lookup("ObjectBucketClaim", namespace, name)
        .filter(|o| o.is("objectbucket.io", "ObjectBucketClaim"))
}

/// Takes `bytes` that a `valuesFrom` entry at `at` copies from the
/// shared budget; when they do not fit, the release's values are
/// incomplete, with the reason at the entry.
fn spent(
    shared: &Shared,
    release: &mut Release,
    sources: &SourceMap,
    at: Span,
    bytes: usize,
) -> bool {
    match shared.spend(bytes as u64) {
        Ok(()) => true,
        Err(why) => {
            release.values_incomplete = true;
            release.issues.push(Issue::at(sources, at, why));
            false
        }
    }
}

/// Marks the values (not the keys) of a values document read from a
/// Secret, so that reports never show them (a generated Secret's values
/// are written in plain files, where no mask of the text finds them).
fn mark_secret(node: &mut Node) {
    match &mut node.value {
        Value::Seq(items) => Arc::make_mut(items).iter_mut().for_each(mark_secret),
        Value::Map(entries) => Arc::make_mut(entries)
            .iter_mut()
            .for_each(|(_, v)| mark_secret(v)),
        _ => node.set_origin(Some(std::sync::Arc::new(crate::yaml::Origin::Secret))),
    }
}

/// Parses a values file held in a ConfigMap/Secret key. Spans point into
/// the ConfigMap's file when the key is a literal block scalar whose lines
/// can be matched one to one; otherwise every node gets the key's span.
fn values_document(sources: &SourceMap, text: &str, node: &Node) -> Result<Option<Node>, Issue> {
    let map = BlockMap::new(&sources.get(node.span().file).text, node, text);
    let relocate = |span: Span| match &map {
        Some(m) => m.relocate(span),
        None => node.span(),
    };
    let docs = parse_values(text, node.span().file, &Limits::default()).map_err(|e| {
        let at = relocate(Span {
            file: node.span().file,
            start: e.offset,
            end: e.offset,
            line: e.line.max(1),
            col: e.col.max(1),
        });
        Issue::at(
            sources,
            at,
            format!("values are not valid YAML: {}", e.message),
        )
    })?;
    // `chartutil.ReadValues` reads the first document only.
    let Some(mut doc) = docs.into_iter().next() else {
        return Ok(None);
    };
    if !matches!(doc.value, Value::Map(_)) {
        return Err(Issue::at(
            sources,
            node.span(),
            "values are not a YAML mapping: helm-controller fails",
        ));
    }
    for_each_span(&mut doc, &mut |s| *s = relocate(*s));
    Ok(Some(doc))
}

fn for_each_span(node: &mut Node, f: &mut dyn FnMut(&mut Span)) {
    let mut span = node.span();
    f(&mut span);
    node.set_span(span);
    match &mut node.value {
        Value::Seq(items) => Arc::make_mut(items)
            .iter_mut()
            .for_each(|n| for_each_span(n, f)),
        Value::Map(entries) => {
            for (k, v) in Arc::make_mut(entries).iter_mut() {
                for_each_span(k, f);
                for_each_span(v, f);
            }
        }
        _ => {}
    }
}

/// Maps positions in a block scalar's content back to its file: line k of
/// the content is line `first_line + k` of the file, shifted right by the
/// block's indentation.
struct BlockMap {
    first_line: u32,
    indent: u32,
    /// Byte offset of each content line in the value text.
    text_starts: Vec<u32>,
    /// Byte offset of the same line's content in the file.
    file_starts: Vec<u32>,
    /// The value text ends with a newline the file may not have: offsets
    /// past the content stop at the end of the file.
    file_len: u32,
}

impl BlockMap {
    fn new(file_text: &str, node: &Node, value: &str) -> Option<BlockMap> {
        if node.style() != crate::yaml::Style::Block {
            return None;
        }
        let start = node.span().start as usize;
        let line_begin = file_text.get(..start)?.rfind('\n').map_or(0, |i| i + 1);
        let indent = start - line_begin;
        if !file_text[line_begin..start].bytes().all(|b| b == b' ') {
            return None;
        }
        let body = value.strip_suffix('\n').unwrap_or(value);
        let mut text_starts = Vec::new();
        let mut file_starts = Vec::new();
        let mut text_pos = 0usize;
        let mut file_pos = line_begin;
        for line in body.split('\n') {
            let raw = file_text.get(file_pos..)?.split('\n').next()?;
            let file_line = raw.strip_suffix('\r').unwrap_or(raw);
            let matches = if line.is_empty() {
                file_line.trim().is_empty()
            } else {
                file_line.get(..indent)?.bytes().all(|b| b == b' ')
                    && file_line.get(indent..) == Some(line)
            };
            if !matches {
                return None;
            }
            text_starts.push(text_pos as u32);
            file_starts.push((file_pos + indent.min(file_line.len())) as u32);
            text_pos += line.len() + 1;
            file_pos += raw.len() + 1;
        }
        Some(BlockMap {
            first_line: node.span().line,
            indent: indent as u32,
            text_starts,
            file_starts,
            file_len: file_text.len() as u32,
        })
    }

    fn offset(&self, pos: u32) -> u32 {
        let k = self.text_starts.partition_point(|s| *s <= pos).max(1) - 1;
        (self.file_starts[k] + (pos - self.text_starts[k])).min(self.file_len)
    }

    fn relocate(&self, span: Span) -> Span {
        Span {
            file: span.file,
            start: self.offset(span.start),
            end: self.offset(span.end),
            line: self.first_line + span.line.saturating_sub(1),
            col: span.col + self.indent,
        }
    }
}

#[cfg(test)]
mod tests;
