//! The bootstrap inputs (a FluxInstance a Flux Kustomization applies,
//! substituted as it applies it) made on every core: the same as on one.

use homelab_lint::source::Limits;
use homelab_lint::source::repo::Repo;

use crate::flux_render::same_on_one_core_and_on_four;

const ROOT: &str = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: ssh://git@github.com/example/home-ops, ref: {branch: main}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\nspec:\n  path: ./clusters/home\n  sourceRef: {kind: GitRepository, name: flux-system}\n";

/// Ten Flux Kustomizations each apply a FluxInstance that syncs
/// `sync/${CLUSTER}`, each with its own 40-byte `CLUSTER`; the bootstrap
/// steps' substitution budget (200 bytes of growth) lets only the first
/// ones be substituted, so only their sync paths resolve (the others'
/// ConfigMaps are loaded as loose files, in no tree). On four threads
/// every one's steps run at once from the whole budget: a result kept
/// whatever it spent would resolve all ten.
#[test]
fn the_bootstrap_budget_stops_the_same_instances_on_every_core() {
    let mut files: Vec<(String, String)> =
        vec![("clusters/home/flux-system.yaml".into(), ROOT.into())];
    for i in 0..10 {
        let cluster = format!("c{i}{}", "x".repeat(38));
        files.push((
            format!("clusters/home/inst-{i}.yaml"),
            format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: inst-{i}, namespace: flux-system}}\nspec:\n  path: ./inst/{i}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n  postBuild:\n    substitute: {{CLUSTER: {cluster}}}\n"
            ),
        ));
        files.push((
            format!("inst/{i}/instance.yaml"),
            format!(
                "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {{name: flux-{i}, namespace: flux-system}}\nspec:\n  distribution: {{version: 2.x}}\n  sync:\n    kind: GitRepository\n    url: ssh://git@github.com/example/home-ops\n    ref: refs/heads/main\n    path: sync/${{CLUSTER}}\n"
            ),
        ));
        files.push((
            format!("sync/{cluster}/cm.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: synced-{i}, namespace: default}}\n"),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let limits = Limits {
        flux: homelab_lint::source::flux::Limits {
            max_subst_growth_bytes: 200,
            ..Default::default()
        },
        ..Limits::default()
    };
    let four = same_on_one_core_and_on_four(&files, limits);
    let synced = |r: &Repo| -> Vec<String> {
        let mut names: Vec<String> = r
            .objects
            .iter()
            .filter(|o| o.kind() == "ConfigMap" && o.tree.is_some())
            .map(|o| o.name().to_string())
            .collect();
        names.sort();
        names
    };
    let resolved = synced(&four).len();
    assert!(0 < resolved && resolved < 10, "{:?}", synced(&four));
}
