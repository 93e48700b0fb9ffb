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

/// Writes the metrics to `path`. A regular file (or none yet) is
/// replaced atomically (temporary file and rename in the same directory):
/// the collector must never read half a file. The mode is the existing
/// file's, or 0644 for a new one: node_exporter's textfile collector
/// usually runs as another user than the linter, and the temporary file's
/// 0600 would hide the metrics from it. A symlink is followed: the link
/// stays and its target is replaced. A FIFO or character device
/// (`/dev/stdout`, `/proc/self/fd/1`, `/dev/null`) is written in place:
/// a rename would put a regular file in its place (as root, in place of
/// the system's `/dev/null`). Anything else is refused.
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::unix::fs::{FileTypeExt, PermissionsExt};
    let refuse = |why: String| Err(std::io::Error::other(why));
    let (target, mode) = match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => (
            std::fs::canonicalize(path)?,
            meta.permissions().mode() & 0o7777,
        ),
        Ok(meta) if meta.file_type().is_fifo() || meta.file_type().is_char_device() => {
            return write_in_place(path, text);
        }
        Ok(meta) => {
            let what = crate::source::confine::kind_name(meta.file_type());
            return refuse(format!(
                "it is a {what}, not a regular file; it is left alone"
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::symlink_metadata(path).is_ok() {
                return refuse("it is a symlink to nothing; it is left alone".into());
            }
            (path.to_path_buf(), 0o644)
        }
        Err(e) => return Err(e),
    };
    let dir = target
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.persist(&target).map(|_| ()).map_err(|e| e.error)
}

/// Writes into a FIFO or device as it is. Opened without blocking, so a
/// FIFO nobody reads is an error at once rather than a hung run.
fn write_in_place(path: &Path, text: &str) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => std::io::Error::other("it is a FIFO nobody reads"),
            _ => e,
        })?;
    // Blocking again for the write itself: a reader that is slow to take
    // the text is not an error.
    // SAFETY: fcntl on a descriptor this function owns, with valid flags.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK) < 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    std::io::Write::write_all(&mut &file, text.as_bytes())
}
