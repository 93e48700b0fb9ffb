//! Roots of a cluster bootstrapped by flux-operator instead of
//! `flux bootstrap`: no `gotk-sync.yaml` is in the repository, the
//! operator writes the sync Kustomization itself.
//!
//! flux-operator (github:controlplaneio-fluxcd/flux-operator,
//! `internal/controller/fluxinstance_controller.go`, `build()`) names the
//! sync source and Kustomization `spec.sync.name`, else the FluxInstance's
//! namespace, puts both in that namespace, and its `syncTmpl`
//! (`internal/builder/templates.go`) writes
//! `spec: {path: <sync.path>, sourceRef: {kind: <sync.kind>, name: <name>}}`
//! and nothing else Flux renders with (no targetNamespace, patches or
//! postBuild). The `flux-instance` Helm chart
//! (github:controlplaneio-fluxcd/charts, `charts/flux-instance/templates/
//! instance.yaml`) renders one FluxInstance in the release namespace from
//! `values.instance.sync`, with `sync` only when `sync.url` is set, and
//! `sync.kind` defaulting to `GitRepository` (`values.yaml`).

use crate::source::Object;
use crate::source::helm;
use crate::yaml::{Node, SourceMap, Span, Value};

const KS_API: &str = "kustomize.toolkit.fluxcd.io/v1";

/// The objects a flux-operator ResourceSet applies, when they are written
/// out: `spec.resources` entries holding no `<< inputs.* >>` template
/// (the operator's `internal/builder/resourceset.go` renders those from
/// inputs the cluster may hold). Each keeps the ResourceSet's document.
pub fn resource_set_members(o: &Object) -> Vec<Object> {
    if !o.is("fluxcd.controlplane.io", "ResourceSet") {
        return Vec::new();
    }
    o.root
        .path(&["spec", "resources"])
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
        .filter(|r| Object::looks_like_object(r) && !templated(r))
        .map(|r| Object::new(r.clone(), o.file, o.doc_index as usize))
        .collect()
}

fn templated(node: &Node) -> bool {
    match &node.value {
        Value::Str(s) => s.contains("<<"),
        Value::Seq(items) => items.iter().any(templated),
        Value::Map(entries) => entries.iter().any(|(k, v)| templated(k) || templated(v)),
        _ => false,
    }
}

/// A sync Kustomization and the FluxInstance's `kustomize.patches`,
/// which flux-operator applies to every object it generates, this one
/// included (`build()` appends them to the generated kustomization that
/// lists `sync.yaml`; see `internal/builder/testdata/*/sync.kustomization.yaml`).
pub struct Synced {
    pub kustomization: Object,
    pub patches: Option<Node>,
}

/// The sync Kustomization a FluxInstance, or a HelmRelease of the
/// `flux-instance` chart, makes the operator create; `None` when it
/// syncs nothing.
pub fn sync_kustomization<'a>(
    sources: &SourceMap,
    o: &Object,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
) -> Option<Synced> {
    if o.is("fluxcd.controlplane.io", "FluxInstance") {
        let sync = o.root.path(&["spec", "sync"])?;
        // Written without a namespace, it lands in the applier's; flux-operator's
        // guides put it in flux-system.
        return Some(Synced {
            kustomization: made(o, sync, o.namespace().unwrap_or("flux-system"))?,
            patches: o.root.path(&["spec", "kustomize", "patches"]).cloned(),
        });
    }
    if !o.is("helm.toolkit.fluxcd.io", "HelmRelease") {
        return None;
    }
    if !installs_flux_instance(o, lookup) {
        return None;
    }
    let release = helm::resolve(sources, o, lookup);
    let sync = release.values.path(&["instance", "sync"])?;
    sync.get("url")?.as_str().filter(|u| !u.is_empty())?;
    // Helm's release namespace: spec.targetNamespace, else the
    // HelmRelease's own (helm-controller `GetReleaseNamespace`).
    let namespace = o
        .root
        .str_at(&["spec", "targetNamespace"])
        .or(o.namespace())
        .unwrap_or("flux-system");
    Some(Synced {
        kustomization: made(o, sync, namespace)?,
        patches: release
            .values
            .path(&["instance", "kustomize", "patches"])
            .cloned(),
    })
}

/// Whether `o` may be what [`sync_kustomization`] (or a ResourceSet's
/// members) makes a sync Kustomization of: a FluxInstance, a
/// ResourceSet, or a HelmRelease whose chart is `flux-instance`, is
/// named through a `chartRef`, or is still a `${...}` a substitution may
/// make it. Every other HelmRelease is never a candidate and is looked
/// up by nothing, so it need not be held (or copied) for bootstrap.
pub fn may_sync(o: &Object) -> bool {
    if o.is("fluxcd.controlplane.io", "FluxInstance")
        || o.is("fluxcd.controlplane.io", "ResourceSet")
    {
        return true;
    }
    o.is("helm.toolkit.fluxcd.io", "HelmRelease")
        && o.root
            .str_at(&["spec", "chart", "spec", "chart"])
            .is_none_or(|c| c == "flux-instance" || c.contains('$'))
}

/// Whether a HelmRelease installs the flux-instance chart: looked at
/// before its values are resolved, which costs more.
fn installs_flux_instance<'a>(
    hr: &Object,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
) -> bool {
    const CHART: &str = "flux-instance";
    if let Some(chart) = hr.root.str_at(&["spec", "chart", "spec", "chart"]) {
        return chart == CHART;
    }
    let Some(r) = hr.root.path(&["spec", "chartRef"]) else {
        return false;
    };
    let namespace = r.str_at(&["namespace"]).or(hr.namespace()).unwrap_or("");
    let (kind, name) = (r.str_at(&["kind"]), r.str_at(&["name"]));
    let Some(source) = kind.zip(name).and_then(|(k, n)| lookup(k, namespace, n)) else {
        return false;
    };
    // An OCIRepository's chart is the last segment of its URL, a
    // HelmChart names it.
    source
        .root
        .str_at(&["spec", "url"])
        .is_some_and(|u| u.trim_end_matches('/').rsplit('/').next() == Some(CHART))
        || source.root.str_at(&["spec", "chart"]) == Some(CHART)
}

/// The Kustomization of `syncTmpl`, each field spanning where its value
/// was written.
fn made(by: &Object, sync: &Node, namespace: &str) -> Option<Object> {
    let path = sync.get("path")?.clone();
    let name = sync
        .get("name")
        .filter(|n| n.as_str().is_some_and(|s| !s.is_empty()))
        .cloned()
        .unwrap_or_else(|| Node::synthetic_str(namespace, sync.span()));
    let kind = sync
        .get("kind")
        .cloned()
        .unwrap_or_else(|| Node::synthetic_str("GitRepository", sync.span()));
    let at = sync.span();
    let map = |entries: Vec<(&str, Node)>, span: Span| {
        Node::synthetic_map(
            entries
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            span,
        )
    };
    let root = map(
        vec![
            ("apiVersion", Node::synthetic_str(KS_API, at)),
            ("kind", Node::synthetic_str("Kustomization", at)),
            (
                "metadata",
                map(
                    vec![
                        ("name", name.clone()),
                        ("namespace", Node::synthetic_str(namespace, at)),
                    ],
                    at,
                ),
            ),
            (
                "spec",
                map(
                    vec![
                        ("path", path),
                        ("sourceRef", map(vec![("kind", kind), ("name", name)], at)),
                    ],
                    at,
                ),
            ),
        ],
        at,
    );
    Some(Object::new(root, by.file, by.doc_index as usize))
}
