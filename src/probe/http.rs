//! The HTTP probe: N sequential and N parallel `GET`s of one URL (for
//! Authentik, `/api/v3/core/applications/`) with a bearer token. TLS is
//! verified unless asked otherwise; the token is never printed.

use std::time::{Duration, Instant};

use super::{Stats, describe_error};

/// Bytes of one response body the probe reads (and drops, counted).
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct Options {
    pub url: String,
    /// Sent as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// Requests per series.
    pub requests: usize,
    /// Skip TLS certificate verification.
    pub insecure: bool,
    /// Wall-clock limit of the whole probe.
    pub budget: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            url: String::new(),
            token: None,
            requests: 8,
            insecure: false,
            budget: Duration::from_secs(60),
        }
    }
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The URL without user info or query.
    pub target: String,
    pub sequential: Stats,
    /// Latency of each parallel request.
    pub parallel: Stats,
    /// From the first parallel request sent to the last answer.
    pub parallel_wall_ms: f64,
    pub tls_verified: bool,
    /// One untimed request first: connection (and TLS) set-up, as a
    /// browser's kept-alive connection has already paid it.
    pub warmup_ms: f64,
    pub elapsed_ms: f64,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProbeError {
    #[error("invalid URL: {0}")]
    Url(String),
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
    #[error("request to {target} failed: {reason}")]
    Request { target: String, reason: String },
    #[error("{target} answered HTTP {status}{hint}")]
    Status {
        target: String,
        status: u16,
        hint: String,
    },
    #[error("probe of {target} stopped: budget of {budget_ms} ms exhausted")]
    Budget { target: String, budget_ms: u128 },
}

/// The URL to show: scheme, host, port and path only.
pub fn describe_target(url: &reqwest::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown.to_string()
}

pub fn run_blocking(options: &Options) -> Result<Report, ProbeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ProbeError::Client(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(run(options))
}

pub async fn run(options: &Options) -> Result<Report, ProbeError> {
    let url = reqwest::Url::parse(&options.url).map_err(|e| ProbeError::Url(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(ProbeError::Url(format!(
            "{}: only http and https are probed",
            url.scheme()
        )));
    }
    let target = describe_target(&url);
    let client = reqwest::Client::builder()
        .use_rustls_tls()
        .danger_accept_invalid_certs(options.insecure)
        .timeout(options.budget)
        .build()
        .map_err(|e| ProbeError::Client(describe_error(&e, None)))?;
    let start = Instant::now();
    let work = probe(options, &client, &url, &target, start);
    match tokio::time::timeout(options.budget, work).await {
        Ok(r) => r,
        Err(_) => Err(ProbeError::Budget {
            target,
            budget_ms: options.budget.as_millis(),
        }),
    }
}

async fn one(
    client: &reqwest::Client,
    url: &reqwest::Url,
    token: Option<&str>,
    target: &str,
) -> Result<Duration, ProbeError> {
    let t = Instant::now();
    let mut req = client.get(url.clone());
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    let resp = req.send().await.map_err(|e| ProbeError::Request {
        target: target.to_string(),
        reason: describe_error(&e.without_url(), token),
    })?;
    let status = resp.status();
    // The whole body is part of the latency a browser sees; it is read
    // chunk by chunk and counted, never held, up to a cap (an endless
    // body would otherwise be buffered until memory runs out).
    let body = read_body(resp, MAX_BODY_BYTES).await;
    if !status.is_success() {
        let hint = match status.as_u16() {
            401 | 403 => " (check the token)",
            _ => "",
        };
        return Err(ProbeError::Status {
            target: target.to_string(),
            status: status.as_u16(),
            hint: hint.to_string(),
        });
    }
    body.map_err(|e| ProbeError::Request {
        target: target.to_string(),
        reason: match e {
            BodyError::Read(e) => describe_error(&e.without_url(), token),
            BodyError::TooLarge(max) => format!(
                "the response body is over {max} bytes (read so far, not kept): not a page a browser loads, so its latency says nothing"
            ),
        },
    })?;
    Ok(t.elapsed())
}

enum BodyError {
    Read(reqwest::Error),
    TooLarge(usize),
}

/// Reads and drops the body, failing once more than `max` bytes came.
async fn read_body(mut resp: reqwest::Response, max: usize) -> Result<(), BodyError> {
    let mut total = 0usize;
    while let Some(chunk) = resp.chunk().await.map_err(BodyError::Read)? {
        total = total.saturating_add(chunk.len());
        if total > max {
            return Err(BodyError::TooLarge(max));
        }
    }
    Ok(())
}

async fn probe(
    options: &Options,
    client: &reqwest::Client,
    url: &reqwest::Url,
    target: &str,
    start: Instant,
) -> Result<Report, ProbeError> {
    let n = options.requests.max(1);
    let token = options.token.as_deref();
    let warmup = one(client, url, token, target).await?;
    let mut sequential = Vec::with_capacity(n);
    for _ in 0..n {
        sequential.push(one(client, url, token, target).await?);
    }
    let wall = Instant::now();
    let parallel = futures_util::future::join_all((0..n).map(|_| one(client, url, token, target)))
        .await
        .into_iter()
        .collect::<Result<Vec<_>, _>>()?;
    let parallel_wall_ms = wall.elapsed().as_secs_f64() * 1e3;
    Ok(Report {
        target: target.to_string(),
        sequential: Stats::from_durations(&sequential),
        parallel: Stats::from_durations(&parallel),
        parallel_wall_ms,
        tls_verified: url.scheme() == "https" && !options.insecure,
        warmup_ms: warmup.as_secs_f64() * 1e3,
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}
