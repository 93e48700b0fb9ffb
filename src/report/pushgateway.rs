//! `--pushgateway URL`: the metrics of a run pushed to a Prometheus
//! Pushgateway, because a CronJob's pod is gone before Prometheus could
//! scrape it and no node_exporter reads a file inside it.
//!
//! Pushgateway API (prometheus/pushgateway README, "API"): `PUT
//! /metrics/job/<JOB>` with a text-exposition body replaces every metric
//! of that grouping key, so a rule that stops firing goes to 0 instead of
//! keeping its last count; success is 200 (older releases: 202).

use std::time::Duration;

use crate::probe::{describe_error, http::describe_target};

/// The grouping key's job label.
pub const JOB: &str = "homelab-lint";

/// How long a push may take before the run gives up on it.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// Bytes of an error answer's body read: enough for the Pushgateway's
/// own messages, of which the first 300 characters are shown.
const ERROR_BODY_BYTES: usize = 4096;

/// Why the metrics were not pushed; the message names the URL without
/// its credentials.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// `--pushgateway` is not a URL. Not echoed: a URL that does not
    /// parse cannot be told apart from its credentials (a password
    /// before a bad port was shown).
    #[error("--pushgateway is not a URL: {reason}")]
    NotAUrl { reason: String },
    /// The URL is not http or https.
    #[error("--pushgateway: {scheme} is not http or https")]
    Scheme { scheme: String },
    /// The URL has a query or a fragment, which the group's path cannot keep.
    #[error("--pushgateway: give the base URL, without ?query or #fragment")]
    QueryOrFragment,
    /// The URL cannot have a path (`mailto:`, say).
    #[error("--pushgateway {base:?} cannot have a path")]
    NoPath { base: String },
    /// The async runtime for the request did not start.
    #[error("cannot push metrics: cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
    /// The request failed (connection, TLS, timeout).
    #[error("cannot push metrics to {target}: {reason}")]
    Request { target: String, reason: String },
    /// The Pushgateway answered with an error status.
    #[error("cannot push metrics to {target}: the Pushgateway answered {status}: {body}")]
    Status {
        target: String,
        status: reqwest::StatusCode,
        body: String,
    },
}

/// Where the group lives under the Pushgateway's base URL `base` (a path
/// prefix such as `http://host/pushgateway/` is kept).
pub fn group_url(base: &str) -> Result<reqwest::Url, PushError> {
    let mut url = reqwest::Url::parse(base).map_err(|e| PushError::NotAUrl {
        reason: e.to_string(),
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(PushError::Scheme {
            scheme: url.scheme().to_string(),
        });
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(PushError::QueryOrFragment);
    }
    url.path_segments_mut()
        .map_err(|()| PushError::NoPath {
            base: base.to_string(),
        })?
        .pop_if_empty()
        .extend(["metrics", "job", JOB]);
    Ok(url)
}

/// Replaces the group's metrics with `text`.
pub fn push(base: &str, text: &str, timeout: Duration) -> Result<(), PushError> {
    let url = group_url(base)?;
    let shown = describe_target(&url);
    let secret = url.password().map(str::to_string);
    let fail = |e: &reqwest::Error| PushError::Request {
        target: shown.clone(),
        reason: describe_error(e, secret.as_deref()),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(PushError::Runtime)?;
    runtime.block_on(async {
        let client = reqwest::Client::builder()
            .use_rustls_tls()
            .timeout(timeout)
            .build()
            .map_err(|e| fail(&e))?;
        let response = client
            .put(url.clone())
            // The Pushgateway's text format, version 0.0.4 of the exposition.
            .header("content-type", "text/plain; version=0.0.4")
            .body(text.to_string())
            .send()
            .await
            .map_err(|e| fail(&e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        // What an error page says, read up to a cap as it arrives: an
        // endless body would otherwise be buffered until memory runs out.
        let mut response = response;
        let mut read = Vec::new();
        while read.len() < ERROR_BODY_BYTES {
            match response.chunk().await {
                Ok(Some(chunk)) => read.extend_from_slice(&chunk),
                _ => break,
            }
        }
        read.truncate(ERROR_BODY_BYTES);
        let body: String = String::from_utf8_lossy(&read)
            .trim()
            .chars()
            .take(300)
            .collect();
        Err(PushError::Status {
            target: shown.clone(),
            status,
            // The server's words on one line of the log.
            body: super::control::escape(&body, super::control::Breaks::Escape).into_owned(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::group_url;

    #[test]
    fn the_group_is_under_the_base_url_and_its_path_prefix() {
        for (base, want) in [
            ("http://pg:9091", "http://pg:9091/metrics/job/homelab-lint"),
            ("http://pg:9091/", "http://pg:9091/metrics/job/homelab-lint"),
            (
                "https://h/pushgateway/",
                "https://h/pushgateway/metrics/job/homelab-lint",
            ),
        ] {
            assert_eq!(group_url(base).unwrap().as_str(), want);
        }
        for bad in ["pg:9091", "ftp://pg/", "http://pg/?a=b", "not a url"] {
            assert!(group_url(bad).is_err(), "{bad}");
        }
    }
}
