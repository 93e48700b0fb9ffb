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

use crate::model::database::Provider;
use crate::source::Object;
use crate::source::cluster::api_reason as reason;

/// The Postgres cluster a finding names, as its operator declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct Cluster {
    pub provider: Provider,
    pub namespace: String,
    pub name: String,
    /// Users the cluster declares, each with a database it owns.
    pub users: Vec<(String, Option<String>)>,
}

impl Cluster {
    /// The cluster an operator object declares: Zalando `postgresql`,
    /// CloudNativePG `Cluster`, Crunchy `PostgresCluster`. Databases
    /// of other kinds have no Secret at a known place.
    pub fn of(object: &Object) -> Result<Cluster, String> {
        let provider = if object.is("acid.zalan.do", "postgresql") {
            Provider::Zalando
        } else if object.is("postgresql.cnpg.io", "Cluster") {
            Provider::Cnpg
        } else if object.is("postgres-operator.crunchydata.com", "PostgresCluster") {
            Provider::Crunchy
        } else {
            return Err(format!(
                "{} is not run by an operator whose Secrets the probe knows \
                 (Zalando, CloudNativePG, Crunchy); give --probe-dsn",
                object.id()
            ));
        };
        let spec = object.root.get("spec");
        let text = |n: Option<&crate::yaml::Node>| n.and_then(|n| n.scalar_text());
        let mut users = Vec::new();
        match provider {
            Provider::Zalando => {
                // `users: {name: [flags]}`, `databases: {db: owner}`.
                let owned = |user: &str| {
                    spec.and_then(|s| s.get("databases"))
                        .and_then(|d| d.as_map())
                        .into_iter()
                        .flatten()
                        .find(|(_, owner)| text(Some(owner)).as_deref() == Some(user))
                        .and_then(|(db, _)| db.scalar_text())
                };
                for (user, _) in spec
                    .and_then(|s| s.get("users"))
                    .and_then(|u| u.as_map())
                    .into_iter()
                    .flatten()
                {
                    if let Some(user) = user.scalar_text() {
                        let db = owned(&user);
                        users.push((user, db));
                    }
                }
            }
            Provider::Crunchy => {
                // `users: [{name, databases: [db]}]`.
                for user in spec
                    .and_then(|s| s.get("users"))
                    .and_then(|u| u.as_seq())
                    .into_iter()
                    .flatten()
                {
                    if let Some(name) = text(user.get("name")) {
                        let db = user
                            .get("databases")
                            .and_then(|d| d.as_seq())
                            .and_then(|d| d.first())
                            .and_then(|d| d.scalar_text());
                        users.push((name, db));
                    }
                }
            }
            _ => {}
        }
        // Users owning a database first: the app's role and database,
        // where per-database settings apply.
        users.sort_by_key(|(_, db)| db.is_none());
        Ok(Cluster {
            provider,
            namespace: object.namespace().unwrap_or("default").to_string(),
            name: object.name().to_string(),
            users,
        })
    }
}

/// Where each operator serves its cluster kind: group, version, plural.
const OPERATOR_KINDS: &[(&str, &str, &str)] = &[
    ("acid.zalan.do", "v1", "postgresqls"),
    ("postgresql.cnpg.io", "v1", "clusters"),
    (
        "postgres-operator.crunchydata.com",
        "v1beta1",
        "postgresclusters",
    ),
];

/// The operator's cluster object `namespace/name`, whichever of the
/// operators declares it, read from the API server.
pub async fn cluster_object(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<Object, String> {
    for (group, version, plural) in OPERATOR_KINDS {
        let path = format!("/apis/{group}/{version}/namespaces/{namespace}/{plural}/{name}");
        let request = http::Request::get(&path)
            .header(http::header::ACCEPT, "application/json")
            .body(Vec::new())
            .map_err(|e| e.to_string())?;
        match client.request_text(request).await {
            Ok(text) => {
                let json: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}"))?;
                let root = crate::yaml::Node::from_json(&json, Default::default());
                return Ok(Object::new(root, Default::default(), 0));
            }
            // Not this operator's, or the operator is not installed.
            Err(kube::Error::Api(s)) if s.code == 404 => continue,
            Err(e) => return Err(format!("cannot read {path}: {}", reason(&e))),
        }
    }
    Err(format!(
        "no Postgres cluster {namespace}/{name} of Zalando, CloudNativePG or Crunchy PGO"
    ))
}

/// A Secret of an operator and the keys it keeps credentials under.
#[derive(Clone, Debug, PartialEq)]
struct SecretRef {
    name: String,
    user_key: &'static str,
    password_key: &'static str,
    /// Key of the database name, where the Secret has one.
    dbname_key: Option<&'static str>,
    /// The database otherwise.
    dbname: String,
}

/// Where an operator puts the primary and the credentials, tried in order.
#[derive(Clone, Debug, PartialEq)]
struct Naming {
    /// Label selectors of the primary pod.
    selectors: Vec<String>,
    secrets: Vec<SecretRef>,
}

fn naming(c: &Cluster) -> Naming {
    let n = &c.name;
    let secret = |name: String,
                  user_key: &'static str,
                  dbname_key: Option<&'static str>,
                  dbname: &str| SecretRef {
        name,
        user_key,
        password_key: "password",
        dbname_key,
        dbname: dbname.to_string(),
    };
    match c.provider {
        Provider::Cnpg => Naming {
            selectors: vec![
                format!("cnpg.io/cluster={n},cnpg.io/instanceRole=primary"),
                // Before CloudNativePG 1.18.
                format!("cnpg.io/cluster={n},role=primary"),
            ],
            secrets: vec![
                secret(format!("{n}-app"), "username", Some("dbname"), "app"),
                secret(format!("{n}-superuser"), "username", None, "postgres"),
            ],
        },
        Provider::Zalando => Naming {
            selectors: vec![format!("cluster-name={n},spilo-role=master")],
            // `<user>.<cluster>.credentials.postgresql.acid.zalan.do`,
            // with `_` in role names written as `-`.
            secrets: c
                .users
                .iter()
                .map(|(u, db)| (u.as_str(), db.as_deref().unwrap_or("postgres")))
                .chain([("postgres", "postgres")])
                .map(|(u, db)| {
                    secret(
                        format!(
                            "{}.{n}.credentials.postgresql.acid.zalan.do",
                            u.replace('_', "-")
                        ),
                        "username",
                        None,
                        db,
                    )
                })
                .collect(),
        },
        Provider::Crunchy => Naming {
            selectors: vec![format!(
                "postgres-operator.crunchydata.com/cluster={n},\
                 postgres-operator.crunchydata.com/role=master"
            )],
            // `<cluster>-pguser-<user>`; without users, PGO makes one
            // named after the cluster.
            secrets: if c.users.is_empty() {
                vec![secret(format!("{n}-pguser-{n}"), "user", Some("dbname"), n)]
            } else {
                c.users
                    .iter()
                    .map(|(u, db)| {
                        secret(
                            format!("{n}-pguser-{u}"),
                            "user",
                            Some("dbname"),
                            db.as_deref().unwrap_or("postgres"),
                        )
                    })
                    .collect()
            },
        },
        Provider::Bitnami | Provider::StatefulSet => Naming {
            selectors: Vec::new(),
            secrets: Vec::new(),
        },
    }
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
pub async fn resolve(client: &kube::Client, c: &Cluster) -> Result<PodRoute, String> {
    let naming = naming(c);
    let pods: Api<Pod> = Api::namespaced(client.clone(), &c.namespace);
    let mut primary = None;
    for selector in &naming.selectors {
        let list = pods
            .list(&ListParams::default().labels(selector))
            .await
            .map_err(|e| format!("cannot list the pods of {}: {}", c.name, reason(&e)))?;
        primary = list.items.into_iter().find(|p| {
            p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
                && p.metadata.deletion_timestamp.is_none()
        });
        if primary.is_some() {
            break;
        }
    }
    let Some(primary) = primary else {
        return Err(format!(
            "no running primary pod of {} {} in namespace {} (labels {})",
            c.provider.as_str(),
            c.name,
            c.namespace,
            naming.selectors.join(" or ")
        ));
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
            Err(e) => return Err(format!("cannot read Secret {}: {}", s.name, reason(&e))),
        };
        let data = secret.data.unwrap_or_default();
        let field = |key: &str| {
            data.get(key)
                .map(|v| String::from_utf8_lossy(&v.0).into_owned())
        };
        let (Some(user), Some(password)) = (field(s.user_key), field(s.password_key)) else {
            return Err(format!(
                "Secret {} has no {} and {} keys",
                s.name, s.user_key, s.password_key
            ));
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
                .and_then(field)
                .unwrap_or_else(|| s.dbname.clone()),
        });
    }
    Err(format!(
        "no credentials Secret of {} in namespace {} (looked for {})",
        c.name,
        c.namespace,
        tried.join(", ")
    ))
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
    pub async fn open(route: &PodRoute) -> Result<(DuplexStream, Tunnel), String> {
        let mut forwarder = route
            .pods
            .portforward(&route.pod, &[route.port])
            .await
            .map_err(|e| {
                format!(
                    "cannot port-forward to pod {}/{}: {}",
                    route.namespace,
                    route.pod,
                    reason(&e)
                )
            })?;
        let stream = forwarder
            .take_stream(route.port)
            .ok_or_else(|| format!("port-forward to pod {} gave no stream", route.pod))?;
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
) -> Result<(Api<Pod>, String, u16), String> {
    let services: Api<Service> = Api::namespaced(client.clone(), namespace);
    let svc = services
        .get(service)
        .await
        .map_err(|e| format!("cannot read Service {namespace}/{service}: {}", reason(&e)))?;
    let spec = svc.spec.unwrap_or_default();
    let ports = spec.ports.unwrap_or_default();
    let svc_port = match port {
        Some(p) => ports.iter().find(|sp| sp.port == i32::from(p)),
        None => ports.first(),
    }
    .ok_or_else(|| {
        format!(
            "Service {namespace}/{service} has no port {}",
            port.map_or("at all".into(), |p| p.to_string())
        )
    })?;
    let selector = spec
        .selector
        .filter(|s| !s.is_empty())
        .ok_or_else(|| format!("Service {namespace}/{service} selects no pods"))?
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",");
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let pod = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .map_err(|e| format!("cannot list the pods of Service {service}: {}", reason(&e)))?
        .items
        .into_iter()
        .find(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
        .ok_or_else(|| {
            format!("no running pod behind Service {namespace}/{service} ({selector})")
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
    .ok_or_else(|| format!("Service {namespace}/{service}: its target port is not on the pod"))?;
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
    pub async fn start(pods: Api<Pod>, pod: String, port: u16) -> Result<Listener, String> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("cannot listen on 127.0.0.1: {e}"))?;
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

    fn cluster(provider: Provider, users: &[(&str, Option<&str>)]) -> Cluster {
        Cluster {
            provider,
            namespace: "auth".into(),
            name: "pg".into(),
            users: users
                .iter()
                .map(|(u, d)| (u.to_string(), d.map(str::to_string)))
                .collect(),
        }
    }

    #[test]
    fn operator_naming_of_primaries_and_secrets() {
        let cnpg = naming(&cluster(Provider::Cnpg, &[]));
        assert_eq!(
            cnpg.selectors[0],
            "cnpg.io/cluster=pg,cnpg.io/instanceRole=primary"
        );
        assert_eq!(cnpg.secrets[0].name, "pg-app");
        assert_eq!(cnpg.secrets[0].dbname_key, Some("dbname"));

        let zalando = naming(&cluster(
            Provider::Zalando,
            &[("authentik_user", Some("authentik"))],
        ));
        assert_eq!(zalando.selectors, ["cluster-name=pg,spilo-role=master"]);
        let names: Vec<_> = zalando.secrets.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "authentik-user.pg.credentials.postgresql.acid.zalan.do",
                "postgres.pg.credentials.postgresql.acid.zalan.do"
            ]
        );
        assert_eq!(zalando.secrets[0].dbname, "authentik");

        let crunchy = naming(&cluster(Provider::Crunchy, &[]));
        assert_eq!(crunchy.secrets[0].name, "pg-pguser-pg");
        assert_eq!(crunchy.secrets[0].user_key, "user");
    }

    #[test]
    fn users_owning_a_database_come_first() {
        let repo = crate::source::test_repo::TestRepo::new(&[(
            "pg.yaml",
            "apiVersion: acid.zalan.do/v1\nkind: postgresql\nmetadata: {name: pg, namespace: auth}\n\
             spec:\n  users:\n    admin: [superuser]\n    authentik: []\n  databases:\n    authentik: authentik\n",
        )]);
        let c = Cluster::of(&repo.objects[0]).unwrap();
        assert_eq!(
            c.users,
            [
                ("authentik".to_string(), Some("authentik".to_string())),
                ("admin".to_string(), None)
            ]
        );
        let repo = crate::source::test_repo::TestRepo::new(&[(
            "sts.yaml",
            "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: pg}\n",
        )]);
        assert!(
            Cluster::of(&repo.objects[0])
                .unwrap_err()
                .contains("--probe-dsn")
        );
    }
}
