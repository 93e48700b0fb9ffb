//! On every corpus repository, what Flux applies is rendered
//! through a Flux Kustomization (at least 99 % of those manifest files),
//! every other file has the fate checked in at
//! `testdata/corpus-fates.yaml` (the test fails when one changes), no
//! Flux Kustomization is left out without a reason, and no object
//! identity appears twice in one cluster tree.
//!
//! `UPDATE_FATES=1 cargo test --test it corpus_coverage::` rewrites the file;
//! review the diff: each line's comment is the reason the tool gives.

use crate::common;

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use homelab_lint::source::coverage::Fate;
use homelab_lint::source::repo;
use homelab_lint::yaml::{FileId, Limits, parse_documents};

const FATES: &str = "testdata/corpus-fates.yaml";

/// Objects the repository itself declares twice in one cluster: Flux
/// applies both (the last one wins), so they are rendered twice.
const DECLARED_TWICE: &[(&str, &str, &str)] = &[
    (
        "gandazgul__k8s-infrastructure",
        "HelmRelease/kube-system/cert-manager",
        "Flux Kustomizations cert-manager and cert-manager-certificates both build infrastructure/cert-manager/controller",
    ),
    (
        "gandazgul__k8s-infrastructure",
        "HelmRelease/kube-system/reflector",
        "the same two Flux Kustomizations build its directory too",
    ),
    (
        "gandazgul__k8s-infrastructure",
        "HelmRepository/kube-system/jetstack",
        "the same two Flux Kustomizations",
    ),
    (
        "gandazgul__k8s-infrastructure",
        "HelmRepository/kube-system/emberstack",
        "the same two Flux Kustomizations",
    ),
    (
        "joryirving__home-ops",
        "GrafanaDashboard/observability/ups-status",
        "written in nut-exporter/grafanadashboard.yaml and again in gatus-sidecar/grafanadashboard.yaml",
    ),
    (
        "joryirving__home-ops",
        "GrafanaDashboard/observability/ups-aggregate",
        "written in both grafanadashboard.yaml files as above",
    ),
    (
        "joryirving__home-ops",
        "HelmRelease/flux-system/flux-instance",
        "each cluster's FluxInstance sync Kustomization builds kubernetes/clusters/<cluster>, whose generated kustomization lists flux-instance/, which Flux Kustomization flux-instance builds too",
    ),
    (
        "joryirving__home-ops",
        "OCIRepository/flux-system/flux-instance",
        "in flux-instance/helmrelease.yaml, applied twice as above",
    ),
    (
        "joryirving__home-ops",
        "PrometheusRule/flux-system/flux-instance-rules",
        "in flux-instance/prometheusrule.yaml, applied twice as above",
    ),
    (
        "xunholy__k8s-gitops",
        "GrafanaDashboard/network-system/cloudflare-tunnels",
        "written in both external-dns/app and cloudflare-tunnel/app grafanadashboard.yaml",
    ),
    (
        "xunholy__k8s-gitops",
        "ResourceSet/flux-system/flux-instance",
        "the FluxInstance's sync Kustomization flux-system builds kubernetes/clusters/cluster-00, whose generated kustomization lists flux-system/flux-instance/app, which Flux Kustomization flux-instance builds too",
    ),
    (
        "xunholy__k8s-gitops",
        "ConfigMap/flux-system/flux-instance-values-c7mb666m75",
        "generated in flux-system/flux-instance/app, applied twice as above",
    ),
    (
        "xunholy__k8s-gitops",
        "ResourceSet/flux-system/flux-operator",
        "flux-system/flux-operator/app, listed by the generated kustomization and built by Flux Kustomization flux-operator",
    ),
    (
        "xunholy__k8s-gitops",
        "ConfigMap/flux-system/flux-operator-values-8f6kgg7c6m",
        "generated in flux-system/flux-operator/app, applied twice as above",
    ),
    (
        "xunholy__k8s-gitops",
        "HelmRelease/flux-system/kustomize-mutating-webhook",
        "flux-system/kustomize-mutating-webhook/app, listed by the generated kustomization and built by its own Flux Kustomization",
    ),
    (
        "xunholy__k8s-gitops",
        "ConfigMap/flux-system/kustomization-mutating-webhook-values-tfbthh8bf6",
        "generated there, applied twice as above",
    ),
];

/// Fates that need no entry: rendered, or holding nothing Flux applies.
fn unremarkable(f: &Fate) -> bool {
    matches!(
        f,
        Fate::Rendered { .. } | Fate::Kustomization | Fate::NoObject { .. }
    )
}

#[test]
fn flux_renders_what_it_applies_and_every_other_file_has_its_fate() {
    let repos = common::corpus_repos();
    if repos.is_empty() {
        common::skip_or_fail("corpus_coverage: ../shared/corpus is absent");
        return;
    }
    let mut actual: BTreeMap<String, BTreeMap<String, (String, String)>> = BTreeMap::new();
    let mut problems = Vec::new();
    for dir in &repos {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let r = repo::load(dir, Default::default());
        let c = &r.coverage;
        let applied = c.rendered + c.lost;
        eprintln!("{name}: {}", c.summary());
        if applied > 0 && (c.rendered as f64) < 0.99 * applied as f64 {
            problems.push(format!(
                "{name}: only {} of {applied} manifest files Flux applies are rendered",
                c.rendered
            ));
        }
        // A Flux Kustomization that did not render says why, and one of
        // this repository (not another repository's tree) is an issue.
        for f in r.flux.iter().filter(|f| !f.outcome.is_complete()) {
            if f.outcome.why().is_empty() {
                problems.push(format!(
                    "{name}: {}/{} without a reason",
                    f.namespace, f.name
                ));
            }
        }
        let mut seen: HashMap<(Option<u32>, String, String, String, String), usize> =
            HashMap::new();
        for o in &r.objects {
            let key = (
                o.tree,
                o.group().to_string(),
                o.kind().to_string(),
                o.namespace().unwrap_or("").to_string(),
                o.name().to_string(),
            );
            *seen.entry(key).or_default() += 1;
        }
        // Objects loaded as written belong to no cluster tree.
        // A name still holding `${...}` is unknown (a variable the cluster
        // may define, e.g. from a substituteFrom Secret outside the
        // repository): such identities cannot be compared.
        for (k, n) in seen
            .iter()
            .filter(|(k, n)| **n > 1 && k.0.is_some() && !k.4.contains("${"))
        {
            let id = format!("{}/{}/{}", k.2, k.3, k.4);
            if !DECLARED_TWICE
                .iter()
                .any(|(r, i, _)| *r == name && *i == id)
            {
                problems.push(format!("{name}: {id} appears {n} times in tree {:?}", k.0));
            }
        }
        let files = actual.entry(name).or_default();
        for f in r.fates.iter().filter(|f| !unremarkable(&f.fate)) {
            files.insert(
                f.path.display().to_string(),
                (f.fate.key().to_string(), f.fate.reason()),
            );
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FATES);
    if std::env::var_os("UPDATE_FATES").is_some() {
        std::fs::write(&path, render(&actual)).unwrap();
    }
    let expected = parse(&std::fs::read_to_string(&path).unwrap_or_default());
    for (repo, files) in &actual {
        let want = expected.get(repo).cloned().unwrap_or_default();
        for (file, (fate, reason)) in files {
            match want.get(file) {
                Some(w) if w == fate => {}
                Some(w) => {
                    problems.push(format!("{repo}: {file}: {fate} ({reason}), expected {w}"))
                }
                None => problems.push(format!(
                    "{repo}: {file}: {fate} ({reason}) is not in {FATES}"
                )),
            }
        }
        for (file, fate) in &want {
            if !files.contains_key(file) {
                problems.push(format!(
                    "{repo}: {file}: expected {fate}, now rendered or without objects"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s) (UPDATE_FATES=1 rewrites {FATES}):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

fn render(actual: &BTreeMap<String, BTreeMap<String, (String, String)>>) -> String {
    let mut out = String::from(
        "# The fate of every corpus file that is neither rendered through a Flux\n\
         # Kustomization nor free of Kubernetes objects (kustomization files, values,\n\
         # scripts). The comment on each line is why. tests/it/corpus_coverage.rs fails\n\
         # when a fate changes.\n",
    );
    for (repo, files) in actual {
        out.push_str(&format!(
            "\n{repo}:{}\n",
            if files.is_empty() { " {}" } else { "" }
        ));
        for (file, (fate, reason)) in files {
            out.push_str(&format!("  {file}: {fate} # {reason}\n"));
        }
    }
    out
}

fn parse(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let Ok(docs) = parse_documents(text, FileId(0), &Limits::default()) else {
        return out;
    };
    for doc in &docs {
        for (repo, files) in doc.as_map().into_iter().flatten() {
            let entry: &mut BTreeMap<String, String> = out
                .entry(repo.scalar_text().unwrap_or_default())
                .or_default();
            for (file, fate) in files.as_map().into_iter().flatten() {
                entry.insert(
                    file.scalar_text().unwrap_or_default(),
                    fate.scalar_text().unwrap_or_default(),
                );
            }
        }
    }
    out
}
