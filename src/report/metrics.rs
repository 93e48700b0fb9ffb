//! Prometheus text exposition of a run, for node_exporter's textfile
//! collector when the linter runs as a CronJob in the cluster.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use crate::rules::{Finding, Rule};

/// The metrics text: findings per rule and severity (every loaded rule
/// appears, with 0 when it did not fire, so alerts can tell "fixed" from
/// "not checked"), and the run's time.
pub fn render(findings: &[Finding], rules: &[Rule], unix_time: u64) -> String {
    let mut counts: BTreeMap<(&str, &str), usize> = rules
        .iter()
        .map(|r| ((r.id.as_str(), r.severity.as_str()), 0))
        .collect();
    for f in findings {
        *counts
            .entry((f.rule.as_str(), f.severity.as_str()))
            .or_default() += 1;
    }
    let mut out = String::from(
        "# HELP homelab_lint_findings Findings of the last run, by rule and severity.\n# TYPE homelab_lint_findings gauge\n",
    );
    for ((rule, severity), n) in counts {
        // Rule ids are kebab-case and severities fixed words: nothing to escape.
        let _ = writeln!(
            out,
            "homelab_lint_findings{{rule=\"{rule}\",severity=\"{severity}\"}} {n}"
        );
    }
    let _ = writeln!(
        out,
        "# HELP homelab_lint_last_run_timestamp_seconds When the last run finished.\n# TYPE homelab_lint_last_run_timestamp_seconds gauge\nhomelab_lint_last_run_timestamp_seconds {unix_time}"
    );
    out
}

/// Writes the file atomically (temporary file and rename in the same
/// directory): the collector must never read half a file. The mode is
/// the existing file's, or 0644 for a new one: node_exporter's textfile
/// collector usually runs as another user than the linter, and the
/// temporary file's 0600 would hide the metrics from it.
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.persist(path).map(|_| ()).map_err(|e| e.error)
}
