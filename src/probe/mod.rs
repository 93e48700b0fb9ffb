//! Live probes: measure what a finding predicts on the running service.
//! `postgres` times commits with and without a WAL flush wait; `http`
//! times API requests. Each probe has a hard wall-clock budget.

pub mod http;
mod pg_tls;
pub mod postgres;
pub mod tunnel;
pub mod verdict;

use std::time::Duration;

/// Latency figures of one series of samples, in milliseconds.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    pub samples_ms: Vec<f64>,
    pub avg_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

impl Stats {
    /// Nearest-rank percentiles; all zero for no samples.
    pub fn from_durations(samples: &[Duration]) -> Stats {
        let ms: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        Stats::from_ms(ms)
    }

    pub fn from_ms(samples_ms: Vec<f64>) -> Stats {
        if samples_ms.is_empty() {
            return Stats::default();
        }
        let mut sorted = samples_ms.clone();
        sorted.sort_by(f64::total_cmp);
        let rank = |p: f64| {
            let i = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
            sorted[i.clamp(1, sorted.len()) - 1]
        };
        Stats {
            avg_ms: sorted.iter().sum::<f64>() / sorted.len() as f64,
            p50_ms: rank(50.0),
            p95_ms: rank(95.0),
            p99_ms: rank(99.0),
            max_ms: sorted[sorted.len() - 1],
            samples_ms,
        }
    }
}

/// An error and its causes on one line (a cause already quoted by its
/// parent is left out), with `secret` (a password, a token) masked.
pub fn describe_error(e: &(dyn std::error::Error + 'static), secret: Option<&str>) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = s.source();
    }
    let mut text = parts.join(": ");
    if let Some(secret) = secret.filter(|s| !s.is_empty()) {
        text = text.replace(secret, "***");
    }
    text
}

/// `a / b`, or None when `b` is zero.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// Why a flag's duration was refused.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Neither a number nor humantime's spelling.
    #[error("{0:?} is not a duration (like 10s, 500ms or 2m)")]
    Unreadable(String),
    /// Below 1 ms or above 1 h.
    #[error("{0:?}: give a duration between 1ms and 1h")]
    OutOfRange(String),
}

/// Parses a duration as every flag of the tool does: humantime's
/// spelling (`10s`, `500ms`, `1m30s`, `2m`), or a bare number of seconds
/// (as kubectl's `--request-timeout 10`); between 1 ms and 1 h.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    let d = match t.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => Duration::try_from_secs_f64(secs).ok(),
        Ok(_) => None,
        Err(_) => Some(
            humantime::parse_duration(t)
                .map_err(|_| DurationError::Unreadable(text.to_string()))?,
        ),
    };
    match d {
        Some(d) if d >= Duration::from_millis(1) && d <= Duration::from_secs(3600) => Ok(d),
        _ => Err(DurationError::OutOfRange(text.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let s = Stats::from_ms((1..=100).map(f64::from).collect());
        assert_eq!(
            (s.p50_ms, s.p95_ms, s.p99_ms, s.max_ms),
            (50.0, 95.0, 99.0, 100.0)
        );
        let one = Stats::from_ms(vec![3.0]);
        assert_eq!((one.p50_ms, one.p95_ms, one.max_ms), (3.0, 3.0, 3.0));
        assert_eq!(Stats::from_ms(vec![]).p50_ms, 0.0);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert!(
            parse_duration("2h")
                .unwrap_err()
                .to_string()
                .contains("between")
        );
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("abc").is_err());
        assert!(parse_duration("NaN").is_err());
    }
}
