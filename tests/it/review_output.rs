//! What a pull request's reviewer reads: with `--base` every finding is
//! marked new, with `--all-findings` new or existing in every format; a
//! release bump that names 61 objects twice stays short in human output;
//! input problems reach the annotations only where the change is.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Output;

use serde_json::Value as J;

/// The linter on the repository `repo`, run from it, without probes.
fn lint(repo: &Path, args: &[&str]) -> Output {
    common::lint(repo, &[&[".", "--no-probe"][..], args].concat())
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The example bumped from Authentik 2025.8.3 to 2025.10.1: the bump's
/// finding is new, the keepalive finding was there before.
#[test]
fn all_findings_marks_new_and_existing_in_every_format() {
    if !common::git_available() {
        return;
    }
    let (_dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |_| {});
    let all = ["--base", "HEAD~1", "--all-findings"];
    let with = |format: &str| stdout(&lint(&repo, &[&all[..], &["-o", format]].concat()));

    let report = common::report(&lint(&repo, &[&all[..], &["-o", "json"]].concat()));
    let states: BTreeSet<(String, String)> = report
        .findings
        .iter()
        .map(|f| {
            let state = serde_json::to_value(f.baseline).unwrap();
            (f.rule.clone(), state.as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(
        states,
        BTreeSet::from([
            (
                "authentik-persistent-connections-without-keepalives".into(),
                "existing".into()
            ),
            (
                "authentik-upgrade-moves-cache-to-sync-replicated-postgres".into(),
                "new".into()
            ),
        ])
    );

    let sarif: J = serde_json::from_str(&with("sarif")).unwrap();
    let sarif_states: BTreeSet<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["baselineState"].as_str().unwrap())
        .collect();
    assert_eq!(sarif_states, BTreeSet::from(["new", "unchanged"]));

    let human = with("human");
    assert!(
        human.contains("\u{26a0} [new] this bump of authentik"),
        "{human}"
    );
    assert!(
        human.contains("\u{26a0} [existing] authentik keeps"),
        "{human}"
    );
    let concise = with("concise");
    assert!(
        concise.contains("authentik-upgrade-moves-cache-to-sync-replicated-postgres: [new] "),
        "{concise}"
    );
    assert!(
        concise.contains("authentik-persistent-connections-without-keepalives: [existing] "),
        "{concise}"
    );
    let github = with("github");
    assert!(
        github.contains("title=authentik-persistent-connections-without-keepalives (existing)::"),
        "{github}"
    );
    assert!(github.contains("(new)::"), "{github}");
    let markdown = with("markdown");
    assert!(
        markdown.contains("`authentik-persistent-connections-without-keepalives` (existing)"),
        "{markdown}"
    );
    assert!(markdown.contains("1 new, 1 existing"), "{markdown}");

    // Without --all-findings, what is reported is new; without --base,
    // nothing is marked.
    let new_only = common::report(&lint(&repo, &["--base", "HEAD~1", "-o", "json"]));
    assert!(!new_only.findings.is_empty());
    assert!(
        new_only
            .findings
            .iter()
            .all(|f| f.baseline == Some(homelab_lint::rules::BaselineState::New))
    );
    let plain = common::report(&lint(&repo, &["-o", "json"]));
    assert!(plain.findings.iter().all(|f| f.baseline.is_none()));
    assert!(!stdout(&lint(&repo, &["-o", "json"])).contains("\"baseline\""));
}

/// bjw-s's External Secrets Operator bumped from 0.9.13 to 0.17.0, as a
/// Renovate pull request: the bump finding and the v1beta1 finding both
/// name the same 61 v1beta1 objects. Human output lists them once, cut
/// to a few files, and stays under 150 lines; -v shows every file.
#[test]
fn a_bump_naming_61_objects_twice_reads_in_under_150_lines() {
    if !common::git_available() {
        return;
    }
    let Some(corpus) = common::corpus() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("gitops");
    common::copy_dir(&corpus.join("bjw-s-labs__home-ops"), &repo);
    common::git(&repo, &["init", "-q"]);
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-q", "-m", "base"]);
    common::edit(
        &repo,
        "kubernetes/main/apps/security/external-secrets/app/helmrelease.yaml",
        "version: 0.9.13",
        "version: 0.17.0",
    );
    common::git(
        &repo,
        &["commit", "-q", "-am", "chore: external-secrets 0.17.0"],
    );

    let out = lint(&repo, &["--base", "HEAD~1", "--color", "never"]);
    let text = stdout(&out);
    let report = common::report(&lint(&repo, &["--base", "HEAD~1", "-o", "json"]));
    let eso = report
        .findings
        .iter()
        .find(|f| f.rule == "external-secrets-v1beta1-after-0-17")
        .expect("the v1beta1 finding");
    let elsewhere = eso
        .related
        .iter()
        .filter(|l| l.path != eso.location.path)
        .count();
    assert!(elsewhere > 50, "{elsewhere}");
    let lines = text.lines().count();
    assert!(lines <= 150, "{lines} lines:\n{text}");
    assert!(
        text.contains(&format!(
            "the same {elsewhere} places in other files as the"
        )),
        "{text}"
    );
    assert!(text.contains("more related files (-v shows all)"), "{text}");
    // Every place is still there for who asks.
    let all = stdout(&lint(
        &repo,
        &["--base", "HEAD~1", "--color", "never", "-v"],
    ));
    assert!(!all.contains("(-v shows all)"), "{all}");
    assert!(all.lines().count() > 5 * lines, "{}", all.lines().count());
}

/// A remote base (never fetched) in a kustomization the change does not
/// touch is not annotated on the pull request; once the change touches
/// that file, it is.
#[test]
fn input_problems_are_annotated_only_on_files_the_change_touches() {
    if !common::git_available() {
        return;
    }
    const STORAGE: &str = "infrastructure/storage/kustomization.yaml";
    const REMOTE: &str = "https://github.com/rook/rook//deploy/examples?ref=v1.15.0";
    let (_dir, repo) = common::bump_fixture("2025.8.3", "2025.10.1", |repo| {
        common::edit(
            repo,
            STORAGE,
            "  - ./ceph-block.yaml",
            &format!("  - ./ceph-block.yaml\n  - {REMOTE}"),
        );
    });
    let github = |repo: &Path| stdout(&lint(repo, &["--base", "HEAD~1", "-o", "github"]));
    let untouched = github(&repo);
    assert!(!untouched.contains("rook/rook"), "{untouched}");
    // Without --base, every problem is annotated.
    let everything = stdout(&lint(&repo, &["-o", "github"]));
    assert!(everything.contains("rook/rook"), "{everything}");

    common::edit(&repo, STORAGE, "resources:", "# storage\nresources:");
    common::git(
        &repo,
        &["commit", "-q", "-am", "touch the storage kustomization"],
    );
    let touched = stdout(&lint(&repo, &["--base", "HEAD~2", "-o", "github"]));
    assert!(
        touched.lines().any(|l| l
            .starts_with("::warning file=infrastructure/storage/kustomization.yaml")
            && l.contains("rook/rook")),
        "{touched}"
    );
}

/// The coverage figures are a note when every manifest file was
/// rendered, even when a Kustomization has an entry that was not fetched
/// (that one has its own warning).
#[test]
fn sarif_coverage_figures_are_a_note_when_nothing_was_lost() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("gitops");
    common::copy_dir(&common::example_repo(), &repo);
    common::edit(
        &repo,
        "infrastructure/storage/kustomization.yaml",
        "  - ./ceph-block.yaml",
        "  - ./ceph-block.yaml\n  - https://github.com/rook/rook//deploy/examples?ref=v1.15.0",
    );
    let log: J = serde_json::from_str(&stdout(&lint(&repo, &["-o", "sarif"]))).unwrap();
    let notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    let figures = notes
        .iter()
        .find(|n| {
            n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("manifest files rendered")
        })
        .expect("the coverage figures");
    assert_eq!(figures["level"], "note", "{figures}");
    assert!(
        notes
            .iter()
            .any(|n| n["level"] == "warning"
                && n["message"]["text"].as_str().unwrap().contains("rook")),
        "{notes:#?}"
    );
}
