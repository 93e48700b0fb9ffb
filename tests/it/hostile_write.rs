//! What the linter writes keeps the shape of what is there: `--fix` keeps
//! a file's line endings, and `--metrics-file` never puts a regular file
//! in the place of a FIFO, a device or a symlink.

use crate::common;
use crate::support;

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use support::limited::{Limits, linter, run_limited};

/// Offsets of line feeds not preceded by a carriage return.
fn lone_lf(text: &str) -> Vec<usize> {
    text.match_indices('\n')
        .map(|(i, _)| i)
        .filter(|i| !text[..*i].ends_with('\r'))
        .collect()
}

#[test]
fn fix_keeps_crlf_line_endings() {
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&common::example_repo(), tmp.path());
    let files = [
        "apps/authentik/database.yaml",
        "apps/authentik/helmrelease.yaml",
    ];
    let mut before = Vec::new();
    for rel in files {
        let path = tmp.path().join(rel);
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replace('\n', "\r\n");
        std::fs::write(&path, &text).unwrap();
        before.push(text);
    }
    let mut cmd = linter();
    cmd.args(["--fix", "--unsafe-fixes", "-o", "json"])
        .arg(tmp.path());
    let run = run_limited(cmd, Limits::default());
    assert_eq!(run.code(), Some(0), "{}", run.stderr);
    for (rel, old) in files.iter().zip(before) {
        let new = std::fs::read_to_string(tmp.path().join(rel)).unwrap();
        assert_ne!(new, old, "{rel} was not fixed");
        assert_eq!(lone_lf(&new), Vec::<usize>::new(), "{rel}:\n{new:?}");
    }
}

/// The example repository's run with `--metrics-file PATH`.
fn metrics_run(path: &Path) -> support::limited::Run {
    let mut cmd = linter();
    cmd.arg("--metrics-file")
        .arg(path)
        .arg(common::example_repo());
    run_limited(cmd, Limits::default())
}

#[test]
fn metrics_file_writes_into_a_fifo_and_keeps_it() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("metrics.prom");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a plain system call on a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // A reader, opened without waiting for a writer, so the run finds one.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let run = metrics_run(&fifo);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    let mut read = String::new();
    let _ = std::io::Read::read_to_string(&mut reader, &mut read);
    assert!(read.contains("homelab_lint_findings{"), "{read}");
    use std::os::unix::fs::FileTypeExt;
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(kind.is_fifo(), "the FIFO was replaced: {kind:?}");
}

#[test]
fn metrics_file_through_a_symlink_keeps_the_link() {
    let tmp = tempfile::tempdir().unwrap();
    let target = tmp.path().join("real.prom");
    std::fs::write(&target, "old\n").unwrap();
    let link = tmp.path().join("link.prom");
    std::os::unix::fs::symlink("real.prom", &link).unwrap();
    let run = metrics_run(&link);
    assert_eq!(run.code(), Some(1), "{}", run.stderr);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(text.contains("homelab_lint_findings{"), "{text}");
}

#[test]
fn metrics_file_refuses_a_directory_and_a_socket() {
    let tmp = tempfile::tempdir().unwrap();
    let socket = tmp.path().join("metrics.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    for path in [tmp.path().to_path_buf(), socket.clone()] {
        let run = metrics_run(&path);
        assert!(
            run.stderr.contains("not a regular file"),
            "{}: {}",
            path.display(),
            run.stderr
        );
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::symlink_metadata(&socket)
            .unwrap()
            .file_type()
            .is_socket()
    );
}
