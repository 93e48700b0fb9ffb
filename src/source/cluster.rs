//! Reading a live cluster with kube-rs: kubeconfig resolved as kubectl
//! does (`--kubeconfig`, then `$KUBECONFIG`, then `~/.kube/config`;
//! `--context`), discovery first so kinds the cluster lacks (absent CRDs)
//! are skipped, then paginated lists of only the kinds the resolvers
//! read, several at once. A kind the user may not list (RBAC) gives a
//! warning and the rest still loads. Secrets are never listed here.
//!
//! Each page the server returns is registered, pretty-printed, as a
//! source file `cluster://<context>/<resource>`, so findings on live
//! objects point at readable lines.

use std::cell::RefCell;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kube::config::{KubeConfigOptions, Kubeconfig};

use super::{Object, snapshot};
use crate::yaml::{Limits, SourceMap};

/// The kinds the resolvers read: workloads (images, env), storage
/// (StorageClass, PVC, PV), Services, ConfigMaps (valuesFrom, envFrom),
/// Flux objects and Rook's block pools (the copies a Ceph RBD class
/// keeps); the Postgres operators' clusters come with the options
/// ([`Options::kinds`]). Never Secrets.
const KINDS: &[(&str, &str)] = &[
    ("", "ConfigMap"),
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("", "Pod"),
    ("", "Service"),
    ("apps", "DaemonSet"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("storage.k8s.io", "StorageClass"),
    ("helm.toolkit.fluxcd.io", "HelmRelease"),
    ("kustomize.toolkit.fluxcd.io", "Kustomization"),
    ("source.toolkit.fluxcd.io", "OCIRepository"),
    ("ceph.rook.io", "CephBlockPool"),
];

/// Lists running at once.
const PARALLEL: usize = 8;

/// How to reach the cluster and what to read.
#[derive(Clone, Debug)]
pub struct Options {
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// Only this namespace (cluster-scoped kinds are read too).
    pub namespace: Option<String>,
    /// For the whole collection, connecting included.
    pub timeout: Duration,
    /// 2 and more: one line per API call in the log.
    pub verbose: u8,
    /// Show progress on stderr (a TTY).
    pub progress: bool,
    /// Items per list call; 0: one call per list, as kubectl's
    /// `--chunk-size 0`.
    pub chunk_size: usize,
    /// Kinds (group, kind) read besides [`KINDS`]: each Postgres
    /// operator's, which the model knows.
    pub kinds: Vec<(&'static str, &'static str)>,
}

/// What was read.
#[derive(Debug, Default)]
pub struct Read {
    pub objects: Vec<Object>,
    /// Kinds that could not be listed (forbidden, failed): partial results.
    pub warnings: Vec<String>,
    /// One line for stderr.
    pub summary: String,
    pub api_calls: usize,
    pub elapsed: Duration,
}

/// Why the cluster could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No usable kubeconfig (and not running in a cluster).
    #[error("cannot load the kubeconfig: {0}")]
    Config(String),
    /// The API server refused the connection, or answered discovery
    /// with an error.
    #[error("cannot reach the Kubernetes API server at {server}: {reason}")]
    Unreachable { server: String, reason: String },
    /// Nothing came back in time.
    #[error(
        "the Kubernetes API server at {server} did not answer within {secs} s \
         (raise --request-timeout if the cluster is slow)"
    )]
    Timeout { server: String, secs: u64 },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

/// One page of a list, as the server sent it.
struct Page {
    resource: String,
    index: usize,
    text: String,
}

/// A resource to list, from discovery.
#[derive(Clone, Debug)]
struct Resource {
    /// `/api/v1` or `/apis/<group>/<version>`.
    base: String,
    plural: String,
    group: String,
    namespaced: bool,
}

impl Resource {
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }
}

struct Ctx<'l> {
    client: kube::Client,
    calls: AtomicUsize,
    verbose: u8,
    /// Where the API-call lines go: the caller's log, which makes what
    /// the server answered safe to print. Every request runs on the one
    /// task `read` blocks on, so a line is written while no other is.
    log: RefCell<&'l mut dyn FnMut(&str)>,
    /// The kinds read: [`KINDS`] and [`Options::kinds`].
    kinds: Vec<(&'static str, &'static str)>,
}

impl Ctx<'_> {
    async fn get(&self, path: &str) -> Result<String, kube::Error> {
        self.get_as(path, "application/json").await
    }

    async fn get_as(&self, path: &str, accept: &str) -> Result<String, kube::Error> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let started = Instant::now();
        let request = http::Request::get(path)
            .header(http::header::ACCEPT, accept)
            .body(Vec::new())
            .map_err(kube::Error::HttpError)?;
        let result = self.request_text(request).await;
        if self.verbose >= 2 {
            let outcome = match &result {
                Ok(text) => format!("ok, {} bytes", text.len()),
                Err(kube::Error::Api(s)) => format!("{} {}", s.code, s.reason),
                Err(e) => format!("error: {}", first_line(&e.to_string())),
            };
            (self.log.borrow_mut())(&format!(
                "api: GET {path} -> {outcome} in {} ms",
                started.elapsed().as_millis()
            ));
        }
        result
    }
}

/// Bytes one API response may hold. A list page of `--chunk-size`
/// objects is far below it; an endless or huge answer fails its request
/// once past it, rather than being buffered until memory runs out.
pub const API_BODY_BYTES: usize = 256 << 20;

impl Ctx<'_> {
    /// kube's `Client::request_text`, with the body read under
    /// [`API_BODY_BYTES`] as it arrives (an error status's body too).
    async fn request_text(&self, request: http::Request<Vec<u8>>) -> Result<String, kube::Error> {
        use http_body_util::{BodyExt, Limited};
        let res = self
            .client
            .send(request.map(kube::client::Body::from))
            .await?;
        let status = res.status();
        let body = Limited::new(res.into_body(), API_BODY_BYTES)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    kube::Error::Service(
                        format!(
                            "the response is over {API_BODY_BYTES} bytes (read so far, not kept); \
                             a smaller --chunk-size makes pages smaller"
                        )
                        .into(),
                    )
                } else {
                    kube::Error::Service(e)
                }
            })?
            .to_bytes();
        let text = String::from_utf8(body.to_vec()).map_err(kube::Error::FromUtf8)?;
        if status.is_client_error() || status.is_server_error() {
            // As kube words it: the Status the server sent, or one made of
            // the text (a proxy's HTML, a missing path's plain text).
            let answer = serde_json::from_str::<kube::core::Status>(&text).unwrap_or_else(|_| {
                kube::core::Status::failure(text.trim(), "Failed to parse error data")
                    .with_code(status.as_u16())
            });
            return Err(kube::Error::Api(answer.boxed()));
        }
        Ok(text)
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// The whole chain of an error's causes, deduplicated: kube wraps
/// "connection refused" a few levels deep.
fn causes(err: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cur: Option<&dyn std::error::Error> = Some(err);
    while let Some(e) = cur {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cur = e.source();
    }
    parts.join(": ")
}

/// The deepest cause: for a refused connection, "tcp connect error:
/// Connection refused (os error 111)" rather than kube's wrappers.
fn innermost(err: &dyn std::error::Error) -> String {
    let mut cur = err;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// Reads the cluster and registers what it returned in `sources`; with
/// `-vv`, a line per API call goes to `log`.
pub fn read(
    options: &Options,
    sources: &mut SourceMap,
    log: &mut dyn FnMut(&str),
) -> Result<Read, Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(Error::Runtime)?;
    let started = Instant::now();
    let (client, context, server) = runtime.block_on(client(options))?;
    let ctx = Ctx {
        client,
        calls: AtomicUsize::new(0),
        verbose: options.verbose,
        log: RefCell::new(log),
        kinds: [KINDS, &options.kinds].concat(),
    };
    let collected = runtime
        .block_on(async { tokio::time::timeout(options.timeout, collect(&ctx, options)).await });
    let (pages, warnings) = match collected {
        Ok(Ok(r)) => r,
        Ok(Err(reason)) => return Err(Error::Unreachable { server, reason }),
        Err(_) => {
            return Err(Error::Timeout {
                server,
                secs: options.timeout.as_secs(),
            });
        }
    };
    let elapsed = started.elapsed();
    let api_calls = ctx.calls.load(Ordering::Relaxed);
    let mut read = Read {
        warnings,
        api_calls,
        elapsed,
        ..Read::default()
    };
    let detail = format!("live: context {context} ({server})");
    let limits = Limits {
        max_bytes: usize::MAX,
        ..Limits::default()
    };
    for page in pages {
        // Pretty-printed, as `kubectl get -o json` shows it, so that spans
        // are lines a person can read.
        let pretty = serde_json::from_str::<serde_json::Value>(&page.text)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .unwrap_or(page.text);
        let name = if page.index == 0 {
            format!("cluster://{context}/{}", page.resource)
        } else {
            format!(
                "cluster://{context}/{}?page={}",
                page.resource,
                page.index + 1
            )
        };
        match snapshot::register(sources, PathBuf::from(name), &pretty, &detail, &limits) {
            Ok(u) => read.objects.extend(u.objects),
            Err(issue) => read.warnings.push(issue.to_string()),
        }
    }
    read.summary = format!(
        "cluster {context}: {} objects in {} API calls, {} ms",
        read.objects.len(),
        api_calls,
        elapsed.as_millis()
    );
    Ok(read)
}

/// A client of the cluster `options` name, its context name and server
/// URL. Call it on the runtime that will use the client: the client
/// spawns its connection pool there.
pub async fn client(options: &Options) -> Result<(kube::Client, String, String), Error> {
    let (mut config, context) = load_config(options).await?;
    let server = config
        .cluster_url
        .to_string()
        .trim_end_matches('/')
        .to_string();
    config.connect_timeout = Some(options.timeout.min(Duration::from_secs(5)));
    // Callers bound their whole work by `options.timeout`; the client's
    // own read timeout must not fire first with a vaguer message.
    config.read_timeout = Some(options.timeout + Duration::from_secs(1));
    let client = kube::Client::try_from(config).map_err(|e| Error::Config(causes(&e)))?;
    Ok((client, context, server))
}

/// The kube config, resolved as kubectl resolves it, and the context name.
async fn load_config(options: &Options) -> Result<(kube::Config, String), Error> {
    let kubeconfig = match &options.kubeconfig {
        Some(path) => Some(
            Kubeconfig::read_from(path)
                .map_err(|e| Error::Config(format!("{}: {}", path.display(), causes(&e))))?,
        ),
        None => match Kubeconfig::read() {
            Ok(k) => Some(k),
            // No file at all: perhaps we run in a pod.
            Err(e) => match kube::Config::incluster() {
                Ok(c) => return Ok((c, "in-cluster".into())),
                Err(_) => {
                    return Err(Error::Config(format!(
                        "{} (set --kubeconfig or KUBECONFIG)",
                        causes(&e)
                    )));
                }
            },
        },
    };
    let kubeconfig = kubeconfig.unwrap_or_default();
    let context = options
        .context
        .clone()
        .or_else(|| kubeconfig.current_context.clone())
        .unwrap_or_default();
    let kc_options = KubeConfigOptions {
        context: options.context.clone(),
        cluster: None,
        user: None,
    };
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &kc_options)
        .await
        .map_err(|e| Error::Config(causes(&e)))?;
    Ok((config, context))
}

type Collected = (Vec<Page>, Vec<String>);

/// Discovery, then the lists. `Err` when discovery itself fails: the
/// server is unreachable or refuses us.
async fn collect(ctx: &Ctx<'_>, options: &Options) -> Result<Collected, String> {
    let lister = Lister {
        ctx,
        ns: options.namespace.clone(),
        chunk: options.chunk_size,
        progress: options.progress,
        done: Arc::new(AtomicUsize::new(0)),
    };
    if lister.progress {
        eprint!("reading cluster…");
    }
    // Core v1 is served by every cluster: its lists start at once,
    // alongside the discovery of the API groups, which takes two rounds.
    let core = CORE
        .iter()
        .map(|(plural, namespaced)| Resource {
            base: "/api/v1".into(),
            plural: (*plural).into(),
            group: String::new(),
            namespaced: *namespaced,
        })
        .collect();
    let groups = async {
        let (resources, warnings) = discover_groups(ctx).await?;
        Ok::<_, String>((lister.list(resources).await, warnings))
    };
    let (core_results, group_results) = tokio::join!(lister.list(core), groups);
    let (group_results, mut warnings) = group_results?;
    if lister.progress {
        eprint!("\r\x1b[2K");
    }
    let mut results = core_results;
    // Discovery succeeded, so the server is reachable: a core list that
    // failed to connect is a partial result like any other.
    results.extend(group_results);
    results.sort_by_key(|(r, _)| r.qualified());
    let mut pages = Vec::new();
    for (r, result) in results {
        match result {
            Ok(p) => pages.extend(p),
            // The CRD went away between discovery and list.
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => warnings.push(format!(
                "cannot list {}: {}; results are partial",
                r.qualified(),
                api_reason(&e)
            )),
        }
    }
    Ok((pages, warnings))
}

/// Core v1 resources read: plural and whether namespaced.
const CORE: &[(&str, bool)] = &[
    ("configmaps", true),
    ("persistentvolumeclaims", true),
    ("persistentvolumes", false),
    ("pods", true),
    ("services", true),
];

/// Aggregated discovery (Kubernetes 1.30+): `/apis` alone lists every
/// group's resources, saving a round of requests; older servers answer
/// with the plain group list.
const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,\
                          application/json";

fn wanted_group(kinds: &[(&str, &str)], name: &str) -> bool {
    kinds.iter().any(|(g, _)| !g.is_empty() && *g == name)
}

/// The groups we read, from `/apis`: their resources at once when the
/// server gives aggregated discovery, else from the resource list of the
/// preferred version of each. `Err` when `/apis` fails: the server is
/// unreachable or refuses us.
async fn discover_groups(ctx: &Ctx<'_>) -> Result<(Vec<Resource>, Vec<String>), String> {
    let groups = ctx
        .get_as("/apis", AGGREGATED)
        .await
        .map_err(|e| api_reason(&e))?;
    let groups: serde_json::Value = serde_json::from_str(&groups).map_err(|e| e.to_string())?;
    if groups["kind"] == "APIGroupDiscoveryList" {
        return Ok((aggregated_resources(&ctx.kinds, &groups), Vec::new()));
    }
    let group_versions: Vec<String> = groups["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|g| {
            g["name"]
                .as_str()
                .is_some_and(|name| wanted_group(&ctx.kinds, name))
        })
        .filter_map(|g| g["preferredVersion"]["groupVersion"].as_str())
        .map(str::to_string)
        .collect();
    let lists = futures_util::future::join_all(
        group_versions
            .iter()
            .map(|gv| ctx.get_owned(format!("/apis/{gv}"))),
    )
    .await;
    let mut warnings = Vec::new();
    let mut resources = Vec::new();
    for (gv, list) in group_versions.iter().zip(lists) {
        let group = gv.split('/').next().unwrap_or("");
        match list {
            Ok(text) => resources.extend(resources_in(
                &ctx.kinds,
                &format!("/apis/{gv}"),
                group,
                &text,
            )),
            Err(e) => warnings.push(format!(
                "cannot discover {gv}: {}; its kinds are not read",
                api_reason(&e)
            )),
        }
    }
    Ok((resources, warnings))
}

/// Lists resources, [`PARALLEL`] at a time.
struct Lister<'c, 'l> {
    ctx: &'c Ctx<'l>,
    ns: Option<String>,
    chunk: usize,
    progress: bool,
    done: Arc<AtomicUsize>,
}

type Listed = Vec<(Resource, Result<Vec<Page>, kube::Error>)>;

impl Lister<'_, '_> {
    async fn list(&self, resources: Vec<Resource>) -> Listed {
        futures_util::stream::iter(resources.into_iter().map(|r| async move {
            let pages = list_all(self.ctx, &r, self.ns.as_deref(), self.chunk).await;
            let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
            if self.progress {
                eprint!("\rreading cluster: {n} kinds read   ");
            }
            (r, pages)
        }))
        .buffer_unordered(PARALLEL)
        .collect()
        .await
    }
}

impl Ctx<'_> {
    async fn get_owned(&self, path: String) -> Result<String, kube::Error> {
        self.get(&path).await
    }
}

/// What an API error means, in a few words: forbidden, the status, or
/// the innermost cause of a transport error.
pub fn api_reason(e: &kube::Error) -> String {
    match e {
        kube::Error::Api(s) if s.code == 403 => format!("forbidden ({})", s.message),
        kube::Error::Api(s) => format!("{} {} ({})", s.code, s.reason, s.message),
        other => innermost(other),
    }
}

/// The wanted kinds that can be listed, from an `APIGroupDiscoveryList`:
/// each group's first version is its preferred one.
fn aggregated_resources(kinds: &[(&str, &str)], list: &serde_json::Value) -> Vec<Resource> {
    let mut out = Vec::new();
    for group in list["items"].as_array().into_iter().flatten() {
        let name = group["metadata"]["name"].as_str().unwrap_or("");
        if !wanted_group(kinds, name) {
            continue;
        }
        let Some(version) = group["versions"].as_array().and_then(|v| v.first()) else {
            continue;
        };
        let v = version["version"].as_str().unwrap_or("");
        for r in version["resources"].as_array().into_iter().flatten() {
            let kind = r["responseKind"]["kind"].as_str().unwrap_or("");
            let listable = r["verbs"]
                .as_array()
                .is_some_and(|v| v.iter().any(|v| v == "list"));
            if listable && kinds.contains(&(name, kind)) {
                out.push(Resource {
                    base: format!("/apis/{name}/{v}"),
                    plural: r["resource"].as_str().unwrap_or("").to_string(),
                    group: name.to_string(),
                    namespaced: r["scope"] != "Cluster",
                });
            }
        }
    }
    out
}

/// The wanted kinds in one APIResourceList that can be listed.
fn resources_in(kinds: &[(&str, &str)], base: &str, group: &str, text: &str) -> Vec<Resource> {
    let Ok(list) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    list["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| {
            let kind = r["kind"].as_str().unwrap_or("");
            let name = r["name"].as_str().unwrap_or("");
            // Subresources (`pods/log`) carry their parent's kind.
            !name.contains('/')
                && kinds.contains(&(group, kind))
                && r["verbs"]
                    .as_array()
                    .is_some_and(|v| v.iter().any(|v| v == "list"))
        })
        .map(|r| Resource {
            base: base.to_string(),
            plural: r["name"].as_str().unwrap_or("").to_string(),
            group: group.to_string(),
            namespaced: r["namespaced"].as_bool().unwrap_or(true),
        })
        .collect()
}

/// Every page of one resource's list.
async fn list_all(
    ctx: &Ctx<'_>,
    r: &Resource,
    ns: Option<&str>,
    chunk: usize,
) -> Result<Vec<Page>, kube::Error> {
    let path = match ns {
        Some(ns) if r.namespaced => format!("{}/namespaces/{ns}/{}", r.base, r.plural),
        _ => format!("{}/{}", r.base, r.plural),
    };
    let mut pages = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let url = match &token {
            Some(t) => format!("{path}?limit={chunk}&continue={}", encode(t)),
            None if chunk == 0 => path.clone(),
            None => format!("{path}?limit={chunk}"),
        };
        let text = ctx.get(&url).await?;
        token = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["metadata"]["continue"].as_str().map(str::to_string))
            .filter(|t| !t.is_empty());
        pages.push(Page {
            resource: r.qualified(),
            index: pages.len(),
            text,
        });
        if token.is_none() {
            return Ok(pages);
        }
    }
}

/// Percent-encodes a continue token for a query string.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_are_percent_encoded() {
        assert_eq!(encode("eyJ2Ijo+/="), "eyJ2Ijo%2B%2F%3D");
    }

    #[test]
    fn discovery_keeps_wanted_listable_kinds_only() {
        let text = r#"{"resources":[
            {"name":"pods","kind":"Pod","namespaced":true,"verbs":["get","list"]},
            {"name":"pods/log","kind":"Pod","namespaced":true,"verbs":["get"]},
            {"name":"secrets","kind":"Secret","namespaced":true,"verbs":["get","list"]},
            {"name":"persistentvolumes","kind":"PersistentVolume","namespaced":false,"verbs":["list"]}]}"#;
        let r = resources_in(KINDS, "/api/v1", "", text);
        let names: Vec<_> = r
            .iter()
            .map(|r| (r.plural.as_str(), r.namespaced))
            .collect();
        assert_eq!(names, [("pods", true), ("persistentvolumes", false)]);
    }

    #[test]
    fn aggregated_discovery_takes_each_groups_first_version() {
        let list = serde_json::json!({"kind": "APIGroupDiscoveryList", "items": [
            {"metadata": {"name": "acid.zalan.do"}, "versions": [{"version": "v1", "resources": [
                {"resource": "postgresqls", "responseKind": {"kind": "postgresql"},
                 "scope": "Namespaced", "verbs": ["get", "list"]}]}]},
            {"metadata": {"name": "storage.k8s.io"}, "versions": [
                {"version": "v1", "resources": [
                    {"resource": "storageclasses", "responseKind": {"kind": "StorageClass"},
                     "scope": "Cluster", "verbs": ["list"]},
                    {"resource": "csidrivers", "responseKind": {"kind": "CSIDriver"},
                     "scope": "Cluster", "verbs": ["list"]}]},
                {"version": "v1beta1", "resources": [
                    {"resource": "storageclasses", "responseKind": {"kind": "StorageClass"},
                     "scope": "Cluster", "verbs": ["list"]}]}]},
            {"metadata": {"name": "batch"}, "versions": [{"version": "v1", "resources": [
                {"resource": "jobs", "responseKind": {"kind": "Job"},
                 "scope": "Namespaced", "verbs": ["list"]}]}]}
        ]});
        let kinds = [KINDS, &[("acid.zalan.do", "postgresql")]].concat();
        let r: Vec<_> = aggregated_resources(&kinds, &list)
            .into_iter()
            .map(|r| format!("{}/{} {}", r.base, r.plural, r.namespaced))
            .collect();
        assert_eq!(
            r,
            [
                "/apis/acid.zalan.do/v1/postgresqls true",
                "/apis/storage.k8s.io/v1/storageclasses false"
            ]
        );
    }
}
