//! The small conventions of command-line tools, through the real binary:
//! colour decided from NO_COLOR, CLICOLOR_FORCE, FORCE_COLOR, CLICOLOR=0
//! and TERM=dumb (on a real pseudo-terminal, made by util-linux's
//! `script`); the man page's EXIT STATUS, ENVIRONMENT and FILES; `rules
//! list` with category and fix columns; rule ids completed for `explain`
//! and `--select`; `inventory --kind/--name` filtering the file fates
//! too; SARIF help links at the release tag.

use std::process::{Command, Output};

use crate::common::{self, BIN};

/// Variables that decide colour, cleared so the caller's do not leak in;
/// `CI` too, as anstream (anstyle-query's `is_ci`) colours a terminal in CI
/// whatever TERM says, so CI's own `CI=true` would decide the TERM=dumb case.
const COLOUR_VARS: [&str; 6] = [
    "NO_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "TERM",
    "CI",
];

const ESC: &str = "\u{1b}[";

/// A quiet lint of the example with `env`, its stdout a pipe.
fn piped(env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(BIN);
    cmd.args(["--example", "-q"]);
    for var in COLOUR_VARS {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned()
}

/// The same on a pseudo-terminal, or `None` (skipped) without `script`.
fn on_terminal(env: &[(&str, &str)]) -> Option<String> {
    if !common::runs(
        "script",
        &["-qec", "true", "/dev/null"],
        "util-linux `script` is not installed",
    ) {
        return None;
    }
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &format!("{BIN} --example -q"), "/dev/null"]);
    for var in COLOUR_VARS {
        cmd.env_remove(var);
    }
    cmd.env("TERM", "xterm-256color");
    cmd.envs(env.iter().copied());
    Some(String::from_utf8_lossy(&cmd.output().unwrap().stdout).into_owned())
}

#[test]
fn colour_follows_the_environment_conventions() {
    assert!(!piped(&[]).contains(ESC), "a pipe gets no colour");
    assert!(piped(&[("CLICOLOR_FORCE", "1")]).contains(ESC));
    assert!(piped(&[("FORCE_COLOR", "1")]).contains(ESC));
    assert!(!piped(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]).contains(ESC));
    assert!(!piped(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]).contains(ESC));
    let Some(plain) = on_terminal(&[]) else {
        return;
    };
    assert!(plain.contains(ESC), "a terminal gets colour: {plain}");
    assert!(plain.contains("2 findings"), "{plain}");
    for env in [("TERM", "dumb"), ("CLICOLOR", "0"), ("NO_COLOR", "1")] {
        let out = on_terminal(&[env]).unwrap();
        assert!(!out.contains(ESC), "{env:?}: {out}");
        assert!(out.contains("2 findings"), "{env:?}: {out}");
    }
    // --color overrides the environment.
    let mut cmd = Command::new(BIN);
    cmd.args(["--example", "-q", "--color", "always"])
        .env("NO_COLOR", "1");
    assert!(String::from_utf8_lossy(&cmd.output().unwrap().stdout).contains(ESC));
}

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_man_page_has_exit_status_environment_and_files() {
    let page = stdout(&run(&["man"]));
    for section in [
        ".SH \"EXIT STATUS\"",
        ".SH \"ENVIRONMENT\"",
        ".SH \"FILES\"",
    ] {
        assert!(page.contains(section), "no {section}");
    }
    let exit = &page[page.find("EXIT STATUS").unwrap()..page.find(".SH \"ENVIRONMENT\"").unwrap()];
    for code in ["\\fB0\\fR", "\\fB1\\fR", "\\fB2\\fR"] {
        assert!(exit.contains(code), "{code} in {exit}");
    }
    // Every variable a flag reads is listed, from the clap definition.
    for var in [
        "HOMELAB_LINT_PROBE_DSN",
        "HOMELAB_LINT_COLOR",
        "CLICOLOR_FORCE",
        "TERM",
        "KUBECONFIG",
    ] {
        assert!(page.contains(&format!("\\fB{var}\\fR")), "{var}");
    }
}

#[test]
fn rules_list_shows_category_and_fix_columns() {
    let table = stdout(&run(&["rules", "list"]));
    let lines: Vec<&str> = table.lines().collect();
    let split = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        split(lines[0]),
        ["ID", "SEVERITY", "CATEGORY", "FIX", "TITLE"]
    );
    let row = |id: &str| {
        split(
            lines
                .iter()
                .find(|l| l.starts_with(&format!("{id} ")))
                .unwrap(),
        )
    };
    assert_eq!(
        row("authentik-persistent-connections-without-keepalives")[1..4],
        ["warning", "reliability", "safe"]
    );
    assert_eq!(
        row("authentik-cache-on-sync-replicated-postgres")[3],
        "unsafe"
    );
    assert_eq!(
        row("unknown-rule-in-suppression")[1..4],
        ["warning", "correctness", "-"]
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["rules", "list", "-o", "json"]))).unwrap();
    let rule = |id: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(
        rule("authentik-persistent-connections-without-keepalives")["fixable"],
        "safe"
    );
    assert_eq!(
        rule("unused-suppression")["fixable"],
        serde_json::Value::Null
    );
}

#[test]
fn rule_ids_complete_for_explain_and_select() {
    let answer = stdout(&run(&["__complete", "explain", "authentik-upgrade"]));
    assert_eq!(
        answer
            .lines()
            .map(|l| l.split('\t').next().unwrap())
            .collect::<Vec<_>>(),
        [
            "authentik-upgrade-moves-cache-to-sync-replicated-postgres",
            "authentik-upgrade-moves-cache-to-synchronously-replicated-postgres",
            ":4"
        ]
    );
    let answer = stdout(&run(&[
        "__complete",
        "--ignore",
        "postgres-durability-off,unused",
    ]));
    assert_eq!(
        answer.lines().next().unwrap(),
        "postgres-durability-off,unused-suppression\tA suppression that matches no finding"
    );
}

#[test]
fn inventory_filters_the_objects_and_their_files_fates() {
    let all: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["inventory", "--example"]))).unwrap();
    let one: serde_json::Value = serde_json::from_str(&stdout(&run(&[
        "inventory",
        "--example",
        "--kind",
        "HelmRelease",
    ])))
    .unwrap();
    assert!(
        all["fates"].as_array().unwrap().len() > 5,
        "{}",
        all["fates"]
    );
    assert_eq!(one["objects"].as_array().unwrap().len(), 1);
    assert_eq!(
        one["fates"],
        serde_json::json!([{
            "fate": "rendered",
            "path": "apps/authentik/helmrelease.yaml",
            "reason": "rendered through Flux Kustomization flux-system/authentik"
        }])
    );
    let none: serde_json::Value = serde_json::from_str(&stdout(&run(&[
        "inventory",
        "--example",
        "--kind",
        "HelmRelease",
        "--name",
        "nothing",
    ])))
    .unwrap();
    assert_eq!(none["objects"], serde_json::json!([]));
    assert_eq!(none["fates"], serde_json::json!([]));
}

#[test]
fn sarif_help_links_point_at_the_release_tag() {
    let out = run(&["--example", "-o", "sarif"]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let tag = format!("/blob/v{}/docs/rules/", env!("CARGO_PKG_VERSION"));
    for rule in rules {
        let uri = rule["helpUri"].as_str().unwrap();
        assert!(uri.contains(&tag), "{uri}");
        assert!(
            uri.ends_with(&format!("{}.md", rule["id"].as_str().unwrap())),
            "{uri}"
        );
    }
}
