//! `replacements:` (kustomize's ReplacementTransformer): copy a field of one
//! object into fields of others.

use crate::source::Issue;
use crate::source::files::{Files, Input};
use crate::source::object::StepKind;
use crate::yaml::{Node, Size, Span, Value};

use super::budget::{Spend, record_step, scan_cost, spend_scan, spend_work};
use super::inline::inline_docs;
use super::kustomization::Kustomization;
use super::{IdView, Res};

pub(crate) fn apply_list(
    files: &mut Files,
    res: &mut [Res],
    list: &Node,
    k: &Kustomization,
) -> Result<(), Issue> {
    // Each object's size, measured once at its first replacement and
    // kept up to date after: measuring it whole per replacement made R
    // replacements over N objects cost N·R².
    let mut sizes = vec![None; res.len()];
    let sizes = &mut sizes;
    for entry in list.as_seq().into_iter().flatten() {
        if let Some(p) = entry.get("path").and_then(Node::as_str) {
            let input = k.input(files, p, entry.span(), Input::Replacement)?;
            let docs = input.documents(files)?.docs.clone();
            for doc in docs {
                match &doc.value {
                    Value::Seq(items) => {
                        for r in items.iter() {
                            apply_one(files, res, sizes, r)?;
                        }
                    }
                    Value::Null => {}
                    _ => apply_one(files, res, sizes, &doc)?,
                }
            }
        } else if entry.as_str().is_some() {
            for doc in inline_docs(files, entry, &k.file)? {
                apply_one(files, res, sizes, &doc)?;
            }
        } else {
            apply_one(files, res, sizes, entry)?;
        }
    }
    Ok(())
}

/// A `select`, `reject` or `source` of a replacement, its fields read
/// once: it is matched against every object of the build (read again for
/// each object, 4,000 replacements selecting nothing over 5,000
/// ConfigMaps ran past 120 s).
struct IdSelector {
    group: Option<String>,
    version: Option<String>,
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    labels: Option<String>,
    annotations: Option<String>,
}

impl IdSelector {
    fn of(sel: &Node) -> IdSelector {
        let text = |k: &str| {
            sel.get(k)
                .and_then(Node::scalar_text)
                .filter(|s| !s.is_empty())
        };
        IdSelector {
            group: text("group"),
            version: text("version"),
            kind: text("kind"),
            name: text("name"),
            namespace: text("namespace"),
            labels: text("labelSelector"),
            annotations: text("annotationSelector"),
        }
    }

    /// Every field given equals the object's current or an earlier id.
    fn selects(&self, r: &Res) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        let id_ok = |id: IdView| {
            is(&self.group, id.group)
                && is(&self.version, id.version)
                && is(&self.kind, id.kind)
                && is(&self.name, id.name)
                && is(&self.namespace, id.namespace)
        };
        let fields_ok =
            id_ok(r.cur_view()) || id_ok(r.org.view()) || r.prev.iter().any(|p| id_ok(p.view()));
        let labels_ok = self
            .labels
            .as_deref()
            .is_none_or(|s| selector_subset(s, r.obj.root.path(&["metadata", "labels"])));
        let ann_ok = self
            .annotations
            .as_deref()
            .is_none_or(|s| selector_subset(s, r.obj.root.path(&["metadata", "annotations"])));
        fields_ok && labels_ok && ann_ok
    }
}

/// Equality-only label selectors (`a=b,c=d`), the form replacements use.
fn selector_subset(sel: &str, map: Option<&Node>) -> bool {
    sel.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .all(|t| {
            let (k, v) = t
                .split_once("==")
                .or_else(|| t.split_once('='))
                .unwrap_or((t, ""));
            let got = map
                .and_then(|m| m.get(k.trim()))
                .and_then(Node::scalar_text);
            if v.is_empty() && !t.contains('=') {
                got.is_some()
            } else {
                got.as_deref() == Some(v.trim())
            }
        })
}

fn apply_one(
    files: &mut Files,
    res: &mut [Res],
    sizes: &mut [Option<Size>],
    repl: &Node,
) -> Result<(), Issue> {
    let Some(source) = repl.get("source") else {
        return Err(Issue::at(
            &files.sources,
            repl.span(),
            "replacement needs a source",
        ));
    };
    spend_scan(files, res.len()).map_err(|m| Issue::at(&files.sources, repl.span(), m))?;
    let sources = &files.sources;
    let fail = |m: String| Issue::at(sources, repl.span(), m);
    let selector = IdSelector::of(source);
    let sources: Vec<usize> = (0..res.len())
        .filter(|i| selector.selects(&res[*i]))
        .collect();
    let src = match sources.as_slice() {
        [one] => *one,
        [] => return Err(fail("nothing selected by replacement source".into())),
        _ => {
            return Err(fail(
                "more than one object selected by replacement source".into(),
            ));
        }
    };
    let field = source
        .get("fieldPath")
        .and_then(Node::as_str)
        .unwrap_or("metadata.name");
    let path = split_field_path(field);
    let mut value = lookup(&res[src].obj.root, &path).cloned().ok_or_else(|| {
        fail(format!(
            "fieldPath `{field}` is missing for replacement source {}",
            res[src].obj.id()
        ))
    })?;
    if let Some(opts) = source.get("options")
        && let Some(delim) = opts.get("delimiter").and_then(Node::as_str)
    {
        let idx = opts.get("index").and_then(|n| match n.value {
            Value::Int(i) => Some(i),
            _ => None,
        });
        let text = value.scalar_text().unwrap_or_default();
        let parts: Vec<&str> = text.split(delim).collect();
        let i = idx.unwrap_or(0);
        let picked = usize::try_from(i).ok().and_then(|i| parts.get(i)).copied();
        let Some(picked) = picked else {
            return Err(fail(format!(
                "options.index {i} is out of bounds for value {text}"
            )));
        };
        value = Node::synthetic_str(picked, value.span());
    }
    let value_size = Size::of(&value, &files.limits().yaml);
    for target in repl
        .get("targets")
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
    {
        let Some(select) = target.get("select") else {
            return Err(Issue::at(
                &files.sources,
                target.span(),
                "replacement target needs select",
            ));
        };
        let select = IdSelector::of(select);
        let rejects: Vec<IdSelector> = target
            .get("reject")
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .map(IdSelector::of)
            .collect();
        let create = target
            .path(&["options", "create"])
            .and_then(Node::as_bool_lenient)
            .unwrap_or(false);
        let delimiter = target
            .path(&["options", "delimiter"])
            .and_then(Node::as_str)
            .map(str::to_string);
        let index = target
            .path(&["options", "index"])
            .and_then(|n| match n.value {
                Value::Int(i) => Some(i),
                _ => None,
            });
        let paths = target
            .get("fieldPaths")
            .and_then(Node::as_seq)
            .map_or(0, |s| s.len());
        spend_scan(files, res.len()).map_err(|m| Issue::at(&files.sources, target.span(), m))?;
        for (r, size) in res.iter_mut().zip(sizes.iter_mut()) {
            if !select.selects(r) || rejects.iter().any(|rj| rj.selects(r)) {
                continue;
            }
            let limits = files.limits().yaml;
            let fail = |files: &Files, r: &Res, m: String| {
                Issue::at(
                    &files.sources,
                    target.span(),
                    format!("{}: {m}", r.obj.id()),
                )
            };
            // A source field copied into its own object doubles it per
            // replacement: the object is held to the object budget.
            let size = match size {
                Some(size) => size,
                None => {
                    let whole = Size::of(&r.obj.root, &limits);
                    spend_work(files, whole.nodes).map_err(|m| fail(files, r, m))?;
                    size.insert(whole)
                }
            };
            spend_work(files, value_size.nodes.saturating_mul(paths))
                .map_err(|m| fail(files, r, m))?;
            for fp in target
                .get("fieldPaths")
                .and_then(Node::as_seq)
                .into_iter()
                .flatten()
            {
                let Some(fp_text) = fp.as_str() else { continue };
                let segs = split_field_path(fp_text);
                size.grow(value_size, segs.len());
                if let Some(why) = size.over(&limits) {
                    return Err(Issue::at(
                        &files.sources,
                        fp.span(),
                        format!(
                            "replacement output budget exceeded: {} would have {why}",
                            r.obj.id()
                        ),
                    ));
                }
                let found = lookup_mut(r.obj.root_mut(), &segs, create, fp.span(), &mut |visits| {
                    spend_work(files, visits)
                });
                let slot = match found {
                    Ok(Some(slot)) => slot,
                    Ok(None) => continue,
                    Err(m) => return Err(Issue::at(&files.sources, fp.span(), m)),
                };
                // What the slot held goes: taken off, so that one field
                // replaced again and again does not count each time.
                size.shrink(Size::of(slot, &limits));
                let new = match &delimiter {
                    Some(d) => {
                        let old = slot.scalar_text().unwrap_or_default();
                        let mut parts: Vec<String> =
                            old.split(d.as_str()).map(str::to_string).collect();
                        let repl_text = value.scalar_text().unwrap_or_default();
                        let i = index.unwrap_or(0);
                        match usize::try_from(i) {
                            Ok(i) if i < parts.len() => parts[i] = repl_text,
                            Ok(_) => parts.push(repl_text),
                            Err(_) => parts.insert(0, repl_text),
                        }
                        Node::synthetic_str(parts.join(d), value.span())
                    }
                    None => value.clone(),
                };
                *slot = new;
            }
            let span = repl.span();
            record_step(
                files,
                &mut r.obj,
                StepKind::Transformer,
                "replacement",
                span,
            )
            .map_err(|m| fail(files, r, m))?;
        }
    }
    Ok(())
}

/// Splits `a.b.[name=x.y].c` on dots outside brackets.
fn split_field_path(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0;
    for c in p.chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth -= 1;
                cur.push(c);
            }
            '.' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
    Match(&'a str, &'a str),
}

fn seg(s: &str) -> Seg<'_> {
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        if let Some((k, v)) = inner.split_once('=') {
            return Seg::Match(k, v);
        }
        return Seg::Key(inner);
    }
    match s.parse::<usize>() {
        Ok(i) => Seg::Index(i),
        Err(_) => Seg::Key(s),
    }
}

fn lookup<'a>(node: &'a Node, path: &[String]) -> Option<&'a Node> {
    let Some((first, rest)) = path.split_first() else {
        return Some(node);
    };
    let child = match seg(first) {
        Seg::Key(k) => node.get(k)?,
        Seg::Index(i) => node.as_seq()?.get(i)?,
        Seg::Match(k, v) => node
            .as_seq()?
            .iter()
            .find(|e| e.get(k).and_then(Node::scalar_text).as_deref() == Some(v))?,
    };
    lookup(child, rest)
}

fn lookup_mut<'a>(
    node: &'a mut Node,
    path: &[String],
    create: bool,
    span: Span,
    spend: &mut Spend<'_>,
) -> Result<Option<&'a mut Node>, String> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(Some(node));
    };
    match seg(first) {
        Seg::Key(k) => {
            spend(scan_cost(node.as_map().map_or(0, <[_]>::len)))?;
            let at = node
                .as_map()
                .and_then(|m| m.iter().position(|(key, _)| key.as_str() == Some(k)));
            let at = match at {
                Some(i) => i,
                None if !create => return Ok(None),
                None => {
                    if node.is_null() {
                        node.value = Value::Map(Default::default());
                    }
                    let Some(len) = node.as_map().map(<[_]>::len) else {
                        return Err(format!("cannot create field {k} in a non-mapping"));
                    };
                    node.insert(k, Node::new(Value::Null, span));
                    len
                }
            };
            match node.as_map_mut().and_then(|m| m.get_mut(at)) {
                Some((_, child)) => lookup_mut(child, rest, create, span, spend),
                None => Ok(None),
            }
        }
        Seg::Index(i) => match node.as_seq_mut().and_then(|s| s.get_mut(i)) {
            Some(child) => lookup_mut(child, rest, create, span, spend),
            None => Ok(None),
        },
        Seg::Match(k, v) => {
            let Some(items) = node.as_seq_mut() else {
                return Ok(None);
            };
            spend(scan_cost(items.len()))?;
            match items
                .iter_mut()
                .find(|e| e.get(k).and_then(Node::scalar_text).as_deref() == Some(v))
            {
                Some(child) => lookup_mut(child, rest, create, span, spend),
                None => Ok(None),
            }
        }
    }
}
