//! A remote file over https with reqwest (rustls): no credentials (no
//! netrc, no cookies), redirects only to https (or, for tests, to
//! loopback http), the body cut off at the bytes left in the budget.

use std::net::IpAddr;

use super::Budget;

/// Whether `url`'s host is a loopback address (127.0.0.0/8, ::1).
pub(super) fn is_loopback(url: &str) -> bool {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?;
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .ok()
        })
        .is_some_and(|ip| ip.is_loopback())
}

/// The body of `url`, on a thread of its own (the caller may be inside
/// a tokio runtime, where another cannot be started).
pub(super) fn fetch(url: &str, budget: &Budget) -> Result<Vec<u8>, String> {
    let (url, bytes, time, local) = (
        url.to_string(),
        budget.bytes,
        budget.time,
        budget.allow_local,
    );
    std::thread::scope(|s| {
        s.spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(get(&url, bytes, time, local))
        })
        .join()
        .unwrap_or_else(|_| Err("the fetch stopped".into()))
    })
}

async fn get(
    url: &str,
    max: u64,
    time: std::time::Duration,
    local: bool,
) -> Result<Vec<u8>, String> {
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let to = attempt.url();
        let ok = to.scheme() == "https" || (local && is_loopback(to.as_str()));
        if attempt.previous().len() > 5 {
            attempt.error("more than 5 redirects")
        } else if ok {
            attempt.follow()
        } else {
            attempt.error("a redirect away from https")
        }
    });
    let client = reqwest::Client::builder()
        .redirect(policy)
        .timeout(time)
        .user_agent(concat!("homelab-lint/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| e.to_string())?;
    let mut resp = client.get(url).send().await.map_err(|e| describe(&e))?;
    let status = resp.status();
    if !status.is_success() {
        return Err(format!("HTTP status {status}"));
    }
    if resp.content_length().is_some_and(|n| n > max) {
        return Err(format!(
            "the file is larger than the {max} bytes left in the budget"
        ));
    }
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| describe(&e))? {
        if body.len() as u64 + chunk.len() as u64 > max {
            return Err(format!(
                "the file is larger than the {max} bytes left in the budget"
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// reqwest's error with its causes, which say what failed (the top one
/// only says "error sending request").
fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return "the time budget ran out".into();
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}
