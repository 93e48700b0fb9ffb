//! Cluster state: `--snapshot` of the fixture cluster (testdata/cluster),
//! alone and with the example repo.

use crate::common;

use std::path::Path;
use std::process::{Command, Output};

use homelab_lint::fix::Applicability;

/// The password planted in the fixture's Secrets, plain and in base64.
const PLANTED: &[&str] = &["Planted-Pa55word-7c1e", "UGxhbnRlZC1QYTU1d29yZC03YzFl"];

fn bin() -> Command {
    let mut c = Command::new(common::BIN);
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
    let out = std::process::Command::new(common::BIN)
        .args(["--snapshot"])
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let finding = common::finding(&out, "authentik-cache-on-sync-replicated-postgres");
    let fix = finding
        .fix
        .as_ref()
        .unwrap_or_else(|| panic!("no fix: {finding:#?}"));
    assert_eq!(fix.applicability, Applicability::DisplayOnly);
    assert!(fix.edits.is_empty(), "{fix:#?}");
    let notes = &fix.notes;
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

/// libpq options that only a cluster Secret holds decide the finding
/// (`-c synchronous_commit=off` removes it, other options keep it) and
/// appear in no output format, at any verbosity: neither the Secret's
/// base64, nor the CONN_OPTIONS base64 it decodes to, nor the options.
#[test]
fn cluster_only_conn_options_decide_and_are_never_printed() {
    let rule = "authentik-cache-on-synchronously-replicated-postgres";
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/rules")
        .join(rule);
    for (case, fires, options) in [
        (
            "does_not_fire/snapshot-cnpg-conn-options-from-cluster-only-secret-off",
            false,
            "-c synchronous_commit=off",
        ),
        (
            "does_not_fire/snapshot-cnpg-conn-options-env-from-cluster-only-secret-off",
            false,
            "-c synchronous_commit=off",
        ),
        (
            "fires/snapshot-cnpg-conn-options-from-cluster-only-secret-statement-timeout",
            true,
            "-c statement_timeout=30s",
        ),
    ] {
        let dir = fixtures.join(case);
        let cluster = dir.join("cluster");
        let secret = std::fs::read_to_string(cluster.join("secrets.yaml")).unwrap();
        let stored = secret
            .lines()
            .find_map(|l| {
                l.trim()
                    .split_once(": ")
                    .filter(|(k, _)| k.contains("CONN_OPTIONS"))
            })
            .expect("the fixture's Secret holds CONN_OPTIONS")
            .1;
        let conn = String::from_utf8(base64_decode(stored)).unwrap();
        let json = String::from_utf8(base64_decode(&conn)).unwrap();
        assert!(
            json.contains(options),
            "{case}: the fixture lost its options"
        );
        let planted = [stored, conn.as_str(), options];
        let repo = dir.join("repo");
        let mut runs: Vec<Vec<&std::ffi::OsStr>> = Vec::new();
        for format in ["human", "json", "yaml", "concise", "sarif", "github"] {
            runs.push(
                [repo.as_os_str(), "--snapshot".as_ref(), cluster.as_os_str()]
                    .into_iter()
                    .chain(["--no-probe", "-vv", "--format", format].map(std::ffi::OsStr::new))
                    .collect(),
            );
        }
        for args in runs {
            let out = bin().args(&args).output().unwrap();
            let (stdout, stderr) = (
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
            for p in planted {
                assert!(
                    !stdout.contains(p) && !stderr.contains(p),
                    "{case} {args:?}: {p} printed"
                );
            }
            if args.iter().any(|a| *a == "json") {
                let fired = common::rules(&out).iter().any(|r| r == rule);
                assert_eq!(fired, fires, "{case}: {stdout}");
            }
        }
    }
}

fn base64_decode(text: &str) -> Vec<u8> {
    homelab_lint::source::data::decode_base64(text).expect("base64")
}
