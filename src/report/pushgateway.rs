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

/// Where the group lives under the Pushgateway's base URL `base` (a path
/// prefix such as `http://host/pushgateway/` is kept).
pub fn group_url(base: &str) -> Result<reqwest::Url, String> {
    let mut url = reqwest::Url::parse(base)
        .map_err(|e| format!("--pushgateway {base:?} is not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "--pushgateway: {} is not http or https",
            url.scheme()
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err("--pushgateway: give the base URL, without ?query or #fragment".into());
    }
    url.path_segments_mut()
        .map_err(|()| format!("--pushgateway {base:?} cannot have a path"))?
        .pop_if_empty()
        .extend(["metrics", "job", JOB]);
    Ok(url)
}

/// Replaces the group's metrics with `text`; the error names the URL
/// without its credentials.
pub fn push(base: &str, text: &str, timeout: Duration) -> Result<(), String> {
    let url = group_url(base)?;
    let shown = describe_target(&url);
    let secret = url.password().map(str::to_string);
    let fail = |e: &reqwest::Error| {
        format!(
            "cannot push metrics to {shown}: {}",
            describe_error(e, secret.as_deref())
        )
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot push metrics: cannot start the async runtime: {e}"))?;
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
        // The server's words on one line of the log.
        let body = super::control::escape(&body, super::control::Breaks::Escape);
        Err(format!(
            "cannot push metrics to {shown}: the Pushgateway answered {status}: {body}"
        ))
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
