//! Cluster state: `--snapshot` of the fixture cluster (testdata/cluster),
//! alone and with the example repo.

mod common;

use std::path::Path;
use std::process::{Command, Output};

/// The password planted in the fixture's Secrets, plain and in base64.
const PLANTED: &[&str] = &["Planted-Pa55word-7c1e", "UGxhbnRlZC1QYTU1d29yZC03YzFl"];

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kubectl-homelab_lint"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run the binary")
}

const FOUNDING: [&str; 2] = [
    "authentik-cache-on-sync-replicated-postgres",
    "authentik-persistent-connections-without-keepalives",
];

#[test]
fn snapshot_alone_reproduces_the_founding_findings() {
    let out = run(&["--snapshot", "testdata/cluster", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let found = common::rules_and_paths(&out);
    assert_eq!(
        found,
        vec![
            // The cache finding points at the setting, in the Postgres object.
            (
                FOUNDING[0].into(),
                "testdata/cluster/postgresqls.yaml".into()
            ),
            (
                FOUNDING[1].into(),
                "testdata/cluster/helmreleases.json".into()
            ),
        ]
    );
}

#[test]
fn snapshot_with_repo_points_findings_at_repo_files() {
    let out = run(&[
        "--example",
        "--snapshot",
        "testdata/cluster",
        "--format",
        "json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("linked"), "{stderr}");
    let found = common::rules_and_paths(&out);
    assert_eq!(
        found,
        vec![
            (FOUNDING[0].into(), "apps/authentik/database.yaml".into()),
            (FOUNDING[1].into(), "apps/authentik/helmrelease.yaml".into()),
        ]
    );
}

#[test]
fn snapshot_of_a_single_json_list_file() {
    let out = run(&[
        "--snapshot",
        "testdata/cluster/pods.json",
        "--format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("2 objects from 1 file"));
}

#[test]
fn missing_snapshot_is_an_error() {
    let out = run(&["--snapshot", "testdata/no-such-dir"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-dir"));
}

/// The planted password appears in no output format, nor in -vv logs.
#[test]
fn planted_password_never_printed_from_snapshot() {
    for format in ["human", "json", "sarif", "github"] {
        for extra in [&[][..], &["--example"][..]] {
            let mut args = vec!["--snapshot", "testdata/cluster", "-vv", "--format", format];
            args.extend_from_slice(extra);
            let out = run(&args);
            assert_no_secret(&out, &format!("{format} {extra:?}"));
        }
    }
}

pub fn assert_no_secret(out: &Output, what: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stdout.is_empty() || !stderr.is_empty(),
        "{what}: no output at all"
    );
    for p in PLANTED {
        assert!(!stdout.contains(p), "{what}: password in stdout");
        assert!(!stderr.contains(p), "{what}: password in stderr");
    }
}

#[test]
fn fixture_plants_the_password() {
    // Guards the test above against a fixture that lost its secret.
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster/secrets.yaml"),
    )
    .unwrap();
    assert!(PLANTED.iter().all(|p| text.contains(p)));
}

/// A database that exists only in the cluster gets a `kubectl patch`
/// instead of a file edit, and a warning that Flux reverts it.
#[test]
fn live_only_database_fix_is_a_kubectl_patch_with_flux_warning() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-homelab_lint"))
        .args(["--snapshot"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let finding = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "authentik-cache-on-sync-replicated-postgres")
        .expect("the founding finding");
    let fix = &finding["fix"];
    assert_eq!(fix["applicability"], "display-only");
    assert!(
        fix["edits"].as_array().is_none_or(|e| e.is_empty()),
        "{fix}"
    );
    let notes: Vec<&str> = fix["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes.iter().any(|n| n.contains(
            r#"kubectl patch postgresql.acid.zalan.do auth-postgres -n security --type merge -p '{"spec":{"postgresql":{"parameters":{"synchronous_commit":"off"}}}}'"#
        )),
        "{notes:#?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("Flux manages this object (flux-system/authentik)")),
        "{notes:#?}"
    );
}
