//! The library's one-call lint of a repository on disk, as ruff's
//! `test_path`: [`lint_repo`] runs the pipeline the command line runs for
//! `kubectl homelab-lint PATH -o json`, with its defaults, and returns the
//! typed report instead of its text. Tests and other front doors use it
//! rather than wiring the stages by hand.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::pipeline::{self, BaseRequest, ClusterRequest, Input, ProbeRequest, Request};
use crate::report::Format;
use crate::report::json::Report;
use crate::rules::Severity;

/// What [`lint_repo`] is asked beyond the path; the default is the
/// command line's default.
#[derive(Clone, Debug)]
pub struct Options {
    /// `--config`.
    pub config: Option<PathBuf>,
    /// `--rules`, each a directory of rule files.
    pub rule_dirs: Vec<PathBuf>,
    /// `--base`: report only findings the commit did not have.
    pub base: Option<String>,
    /// `--snapshot`: saved cluster state merged into the repository's.
    pub snapshot: Option<PathBuf>,
    /// `--fail-on`; `None` is `never`.
    pub fail_on: Option<Severity>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            config: None,
            rule_dirs: Vec::new(),
            base: None,
            snapshot: None,
            fail_on: Some(Severity::Warning),
        }
    }
}

/// A finished lint: the report, the exit status the command line would
/// give, and the lines it would print on stderr.
#[derive(Debug)]
pub struct Linted {
    pub report: Report,
    pub exit: u8,
    pub log: Vec<String>,
}

/// Lints the repository at `path`. The error is the one the command line
/// prints before exiting 2 (an unreadable configuration or rule file, a
/// base reference git does not know).
pub fn lint_repo(path: &Path, opts: &Options) -> Result<Linted, super::Error> {
    let req = Request {
        input: Input {
            paths: vec![path.to_path_buf()],
            ..Input::default()
        },
        config: opts.config.clone(),
        rule_dirs: opts.rule_dirs.clone(),
        base: BaseRequest {
            reference: opts.base.clone(),
            all_findings: false,
        },
        cluster: ClusterRequest {
            snapshot: opts.snapshot.clone(),
            ..ClusterRequest::default()
        },
        probe: ProbeRequest {
            budget: Duration::from_secs(2),
            ..ProbeRequest::default()
        },
        format: Format::Json,
        fail_on: opts.fail_on,
        ..Request::default()
    };
    let mut log = Vec::new();
    let outcome = pipeline::run(&req, &mut |line: &str| log.push(line.to_string()))?;
    let report = Report::from_json(outcome.text.as_bytes()).map_err(super::Error::ReadBack)?;
    Ok(Linted {
        report,
        exit: outcome.exit,
        log,
    })
}
