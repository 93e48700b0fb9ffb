//! The linter as a subprocess under a memory limit (RLIMIT_AS), a CPU
//! limit (RLIMIT_CPU) and a wall-clock limit, for the hostile-input suites
//! (tests/it/hostile*.rs). A run that aborts, is killed by a signal or
//! overruns is a test failure that says which, never a hung test binary.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// What one run may use. The defaults are far above what a correct run on
/// a hostile input of at most 1 MB needs, and far below what an unbounded
/// expansion or a hang reaches.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Address space in bytes (RLIMIT_AS): an allocation past it fails.
    pub address_space: u64,
    /// CPU seconds (RLIMIT_CPU): the kernel sends SIGXCPU past it.
    pub cpu_seconds: u64,
    /// Wall-clock time, after which the process is killed; it catches
    /// a run blocked on a FIFO, which uses no CPU.
    pub wall: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            address_space: 2 << 30,
            cpu_seconds: 60,
            wall: Duration::from_secs(90),
        }
    }
}

/// What a run gave back.
#[derive(Debug)]
pub struct Run {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub elapsed: Duration,
}

/// The linter binary of this package, as a command to add arguments to.
pub fn linter() -> Command {
    Command::new(crate::common::BIN)
}

/// Runs `cmd` under `limits`, stdin closed. Panics (the test fails) when
/// the process overran its wall time or was killed by a signal (abort,
/// stack overflow, SIGXCPU, ...), with what it printed to stderr.
pub fn run_limited(mut cmd: Command, limits: Limits) -> Run {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let (space, cpu) = (limits.address_space, limits.cpu_seconds);
    // SAFETY: between fork and exec the closure only calls setrlimit,
    // which is async-signal-safe, and allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            set_limit(libc::RLIMIT_AS, space)?;
            set_limit(libc::RLIMIT_CPU, cpu)
        });
    }
    let start = Instant::now();
    let mut child = cmd.spawn().expect("cannot start the linter");
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limits.wall {
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
            panic!(
                "the run did not end within {:?} (killed): {cmd:?}\nstderr:\n{err}",
                limits.wall
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = start.elapsed();
    let stdout = stdout.join().unwrap();
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    if let Some(signal) = status.signal() {
        panic!(
            "the run was killed by signal {signal} ({}) after {elapsed:?}: {cmd:?}\nstderr:\n{stderr}",
            signal_name(signal)
        );
    }
    Run {
        status,
        stdout,
        stderr,
        elapsed,
    }
}

/// `linter()` with `args`, under the default limits.
pub fn run_linter(args: &[&str]) -> Run {
    let mut cmd = linter();
    cmd.args(args);
    run_limited(cmd, Limits::default())
}

/// `inventory -v ROOT` under the default limits; the run must succeed.
pub fn inventory(root: &Path) -> Inventory {
    let run = run_linter(&["inventory", "-v", root.to_str().unwrap()]);
    assert!(
        run.status.success(),
        "inventory failed: {:?}\n{}",
        run.status,
        run.stderr
    );
    let json: serde_json::Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("inventory output is not JSON ({e}):\n{}", run.stderr));
    Inventory { json, run }
}

impl Run {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
    /// The JSON report (`-o json`) on stdout, typed.
    pub fn report(&self) -> homelab_lint::report::json::Report {
        homelab_lint::report::json::Report::from_json(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not a JSON report ({e}):\n{}\nstderr:\n{}",
                self.stdout_text(),
                self.stderr
            )
        })
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\nstderr:\n{}",
                self.stdout_text(),
                self.stderr
            )
        })
    }
}

/// The JSON of `inventory` with the run that printed it.
pub struct Inventory {
    pub json: serde_json::Value,
    pub run: Run,
}

impl Inventory {
    /// `metadata.name` of every object loaded.
    pub fn names(&self) -> Vec<String> {
        self.json["objects"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["name"].as_str().map(str::to_string))
            .collect()
    }

    /// The reason of the one Flux Kustomization that is incomplete;
    /// panics unless there is exactly one.
    pub fn why_incomplete(&self) -> String {
        let incomplete = &self.json["coverage"]["fluxKustomizationsIncomplete"];
        assert_eq!(
            incomplete.as_array().map(Vec::len),
            Some(1),
            "{incomplete:#}"
        );
        incomplete[0]["why"].as_str().unwrap().to_string()
    }

    /// Every issue as `path:line:column: message`.
    pub fn issues(&self) -> Vec<String> {
        self.json["issues"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| {
                format!(
                    "{}:{}:{}: {}",
                    i["path"].as_str().unwrap_or(""),
                    i["line"],
                    i["column"],
                    i["message"].as_str().unwrap_or("")
                )
            })
            .collect()
    }

    /// The issue at `path` (a prefix) whose text contains `words`
    /// (case-insensitive); panics listing every issue when there is none.
    pub fn issue(&self, path: &str, words: &str) -> String {
        let issues = self.issues();
        issues
            .iter()
            .find(|i| i.starts_with(path) && i.to_lowercase().contains(&words.to_lowercase()))
            .cloned()
            .unwrap_or_else(|| panic!("no issue at {path} mentioning {words:?} in {issues:#?}"))
    }

    /// The skipped entry at `path` (exactly) whose reason contains `words`
    /// (case-insensitive); panics listing every skipped entry when there
    /// is none.
    pub fn skipped(&self, path: &str, words: &str) -> String {
        let skipped: Vec<String> = self.json["skipped"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                format!(
                    "{}: {}",
                    s["path"].as_str().unwrap_or(""),
                    s["reason"].as_str().unwrap_or("")
                )
            })
            .collect();
        skipped
            .iter()
            .find(|s| {
                s.strip_prefix(path).is_some_and(|r| r.starts_with(": "))
                    && s.to_lowercase().contains(&words.to_lowercase())
            })
            .cloned()
            .unwrap_or_else(|| panic!("no skipped {path} mentioning {words:?} in {skipped:#?}"))
    }

    /// Panics unless an object of each name was loaded: the rest of the
    /// repository survived the hostile part.
    pub fn assert_loaded(&self, names: &[&str]) {
        let have = self.names();
        for want in names {
            assert!(
                have.iter().any(|n| n == want),
                "{want} not loaded: {have:?}"
            );
        }
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: a plain system call on a valid struct.
    if unsafe { libc::setrlimit(resource, &limit) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

fn signal_name(signal: i32) -> &'static str {
    match signal {
        libc::SIGABRT => "abort: allocation failure or stack overflow",
        libc::SIGSEGV => "segmentation fault: stack overflow",
        libc::SIGXCPU => "CPU time limit",
        libc::SIGKILL => "killed",
        _ => "other",
    }
}
