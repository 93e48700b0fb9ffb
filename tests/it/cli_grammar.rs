//! One grammar across the command line: every subcommand answers
//! `--help`, takes `-o/--output` (alias `--format`) with `json` among its
//! formats, and prints a JSON document with `-o json`.

use std::process::Command;

use clap::CommandFactory;
use homelab_lint::cli::Args;

use crate::common::BIN;

/// Generated files (a shell script, a roff page) have no data format,
/// and the language server speaks LSP on stdout.
const NO_FORMAT: &[&str] = &["completions", "man", "server"];

/// The visible leaf subcommands, as the words that name them.
fn leaves(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
    let subs: Vec<&clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .collect();
    if subs.is_empty() {
        out.push(path);
        return;
    }
    for s in subs {
        let mut p = path.clone();
        p.push(s.get_name().to_string());
        leaves(s, p, out);
    }
}

fn all_commands() -> Vec<(Vec<String>, clap::Command)> {
    let root = Args::command();
    let mut paths = vec![Vec::new()];
    leaves(&root, Vec::new(), &mut paths);
    paths
        .into_iter()
        .map(|p| {
            let mut cmd = root.clone();
            for word in &p {
                cmd = cmd.find_subcommand(word).unwrap().clone();
            }
            (p, cmd)
        })
        .collect()
}

/// The arguments a command needs to run offline (or, for probes, to get
/// past parsing), before `-o json`.
fn runnable(path: &[String]) -> Vec<String> {
    let words: Vec<&str> = path.iter().map(String::as_str).collect();
    let extra: &[&str] = match words.as_slice() {
        [] | ["inventory"] => &["--example"],
        ["explain"] => &["authentik-cache-on-sync-replicated-postgres"],
        // A port nothing listens on: the probe fails, the flags parse.
        ["probe", "postgres"] => &["--dsn", "postgres://u@127.0.0.1:1/db", "--budget", "200ms"],
        ["probe", "http"] => &["--url", "http://127.0.0.1:1/", "--budget", "200ms"],
        _ => &[],
    };
    path.iter()
        .cloned()
        .chain(extra.iter().map(|s| s.to_string()))
        .collect()
}

#[test]
fn every_subcommand_has_help_and_an_output_flag_with_json() {
    let commands = all_commands();
    assert!(
        commands.len() >= 9,
        "{:?}",
        commands.iter().map(|c| &c.0).collect::<Vec<_>>()
    );
    for (path, cmd) in &commands {
        let help = Command::new(BIN).args(path).arg("--help").output().unwrap();
        assert!(help.status.success(), "{path:?} --help: {help:?}");
        assert!(
            String::from_utf8_lossy(&help.stdout).contains("Usage:"),
            "{path:?}"
        );
        if NO_FORMAT.contains(&path.first().map_or("", String::as_str)) {
            continue;
        }
        let output = cmd
            .get_arguments()
            .find(|a| a.get_long() == Some("output"))
            .unwrap_or_else(|| panic!("{path:?} has no --output"));
        assert_eq!(output.get_short(), Some('o'), "{path:?}");
        assert!(
            output
                .get_visible_aliases()
                .is_some_and(|a| a.contains(&"format")),
            "{path:?}: --format is no alias of --output"
        );
        let values: Vec<String> = output
            .get_possible_values()
            .iter()
            .map(|v| v.get_name().to_string())
            .collect();
        assert!(values.contains(&"json".to_string()), "{path:?}: {values:?}");
    }
}

#[test]
fn every_subcommand_prints_json_with_o_json() {
    for (path, _) in all_commands() {
        if NO_FORMAT.contains(&path.first().map_or("", String::as_str)) {
            continue;
        }
        let args = runnable(&path);
        for flag in ["-o", "--format"] {
            let out = Command::new(BIN)
                .args(&args)
                .args([flag, "json"])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!stderr.contains("Usage:"), "{args:?} {flag} json: {stderr}");
            if path.first().is_some_and(|w| w == "probe") {
                // No server to measure: a clear error, not a usage error.
                assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
                continue;
            }
            assert!(
                serde_json::from_slice::<serde_json::Value>(&out.stdout).is_ok(),
                "{args:?} {flag} json printed no JSON: {}{stderr}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
    }
}

#[test]
fn kubectl_verbosity_durations_and_version() {
    // -v=2 is -vv: skipped files are listed.
    let out = Command::new(BIN)
        .args(["--example", "-o", "concise", "-v=2"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("0 files skipped;"),
        "{out:?}"
    );
    for timeout in ["10s", "500ms", "2m", "10"] {
        let out = Command::new(BIN)
            .args(["--example", "-o", "concise", "--request-timeout", timeout])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{timeout}: {out:?}");
    }
    let out = Command::new(BIN).args(["version"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("homelab-lint {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn namespace_without_cluster_input_is_a_warning() {
    let out = Command::new(BIN)
        .args(["--example", "-n", "security", "-o", "concise"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("warning: -n/--namespace applies to cluster state"),
        "{out:?}"
    );
}

#[test]
fn a_snapshot_is_read_from_standard_input_with_a_dash() {
    let text = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster/helmreleases.json"),
    )
    .unwrap();
    let mut child = Command::new(BIN)
        .args(["--snapshot", "-", "-o", "concise"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(&text).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("<stdin>:"), "{out:?}");
}
