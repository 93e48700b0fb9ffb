//! Fixes, end to end, for every provider and form the founding rules
//! cover. Each case copies a fixture repo into a temporary
//! directory, applies the rule's fix (unsafe included) as `--fix` does,
//! and checks: the diff matches its snapshot; every changed file still
//! parses; only the edited lines differ (comments included); the rule no
//! longer fires; `kubectl kustomize` still renders where the fixture has
//! a kustomization; and fixing again changes nothing.

use crate::common;

use std::path::{Path, PathBuf};

use homelab_lint::fix::{Applicability, Fix, apply, diff};
use homelab_lint::model::Model;
use homelab_lint::rules::{self, Finding};
use homelab_lint::source::repo;
use homelab_lint::yaml::{Limits, parse_documents};

const SYNC: &str = "authentik-cache-on-sync-replicated-postgres";
const KEEPALIVES: &str = "authentik-persistent-connections-without-keepalives";

fn testdata(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata")
        .join(rel)
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn findings(root: &Path, rule: &str) -> (repo::Repo, Vec<Finding>) {
    let loaded = repo::load(root, Default::default());
    let hits = {
        let model = Model::new(&loaded);
        rules::lint(&model, &rules::builtin())
            .findings
            .into_iter()
            .filter(|f| f.rule == rule)
            .collect()
    };
    (loaded, hits)
}

fn applicable(f: &Finding) -> Option<&Fix> {
    f.fix
        .as_ref()
        .filter(|x| x.applicability != Applicability::DisplayOnly)
}

/// Lines of `old` that `new` does not keep, by a line diff.
fn removed_lines(old: &str, new: &str) -> Vec<usize> {
    similar::TextDiff::from_lines(old, new)
        .ops()
        .iter()
        .flat_map(|op| match op {
            similar::DiffOp::Delete {
                old_index, old_len, ..
            }
            | similar::DiffOp::Replace {
                old_index, old_len, ..
            } => *old_index..old_index + old_len,
            _ => 0..0,
        })
        .collect()
}

/// Applies `rule`'s fixes in a copy of `fixture` and returns the snapshot
/// text; panics on any broken acceptance check.
fn fix_case(fixture: &str, rule: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&testdata(fixture), tmp.path());
    let (loaded, hits) = findings(tmp.path(), rule);
    assert!(!hits.is_empty(), "{fixture}: {rule} does not fire");
    let sources = &loaded.files.sources;
    let fixes: Vec<&Fix> = hits.iter().filter_map(applicable).collect();
    assert!(
        !fixes.is_empty(),
        "{fixture}: no applicable fix: {:#?}",
        hits.iter().map(|h| &h.fix).collect::<Vec<_>>()
    );
    let plan = apply::plan(sources, &fixes);
    assert!(plan.conflicting.is_empty(), "{fixture}: fixes overlap");
    let mut snapshot = String::new();
    for fix in &fixes {
        snapshot.push_str(&format!(
            "fix ({}): {}\n",
            fix.applicability.as_str(),
            fix.title
        ));
        for note in &fix.notes {
            snapshot.push_str(&format!("  note: {note}\n"));
        }
    }
    for change in &plan.changes {
        let path = sources.path(change.file).to_path_buf();
        let old: &str = &sources.get(change.file).text;
        let new = &change.new_text;
        // The file still parses.
        parse_documents(new, change.file, &Limits::default())
            .unwrap_or_else(|e| panic!("{fixture}: {} no longer parses: {e}", path.display()));
        // Only the lines an edit touches differ; insertions remove none.
        let touched: Vec<usize> = fixes
            .iter()
            .flat_map(|f| &f.edits)
            .filter(|e| e.file == change.file)
            // An insertion of whole lines touches no existing line.
            .filter(|e| {
                e.end > e.start || !(e.start == 0 || old[..e.start as usize].ends_with('\n'))
            })
            .flat_map(|e| {
                let first = old[..e.start as usize].matches('\n').count();
                let last = old[..e.end as usize].matches('\n').count();
                first..=last
            })
            .collect();
        for line in removed_lines(old, new) {
            assert!(
                touched.contains(&line),
                "{fixture}: {} line {} changed outside the edits",
                path.display(),
                line + 1
            );
        }
        snapshot.push_str(&diff::unified(&path.display().to_string(), old, new));
        std::fs::write(tmp.path().join(&path), new).unwrap();
    }
    // The rule no longer fires, and a second run has nothing to fix.
    let (_, after) = findings(tmp.path(), rule);
    assert!(
        after.is_empty(),
        "{fixture}: {rule} still fires after the fix:\n{snapshot}"
    );
    // kubectl kustomize still renders every kustomization directory.
    for entry in walkdir::WalkDir::new(tmp.path()) {
        let entry = entry.unwrap();
        if entry.file_name() != "kustomization.yaml" {
            continue;
        }
        let dir = entry.path().parent().unwrap();
        match std::process::Command::new("kubectl")
            .arg("kustomize")
            .arg(dir)
            .output()
        {
            Ok(out) => assert!(
                out.status.success(),
                "{fixture}: kubectl kustomize {} fails after the fix: {}",
                dir.display(),
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(_) => common::skip_or_fail("kubectl is not installed"),
        }
    }
    snapshot
}

macro_rules! fix_cases {
    ($($name:ident: $fixture:expr, $rule:expr;)*) => {$(
        #[test]
        fn $name() {
            let snapshot = fix_case($fixture, $rule);
            insta::assert_snapshot!(stringify!($name), snapshot);
        }
    )*};
}

fix_cases! {
    example_repo_zalando: "example-repo", SYNC;
    example_repo_authentik_env_list: "example-repo", KEEPALIVES;
    zalando_parameters_map: "rules/authentik-cache-on-sync-replicated-postgres/fires/zalando-ceph-rbd-storage-class", SYNC;
    zalando_parameters_missing: "rules/authentik-cache-on-sync-replicated-postgres/fires/old-chart-global-image-tag-with-digest", SYNC;
    cnpg_parameters_map: "rules/authentik-cache-on-sync-replicated-postgres/fires/cnpg-rook-ceph-cluster-chart-default-class", SYNC;
    cnpg_postgresql_missing: "rules/authentik-cache-on-sync-replicated-postgres/fires/app-template-image-and-env-map", SYNC;
    cnpg_flow_parameters: "fixes/cnpg-flow-parameters", SYNC;
    crunchy_config_parameters: "rules/authentik-cache-on-sync-replicated-postgres/fires/crunchy-longhorn-chart-synchronous-commit-on", SYNC;
    crunchy_patroni_parameters: "fixes/crunchy-patroni-dynamic-configuration", SYNC;
    crunchy_ignored_copy_deleted_up_to_patroni: "rules/authentik-cache-on-sync-replicated-postgres/fires/crunchy-pgo-5-7-sets-synchronous-commit", SYNC;
    crunchy_ignored_copy_deleted_beside_pg_hba: "fixes/crunchy-ignored-copy-beside-pg-hba", SYNC;
    zalando_ignored_copy_deleted_beside_version: "fixes/zalando-ignored-copy-beside-version", SYNC;
    bitnami_subchart: "rules/authentik-cache-on-sync-replicated-postgres/fires/bitnami-subchart-ceph-block", SYNC;
    bitnami_subchart_next_to_an_alias: "rules/authentik-cache-on-sync-replicated-postgres/fires/bitnami-subchart-aliased-resources", SYNC;
    bitnami_standalone_block: "fixes/bitnami-standalone-extended-configuration", SYNC;
    statefulset_args: "rules/authentik-cache-on-sync-replicated-postgres/fires/statefulset-longhorn-deployment-image", SYNC;
    authentik_env_list_global: "rules/authentik-persistent-connections-without-keepalives/fires/conn-max-age-global-env-list", KEEPALIVES;
    authentik_conn_options_left_out_from_2026_5: "rules/authentik-persistent-connections-without-keepalives/fires/conn-max-age-2026-5-conn-options-deprecated", KEEPALIVES;
    authentik_env_list_deployment: "rules/authentik-persistent-connections-without-keepalives/fires/deployment-env-list", KEEPALIVES;
    authentik_env_map: "rules/authentik-persistent-connections-without-keepalives/fires/app-template-env-map", KEEPALIVES;
    authentik_chart_values: "rules/authentik-persistent-connections-without-keepalives/fires/conn-max-age-authentik-values", KEEPALIVES;
    authentik_chart_values_pgbouncer: "rules/authentik-persistent-connections-without-keepalives/fires/use-pgbouncer-authentik-values", KEEPALIVES;
    authentik_values_from_configmap: "fixes/authentik-values-from-configmap", KEEPALIVES;
    authentik_existing_conn_options_merged: "rules/authentik-persistent-connections-without-keepalives/fires/health-checks-false-conn-options-without-keepalives", KEEPALIVES;
}

/// `--fix --unsafe-fixes` through the binary on a copy of the example
/// repo: only the two intended files change, by added lines only, the
/// run then reports nothing, and a second run changes nothing.
#[test]
fn cli_fix_on_the_example_repo_is_minimal_and_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&testdata("example-repo"), tmp.path());
    let snapshot = |root: &Path| -> Vec<(PathBuf, String)> {
        let mut files: Vec<(PathBuf, String)> = walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let text = std::fs::read_to_string(e.path()).unwrap();
                (e.path().strip_prefix(root).unwrap().to_path_buf(), text)
            })
            .collect();
        files.sort();
        files
    };
    let run = || {
        std::process::Command::new(common::BIN)
            .args(["--fix", "--unsafe-fixes", "--format", "json"])
            .arg(tmp.path())
            .output()
            .unwrap()
    };
    let before = snapshot(tmp.path());
    let first = run();
    assert!(first.status.success(), "{first:?}");
    let report = common::report(&first);
    assert!(report.findings.is_empty(), "{report:#?}");
    let after = snapshot(tmp.path());
    let changed: Vec<&PathBuf> = before
        .iter()
        .zip(&after)
        .filter(|(b, a)| b != a)
        .map(|(b, _)| &b.0)
        .collect();
    assert_eq!(
        changed,
        [
            Path::new("apps/authentik/database.yaml"),
            Path::new("apps/authentik/helmrelease.yaml")
        ]
    );
    for ((_, old), (_, new)) in before.iter().zip(&after) {
        assert!(removed_lines(old, new).is_empty(), "lines were removed");
    }
    let second = run();
    assert!(second.status.success());
    assert_eq!(snapshot(tmp.path()), after, "a second --fix changed files");
}

/// Each finding's fix applicability, by rule, as one output format
/// reports it: `safe`, `unsafe`, `display-only`, or `none`.
type Applicabilities = Vec<(String, String)>;

fn lint_output(root: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(common::BIN)
        .arg(root)
        .arg("--no-probe")
        .args(args)
        .output()
        .unwrap()
}

fn from_json(root: &Path) -> Applicabilities {
    let out = lint_output(root, &["-o", "json"]);
    let mut found: Applicabilities = common::report(&out)
        .findings
        .into_iter()
        .map(|f| {
            let how = f.fix.map_or("none", |fix| fix.applicability.as_str());
            (f.rule, how.to_string())
        })
        .collect();
    found.sort();
    found
}

/// SARIF carries a fix (`fixes`, described `… (safe fix)`) only when it
/// can be applied.
fn from_sarif(root: &Path) -> Vec<(String, Option<String>)> {
    let out = lint_output(root, &["-o", "sarif"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut found: Vec<(String, Option<String>)> = v["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let how = r["fixes"][0]["description"]["text"].as_str().map(|t| {
                let how = t.rsplit_once(" (").map_or(t, |(_, h)| h);
                how.trim_end_matches(" fix).").to_string()
            });
            (r["ruleId"].as_str().unwrap().to_string(), how)
        })
        .collect();
    found.sort();
    found
}

/// `N fixable with --fix (M more with --unsafe-fixes)` of the human
/// report, as `(N, M)`; `(0, 0)` when the line is absent.
fn fixable_count(human: &str) -> (usize, usize) {
    let Some(line) = human.lines().find(|l| l.contains("fixable with --fix")) else {
        return (0, 0);
    };
    let n: usize = line.split(' ').next().unwrap().parse().unwrap();
    let more = line
        .split_once('(')
        .map_or(0, |(_, r)| r.split(' ').next().unwrap().parse().unwrap());
    (n, more)
}

/// `N fixes would be applied` of a `--diff` run (its stderr).
fn diff_count(root: &Path, args: &[&str]) -> (usize, String) {
    let out = lint_output(root, &[&["--diff"], args].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("would be applied"))
        .unwrap_or_else(|| panic!("no count in {stderr}"));
    (
        line.split(' ').next().unwrap().parse().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Every format agrees on a fix's applicability, and the
/// re-render decides it where a fix is applied or shown. The example repo
/// with a second cluster whose Flux tree builds the same apps: each fix's
/// edited text then renders twice (once per cluster), which only the
/// re-render sees, so --diff applies neither. A plain run (no re-render:
/// one per fix made it quadratic) offers both, says so in the same words
/// in JSON, SARIF and the human report, and notes that they are checked
/// when applied. The example itself, where the re-render passes both, is
/// the control.
#[test]
fn every_format_agrees_and_the_re_render_decides_when_a_fix_is_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let two_clusters = tmp.path().join("two-clusters");
    copy_dir(&testdata("example-repo"), &two_clusters);
    copy_dir(
        &two_clusters.join("clusters/home"),
        &two_clusters.join("clusters/work"),
    );
    common::edit(
        &two_clusters,
        "clusters/work/flux-system/gotk-sync.yaml",
        "path: ./clusters/home",
        "path: ./clusters/work",
    );
    let example = testdata("example-repo");
    for (root, downgraded) in [(&example, false), (&two_clusters, true)] {
        // A plain run promises each fix as a candidate, the same in every
        // format, and says it is checked when applied.
        let json = from_json(root);
        assert_eq!(json.len(), 2, "{json:?}");
        let human = String::from_utf8_lossy(&lint_output(root, &[]).stdout).into_owned();
        let sarif = from_sarif(root);
        for ((rule, how), (sarif_rule, sarif_how)) in json.iter().zip(&sarif) {
            assert_eq!(rule, sarif_rule);
            assert_ne!(how, "display-only", "{rule}");
            let applicable = (how != "none").then(|| how.clone());
            assert_eq!(&applicable, sarif_how, "{rule}");
        }
        assert_eq!(human.matches("Checked when applied").count(), 2, "{human}");
        let (safe, more) = fixable_count(&human);
        let count = |how: &str| json.iter().filter(|(_, h)| h == how).count();
        assert_eq!((safe, more), (count("safe"), count("unsafe")), "{human}");
        // --diff renders again: the fixes whose text renders twice are
        // shown display-only and nothing is applied.
        let (all, diff) = diff_count(root, &["--unsafe-fixes"]);
        assert_eq!(all, if downgraded { 0 } else { safe + more });
        assert_eq!(diff.trim().is_empty(), downgraded, "{diff}");
    }
}

/// A Crunchy fix deletes the copy of the setting Patroni does not read,
/// and the re-render of --diff accepts that value's going (it was
/// written in the text the fix deletes) while still refusing any other
/// loss: the ignored-parameters finding is gone with it.
#[test]
fn the_re_render_accepts_a_deleted_ignored_copy() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(
        &testdata("fixes/crunchy-ignored-copy-beside-pg-hba"),
        tmp.path(),
    );
    let (applied, diff) = diff_count(tmp.path(), &["--unsafe-fixes"]);
    assert_eq!(applied, 1, "{diff}");
    assert!(
        diff.contains("-        synchronous_commit: \"on\" # where Patroni does not read it"),
        "{diff}"
    );
    let out = lint_output(tmp.path(), &["--fix", "--unsafe-fixes", "-o", "json"]);
    let rules: Vec<String> = common::report(&out)
        .findings
        .into_iter()
        .map(|f| f.rule)
        .collect();
    assert!(rules.is_empty(), "{rules:?}");
}
