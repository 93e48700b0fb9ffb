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

use crate::source::helm;
use crate::source::{Object, PathSet};
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
    names_flux_instance(source)
}

/// Whether a chart source holds the flux-instance chart: an
/// OCIRepository's chart is the last segment of its URL, a HelmChart
/// names it.
fn names_flux_instance(source: &Object) -> bool {
    const CHART: &str = "flux-instance";
    source
        .root
        .str_at(&["spec", "url"])
        .is_some_and(|u| u.trim_end_matches('/').rsplit('/').next() == Some(CHART))
        || source.root.str_at(&["spec", "chart"]) == Some(CHART)
}

/// The chart sources a HelmRelease's `chartRef` may find holding the
/// flux-instance chart once substituted, by kind and name, as far as the
/// objects before substitution tell: a source naming the chart, or one
/// whose URL or chart substitution may make name it. A release whose
/// `chartRef`, free of any `$`, names none of them installs another
/// chart: the bootstrap steps need not substitute it (a copy of every
/// HelmRelease of an app-template repository, substituted, for nothing).
/// Nor a ConfigMap or Secret, when no release that may install it reads
/// values from one.
pub struct ChartSources<'a> {
    /// The kinds `chartRef`s name.
    kinds: Vec<&'a str>,
    found: PathSet<(&'a str, &'a str)>,
    /// Kinds with such a source whose name substitution may change.
    any_name: Vec<&'a str>,
    /// A kind itself substituted, or a ResourceSet (whose members are
    /// candidates too): no release is left out.
    all: bool,
    /// Whether a release that may install the chart may read `valuesFrom`.
    values: bool,
}

impl<'a> ChartSources<'a> {
    pub fn of(objects: &[&'a Object]) -> ChartSources<'a> {
        // Each object's kind read once here: the objects are every
        // build's, and most are of neither kind asked.
        let mut releases = Vec::new();
        let mut all = false;
        for o in objects {
            match o.kind() {
                "HelmRelease" => releases.push(*o),
                "ResourceSet" => all |= o.group() == "fluxcd.controlplane.io",
                kind => all |= kind.contains('$'),
            }
        }
        let mut kinds: Vec<&str> = Vec::new();
        for kind in releases
            .iter()
            .filter_map(|o| chart_ref(o)?.str_at(&["kind"]))
        {
            if !kinds.contains(&kind) {
                all |= kind.contains('$');
                kinds.push(kind);
            }
        }
        let mut sources = ChartSources {
            kinds,
            found: PathSet::default(),
            any_name: Vec::new(),
            all,
            values: all,
        };
        if all {
            return sources;
        }
        for o in objects.iter().filter(|o| sources.kinds.contains(&o.kind())) {
            if !names_flux_instance(o) && !may_name_a_chart(o) {
                continue;
            }
            if o.name().contains('$') {
                sources.any_name.push(o.kind());
            } else {
                sources.found.insert((o.kind(), o.name()));
            }
        }
        sources.values = releases.iter().any(|o| {
            o.is("helm.toolkit.fluxcd.io", "HelmRelease")
                && may_sync(o)
                && sources.may_install(o)
                && may_read_values(o)
        });
        sources
    }

    /// Whether the ConfigMap or Secret (or what makes one) `o` may be
    /// looked up: by a release's `valuesFrom`, or as its chart source.
    pub fn may_read(&self, o: &Object) -> bool {
        self.values || self.kinds.contains(&o.kind())
    }

    /// Whether the HelmRelease `hr`, substituted, may install the
    /// flux-instance chart through its `chartRef`: `false` only where
    /// it cannot.
    pub fn may_install(&self, hr: &Object) -> bool {
        let Some(r) = chart_ref(hr) else {
            return true;
        };
        if self.all || super::substitute::holds_dollar_anywhere(r) || spec_key_substituted(hr) {
            return true;
        }
        // Without a `$` the reference reads the same substituted (and no
        // key may become a second one).
        let Some((kind, name)) = r.str_at(&["kind"]).zip(r.str_at(&["name"])) else {
            return false;
        };
        self.any_name.contains(&kind) || self.found.contains(&(kind, name))
    }
}

/// Whether a release, substituted, may have `spec.valuesFrom`: it has,
/// or a key where it would be may become it.
fn may_read_values(hr: &Object) -> bool {
    hr.root.path(&["spec", "valuesFrom"]).is_some() || spec_key_substituted(hr)
}

/// Whether a chart source's `spec.url` or `spec.chart` (which
/// [`names_flux_instance`] reads) may read otherwise substituted: one
/// holds a `$`, or a key where one would be does. A `${APP}` in its name
/// only is no such change (app-template sources named after their app).
fn may_name_a_chart(source: &Object) -> bool {
    let substituted = |path: &[&str]| source.root.str_at(path).is_some_and(|s| s.contains('$'));
    substituted(&["spec", "url"]) || substituted(&["spec", "chart"]) || spec_key_substituted(source)
}

/// Whether a key of the object or of its `spec` holds a `$`.
fn spec_key_substituted(o: &Object) -> bool {
    let substituted_key = |n: Option<&Node>| {
        n.and_then(Node::as_map)
            .unwrap_or_default()
            .iter()
            .any(|(k, _)| k.as_str().is_some_and(|k| k.contains('$')))
    };
    substituted_key(Some(&o.root)) || substituted_key(o.root.get("spec"))
}

/// A HelmRelease's `chartRef`, where it names no chart of its own.
fn chart_ref(o: &Object) -> Option<&Node> {
    if !o.is("helm.toolkit.fluxcd.io", "HelmRelease") || o.root.path(&["spec", "chart"]).is_some() {
        return None;
    }
    o.root.path(&["spec", "chartRef"])
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::source::object::objects_of as objects;

    const RELEASES: &str = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app}
spec: {chartRef: {kind: OCIRepository, name: app-template}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: flux}
spec: {chartRef: {kind: OCIRepository, name: flux-instance}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: chosen}
spec: {chartRef: {kind: OCIRepository, name: '${CHART}'}}
---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: named}
spec: {chart: {spec: {chart: app-template}}}
";

    fn may_install(sources: &str) -> Vec<bool> {
        let (releases, sources) = (objects(RELEASES), objects(sources));
        let seen: Vec<&Object> = releases.iter().chain(&sources).collect();
        let charts = ChartSources::of(&seen);
        releases.iter().map(|hr| charts.may_install(hr)).collect()
    }

    /// Only a release whose reference, as substitution leaves it, may
    /// find the flux-instance chart is substituted for bootstrap.
    #[test]
    fn only_a_release_that_may_find_the_flux_instance_chart_may_install_it() {
        let sources = "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: app-template}
spec: {url: 'oci://ghcr.io/bjw-s/helm/app-template'}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: flux-instance}
spec: {url: 'oci://ghcr.io/controlplaneio-fluxcd/charts/flux-instance/'}
";
        assert_eq!(may_install(sources), [false, true, true, true]);
        // A source that substitution may make one could be any of them.
        let substituted = sources.replace("app-template'", "${CHART}'");
        assert_eq!(may_install(&substituted), [true, true, true, true]);
        // A name substituted only matches any reference, where the
        // source may name the chart.
        let renamed = sources.replace("name: app-template}", "name: '${APP}'}");
        assert_eq!(may_install(&renamed), [false, true, true, true]);
        let renamed = renamed.replace("app-template'", "${CHART}'");
        assert_eq!(may_install(&renamed), [true, true, true, true]);
        let written_by_hand = sources.replace("flux-instance/'", "other'");
        assert_eq!(may_install(&written_by_hand), [false, false, true, true]);
    }

    /// A ConfigMap is substituted for bootstrap only where a release that
    /// may install the chart may read values from one.
    #[test]
    fn values_are_read_only_for_a_release_that_may_read_them() {
        let may_read = |release: &str| {
            let objs = objects(&format!(
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {{name: flux}}\n\
                 spec: {{chartRef: {{kind: OCIRepository, name: flux-instance}}, {release}}}\n---\n\
                 apiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\n\
                 metadata: {{name: flux-instance}}\nspec: {{url: 'oci://ghcr.io/c/charts/flux-instance'}}\n---\n\
                 apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: values}}\n"
            ));
            let seen: Vec<&Object> = objs.iter().collect();
            ChartSources::of(&seen).may_read(&objs[2])
        };
        assert!(!may_read("interval: 1h"));
        assert!(may_read("valuesFrom: [{kind: ConfigMap, name: values}]"));
        assert!(may_read("'${FROM}': []"));
    }
}
