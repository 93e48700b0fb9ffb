//! Runs the linter as a subprocess under a memory limit (setrlimit
//! RLIMIT_AS through the shell's `ulimit -v`) and a CPU-time limit
//! (RLIMIT_CPU, `ulimit -t`), with a wall-clock guard, so a case that
//! would grow without bound or loop ends the child, not the test machine.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Limits for one run.
pub struct Bounds {
    pub memory_mib: u64,
    pub cpu_seconds: u64,
}

/// Runs `bin args...` under `bounds`; panics (failing the test) when the
/// child is still running after twice its CPU limit of wall time.
pub fn run_bounded(bin: &Path, args: &[&str], bounds: &Bounds) -> Output {
    let quoted: Vec<String> = std::iter::once(bin.display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .map(|a| format!("'{}'", a.replace('\'', r"'\''")))
        .collect();
    let script = format!(
        "ulimit -v {}; ulimit -t {}; exec {}",
        bounds.memory_mib * 1024,
        bounds.cpu_seconds,
        quoted.join(" ")
    );
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bash runs");
    // Drain both pipes while waiting, so a chatty child cannot block.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buf).map(|_| buf)
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut buf).map(|_| buf)
    });
    let deadline = Duration::from_secs(2 * bounds.cpu_seconds + 10);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{} {args:?} still running after {deadline:?}",
                bin.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().expect("reader").unwrap_or_default(),
        stderr: err.join().expect("reader").unwrap_or_default(),
    }
}
