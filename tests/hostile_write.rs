//! What the linter writes keeps the shape of what is there:
//! `--metrics-file` never puts a regular file in the place of a FIFO, a
//! device or a symlink.

mod common;
mod support;

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use support::limited::{Limits, linter, run_limited};

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
