//! Repositories whose renders already matched flux-local keep
//! their Flux Kustomization and HelmRelease sets (checked in under
//! `testdata/corpus-sets.txt`, one `tree namespace/name` a line;
//! `UPDATE_SETS=1 cargo test --test it corpus_sets::` rewrites them), and
//! buroa__k8s-gitops renders what Flux does: 84 Flux Kustomizations of
//! this repository, 72 HelmReleases, each object once.

use crate::common;

use homelab_lint::source::repo::{self, Repo};

const KEPT: &[&str] = &[
    "onedr0p__home-ops",
    "joryirving__home-ops",
    "bjw-s-labs__home-ops",
    "haraldkoch__kochhaus-home",
];

fn corpus(name: &str) -> Option<Repo> {
    let dir = common::corpus_repos()
        .into_iter()
        .find(|d| d.ends_with(name));
    if dir.is_none() {
        common::skip_or_fail(&format!("corpus_sets: ../shared/corpus/{name} is absent"));
    }
    dir.map(|d| repo::load(&d, Default::default()))
}

fn sets(r: &Repo) -> String {
    let mut ks: Vec<String> = r
        .flux
        .iter()
        .map(|f| format!("Kustomization {} {}/{}", f.tree, f.namespace, f.name))
        .collect();
    ks.sort();
    let mut hr: Vec<String> = r
        .objects
        .iter()
        .filter(|o| o.is("helm.toolkit.fluxcd.io", "HelmRelease"))
        .map(|o| {
            let tree = o.tree.map_or("-".into(), |t| t.to_string());
            format!(
                "HelmRelease {tree} {}/{}",
                o.namespace().unwrap_or(""),
                o.name()
            )
        })
        .collect();
    hr.sort();
    ks.extend(hr);
    ks.join("\n") + "\n"
}

/// The pinned sets, one section per repository (`## <folder>` then its
/// lines), in one file: files are not named after corpus repositories.
const PINNED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/corpus-sets.txt");

fn pinned_section<'a>(text: &'a str, name: &str) -> &'a str {
    let header = format!("## {name}\n");
    let Some(start) = text.find(&header).map(|i| i + header.len()) else {
        return "";
    };
    let end = text[start..]
        .find("\n## ")
        .map_or(text.len(), |i| start + i + 1);
    &text[start..end]
}

#[test]
fn kept_repositories_keep_their_kustomization_and_helmrelease_sets() {
    let mut runs = Vec::new();
    for name in KEPT {
        let Some(r) = corpus(name) else { return };
        runs.push((name, sets(&r)));
    }
    if std::env::var_os("UPDATE_SETS").is_some() {
        let text: String = runs
            .iter()
            .map(|(name, set)| format!("## {name}\n{set}"))
            .collect();
        std::fs::write(PINNED, text).unwrap();
    }
    let expected = std::fs::read_to_string(PINNED).unwrap_or_default();
    for (name, actual) in &runs {
        assert!(
            pinned_section(&expected, name) == actual,
            "{name}: the Flux Kustomization / HelmRelease set changed; diff its section of {PINNED} against this run (UPDATE_SETS=1 rewrites it)"
        );
    }
}

#[test]
fn buroa_renders_each_object_once_as_flux_does() {
    let Some(r) = corpus("buroa__k8s-gitops") else {
        return;
    };
    let local = r
        .flux
        .iter()
        .filter(|f| {
            !matches!(
                f.outcome,
                homelab_lint::source::coverage::Outcome::OtherSource(_)
            )
        })
        .count();
    let releases = r
        .objects
        .iter()
        .filter(|o| o.is("helm.toolkit.fluxcd.io", "HelmRelease"))
        .count();
    let rendered = r.objects.iter().filter(|o| o.tree.is_some()).count();
    eprintln!("buroa: {local} Flux Kustomizations, {releases} HelmReleases, {rendered} objects");
    assert_eq!((local, releases), (84, 72));
    // flux-local 8.4.0 counted about 323 on the same tree.
    assert_eq!(rendered, 323);
}
