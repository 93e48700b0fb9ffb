//! The built-in transformers, run in kustomize's fixed order.

use crate::source::files::{Files, Input};
use crate::source::object::StepKind;
use crate::source::{Issue, PathMap};
use crate::yaml::{Node, Span, Value};
use std::sync::Arc;

use super::budget::{record_step, spend_output, spend_scan};
use super::fieldspecs::{Config, FieldSpec, Leaf, parse_specs, split_path, visit};
use super::images::{self, Image};
use super::kustomization::Kustomization;
use super::{Acc, Gvk, Res, id_texts, patches, replacements};

/// The first of the built-in transformers: the kustomization's patches.
/// What a Flux Kustomization writes besides its components (its target
/// namespace, its images) takes effect only in [`run`], which does the
/// rest.
pub(crate) fn patch(files: &mut Files, k: &Kustomization, acc: &mut Acc) -> Result<(), Issue> {
    if let Some(list) = k.get("patchesStrategicMerge") {
        patches::apply_strategic_merge_list(files, acc.res_mut(), list, k)?;
    }
    if let Some(list) = k.get("patches") {
        patches::apply_list(files, acc.res_mut(), list, &k.dir, k.restrict)?;
    }
    Ok(())
}

/// The built-in transformers after [`patch`], then the inline ones.
pub(crate) fn run(
    files: &mut Files,
    k: &Kustomization,
    acc: &mut Acc,
    config: &Config,
    built: &PathMap<String, Result<Vec<Node>, Issue>>,
    flux_namespace: Option<&(String, Span)>,
    flux_images: &[Image],
) -> Result<(), Issue> {
    let written = match (flux_namespace, k.get("namespace")) {
        (Some((name, span)), _) => Some((name.clone(), *span)),
        (None, Some(ns)) => match ns.scalar_text() {
            Some(name) => Some((name, ns.span())),
            None => return Err(k.err(ns.span(), "namespace must be a string")),
        },
        (None, None) => None,
    };
    if let Some((name, span)) = written
        && !name.is_empty()
    {
        namespace(files, acc.res_mut(), &name, span, &config.namespace)?;
    }
    let prefix = k.get("namePrefix");
    let suffix = k.get("nameSuffix");
    if prefix.is_some() || suffix.is_some() {
        let p = prefix.and_then(Node::scalar_text).unwrap_or_default();
        let s = suffix.and_then(Node::scalar_text).unwrap_or_default();
        let span = prefix.or(suffix).map_or(k.root.span(), |n| n.span());
        prefix_suffix(files, acc.res_mut(), (&p, &s), span, &config.name_prefix)?;
    }
    for entry in k.get("labels").and_then(Node::as_seq).into_iter().flatten() {
        let mut specs = parse_specs(entry.get("fields")).map_err(|(s, m)| k.err(s, m))?;
        let flag = |key: &str| {
            entry
                .get(key)
                .and_then(Node::as_bool_lenient)
                .unwrap_or(false)
        };
        if flag("includeSelectors") {
            merge_into(&mut specs, &config.common_labels);
        } else {
            if flag("includeTemplates") {
                merge_into(&mut specs, &config.template_labels);
            }
            merge_into(&mut specs, &[FieldSpec::new("metadata/labels", true)]);
        }
        let pairs = string_pairs(entry.get("pairs"));
        set_map_entries(files, acc.res_mut(), &pairs, &specs, entry.span(), "labels")?;
    }
    if let Some(labels) = k.get("commonLabels") {
        let pairs = string_pairs(Some(labels));
        set_map_entries(
            files,
            acc.res_mut(),
            &pairs,
            &config.common_labels,
            labels.span(),
            "commonLabels",
        )?;
    }
    if let Some(ann) = k.get("commonAnnotations") {
        let pairs = string_pairs(Some(ann));
        set_map_entries(
            files,
            acc.res_mut(),
            &pairs,
            &config.common_annotations,
            ann.span(),
            "commonAnnotations",
        )?;
    }
    if let Some(list) = k.get("patchesJson6902") {
        patches::apply_json6902_list(files, acc.res_mut(), list, k)?;
    }
    for entry in k
        .get("replicas")
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
    {
        replicas(files, acc.res_mut(), entry, &config.replicas)
            .map_err(|m| k.err(entry.span(), m))?;
    }
    let own = k.get("images").and_then(Node::as_seq).into_iter().flatten();
    let mut list: Vec<Image> = own.map(Image::of).collect();
    images::flux_merge(&mut list, flux_images);
    for image in &list {
        images::apply(files, acc.res_mut(), image, &config.images)?;
    }
    if let Some(list) = k.get("replacements") {
        replacements::apply_list(files, acc.res_mut(), list, k)?;
    }
    if let Some(list) = k.get("transformers") {
        inline_transformers(files, acc, list, k, built)?;
    }
    Ok(())
}

fn merge_into(specs: &mut Vec<FieldSpec>, more: &[FieldSpec]) {
    for fs in more {
        if !specs.contains(fs) {
            specs.push(fs.clone());
        }
    }
}

/// A string map from the kustomization, values kept as written (with their
/// spans) but as strings, which is what labels and annotations are.
fn string_pairs(n: Option<&Node>) -> Vec<(String, Node)> {
    n.and_then(Node::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let text = v.scalar_text().unwrap_or_default();
            Some((k.scalar_text()?, Node::synthetic_str(text, v.span())))
        })
        .collect()
}

/// Sets `pairs` in the mapping at each field of `specs` of every object
/// they select. Each copy counts against the load's output budget: a
/// value is copied into every object and field it selects.
fn set_map_entries(
    files: &mut Files,
    res: &mut [Res],
    pairs: &[(String, Node)],
    specs: &[FieldSpec],
    span: Span,
    what: &str,
) -> Result<(), Issue> {
    if pairs.is_empty() {
        return Ok(());
    }
    let per_field: usize = pairs
        .iter()
        .map(|(k, v)| k.len() + v.scalar_text().map_or(0, |t| t.len()))
        .sum();
    let fail = |files: &Files, r: &Res, m: String| {
        Issue::at(&files.sources, span, format!("{what}: {}: {m}", r.obj.id()))
    };
    spend_scan(files, res.len())
        .map_err(|m| Issue::at(&files.sources, span, format!("{what}: {m}")))?;
    for r in res.iter_mut() {
        let gvk = r.gvk();
        let mut touched = false;
        for fs in specs.iter().filter(|fs| fs.selects(&gvk)) {
            let done = visit(
                r.obj.root_mut(),
                &split_path(&fs.path),
                fs.create,
                Leaf::Map,
                span,
                &mut |node| {
                    if node.as_map().is_none() {
                        return Err(format!("{} is not a mapping", fs.path));
                    }
                    spend_output(files, per_field)?;
                    node.insert_all(pairs);
                    touched = true;
                    Ok(())
                },
            );
            done.map_err(|m| fail(files, r, m))?;
        }
        if touched {
            record_step(files, &mut r.obj, StepKind::Transformer, what, span)
                .map_err(|m| fail(files, r, m))?;
        }
    }
    Ok(())
}

pub(crate) fn namespace(
    files: &mut Files,
    res: &mut [Res],
    ns: &str,
    span: Span,
    specs: &[FieldSpec],
) -> Result<(), Issue> {
    let fail = |files: &Files, r: &Res, m: String| {
        Issue::at(
            &files.sources,
            span,
            format!("namespace: {}: {m}", r.obj.id()),
        )
    };
    // One text for every object of the build: a copy each was a block per
    // object at 100k objects.
    let step: std::sync::Arc<str> = format!("namespace: {ns}").into();
    for r in res.iter_mut() {
        if r.obj.root.as_map().is_none_or(|m| m.is_empty()) {
            continue;
        }
        // One id for the kind and the id kept from before: made twice,
        // it was a fifth of the transformer.
        let cur = r.cur_id();
        let gvk = cur.gvk.clone();
        // At most the object's own field and one per field spec.
        let fields = 1 + specs.iter().filter(|fs| fs.selects(&gvk)).count();
        spend_output(files, ns.len().saturating_mul(fields)).map_err(|m| fail(files, r, m))?;
        r.store_prev_id(cur);
        if !gvk.is_cluster_scoped() {
            super::set_meta(r.obj.root_mut(), "namespace", ns, span);
        }
        let binding = gvk.kind == "RoleBinding" || gvk.kind == "ClusterRoleBinding";
        if binding {
            for subject in r
                .obj
                .root_mut()
                .get_mut("subjects")
                .and_then(Node::as_seq_mut)
                .into_iter()
                .flatten()
            {
                if subject.get("name").and_then(Node::as_str) == Some("default") {
                    subject.insert("namespace", Node::synthetic_str(ns, span));
                }
            }
        }
        for fs in specs.iter().filter(|fs| fs.selects(&gvk)) {
            if fs.path == "metadata/namespace" || (binding && fs.path.starts_with("subjects")) {
                continue;
            }
            let _ = visit(
                r.obj.root_mut(),
                &split_path(&fs.path),
                fs.create,
                Leaf::Scalar,
                span,
                &mut |node| {
                    *node = Node::synthetic_str(ns, span);
                    Ok(())
                },
            );
        }
        record_step(files, &mut r.obj, StepKind::Transformer, step.clone(), span)
            .map_err(|m| fail(files, r, m))?;
    }
    // Ids that match share group, kind and name: compared within runs of
    // the objects sorted by those (not every pair, quadratic in a build's
    // objects; nor hashed into a list per key, a block per object), and
    // read in full only within a run of more than one. The conflict told
    // is the first object with a later one like it, as kustomize's walk
    // in order finds it.
    let keys: Vec<(&str, &str, &str)> = res
        .iter()
        .map(|r| {
            let [api, kind, name, _] = id_texts(&r.obj.root);
            (name, kind, Gvk::split_api(api).0)
        })
        .collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_unstable_by_key(|&i| (keys[i], i));
    let mut first: Option<usize> = None;
    for run in order.chunk_by(|&a, &b| keys[a] == keys[b]) {
        if run.len() < 2 {
            continue;
        }
        for (n, &i) in run.iter().enumerate() {
            let id = res[i].cur_view();
            if first.is_none_or(|f| i < f)
                && run[n + 1..].iter().any(|&j| res[j].cur_view().matches(&id))
            {
                first = Some(i);
            }
        }
    }
    if let Some(i) = first {
        return Err(Issue::at(
            &files.sources,
            span,
            format!(
                "namespace transformation produces ID conflict: {}",
                res[i].cur_view().display()
            ),
        ));
    }
    Ok(())
}

fn prefix_suffix(
    files: &mut Files,
    res: &mut [Res],
    (prefix, suffix): (&str, &str),
    span: Span,
    specs: &[FieldSpec],
) -> Result<(), Issue> {
    let added = prefix.len() + suffix.len();
    let fail = |files: &Files, r: &Res, m: String| {
        Issue::at(
            &files.sources,
            span,
            format!("namePrefix/nameSuffix: {}: {m}", r.obj.id()),
        )
    };
    spend_scan(files, res.len())
        .map_err(|m| Issue::at(&files.sources, span, format!("namePrefix/nameSuffix: {m}")))?;
    // A field the transformer cannot set is passed over, as kustomize
    // does; only the budget stops it.
    let mut over = None;
    for r in res.iter_mut() {
        let org = &r.org.gvk;
        let skip = org.kind == "CustomResourceDefinition"
            || org.kind == "Namespace"
            || (org.kind == "APIService" && org.group == "apiregistration.k8s.io");
        if skip {
            continue;
        }
        let gvk = r.gvk();
        for fs in specs.iter().filter(|fs| fs.selects(&gvk)) {
            if fs.path == "metadata/name" && (!prefix.is_empty() || !suffix.is_empty()) {
                r.store_prev();
            }
            let _ = visit(
                r.obj.root_mut(),
                &split_path(&fs.path),
                fs.create,
                Leaf::Scalar,
                span,
                &mut |node| {
                    if let Some(old) = node.as_str() {
                        if let Err(m) = spend_output(files, added) {
                            over = Some(m);
                            return Err(String::new());
                        }
                        *node = Node::synthetic_str(format!("{prefix}{old}{suffix}"), span);
                    }
                    Ok(())
                },
            );
            if let Some(m) = over.take() {
                return Err(fail(files, r, m));
            }
        }
        record_step(
            files,
            &mut r.obj,
            StepKind::Transformer,
            "namePrefix/nameSuffix",
            span,
        )
        .map_err(|m| fail(files, r, m))?;
    }
    Ok(())
}

fn replicas(
    files: &mut Files,
    res: &mut [Res],
    entry: &Node,
    specs: &[FieldSpec],
) -> Result<(), String> {
    let name = entry
        .get("name")
        .and_then(Node::scalar_text)
        .ok_or("replicas entry needs a name")?;
    let count = match entry.get("count").map(|n| &n.value) {
        Some(Value::Int(i)) => *i,
        _ => return Err("replicas entry needs an integer count".into()),
    };
    let span = entry.get("count").map_or(entry.span(), |n| n.span());
    spend_scan(files, res.len())?;
    for r in res.iter_mut().filter(|r| r.names().contains(&name)) {
        let gvk = r.gvk();
        for fs in specs.iter().filter(|fs| fs.selects(&gvk)) {
            visit(
                r.obj.root_mut(),
                &split_path(&fs.path),
                fs.create,
                Leaf::Scalar,
                span,
                &mut |node| {
                    *node = Node::new(Value::Int(count), span);
                    Ok(())
                },
            )?;
        }
        let step = format!("replicas: {count}");
        record_step(files, &mut r.obj, StepKind::Transformer, step, span)
            .map_err(|m| format!("{}: {m}", r.obj.id()))?;
    }
    Ok(())
}

/// Whether a `transformers:` entry is a remote file or git folder:
/// kustomize reads an entry as inline YAML first, and one that is not
/// (a URL has no space) as a resource (api/internal/target/kusttarget.go
/// `configureExternalTransformers`).
pub(super) fn is_remote_entry(text: &str) -> bool {
    super::resources::is_remote(text) && !text.contains(char::is_whitespace)
}

/// `transformers:` entries that configure a built-in transformer, inline,
/// in a file or built from a directory or a remote entry (`built`, by
/// entry, or why it was not). Plugins are not run.
fn inline_transformers(
    files: &mut Files,
    acc: &mut Acc,
    list: &Node,
    k: &Kustomization,
    built: &PathMap<String, Result<Vec<Node>, Issue>>,
) -> Result<(), Issue> {
    for entry in list.as_seq().into_iter().flatten() {
        let Some(text) = entry.as_str() else {
            return Err(k.err(entry.span(), "transformers entries must be strings"));
        };
        let docs: Vec<Node> = if let Some(docs) = built.get(text) {
            docs.clone()?
        } else if text.contains('\n') || text.contains(':') {
            super::inline::inline_docs(files, entry, &k.file)?
        } else {
            k.input(files, text, entry.span(), Input::Transformer)?
                .documents(files)?
                .docs
                .iter()
                .map(|d| Node::clone(d))
                .collect()
        };
        for doc in docs.iter().filter(|d| !d.is_null()) {
            let kind = doc.str_at(&["kind"]).unwrap_or("");
            let specs = parse_specs(doc.get("fieldSpecs"))
                .map_err(|(s, m)| Issue::at(&files.sources, s, m))?;
            match kind {
                "LabelTransformer" => {
                    let pairs = string_pairs(doc.get("labels"));
                    set_map_entries(
                        files,
                        acc.res_mut(),
                        &pairs,
                        &specs,
                        doc.span(),
                        "LabelTransformer",
                    )?;
                }
                "AnnotationsTransformer" => {
                    let pairs = string_pairs(doc.get("annotations"));
                    set_map_entries(
                        files,
                        acc.res_mut(),
                        &pairs,
                        &specs,
                        doc.span(),
                        "AnnotationsTransformer",
                    )?;
                }
                "NamespaceTransformer" => {
                    let ns = doc
                        .str_at(&["metadata", "namespace"])
                        .unwrap_or("")
                        .to_string();
                    if !ns.is_empty() {
                        namespace(files, acc.res_mut(), &ns, doc.span(), &specs)?;
                    }
                }
                "PrefixSuffixTransformer" => {
                    let p = doc.str_at(&["prefix"]).unwrap_or("").to_string();
                    let s = doc.str_at(&["suffix"]).unwrap_or("").to_string();
                    prefix_suffix(files, acc.res_mut(), (&p, &s), doc.span(), &specs)?;
                }
                "PatchTransformer" => {
                    let as_list = Node::new(Value::Seq(Arc::new(vec![doc.clone()])), doc.span());
                    patches::apply_list(files, acc.res_mut(), &as_list, &k.dir, k.restrict)?;
                }
                _ => {
                    return Err(Issue::at(
                        &files.sources,
                        doc.span(),
                        format!("transformer kind '{kind}' is not supported"),
                    ));
                }
            }
        }
    }
    Ok(())
}
