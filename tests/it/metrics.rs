//! `--metrics-file`: Prometheus text exposition of a run.

use std::process::Command;

#[test]
fn metrics_file_counts_findings_per_rule_in_exposition_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("homelab-lint.prom");
    let out = Command::new(crate::common::BIN)
        .args(["--example", "--format", "json", "--metrics-file"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = std::fs::read_to_string(&path).unwrap();
    // Readable by node_exporter running as another user.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o644);
    let sample = |rule: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("homelab_lint_findings{{rule=\"{rule}\",")))
            .and_then(|l| l.rsplit(' ').next())
            .map(|v| v.parse::<u64>().unwrap())
    };
    assert_eq!(
        sample("authentik-cache-on-sync-replicated-postgres"),
        Some(1)
    );
    assert_eq!(
        sample("authentik-persistent-connections-without-keepalives"),
        Some(1)
    );
    assert_eq!(
        sample("postgres-durability-off"),
        Some(0),
        "rules that did not fire are 0"
    );
    // Every line is a comment or `name{labels} value` (the exposition format).
    let sample_line =
        regex::Regex::new(r#"^[a-z_]+(\{[a-z]+="[^"]*"(,[a-z]+="[^"]*")*\})? [0-9]+$"#).unwrap();
    for line in text.lines() {
        assert!(
            line.starts_with("# HELP ")
                || line.starts_with("# TYPE ")
                || sample_line.is_match(line),
            "{line}"
        );
    }
    assert!(text.contains("homelab_lint_last_run_timestamp_seconds "));
}
