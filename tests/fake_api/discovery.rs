//! Discovery in both forms the real server offers: the legacy documents
//! (`APIVersions`, `APIGroupList`, one `APIResourceList` per group
//! version), and aggregated discovery (`apidiscovery.k8s.io/v2`), where
//! `/api` and `/apis` alone describe every resource. kubectl asks for the
//! aggregated form first and only falls back to one request per group
//! version when the server does not give it. Both are built from
//! [`Fixture::served`], so they always agree.

use hyper::HeaderMap;
use serde_json::{Value, json};

use super::{Fixture, ResourceType, Resp, respond, respond_as, status};

const AGGREGATED_GROUP: &str = "apidiscovery.k8s.io";
const AGGREGATED_VERSION: &str = "v2";
const AGGREGATED_KIND: &str = "APIGroupDiscoveryList";

/// The fake only lists, gets and reads objects.
const VERBS: &[&str] = &["get", "list", "watch"];

/// A subresource the fake serves.
struct Subresource {
    group: &'static str,
    parent: &'static str,
    name: &'static str,
    kind: &'static str,
    verbs: &'static [&'static str],
}

const SUBRESOURCES: &[Subresource] = &[Subresource {
    group: "",
    parent: "pods",
    name: "portforward",
    kind: "PodPortForwardOptions",
    verbs: &["create", "get"],
}];

fn subresources_of(t: &ResourceType) -> impl Iterator<Item = &'static Subresource> {
    SUBRESOURCES
        .iter()
        .filter(move |s| s.group == t.group && s.parent == t.plural)
}

/// Whether the client's Accept prefers aggregated discovery v2: the
/// first media range it lists that the fake can serve decides, as the
/// real server's content negotiation does for kubectl's header.
pub(super) fn wants_aggregated(headers: &HeaderMap) -> bool {
    let Some(accept) = headers
        .get(hyper::header::ACCEPT)
        .and_then(|a| a.to_str().ok())
    else {
        return false;
    };
    for range in accept.split(',') {
        let mut parts = range.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        if media != "application/json" && media != "*/*" {
            continue;
        }
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |k: &str| params.iter().find(|(n, _)| *n == k).map(|(_, v)| *v);
        match (param("g"), param("v"), param("as")) {
            (None, None, None) => return false,
            (Some(AGGREGATED_GROUP), Some(AGGREGATED_VERSION), Some(AGGREGATED_KIND)) => {
                return true;
            }
            // Another representation (v2beta1, a Table): not served, so
            // the next range in the list decides.
            _ => {}
        }
    }
    false
}

/// The served types, grouped by API group in the order of [`super::TYPES`].
fn groups(fx: &Fixture) -> Vec<(&'static str, Vec<&'static ResourceType>)> {
    let mut groups: Vec<(&str, Vec<&ResourceType>)> = Vec::new();
    for t in fx.served() {
        match groups.iter_mut().find(|(g, _)| *g == t.group) {
            Some((_, types)) => types.push(t),
            None => groups.push((t.group, vec![t])),
        }
    }
    groups
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// `/api`: the core group's versions.
pub(super) fn api_versions() -> Resp {
    respond(
        200,
        json!({"kind": "APIVersions", "versions": ["v1"],
               "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}),
    )
}

/// `/apis`: the named groups, each at its one version.
pub(super) fn group_list(fx: &Fixture) -> Resp {
    let groups: Vec<Value> = groups(fx)
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(g, _)| {
            let version = fx.version(g);
            let gv = json!({"groupVersion": group_version(g, &version), "version": version});
            json!({"name": g, "versions": [gv.clone()], "preferredVersion": gv})
        })
        .collect();
    respond(
        200,
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
    )
}

/// `/api/v1` or `/apis/<group>/<version>`.
pub(super) fn resource_list(fx: &Fixture, group: &str, version: &str) -> Resp {
    let Some((_, types)) = groups(fx).into_iter().find(|(g, _)| *g == group) else {
        return not_found();
    };
    if fx.version(group) != version {
        return not_found();
    }
    let mut resources = Vec::new();
    for t in types {
        resources.push(json!({
            "name": t.plural, "singularName": t.kind.to_lowercase(), "namespaced": t.namespaced,
            "kind": t.kind, "verbs": VERBS,
        }));
        resources.extend(subresources_of(t).map(|s| {
            json!({
                "name": format!("{}/{}", t.plural, s.name), "singularName": "",
                "namespaced": t.namespaced, "kind": s.kind, "verbs": s.verbs,
            })
        }));
    }
    respond(
        200,
        json!({"kind": "APIResourceList", "apiVersion": "v1",
               "groupVersion": group_version(group, version), "resources": resources}),
    )
}

fn not_found() -> Resp {
    status(
        404,
        "NotFound",
        "the server could not find the requested resource".into(),
    )
}

/// `/api` (`core`) or `/apis` as an `APIGroupDiscoveryList`.
pub(super) fn aggregated(fx: &Fixture, core: bool) -> Resp {
    let items: Vec<Value> = groups(fx)
        .into_iter()
        .filter(|(g, _)| g.is_empty() == core)
        .map(|(g, types)| {
            let version = fx.version(g);
            let resources: Vec<Value> = types
                .iter()
                .map(|t| aggregated_resource(t, &version))
                .collect();
            let metadata = if g.is_empty() {
                json!({})
            } else {
                json!({"name": g})
            };
            json!({"metadata": metadata, "versions": [
                {"version": version, "resources": resources, "freshness": "Current"}
            ]})
        })
        .collect();
    respond_as(
        200,
        &format!(
            "application/json;g={AGGREGATED_GROUP};v={AGGREGATED_VERSION};as={AGGREGATED_KIND}"
        ),
        json!({"kind": AGGREGATED_KIND,
               "apiVersion": format!("{AGGREGATED_GROUP}/{AGGREGATED_VERSION}"),
               "metadata": {}, "items": items}),
    )
}

fn aggregated_resource(t: &ResourceType, version: &str) -> Value {
    let subresources: Vec<Value> = subresources_of(t)
        .map(|s| {
            json!({"subresource": s.name,
                   "responseKind": {"group": s.group, "version": version, "kind": s.kind},
                   "verbs": s.verbs})
        })
        .collect();
    let mut r = json!({
        "resource": t.plural,
        "responseKind": {"group": t.group, "version": version, "kind": t.kind},
        "scope": if t.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": t.kind.to_lowercase(),
        "verbs": VERBS,
    });
    if !subresources.is_empty() {
        r["subresources"] = json!(subresources);
    }
    r
}
