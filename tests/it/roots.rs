//! How a cluster is bootstrapped decides the root
//! of its Flux tree. One small repository per case under
//! `tests/fixtures/roots/`, each pinned (insta) with what Flux renders,
//! the objects with their tree and Flux Kustomization, the fate of every
//! file that is not rendered, and the run's issues and findings.

use std::fmt::Write;
use std::path::Path;
use std::process::Command;

use homelab_lint::source::repo;

use crate::common::BIN;

fn pinned(case: &str) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/roots")
        .join(case);
    let r = repo::load(&dir, Default::default());
    let mut out = String::from("# Flux Kustomizations (tree namespace/name: path, outcome)\n");
    for f in &r.flux {
        let path = f
            .path
            .as_ref()
            .map_or("?".into(), |p| p.display().to_string());
        writeln!(
            out,
            "{} {}/{}: {path}, {}",
            f.tree,
            f.namespace,
            f.name,
            f.outcome.key()
        )
        .unwrap();
    }
    out.push_str("# objects (tree kind/namespace/name <- Flux Kustomization)\n");
    let mut objects: Vec<String> = r
        .objects
        .iter()
        .map(|o| {
            let tree = o.tree.map_or("-".into(), |t| t.to_string());
            let by = o.chain.first().map_or("as written", |s| &*s.detail);
            format!("{tree} {} <- {by}", o.id())
        })
        .collect();
    objects.sort();
    out.push_str(&objects.join("\n"));
    out.push_str("\n# files not rendered\n");
    for f in r
        .fates
        .iter()
        .filter(|f| !matches!(f.fate.key(), "rendered" | "kustomization" | "no-object"))
    {
        writeln!(out, "{}: {}", f.path.display(), f.fate.reason()).unwrap();
    }
    out.push_str("# run (concise)\n");
    let run = Command::new(BIN)
        .arg(&dir)
        .args(["-o", "concise", "--color", "never"])
        .current_dir(&dir)
        .output()
        .unwrap();
    out.push_str(&String::from_utf8_lossy(&run.stdout));
    out.push_str(&String::from_utf8_lossy(&run.stderr));
    out.replace(&format!("{}/", dir.display()), "")
}

macro_rules! case {
    ($test:ident, $dir:literal) => {
        #[test]
        fn $test() {
            insta::assert_snapshot!(concat!("roots__", $dir), pinned($dir));
        }
    };
}

// flux-operator's FluxInstance: the sync Kustomization flux-system/flux-system
// builds clusters/home (a generated kustomization), with the instance's
// kustomize patches applied to it (postBuild CLUSTER=home reaches apps).
case!(fluxinstance_sync_is_the_root, "fluxinstance");
// The flux-instance chart's values.instance.sync, the HelmRelease written
// without a namespace in a kustomization that sets flux-system.
case!(flux_instance_chart_values_are_the_root, "chart-values");
// A kustomization.yaml in the sync directory is used as written: the Flux
// Kustomization it does not list is not applied.
case!(
    kustomization_in_the_sync_directory_decides,
    "sync-dir-kustomization"
);
// A Flux Kustomization listed by a top-level kustomization applied by hand.
case!(kubectl_apply_k_makes_a_root, "apply-k");
// flux bootstrap's gotk-sync.yaml, which applies itself.
case!(gotk_sync_is_the_root, "gotk-sync");
// No bootstrap at all: said, and each top-level one is a root.
case!(no_root_is_said_and_each_top_level_one_renders, "no-root");
// The flux-instance HelmRelease's sync.path holds ${CLUSTER}, which the
// Flux Kustomization applying it substitutes (CLUSTER=home): the sync
// builds clusters/home/bootstrap, whose cluster-apps is a child with its
// postBuild and patches reaching web (deedee-ops).
case!(sync_path_is_read_after_substitution, "substituted-sync");
// A directory only a Flux Kustomization nothing applies would build
// (radarr, commented out of apps/kustomization.yaml): its files are
// unreachable, not left out of the kustomization that lists them; a file
// the built sonarr/app leaves out is not-listed.
case!(
    files_under_an_unbuilt_kustomization_are_unreachable,
    "unbuilt-listed"
);
// A retired tree moved under archive/ keeps paths from the repository
// root: its GitRepository's root is guessed to be archive/, and that is
// said.
case!(
    a_source_root_guessed_away_from_the_repository_root_is_said,
    "guessed-root"
);
// The same archive/ beside the live cluster, whose paths are from the
// repository root: the GitRepository both name is read from the root, so
// the archive's paths are no directories Flux finds and its tree is not
// rendered; each of its files says why, and the live tree renders with no
// path called missing (bykaj/home-ops).
case!(
    a_guessed_root_does_not_move_paths_from_the_repository_root,
    "guessed-root-beside-live"
);
// A root that builds from another repository (upstream's CRDs, from a
// GitRepository whose URL is not the synced one) is another source: its
// path is that repository's, so it is not a missing directory of this one
// (aclerici38/home-ops).
case!(
    a_root_from_another_repository_has_no_missing_path,
    "foreign-loose-root"
);
// The same-named database in a second cluster is its own finding.
case!(
    same_named_database_in_two_clusters_is_found_in_each,
    "two-clusters"
);

// The two same-named databases are two alerts to code scanning and
// to `--base`, so their fingerprints differ too.
#[test]
fn same_named_databases_in_two_clusters_have_their_own_fingerprints() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots/two-clusters");
    let run = Command::new(BIN)
        .arg(&dir)
        .args(["-o", "json", "--no-probe"])
        .output()
        .unwrap();
    let report = crate::common::report(&run);
    let findings = &report.findings;
    let prints: std::collections::BTreeSet<&str> =
        findings.iter().map(|f| f.fingerprint.as_str()).collect();
    assert_eq!(findings.len(), 2, "{report:#?}");
    assert_eq!(
        prints.len(),
        2,
        "one fingerprint for two alerts: {report:#?}"
    );
}

// Under the substituted sync, cluster-apps applies web with
// its postBuild variables and its patches, as Flux does.
#[test]
fn substituted_sync_path_brings_the_parents_variables_and_patches() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots/substituted-sync");
    let r = repo::load(&dir, Default::default());
    let web = r
        .objects
        .iter()
        .find(|o| o.kind() == "HelmRelease" && o.name() == "web")
        .expect("web is rendered");
    assert_eq!(web.namespace(), Some("default"));
    assert_eq!(
        web.root.str_at(&["spec", "values", "host"]),
        Some("web.example.org")
    );
    assert_eq!(
        web.root
            .path(&["spec", "maxHistory"])
            .and_then(|n| n.scalar_text()),
        Some("2".to_string()),
        "cluster-apps' patch reaches its children's HelmReleases"
    );
}
