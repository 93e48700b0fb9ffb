//! Human output fits the terminal: wrapped to its width (here `COLUMNS`,
//! as a shell sets it; stdout is no terminal in a test), never split at a
//! hyphen, a blank line between findings, and a summary with plurals and
//! the fixes the flags would apply.

use std::process::Command;

use crate::common::BIN;

fn human(columns: &str) -> String {
    let out = Command::new(BIN)
        .args(["--example"])
        .env("COLUMNS", columns)
        .env("NO_COLOR", "1")
        .env_remove("FORCE_COLOR")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn output_is_wrapped_to_80_and_120_columns_without_splitting_names() {
    let mut widest = Vec::new();
    for columns in [80, 120] {
        let text = human(&columns.to_string());
        let width = |l: &str| l.chars().count();
        let too_wide: Vec<&str> = text.lines().filter(|l| width(l) > columns).collect();
        // A source line quoted in a snippet is shown as written, and a
        // label stands under the column it points at (miette wraps
        // neither).
        let too_wide: Vec<&&str> = too_wide
            .iter()
            .filter(|l| !l.contains(" │ ") && !l.contains("╰──"))
            .collect();
        assert!(too_wide.is_empty(), "{columns}: {too_wide:#?}\n{text}");
        let split: Vec<&str> = text
            .lines()
            .filter(|l| l.trim_end().ends_with('-') && !l.trim_end().ends_with(" -"))
            .collect();
        assert!(split.is_empty(), "{columns}: split at a hyphen: {split:#?}");
        widest.push(text.lines().map(width).max().unwrap_or(0));
        // One blank line before each finding's header after the first.
        assert!(
            text.contains("\n\nauthentik-persistent-connections-without-keepalives\n"),
            "{text}"
        );
        assert!(
            text.contains("\n2 findings: 0 errors, 2 warnings, 0 info\n"),
            "{text}"
        );
        assert!(
            text.trim_end()
                .ends_with("1 fixable with --fix (1 more with --unsafe-fixes)"),
            "{text}"
        );
        assert!(
            !text.contains("probe skipped"),
            "no probe was asked for: {text}"
        );
    }
    assert!(widest[0] < widest[1], "{widest:?}: 120 columns are used");
}

#[test]
fn color_follows_the_flag_and_force_color() {
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = Command::new(BIN);
        cmd.args(["--example"])
            .args(args)
            .env_remove("NO_COLOR")
            .env_remove("FORCE_COLOR");
        for (k, v) in env {
            cmd.env(k, v);
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    let escape = |s: &str| s.contains("\u{1b}[");
    assert!(!escape(&run(&[], &[])), "not a terminal: no colour");
    assert!(escape(&run(&["--color", "always"], &[])));
    assert!(escape(&run(&[], &[("FORCE_COLOR", "1")])));
    assert!(!escape(&run(
        &[],
        &[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]
    )));
    assert!(!escape(&run(
        &["--color", "never"],
        &[("FORCE_COLOR", "1")]
    )));
}

/// The human renderer on many findings in one large file (a file of N
/// lines, a finding with two labels on each line): timed, not asserted.
/// `cargo test --release --test it human_width::bench -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_human_render_many_findings_in_one_file() {
    use homelab_lint::rules::{Finding, Label, Severity};
    use homelab_lint::yaml::{SourceMap, Span};
    use std::sync::Arc;
    for n in [100usize, 1_000, 10_000] {
        let text: String = (0..n).map(|i| format!("key{i:06}: value\n")).collect();
        let mut sources = SourceMap::default();
        let file = sources.add("apps/big.yaml".into(), Arc::from(text.as_str()));
        let at = |i: usize, len: u32, text: &str| Label {
            span: Span {
                file,
                start: (i * 17) as u32,
                end: (i * 17) as u32 + len,
                line: i as u32 + 1,
                col: 1,
            },
            text: text.into(),
        };
        let findings: Vec<Finding> = (0..n)
            .map(|i| Finding {
                rule: "r".into(),
                severity: Severity::Warning,
                message: "m".into(),
                primary: at(i, 9, "key"),
                related: vec![at((i + n / 2) % n, 5, "far away")],
                evidence: Vec::new(),
                notes: Vec::new(),
                help: "h".into(),
                fingerprint: String::new(),
                fix: None,
                subjects: Default::default(),
                unconfirmed_severity: None,
                chain: Vec::new(),
                baseline: None,
            })
            .collect();
        let start = std::time::Instant::now();
        let out = homelab_lint::report::human::render(&findings, &sources, false);
        println!(
            "bench: {n} findings in a file of {n} lines: {:.3} s, {} lines of output",
            start.elapsed().as_secs_f64(),
            out.lines().count()
        );
    }
}
