//! Judging a finding by a probe's measurement, with the thresholds of the
//! rule's `probe:` section, and recording the outcome on the finding: the
//! verdict and the figures as evidence (so every output format shows
//! them) and the reason as a note. A finding the probe refutes drops to
//! info and keeps its evidence.

use crate::rules::{Evidence, Finding, ProbeSpec, Severity};

use super::postgres::Report;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Confirmed,
    NotConfirmed,
    /// The probe ran but could not measure (connection lost, budget).
    Inconclusive,
    /// The probe did not run (no target, `--no-probe`, no credentials).
    Skipped,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::NotConfirmed => "not confirmed",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Skipped => "skipped",
        }
    }
}

/// What a probe concluded about one finding.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub verdict: Verdict,
    /// One sentence: why this verdict.
    pub reason: String,
    /// Measured figures, as `probe.<key>` evidence.
    pub figures: Vec<(String, String)>,
}

impl Outcome {
    pub fn skipped(reason: impl Into<String>) -> Outcome {
        Outcome {
            verdict: Verdict::Skipped,
            reason: reason.into(),
            figures: Vec::new(),
        }
    }

    pub fn inconclusive(reason: impl Into<String>) -> Outcome {
        Outcome {
            verdict: Verdict::Inconclusive,
            reason: reason.into(),
            figures: Vec::new(),
        }
    }
}

/// What the probe of `spec` is called in messages.
pub fn describe(spec: &ProbeSpec) -> &'static str {
    match spec {
        ProbeSpec::PostgresCommit { .. } => "Postgres commit probe",
        ProbeSpec::PostgresKeepalive { .. } => "Postgres connection probe",
    }
}

/// Judges a Postgres probe's report by the rule's thresholds.
pub fn judge(spec: &ProbeSpec, r: &Report) -> Outcome {
    match *spec {
        ProbeSpec::PostgresCommit {
            min_p50_ms,
            min_ratio,
        } => commit(r, min_p50_ms, min_ratio),
        ProbeSpec::PostgresKeepalive { max_idle_seconds } => keepalive(r, max_idle_seconds),
    }
}

fn commit(r: &Report, min_p50_ms: f64, min_ratio: f64) -> Outcome {
    let ratio = r.ratio.unwrap_or(0.0);
    let source = r
        .setting("synchronous_commit")
        .map_or("?", |s| s.source.as_str());
    let mut figures = vec![
        ("target".into(), r.target.clone()),
        ("commit.p50_ms".into(), format!("{:.2}", r.effective.p50_ms)),
        ("commit.p95_ms".into(), format!("{:.2}", r.effective.p95_ms)),
        ("commit_off.p50_ms".into(), format!("{:.2}", r.off.p50_ms)),
        (
            "ratio".into(),
            r.ratio.map_or("n/a".into(), |x| format!("{x:.1}")),
        ),
        (
            "synchronous_commit".into(),
            format!("{} (source: {source})", r.synchronous_commit),
        ),
    ];
    // A synchronous standby makes the primary's commits wait for it too
    // (unless synchronous_commit is local or off): worth showing next to
    // the figures, since the primary's own disk may be fast.
    let standbys = r
        .setting("synchronous_standby_names")
        .filter(|s| !s.value.trim().is_empty());
    if let Some(s) = standbys {
        figures.push((
            "synchronous_standby_names".into(),
            format!("{} (source: {})", s.value, s.source),
        ));
    }
    let measured = format!(
        "commit p50 {:.2} ms with synchronous_commit={} vs {:.2} ms off ({ratio:.1}x){}",
        r.effective.p50_ms,
        r.synchronous_commit,
        r.off.p50_ms,
        standbys.map_or(String::new(), |s| format!(
            "; synchronous_standby_names = {}",
            s.value
        ))
    );
    let (verdict, reason) = if r.synchronous_commit == "off" {
        (
            Verdict::NotConfirmed,
            format!(
                "the probed server already runs synchronous_commit=off (source: {source}): {measured}"
            ),
        )
    } else if r.effective.p50_ms >= min_p50_ms && ratio >= min_ratio {
        (
            Verdict::Confirmed,
            format!("each commit waits for the WAL flush: {measured}"),
        )
    } else {
        (
            Verdict::NotConfirmed,
            format!(
                "commits are cheap on the probed server: {measured} \
                 (the rule confirms at p50 >= {min_p50_ms} ms and >= {min_ratio}x)"
            ),
        )
    };
    Outcome {
        verdict,
        reason,
        figures,
    }
}

/// Linux's `net.ipv4.tcp_keepalive_time`, which Postgres uses when its
/// `tcp_keepalives_idle` is 0.
const KERNEL_KEEPALIVE_IDLE_S: u64 = 7200;

fn keepalive(r: &Report, max_idle_seconds: u64) -> Outcome {
    let Some(idle) = r.setting("tcp_keepalives_idle") else {
        return Outcome::inconclusive("tcp_keepalives_idle could not be read");
    };
    // pg_settings gives the value with its unit, `0s` or `60s`.
    let digits: String = idle
        .value
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let Ok(set) = digits.parse::<u64>() else {
        return Outcome::inconclusive(format!(
            "tcp_keepalives_idle = {:?} is not a number of seconds",
            idle.value
        ));
    };
    let (effective, how) = if set == 0 {
        (KERNEL_KEEPALIVE_IDLE_S, "0, the kernel default (7200 s)")
    } else {
        (set, "set")
    };
    let figures = vec![
        ("target".into(), r.target.clone()),
        (
            "tcp_keepalives_idle".into(),
            format!("{} (source: {})", idle.value, idle.source),
        ),
        ("connect.p50_ms".into(), format!("{:.2}", r.connect.p50_ms)),
    ];
    let (verdict, reason) = if effective > max_idle_seconds {
        (
            Verdict::Confirmed,
            format!(
                "the server sends its first keepalive only after {effective} s of silence \
                 (tcp_keepalives_idle {how}), longer than the {max_idle_seconds} s after which \
                 firewalls commonly drop idle connections"
            ),
        )
    } else {
        (
            Verdict::NotConfirmed,
            format!(
                "the server sends keepalives after {effective} s of silence, which keeps \
                 idle connections alive through firewalls that wait {max_idle_seconds} s"
            ),
        )
    };
    Outcome {
        verdict,
        reason,
        figures,
    }
}

/// Records `outcome` of the probe `spec` on `finding`.
/// The verdict and its figures as evidence only, without a note: for a
/// run that asked for no probe, whose readers need no word of it.
pub fn record_evidence(finding: &mut Finding, outcome: &Outcome) {
    let mut add = |key: String, value: String| finding.evidence.push(Evidence { key, value });
    add("probe.verdict".into(), outcome.verdict.as_str().into());
    for (k, v) in &outcome.figures {
        add(format!("probe.{k}"), v.clone());
    }
}

pub fn record(finding: &mut Finding, spec: &ProbeSpec, outcome: &Outcome) {
    record_evidence(finding, outcome);
    let mut note = format!(
        "{} {}: {}",
        describe(spec),
        outcome.verdict.as_str(),
        outcome.reason
    );
    if let (Verdict::Confirmed, Some(severity)) =
        (outcome.verdict, finding.unconfirmed_severity.take())
    {
        note.push_str(&format!(
            "; the remedy the repository shows is not in effect on the probed server: \
             reported as {} again",
            severity.as_str()
        ));
        finding.severity = severity;
    }
    if outcome.verdict == Verdict::NotConfirmed && finding.severity != Severity::Info {
        note.push_str(&format!(
            "; reported as info instead of {}",
            finding.severity.as_str()
        ));
        finding.severity = Severity::Info;
    }
    finding.notes.push(note);
}
