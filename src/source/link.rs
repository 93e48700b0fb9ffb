//! Joining live state to the repo: a live object that is the same object
//! as one the repo declares (same group, kind, namespace and name) is
//! represented by the declaration, so findings point at the repo file;
//! what only the cluster has (objects no file declares, such as bound
//! PVs, and the `status` of declared ones) is kept. Settings the rules
//! read that differ between the two are reported as drift.

use super::{Object, live};
use crate::yaml::Node;

/// Where Postgres operators keep server parameters.
const PARAMETER_PATHS: &[&[&str]] = &[
    &["spec", "postgresql", "parameters"],
    &["spec", "config", "parameters"],
    &[
        "spec",
        "patroni",
        "dynamicConfiguration",
        "postgresql",
        "parameters",
    ],
];

/// What merging found.
#[derive(Debug, Default)]
pub struct Merged {
    /// Live objects represented by a repo declaration.
    pub linked: usize,
    /// One line per drifted setting.
    pub drift: Vec<String>,
}

/// Adds to `repo` the live objects it does not declare; for the ones it
/// does, copies the live `status` onto the declaration and compares
/// Postgres parameters.
pub fn merge(repo: &mut Vec<Object>, live_objects: Vec<Object>) -> Merged {
    let mut merged = Merged::default();
    let declared = repo.len();
    for l in live_objects {
        let found = repo[..declared].iter().position(|o| same_object(o, &l));
        match found {
            Some(i) => {
                merged.linked += 1;
                merged.drift.extend(drift(&repo[i], &l));
                if repo[i].root.get("status").is_none()
                    && let Some(status) = l.root.get("status")
                {
                    let status = status.clone();
                    repo[i].root.insert("status", status);
                }
            }
            None => repo.push(l),
        }
    }
    merged
}

/// Same object: group, kind, name, and namespace (a declaration written
/// without one matches any: Flux or the kubeconfig supplies it). When the
/// live object carries Flux's ownership labels, the declaration must
/// have been rendered by a Flux Kustomization or be loose in the repo.
fn same_object(declared: &Object, l: &Object) -> bool {
    declared.is(l.group(), l.kind())
        && declared.name() == l.name()
        && declared
            .namespace()
            .is_none_or(|ns| Some(ns) == l.namespace())
        && !declared.is_live()
        && live::flux_owner(l).is_none_or(|(kind, _, _)| kind == "Kustomization")
}

/// Postgres parameters the repo and the cluster disagree on.
pub fn drift(declared: &Object, l: &Object) -> Vec<String> {
    let mut out = Vec::new();
    for path in PARAMETER_PATHS {
        let (d, c) = (declared.root.path(path), l.root.path(path));
        if d.is_none() && c.is_none() {
            continue;
        }
        let keys = |n: Option<&Node>| -> Vec<String> {
            n.and_then(Node::as_map)
                .into_iter()
                .flatten()
                .filter_map(|(k, _)| k.as_str().map(str::to_string))
                .collect()
        };
        let mut names = keys(d);
        names.extend(keys(c));
        names.sort();
        names.dedup();
        for name in names {
            let value = |n: Option<&Node>| n.and_then(|m| m.get(&name)).and_then(Node::scalar_text);
            let (dv, cv) = (value(d), value(c));
            if dv != cv {
                let show = |v: &Option<String>| {
                    v.as_ref().map_or("unset".to_string(), |v| format!("{v:?}"))
                };
                out.push(format!(
                    "drift: {}: {}.{} is {} in the repository but {} in the cluster",
                    l.id(),
                    path.join("."),
                    name,
                    show(&dv),
                    show(&cv)
                ));
            }
        }
    }
    out
}
