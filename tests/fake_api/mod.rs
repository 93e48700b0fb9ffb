//! A fake Kubernetes API server on 127.0.0.1 for the tests: serves a
//! fixture cluster (discovery, get and list with label selectors and
//! `limit`/`continue` pagination, pod port-forward), answers 403 or other
//! errors for chosen resources, adds latency to every call and records
//! every request. It speaks enough of the real protocol for `kubectl`
//! and kube-rs themselves to use it. Its accept loop is
//! `support::serve`.

mod discovery;
mod portforward;

pub use portforward::Forward;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};

/// A resource type the fake knows: what discovery reports for it.
#[derive(Clone, Debug)]
pub struct ResourceType {
    pub group: &'static str,
    pub kind: &'static str,
    pub plural: &'static str,
    pub namespaced: bool,
    /// Built-in kinds are always served; custom ones only when the
    /// fixture has objects of their group (an absent CRD otherwise).
    pub builtin: bool,
}

const fn rt(
    group: &'static str,
    kind: &'static str,
    plural: &'static str,
    namespaced: bool,
    builtin: bool,
) -> ResourceType {
    ResourceType {
        group,
        kind,
        plural,
        namespaced,
        builtin,
    }
}

pub const TYPES: &[ResourceType] = &[
    rt("", "Namespace", "namespaces", false, true),
    rt("", "Pod", "pods", true, true),
    rt("", "Service", "services", true, true),
    rt("", "ConfigMap", "configmaps", true, true),
    rt("", "Secret", "secrets", true, true),
    rt(
        "",
        "PersistentVolumeClaim",
        "persistentvolumeclaims",
        true,
        true,
    ),
    rt("", "PersistentVolume", "persistentvolumes", false, true),
    rt("apps", "Deployment", "deployments", true, true),
    rt("apps", "StatefulSet", "statefulsets", true, true),
    rt("apps", "DaemonSet", "daemonsets", true, true),
    rt("apps", "ReplicaSet", "replicasets", true, true),
    rt("batch", "Job", "jobs", true, true),
    rt("batch", "CronJob", "cronjobs", true, true),
    rt(
        "storage.k8s.io",
        "StorageClass",
        "storageclasses",
        false,
        true,
    ),
    rt(
        "helm.toolkit.fluxcd.io",
        "HelmRelease",
        "helmreleases",
        true,
        false,
    ),
    rt(
        "kustomize.toolkit.fluxcd.io",
        "Kustomization",
        "kustomizations",
        true,
        false,
    ),
    rt(
        "source.toolkit.fluxcd.io",
        "GitRepository",
        "gitrepositories",
        true,
        false,
    ),
    rt(
        "source.toolkit.fluxcd.io",
        "HelmRepository",
        "helmrepositories",
        true,
        false,
    ),
    rt(
        "source.toolkit.fluxcd.io",
        "OCIRepository",
        "ocirepositories",
        true,
        false,
    ),
    rt("acid.zalan.do", "postgresql", "postgresqls", true, false),
    rt("postgresql.cnpg.io", "Cluster", "clusters", true, false),
    rt("postgresql.cnpg.io", "Pooler", "poolers", true, false),
    rt(
        "postgres-operator.crunchydata.com",
        "PostgresCluster",
        "postgresclusters",
        true,
        false,
    ),
];

/// Default version of each group when the fixture does not say.
fn default_version(group: &str) -> &'static str {
    match group {
        "" | "apps" | "batch" | "storage.k8s.io" => "v1",
        "helm.toolkit.fluxcd.io" => "v2",
        "postgres-operator.crunchydata.com" => "v1beta1",
        _ => "v1",
    }
}

/// The cluster's objects, by (group, kind).
#[derive(Clone, Debug, Default)]
pub struct Fixture {
    objects: BTreeMap<(String, String), Vec<Value>>,
    versions: HashMap<String, String>,
}

impl Fixture {
    /// Every object of `kubectl get -o yaml|json` files in a directory.
    pub fn from_dir(dir: &Path) -> Fixture {
        let mut f = Fixture::default();
        let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                matches!(
                    p.extension().and_then(|e| e.to_str()),
                    Some("yaml" | "json")
                )
            })
            .collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).unwrap();
            let docs = homelab_lint::yaml::parse_documents(
                &text,
                homelab_lint::yaml::FileId(0),
                &homelab_lint::yaml::Limits::default(),
            )
            .unwrap();
            for d in docs {
                let v = d.to_json();
                match v["items"].as_array() {
                    Some(items) if v["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                        for i in items {
                            f.add(i.clone());
                        }
                    }
                    _ => f.add(v),
                }
            }
        }
        f
    }

    /// Changes the object of `kind` named `name` in place.
    pub fn edit(&mut self, kind: &str, name: &str, change: impl FnOnce(&mut Value)) {
        let obj = self
            .objects
            .iter_mut()
            .filter(|((_, k), _)| k == kind)
            .flat_map(|(_, objs)| objs.iter_mut())
            .find(|o| o["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name} in the fixture"));
        change(obj);
    }

    pub fn add(&mut self, obj: Value) {
        let api_version = obj["apiVersion"].as_str().unwrap_or("v1").to_string();
        let kind = obj["kind"].as_str().unwrap_or("").to_string();
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.clone()),
        };
        self.versions.insert(group.clone(), version);
        self.objects.entry((group, kind)).or_default().push(obj);
    }

    pub fn len(&self) -> usize {
        self.objects.values().map(Vec::len).sum()
    }

    fn version(&self, group: &str) -> String {
        self.versions
            .get(group)
            .cloned()
            .unwrap_or_else(|| default_version(group).to_string())
    }

    /// Resource types the cluster serves: built-ins, and custom ones
    /// whose group has objects.
    fn served(&self) -> Vec<&'static ResourceType> {
        TYPES
            .iter()
            .filter(|t| t.builtin || self.objects.keys().any(|(g, _)| g == t.group))
            .collect()
    }

    /// The object `name` of a kind, in `namespace` when given.
    fn object(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<&Value> {
        self.objects
            .get(&(group.to_string(), kind.to_string()))?
            .iter()
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns)))
            .find(|o| o["metadata"]["name"].as_str() == Some(name))
    }
}

/// Faults to inject, by resource plural (`pods`, `postgresqls`).
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// Added to every response.
    pub latency: Duration,
    /// Resources whose list and get answer 403 Forbidden, as `plural`
    /// or `plural.group`; a subresource such as `pods/portforward` is
    /// denied on its own, as RBAC does.
    pub forbidden: Vec<String>,
    /// Resources whose list answers this status (500, 503, ...).
    pub errors: Vec<(String, u16)>,
    /// The `reason` of those errors' Status; `None`: `InternalError`.
    pub error_reason: Option<String>,
    /// Where each pod's port-forward goes, by `namespace/pod`. A pod of
    /// the fixture that is not here refuses every port.
    pub port_forward: BTreeMap<String, Forward>,
}

impl Faults {
    fn forbids(&self, group: &str, resource: &str) -> bool {
        self.forbidden
            .iter()
            .any(|f| f == resource || (!group.is_empty() && *f == format!("{resource}.{group}")))
    }
}

struct State {
    fixture: Fixture,
    faults: Faults,
    requests: Mutex<Vec<String>>,
}

/// A running fake server. It lives until the test process ends.
pub struct FakeApi {
    pub addr: SocketAddr,
    state: Arc<State>,
}

impl FakeApi {
    pub fn start(fixture: Fixture, faults: Faults) -> FakeApi {
        let state = Arc::new(State {
            fixture,
            faults,
            requests: Mutex::new(Vec::new()),
        });
        let served = state.clone();
        let addr = crate::support::serve::spawn(move |req| {
            let state = served.clone();
            async move { handle(&state, req).await }
        });
        FakeApi { addr, state }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, as `METHOD path?query`.
    pub fn requests(&self) -> Vec<String> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Writes a kubeconfig for this server into `dir`, context `fake`.
    pub fn kubeconfig(&self, dir: &Path) -> PathBuf {
        let path = dir.join("kubeconfig");
        std::fs::write(&path, kubeconfig_text(&self.url())).unwrap();
        path
    }
}

pub fn kubeconfig_text(server: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
  - name: fake
    cluster:
      server: {server}
contexts:
  - name: fake
    context:
      cluster: fake
      user: fake
      namespace: default
current-context: fake
users:
  - name: fake
    user:
      token: fake-token
"
    )
}

type Resp = Response<Full<Bytes>>;

fn respond(code: u16, body: Value) -> Resp {
    respond_as(code, "application/json", body)
}

fn respond_as(code: u16, content_type: &str, body: Value) -> Resp {
    Response::builder()
        .status(StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

fn status(code: u16, reason: &str, message: String) -> Resp {
    respond(
        code,
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": message, "reason": reason, "code": code
        }),
    )
}

/// RBAC's answer: `subject` (`pods "db-0"`, or a plural for a list) may
/// not `verb` the `resource`.
fn forbidden(
    subject: &str,
    verb: &str,
    resource: &str,
    group: &str,
    namespace: Option<&str>,
) -> Resp {
    let scope = namespace.map_or("at the cluster scope".to_string(), |ns| {
        format!("in the namespace \"{ns}\"")
    });
    status(
        403,
        "Forbidden",
        format!(
            "{subject} is forbidden: User \"fake\" cannot {verb} resource \"{resource}\" in API group \"{group}\" {scope}"
        ),
    )
}

async fn handle(state: &State, mut req: Request<Incoming>) -> Resp {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or("").to_string();
    state.requests.lock().unwrap().push(if query.is_empty() {
        format!("{} {path}", req.method())
    } else {
        format!("{} {path}?{query}", req.method())
    });
    if !state.faults.latency.is_zero() {
        tokio::time::sleep(state.faults.latency).await;
    }
    if req.method() != hyper::Method::GET {
        return status(
            405,
            "MethodNotAllowed",
            "the fake API server is read-only".into(),
        );
    }
    let params: HashMap<String, String> = parse_query(&query);
    route(state, &mut req, &path, &params)
}

fn parse_query(q: &str) -> HashMap<String, String> {
    q.split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                match u8::from_str_radix(hex, 16) {
                    Ok(b) => out.push(b),
                    Err(_) => out.extend_from_slice(&bytes[i..i + 3]),
                }
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn route(
    state: &State,
    req: &mut Request<Incoming>,
    path: &str,
    params: &HashMap<String, String>,
) -> Resp {
    let fx = &state.fixture;
    let aggregated = discovery::wants_aggregated(req.headers());
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    match segs.as_slice() {
        ["version"] => respond(
            200,
            json!({"major": "1", "minor": "33", "gitVersion": "v1.33.0-fake",
                   "gitCommit": "0000000", "gitTreeState": "clean", "buildDate": "2026-01-01T00:00:00Z",
                   "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"}),
        ),
        ["api"] if aggregated => discovery::aggregated(fx, true),
        ["apis"] if aggregated => discovery::aggregated(fx, false),
        ["api"] => discovery::api_versions(),
        ["apis"] => discovery::group_list(fx),
        ["api", "v1"] => discovery::resource_list(fx, "", "v1"),
        ["apis", group, version] => discovery::resource_list(fx, group, version),
        ["api", "v1", "namespaces", ns, "pods", pod, "portforward"] => {
            portforward::open(state, req, ns, pod, params)
        }
        ["api", "v1", rest @ ..] => objects(state, "", rest, params),
        ["apis", group, _version, rest @ ..] => objects(state, group, rest, params),
        _ => status(
            404,
            "NotFound",
            format!("the server could not find the requested resource ({path})"),
        ),
    }
}

/// `[namespaces, ns,] plural [, name]`.
fn objects(state: &State, group: &str, rest: &[&str], params: &HashMap<String, String>) -> Resp {
    let fx = &state.fixture;
    let (namespace, rest) = match rest {
        ["namespaces", ns, tail @ ..] if !tail.is_empty() => (Some(*ns), tail),
        _ => (None, rest),
    };
    let (plural, name) = match rest {
        [p] => (*p, None),
        [p, n] => (*p, Some(*n)),
        _ => return status(404, "NotFound", "no such path".into()),
    };
    let Some(t) = fx
        .served()
        .into_iter()
        .find(|t| t.group == group && t.plural == plural)
    else {
        return status(
            404,
            "NotFound",
            "the server could not find the requested resource".into(),
        );
    };
    let qualified = if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    };
    if state.faults.forbids(group, plural) {
        let verb = if name.is_some() { "get" } else { "list" };
        return forbidden(&qualified, verb, plural, group, namespace);
    }
    if let Some((_, code)) = state
        .faults
        .errors
        .iter()
        .find(|(f, _)| f == plural || *f == qualified)
    {
        return status(
            *code,
            state
                .faults
                .error_reason
                .as_deref()
                .unwrap_or("InternalError"),
            format!("injected error for {qualified}"),
        );
    }
    let all = fx
        .objects
        .get(&(group.to_string(), t.kind.to_string()))
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let in_scope =
        |o: &&Value| namespace.is_none_or(|ns| o["metadata"]["namespace"].as_str() == Some(ns));
    let version = fx.version(group);
    let api_version = if group.is_empty() {
        version.clone()
    } else {
        format!("{group}/{version}")
    };
    if let Some(name) = name {
        return match fx.object(group, t.kind, namespace, name) {
            Some(o) => respond(200, o.clone()),
            None => status(404, "NotFound", format!("{qualified} \"{name}\" not found")),
        };
    }
    let selector = params
        .get("labelSelector")
        .map(String::as_str)
        .unwrap_or("");
    let matching: Vec<&Value> = all
        .iter()
        .filter(in_scope)
        .filter(|o| selector_matches(selector, &o["metadata"]["labels"]))
        .collect();
    let start: usize = match params.get("continue").filter(|c| !c.is_empty()) {
        Some(token) => match token
            .strip_prefix("fake-continue-")
            .and_then(|n| n.parse().ok())
        {
            Some(n) => n,
            None => return status(400, "BadRequest", "invalid continue token".into()),
        },
        None => 0,
    };
    let limit: usize = params
        .get("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0)
        .unwrap_or(usize::MAX);
    let end = start.saturating_add(limit).min(matching.len());
    let items: Vec<Value> = matching[start.min(end)..end]
        .iter()
        .map(|o| {
            // The real server leaves kind and apiVersion out of the items
            // of built-in lists.
            let mut o = (*o).clone();
            if t.builtin
                && let Some(m) = o.as_object_mut()
            {
                m.remove("kind");
                m.remove("apiVersion");
            }
            o
        })
        .collect();
    let mut meta = json!({"resourceVersion": "424242"});
    if end < matching.len() {
        meta["continue"] = json!(format!("fake-continue-{end}"));
        meta["remainingItemCount"] = json!(matching.len() - end);
    }
    respond(
        200,
        json!({"apiVersion": api_version, "kind": format!("{}List", t.kind), "metadata": meta, "items": items}),
    )
}

/// Equality-based selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, joined by commas.
pub fn selector_matches(selector: &str, labels: &Value) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|req| {
        let get = |k: &str| labels.get(k.trim()).and_then(Value::as_str);
        if let Some((k, v)) = req.split_once("!=") {
            get(k) != Some(v.trim())
        } else if let Some((k, v)) = req.split_once("==").or_else(|| req.split_once('=')) {
            get(k) == Some(v.trim())
        } else if let Some(k) = req.strip_prefix('!') {
            get(k).is_none()
        } else {
            get(req).is_some()
        }
    })
}
