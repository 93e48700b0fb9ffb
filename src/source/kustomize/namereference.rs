//! Name references: after hashes, prefixes and suffixes change names,
//! fields that name another object (volumes, envFrom, roleRef, HelmRelease
//! valuesFrom via `configurations:`, ...) follow the new name.

use std::sync::Arc;

use crate::yaml::{Node, Span, Value};

use super::fieldspecs::{FieldSpec, Leaf, NameRef, split_path, visit};
use super::{Gvk, Res};

type Fail = (Span, String);

/// How many kinds of object [`fix`] tells apart (by group, version and
/// kind) to ask their field specs once each.
const SHARED: usize = 8;

pub(crate) fn fix(res: &mut [Res], refs: &[NameRef]) -> Result<(), Fail> {
    // Taken once, not per reference kind and object (kustomize's defaults
    // list dozens of kinds): a name reference rewrites name fields only,
    // never an object's apiVersion or kind.
    let gvks: Vec<Gvk> = res.iter().map(Res::gvk).collect();
    // Each object's group, version and kind as one of the first few told
    // apart: a build holds few (HelmRelease, ConfigMap, ...), and
    // comparing every object with each of the defaults' reference kinds,
    // and asking each field spec of a kind with objects of every object,
    // was most of a build's last step. An object of none of them (`None`)
    // is asked on its own.
    let mut firsts: Vec<&Gvk> = Vec::with_capacity(SHARED);
    let class: Vec<Option<usize>> = gvks
        .iter()
        .map(|g| match firsts.iter().position(|f| *f == g) {
            Some(k) => Some(k),
            None if firsts.len() < SHARED => {
                firsts.push(g);
                Some(firsts.len() - 1)
            }
            None => None,
        })
        .collect();
    let every_first = class.iter().all(Option::is_some);
    for nr in refs {
        if every_first && !firsts.iter().any(|g| g.kind.as_str() == nr.kind) {
            continue;
        }
        let candidates: Vec<Candidate> = res
            .iter()
            .zip(&gvks)
            .filter(|(_, g)| {
                g.kind.as_str() == nr.kind
                    && (nr.group.is_empty()
                        || nr.group.contains('/')
                        || nr.group == g.group.as_str())
            })
            .map(|(r, g)| Candidate {
                names: r.names(),
                namespaces: {
                    let mut ns = vec![r.cur_view().namespace.into(), r.org.namespace.to_string()];
                    ns.extend(r.prev.iter().map(|p| p.namespace.to_string()));
                    ns
                },
                name: r.obj.name().to_string(),
                namespace: r.obj.namespace().unwrap_or("").to_string(),
                cluster_scoped: g.is_cluster_scoped(),
            })
            .collect();
        if candidates.is_empty() {
            continue;
        }
        // The field specs that select each of `firsts`, asked once.
        let mut selected: [Option<Vec<&FieldSpec>>; SHARED] = Default::default();
        for ((r, gvk), k) in res.iter_mut().zip(&gvks).zip(&class) {
            let pick =
                || -> Vec<&FieldSpec> { nr.specs.iter().filter(|fs| fs.selects(gvk)).collect() };
            let own;
            let specs = match k {
                Some(k) => &*selected[*k].get_or_insert_with(pick),
                None => {
                    own = pick();
                    &own
                }
            };
            // Read once a field spec selects the object: most objects are
            // of no kind that refers to this one.
            let mut referrer_ns = None;
            for fs in specs.iter() {
                let referrer_ns = referrer_ns.get_or_insert_with(|| {
                    (!gvk.is_cluster_scoped()).then(|| r.obj.namespace().unwrap_or("").to_string())
                });
                let span = r.obj.root.span();
                visit(
                    r.obj.root_mut(),
                    &split_path(&fs.path),
                    false,
                    Leaf::Scalar,
                    span,
                    &mut |node| update(node, &candidates, referrer_ns.as_deref(), &nr.kind),
                )
                .map_err(|m| (span, format!("{}: {m}", fs.path)))?;
            }
        }
    }
    Ok(())
}

struct Candidate {
    names: Vec<String>,
    namespaces: Vec<String>,
    name: String,
    namespace: String,
    cluster_scoped: bool,
}

fn same_ns(a: &str, b: &str) -> bool {
    let norm = |s: &str| {
        if s.is_empty() {
            "default".to_string()
        } else {
            s.to_string()
        }
    };
    norm(a) == norm(b)
}

/// The one new name for `old`, preferring objects in the referrer's
/// namespace; none when no object had that name.
fn resolve<'c>(
    old: &str,
    candidates: &'c [Candidate],
    ns: Option<&str>,
) -> Result<Option<&'c Candidate>, String> {
    let named: Vec<&Candidate> = candidates
        .iter()
        .filter(|c| c.names.iter().any(|n| n == old))
        .collect();
    let chosen: Vec<&Candidate> = match ns {
        Some(ns) => named
            .iter()
            .copied()
            .filter(|c| c.cluster_scoped || c.namespaces.iter().any(|n| same_ns(n, ns)))
            .collect(),
        None => named,
    };
    let Some(first) = chosen.first() else {
        return Ok(None);
    };
    if chosen.iter().any(|c| c.name != first.name) {
        return Err(format!(
            "found multiple possible referrals for name '{old}'"
        ));
    }
    Ok(Some(first))
}

fn update(
    node: &mut Node,
    candidates: &[Candidate],
    ns: Option<&str>,
    kind: &str,
) -> Result<(), String> {
    match &mut node.value {
        Value::Str(old) => {
            if let Some(c) = resolve(old, candidates, ns)?
                && *old != c.name
            {
                let span = node.span();
                *node = Node::synthetic_str(c.name.clone(), span);
            }
            Ok(())
        }
        Value::Seq(items) => {
            for item in Arc::make_mut(items).iter_mut() {
                update(item, candidates, ns, kind)?;
            }
            Ok(())
        }
        Value::Map(_) => {
            if node
                .get("kind")
                .and_then(Node::as_str)
                .is_some_and(|k| k != kind)
            {
                return Ok(());
            }
            let Some(old) = node.get("name").and_then(Node::as_str).map(str::to_string) else {
                return Ok(());
            };
            let own_ns = node
                .get("namespace")
                .and_then(Node::as_str)
                .map(str::to_string);
            let lookup_ns = own_ns.as_deref().or(ns);
            let Some(c) = resolve(&old, candidates, lookup_ns)? else {
                return Ok(());
            };
            if old != c.name {
                let span = node.get("name").map_or(node.span(), |n| n.span());
                node.insert("name", Node::synthetic_str(c.name.clone(), span));
            }
            // kustomize also writes the referred object's namespace, creating
            // the field (RoleBinding subjects gain `namespace:`).
            if !c.namespace.is_empty() && own_ns.as_deref() != Some(&c.namespace) {
                let span = node.get("namespace").map_or(node.span(), |n| n.span());
                node.insert("namespace", Node::synthetic_str(c.namespace.clone(), span));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
