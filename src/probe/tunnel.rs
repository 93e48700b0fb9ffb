//! Reaching a database pod through the Kubernetes API: the primary pod
//! found by its operator's labels, credentials from the operator's Secret,
//! and one port-forward (`pods/portforward` over a WebSocket) per
//! connection, so a probe needs neither a network path to the pod nor
//! kubectl. The Secret is read only here, when a probe needs it; its
//! values live in [`PodRoute`] and are never printed.

use k8s_openapi::api::core::v1::{Pod, Secret, Service};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, ListParams};
use tokio::io::DuplexStream;

use crate::model::postgres::{ApiResource, Naming, OPERATORS, Provider};
use crate::source::Object;
use crate::source::cluster::api_reason as reason;

/// Why a database pod could not be reached through the API server. Each
/// message names the object and, for an API error, the server's reason.
#[derive(Debug, thiserror::Error)]
pub enum TunnelError {
    /// The object is not one whose credentials the probe knows where to find.
    #[error(
        "{object} is not run by an operator whose Secrets the probe knows ({known}); give --probe-dsn"
    )]
    UnknownOperator { object: String, known: String },
    /// The request for an operator's cluster object could not be built.
    #[error(transparent)]
    Request(#[from] http::Error),
    /// The API server's answer for `path` was not JSON.
    #[error("{path}: not JSON: {source}")]
    NotJson {
        path: String,
        #[source]
        source: serde_json::Error,
    },
    /// The API server refused a read.
    #[error("cannot read {what}: {reason}")]
    Read { what: String, reason: String },
    /// No operator declares a cluster of that name.
    #[error("no Postgres cluster {namespace}/{name} of {operators}")]
    NoCluster {
        namespace: String,
        name: String,
        operators: String,
    },
    /// The API server refused to list pods.
    #[error("cannot list the pods of {owner}: {reason}")]
    ListPods { owner: String, reason: String },
    /// None of the operator's primary selectors found a running pod.
    #[error(
        "no running primary pod of {provider} {name} in namespace {namespace} (labels {selectors})"
    )]
    NoPrimary {
        provider: &'static str,
        name: String,
        namespace: String,
        selectors: String,
    },
    /// The credentials Secret lacks the user or password key.
    #[error("Secret {secret} has no {user_key} and {password_key} keys")]
    SecretKeys {
        secret: String,
        user_key: String,
        password_key: String,
    },
    /// None of the Secrets the operator writes exists.
    #[error("no credentials Secret of {name} in namespace {namespace} (looked for {tried})")]
    NoSecret {
        name: String,
        namespace: String,
        tried: String,
    },
    /// The API server refused the port-forward.
    #[error("cannot port-forward to pod {namespace}/{pod}: {reason}")]
    PortForward {
        namespace: String,
        pod: String,
        reason: String,
    },
    /// The port-forward opened without a stream for the port.
    #[error("port-forward to pod {pod} gave no stream")]
    NoStream { pod: String },
    /// The Service has no such port.
    #[error("Service {namespace}/{service} has no port {port}")]
    NoServicePort {
        namespace: String,
        service: String,
        port: String,
    },
    /// The Service has no selector.
    #[error("Service {namespace}/{service} selects no pods")]
    NoSelector { namespace: String, service: String },
    /// No pod the Service selects is running.
    #[error("no running pod behind Service {namespace}/{service} ({selector})")]
    NoRunningPod {
        namespace: String,
        service: String,
        selector: String,
    },
    /// The Service's target port names no port of the pod.
    #[error("Service {namespace}/{service}: its target port is not on the pod")]
    TargetPort { namespace: String, service: String },
    /// The local listener could not be opened.
    #[error("cannot listen on 127.0.0.1: {0}")]
    Listen(#[source] std::io::Error),
}

/// The Postgres cluster a finding names, as its operator declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    pub provider: Provider,
    pub namespace: String,
    pub name: String,
    /// Where its operator puts the primary and the credentials.
    naming: Naming,
}

impl Cluster {
    /// The cluster an operator object declares, for the operators that
    /// keep credentials in a Secret at a known place.
    pub fn of(object: &Object) -> Result<Cluster, TunnelError> {
        let (provider, naming) = OPERATORS
            .iter()
            .find_map(|o| Some((Provider(*o), o.probe_naming(object)?)))
            .ok_or_else(|| {
                let known: Vec<&str> = OPERATORS
                    .iter()
                    .filter(|o| o.api_resource().is_some())
                    .map(|o| o.short_name())
                    .collect();
                TunnelError::UnknownOperator {
                    object: object.id(),
                    known: known.join(", "),
                }
            })?;
        Ok(Cluster {
            provider,
            namespace: object.namespace().unwrap_or("default").to_string(),
            name: object.name().to_string(),
            naming,
        })
    }
}

/// The operator's cluster object `namespace/name`, whichever of the
/// operators declares it, read from the API server.
pub async fn cluster_object(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Object, TunnelError> {
    let resources: Vec<(&str, ApiResource)> = OPERATORS
        .iter()
        .filter_map(|o| Some((o.short_name(), o.api_resource()?)))
        .collect();
    for (_, r) in &resources {
        let path = format!(
            "/apis/{}/{}/namespaces/{namespace}/{}/{name}",
            r.group, r.version, r.plural
        );
        let request = http::Request::get(&path)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())?;
        match client.request_text(request).await {
            Ok(text) => {
                let json: serde_json::Value =
                    serde_json::from_str(&text).map_err(|source| TunnelError::NotJson {
                        path: path.clone(),
                        source,
                    })?;
                let root = crate::yaml::Node::from_json(&json, Default::default());
                return Ok(Object::new(root, Default::default(), 0));
            }
            // Not this operator's, or the operator is not installed.
            Err(kube::Error::Api(s)) if s.code == 404 => continue,
            Err(e) => {
                return Err(TunnelError::Read {
                    what: path,
                    reason: reason(&e),
                });
            }
        }
    }
    let names: Vec<&str> = resources.iter().map(|(n, _)| *n).collect();
    let shown = match names.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => "any operator".to_string(),
    };
    Err(TunnelError::NoCluster {
        namespace: namespace.to_string(),
        name: name.to_string(),
        operators: shown,
    })
}

/// A database pod reached through port-forwards, with credentials.
#[derive(Clone)]
pub struct PodRoute {
    pub pods: Api<Pod>,
    pub namespace: String,
    pub pod: String,
    pub port: u16,
    /// The Secret the credentials came from (its name only).
    pub secret: String,
    pub user: String,
    pub password: String,
    pub dbname: String,
}

impl std::fmt::Debug for PodRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PodRoute")
            .field("namespace", &self.namespace)
            .field("pod", &self.pod)
            .field("port", &self.port)
            .field("secret", &self.secret)
            .field("user", &self.user)
            .field("dbname", &self.dbname)
            .finish_non_exhaustive()
    }
}

impl PodRoute {
    /// Where the probe connects, without the password.
    pub fn describe(&self) -> String {
        format!(
            "{}@pod {}/{}:{}/{} (port-forward)",
            self.user, self.namespace, self.pod, self.port, self.dbname
        )
    }
}

/// The cluster's running primary and credentials from its Secret.
pub async fn resolve(client: &kube::Client, c: &Cluster) -> Result<PodRoute, TunnelError> {
    let naming = &c.naming;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &c.namespace);
    let mut primary = None;
    for selector in &naming.selectors {
        let list = pods
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| TunnelError::ListPods {
                owner: c.name.clone(),
                reason: reason(&e),
            })?;
        primary = list.items.into_iter().find(|p| {
            p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                && p.metadata.deletion_timestamp.is_none()
        });
        if primary.is_some() {
            break;
        }
    }
    let Some(primary) = primary else {
        return Err(TunnelError::NoPrimary {
            provider: c.provider.as_str(),
            name: c.name.clone(),
            namespace: c.namespace.clone(),
            selectors: naming.selectors.join(" or "),
        });
    };
    let port = postgres_port(&primary);
    let pod = primary.metadata.name.unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &c.namespace);
    let mut tried = Vec::new();
    for s in &naming.secrets {
        let secret = match secrets.get_opt(&s.name).await {
            Ok(Some(secret)) => secret,
            Ok(None) => {
                tried.push(s.name.clone());
                continue;
            }
            Err(e) => {
                return Err(TunnelError::Read {
                    what: format!("Secret {}", s.name),
                    reason: reason(&e),
                });
            }
        };
        let data = secret.data.unwrap_or_default();
        let field = |key: &str| {
            data.get(key)
                .map(|v| String::from_utf8_lossy(&v.0).into_owned())
        };
        let (Some(user), Some(password)) = (field(&s.user_key), field(&s.password_key)) else {
            return Err(TunnelError::SecretKeys {
                secret: s.name.clone(),
                user_key: s.user_key.clone(),
                password_key: s.password_key.clone(),
            });
        };
        return Ok(PodRoute {
            pods,
            namespace: c.namespace.clone(),
            pod,
            port,
            secret: s.name.clone(),
            user,
            password,
            dbname: s
                .dbname_key
                .as_deref()
                .and_then(field)
                .unwrap_or_else(|| s.dbname.clone()),
        });
    }
    Err(TunnelError::NoSecret {
        name: c.name.clone(),
        namespace: c.namespace.clone(),
        tried: tried.join(", "),
    })
}

/// The container port named for Postgres, else 5432.
fn postgres_port(pod: &Pod) -> u16 {
    pod.spec
        .iter()
        .flat_map(|s| &s.containers)
        .flat_map(|c| c.ports.iter().flatten())
        .find(|p| {
            p.name
                .as_deref()
                .is_some_and(|n| n.starts_with("postgres") || n == "pg")
        })
        .and_then(|p| u16::try_from(p.container_port).ok())
        .unwrap_or(5432)
}

/// A port-forward to the route's pod: dropping it closes the WebSocket,
/// and with it the stream [`Tunnel::open`] returned.
pub struct Tunnel {
    forwarder: kube::api::Portforwarder,
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        self.forwarder.abort();
    }
}

impl Tunnel {
    pub async fn open(route: &PodRoute) -> Result<(DuplexStream, Tunnel), TunnelError> {
        let mut forwarder = route
            .pods
            .portforward(&route.pod, &[route.port])
            .await
            .map_err(|e| TunnelError::PortForward {
                namespace: route.namespace.clone(),
                pod: route.pod.clone(),
                reason: reason(&e),
            })?;
        let stream = forwarder
            .take_stream(route.port)
            .ok_or_else(|| TunnelError::NoStream {
                pod: route.pod.clone(),
            })?;
        Ok((stream, Tunnel { forwarder }))
    }

    /// The message of the pod's error channel, if the API server sent one
    /// (`error forwarding port …`).
    pub fn error(&mut self, port: u16) -> Option<impl Future<Output = Option<String>> + use<>> {
        self.forwarder.take_error(port)
    }
}

/// A running pod behind a Service and the container port that the
/// Service port (`port`, or its first) leads to.
pub async fn service_pod(
    client: &kube::Client,
    namespace: &str,
    service: &str,
    port: Option<u16>,
) -> Result<(Api<Pod>, String, u16), TunnelError> {
    let named = || (namespace.to_string(), service.to_string());
    let services: Api<Service> = Api::namespaced(client.clone(), namespace);
    let svc = services.get(service).await.map_err(|e| TunnelError::Read {
        what: format!("Service {namespace}/{service}"),
        reason: reason(&e),
    })?;
    let spec = svc.spec.unwrap_or_default();
    let ports = spec.ports.unwrap_or_default();
    let svc_port = match port {
        Some(p) => ports.iter().find(|sp| sp.port == i32::from(p)),
        None => ports.first(),
    }
    .ok_or_else(|| {
        let (namespace, service) = named();
        TunnelError::NoServicePort {
            namespace,
            service,
            port: port.map_or("at all".into(), |p| p.to_string()),
        }
    })?;
    let selector = spec
        .selector
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            let (namespace, service) = named();
            TunnelError::NoSelector { namespace, service }
        })?
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let pod = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| TunnelError::ListPods {
            owner: format!("Service {service}"),
            reason: reason(&e),
        })?
        .items
        .into_iter()
        .find(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .ok_or_else(|| {
            let (namespace, service) = named();
            TunnelError::NoRunningPod {
                namespace,
                service,
                selector: selector.clone(),
            }
        })?;
    let target = match &svc_port.target_port {
        Some(IntOrString::Int(n)) => u16::try_from(*n).ok(),
        Some(IntOrString::String(name)) => pod
            .spec
            .iter()
            .flat_map(|s| &s.containers)
            .flat_map(|c| c.ports.iter().flatten())
            .find(|p| p.name.as_deref() == Some(name))
            .and_then(|p| u16::try_from(p.container_port).ok()),
        None => u16::try_from(svc_port.port).ok(),
    }
    .ok_or_else(|| {
        let (namespace, service) = named();
        TunnelError::TargetPort { namespace, service }
    })?;
    Ok((pods, pod.metadata.name.unwrap_or_default(), target))
}

/// Accepts connections on a local port and forwards each through its own
/// port-forward to `pod`'s `port`, for clients (the HTTP probe) that
/// need an address. Stops when dropped.
pub struct Listener {
    pub addr: std::net::SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listener {
    pub async fn start(pods: Api<Pod>, pod: String, port: u16) -> Result<Listener, TunnelError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(TunnelError::Listen)?;
        let addr = listener.local_addr().map_err(TunnelError::Listen)?;
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((mut local, _)) = listener.accept().await {
                let pods = pods.clone();
                let pod = pod.clone();
                connections.spawn(async move {
                    let Ok(mut forwarder) = pods.portforward(&pod, &[port]).await else {
                        return;
                    };
                    if let Some(mut remote) = forwarder.take_stream(port) {
                        let _ = tokio::io::copy_bidirectional(&mut local, &mut remote).await;
                    }
                    forwarder.abort();
                });
            }
        });
        Ok(Listener { addr, task })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_operators_with_known_secrets_are_probed() {
        let repo = crate::source::test_repo::TestRepo::new(&[
            (
                "pg.yaml",
                "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata: {name: pg, namespace: auth}\n",
            ),
            (
                "sts.yaml",
                "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: pg}\n",
            ),
        ]);
        let by_name = |kind: &str| {
            repo.objects
                .iter()
                .find(|o| o.kind() == kind)
                .expect("fixture object")
        };
        let c = Cluster::of(by_name("Cluster")).unwrap();
        assert_eq!(c.provider.as_str(), "CloudNativePG");
        assert_eq!(c.namespace, "auth");
        assert!(
            Cluster::of(by_name("StatefulSet"))
                .unwrap_err()
                .to_string()
                .contains("--probe-dsn")
        );
    }
}
