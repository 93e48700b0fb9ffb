//! Judging a finding by a probe's measurement, with the thresholds of the
//! rule's `probe:` section, and recording the outcome on the finding: the
//! verdict and the figures as evidence (so every output format shows
//! them) and the reason as a note. A finding the probe refutes drops to
//! info and keeps its evidence.

use crate::rules::schema::CommitWait;
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
            cause,
        } => commit(r, min_p50_ms, min_ratio, cause),
        ProbeSpec::PostgresKeepalive { max_idle_seconds } => keepalive(r, max_idle_seconds),
    }
}

/// The p50 commit as it would be if only `cause` made it wait (the
/// no-flush floor plus that part of the wait), and whether that part is
/// the larger one. A finding that blames one part is confirmed only by
/// the part that dominates: each part is the difference of two measured
/// p50s, and on a loaded machine the smaller one can be a few
/// milliseconds of noise beside a large other part.
fn waits_for(r: &Report, cause: CommitWait) -> (f64, bool) {
    let a = r.attribution;
    match cause {
        CommitWait::Any => (r.effective.p50_ms, true),
        CommitWait::StandbyWait => (
            r.off.p50_ms + a.standby_wait_ms,
            a.standby_wait_ms >= a.local_flush_ms,
        ),
        CommitWait::LocalFlush => (
            r.off.p50_ms + a.local_flush_ms,
            a.local_flush_ms > a.standby_wait_ms,
        ),
    }
}

fn commit(r: &Report, min_p50_ms: f64, min_ratio: f64, cause: CommitWait) -> Outcome {
    let source = r
        .setting("synchronous_commit")
        .map_or("?", |s| s.source.as_str());
    let mut figures = vec![
        ("target".into(), r.target.clone()),
        ("commit.p50_ms".into(), format!("{:.2}", r.effective.p50_ms)),
        ("commit.p95_ms".into(), format!("{:.2}", r.effective.p95_ms)),
        (
            "commit_local.p50_ms".into(),
            format!("{:.2}", r.local.p50_ms),
        ),
        ("commit_off.p50_ms".into(), format!("{:.2}", r.off.p50_ms)),
        (
            "ratio".into(),
            r.ratio.map_or("n/a".into(), |x| format!("{x:.1}")),
        ),
        (
            "standby_wait_ms".into(),
            format!("{:.2}", r.attribution.standby_wait_ms),
        ),
        (
            "local_flush_ms".into(),
            format!("{:.2}", r.attribution.local_flush_ms),
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
        "commit p50 {:.2} ms with synchronous_commit={}, {:.2} ms local, {:.2} ms off; {}{}",
        r.effective.p50_ms,
        r.synchronous_commit,
        r.local.p50_ms,
        r.off.p50_ms,
        r.attribution.summary(),
        standbys.map_or(String::new(), |s| format!(
            "; synchronous_standby_names = {}",
            s.value
        ))
    );
    let (waits, dominates) = waits_for(r, cause);
    let ratio = super::ratio(waits, r.off.p50_ms).unwrap_or(0.0);
    let (verdict, reason) = if r.synchronous_commit == "off" {
        (
            Verdict::NotConfirmed,
            format!(
                "the probed server already runs synchronous_commit=off (source: {source}): {measured}"
            ),
        )
    } else if waits >= min_p50_ms && ratio >= min_ratio && !dominates {
        (
            Verdict::NotConfirmed,
            format!(
                "commits wait mostly for another part than {}: {measured}",
                cause.as_str()
            ),
        )
    } else if waits >= min_p50_ms && ratio >= min_ratio {
        let what = match cause {
            CommitWait::Any => "the WAL flush",
            CommitWait::StandbyWait => "a synchronous standby",
            CommitWait::LocalFlush => "the local WAL flush",
        };
        (
            Verdict::Confirmed,
            format!("each commit waits for {what}: {measured}"),
        )
    } else {
        let threshold = format!(
            "(the rule confirms when {} makes the p50 commit >= {min_p50_ms} ms and >= {min_ratio}x off)",
            cause.as_str()
        );
        let reason = match cause {
            CommitWait::Any => format!("commits are cheap on the probed server: {measured}"),
            _ => format!(
                "{} is small on the probed server ({:.2} ms p50 with it alone, {ratio:.1}x off): {measured}",
                cause.as_str(),
                waits
            ),
        };
        (Verdict::NotConfirmed, format!("{reason} {threshold}"))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::Stats;
    use crate::probe::postgres::{Attribution, Method};

    /// A report whose three series have these p50s (ms).
    fn report(effective: f64, local: f64, off: f64) -> Report {
        let (effective, local, off) = (
            Stats::from_ms(vec![effective]),
            Stats::from_ms(vec![local]),
            Stats::from_ms(vec![off]),
        );
        Report {
            target: "t".into(),
            server_version: "15".into(),
            tls: None,
            connect: Stats::default(),
            method: Method::EmitMessage,
            synchronous_commit: "on".into(),
            ratio: crate::probe::ratio(effective.p50_ms, off.p50_ms),
            attribution: Attribution::of(&effective, &local, &off, true),
            effective,
            local,
            off,
            settings: Vec::new(),
            db_role_settings: Vec::new(),
            notes: Vec::new(),
            elapsed_ms: 0.0,
        }
    }

    fn spec(cause: CommitWait) -> ProbeSpec {
        ProbeSpec::PostgresCommit {
            min_p50_ms: 2.0,
            min_ratio: 3.0,
            cause,
        }
    }

    #[test]
    fn each_rule_is_judged_by_the_part_of_the_wait_it_blames() {
        let slow_standby = report(9.0, 0.5, 0.3);
        let slow_disk = report(9.2, 9.0, 0.3);
        let judged = |r: &Report, cause| judge(&spec(cause), r).verdict;
        assert_eq!(
            judged(&slow_standby, CommitWait::StandbyWait),
            Verdict::Confirmed
        );
        assert_eq!(
            judged(&slow_standby, CommitWait::LocalFlush),
            Verdict::NotConfirmed
        );
        assert_eq!(
            judged(&slow_disk, CommitWait::StandbyWait),
            Verdict::NotConfirmed
        );
        assert_eq!(
            judged(&slow_disk, CommitWait::LocalFlush),
            Verdict::Confirmed
        );
        // The whole wait confirms either way, as before the split.
        for r in [&slow_standby, &slow_disk] {
            assert_eq!(judged(r, CommitWait::Any), Verdict::Confirmed);
        }
        let why = judge(&spec(CommitWait::StandbyWait), &slow_disk).reason;
        assert!(
            why.starts_with("the standby wait is small on the probed server (0.50 ms")
                && why.contains(
                    "the local flush dominates: 0.20 ms standby wait, 8.70 ms local flush"
                ),
            "{why}"
        );
        // Both parts slow: the larger one is blamed.
        let both = report(15.25, 10.25, 0.25);
        assert_eq!(judged(&both, CommitWait::LocalFlush), Verdict::Confirmed);
        assert_eq!(
            judged(&both, CommitWait::StandbyWait),
            Verdict::NotConfirmed
        );
        let why = judge(&spec(CommitWait::StandbyWait), &both).reason;
        assert!(
            why.starts_with("commits wait mostly for another part than the standby wait"),
            "{why}"
        );
        // The dominant part still has to meet the thresholds alone.
        let cheap = report(1.25, 0.5, 0.25);
        assert_eq!(
            judged(&cheap, CommitWait::StandbyWait),
            Verdict::NotConfirmed
        );
        let why = judge(&spec(CommitWait::StandbyWait), &cheap).reason;
        assert!(
            why.starts_with("the standby wait is small on the probed server (1.00 ms"),
            "{why}"
        );
    }

    #[test]
    fn a_part_measured_below_zero_is_none() {
        let a = report(1.0, 1.5, 0.25).attribution;
        assert_eq!((a.standby_wait_ms, a.local_flush_ms), (0.0, 1.25));
    }

    #[test]
    fn without_standbys_to_wait_for_the_standby_wait_is_none() {
        let s = |ms| Stats::from_ms(vec![ms]);
        let a = Attribution::of(&s(4.0), &s(2.5), &s(0.5), false);
        assert_eq!((a.standby_wait_ms, a.local_flush_ms), (0.0, 2.0));
    }
}
