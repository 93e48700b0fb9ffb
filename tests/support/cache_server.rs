//! An Authentik stand-in: like Authentik 2025.10's Postgres cache, it
//! upserts a row into `django_postgres_cache_cacheentry` on every
//! `GET /api/v3/core/applications/` with the right bearer token, then
//! answers JSON. So its latency is the latency of one commit, which is
//! what `synchronous_commit` decides. Used by tests/it/probe_http.rs and, as
//! `stand-in/src/main.rs`, by `scripts/demo`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};

use super::serve::serve;

/// The path Authentik's login page calls, and the one this app answers.
pub const PATH: &str = "/api/v3/core/applications/";

/// The table of `django-postgres-cache`, created at start if missing.
pub const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS django_postgres_cache_cacheentry \
     (cache_key varchar(255) PRIMARY KEY, value text NOT NULL, expires timestamptz NOT NULL)";

/// What `django-postgres-cache` runs for every cache set: a WAL-logged
/// commit.
pub const UPSERT: &str = "INSERT INTO django_postgres_cache_cacheentry (cache_key, value, expires) \
     VALUES ($1, $2, now() + interval '5 minutes') \
     ON CONFLICT (cache_key) DO UPDATE SET value = EXCLUDED.value, expires = EXCLUDED.expires";

/// Persistent connections, as Authentik's workers keep with
/// `CONN_MAX_AGE`. Settings made with `ALTER DATABASE … SET` reach a
/// connection only when it is opened, so restart the app after one.
pub const CONNECTIONS: usize = 8;

type Pool = tokio::sync::Mutex<Vec<tokio_postgres::Client>>;

/// The running app, on its own thread and runtime so that synchronous
/// tests can start and stop it. Stopped on drop.
pub struct CacheApp {
    pub addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CacheApp {
    /// Starts the app on a free port of 127.0.0.1.
    pub fn start(dsn: String, token: String) -> Result<CacheApp, String> {
        CacheApp::start_on("127.0.0.1:0".parse().unwrap(), dsn, token)
    }

    /// Connects to `dsn` (libpq string or URL), creates the cache table if
    /// missing and listens on `addr`. The error names the step that
    /// failed; it never contains the DSN, which may hold a password.
    pub fn start_on(addr: SocketAddr, dsn: String, token: String) -> Result<CacheApp, String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let (pool, listener) = match setup(addr, &dsn).await {
                    Ok(ready) => ready,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                let _ = tx.send(Ok(listener.local_addr().unwrap()));
                let token = Arc::new(format!("Bearer {token}"));
                let app = serve(listener, move |req| {
                    let pool = pool.clone();
                    let token = token.clone();
                    async move { handle(&pool, &token, req).await }
                });
                tokio::select! {
                    _ = app => {}
                    _ = stop_rx => {}
                }
            });
        });
        let addr = rx
            .recv()
            .map_err(|_| "the cache app's thread ended before it listened".to_string())??;
        Ok(CacheApp {
            addr,
            shutdown: Some(stop_tx),
            thread: Some(thread),
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}{PATH}", self.addr)
    }
}

impl Drop for CacheApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

async fn setup(
    addr: SocketAddr,
    dsn: &str,
) -> Result<(Arc<Pool>, tokio::net::TcpListener), String> {
    let mut clients = Vec::new();
    for _ in 0..CONNECTIONS {
        let (client, conn) = tokio_postgres::connect(dsn, tokio_postgres::NoTls)
            .await
            .map_err(|e| format!("cannot connect to Postgres: {e}"))?;
        tokio::spawn(conn);
        clients.push(client);
    }
    clients[0]
        .batch_execute(CREATE_TABLE)
        .await
        .map_err(|e| format!("cannot create the cache table: {e}"))?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    Ok((Arc::new(tokio::sync::Mutex::new(clients)), listener))
}

async fn handle(pool: &Pool, token: &str, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, body: &str| {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body.to_string())))
            .unwrap()
    };
    if req.uri().path() != PATH {
        return reply(StatusCode::NOT_FOUND, r#"{"detail":"not found"}"#);
    }
    let authorized = req
        .headers()
        .get("authorization")
        .is_some_and(|v| v.as_bytes() == token.as_bytes());
    if !authorized {
        return reply(StatusCode::UNAUTHORIZED, r#"{"detail":"unauthorized"}"#);
    }
    // Wait for a free connection, as a worker with a persistent one would.
    let client = loop {
        if let Some(c) = pool.lock().await.pop() {
            break c;
        }
        tokio::time::sleep(Duration::from_micros(200)).await;
    };
    let key = format!("goauthentik.io/core/applications{PATH}");
    let result = client.execute(UPSERT, &[&key, &"[]"]).await;
    pool.lock().await.push(client);
    match result {
        Ok(_) => reply(StatusCode::OK, r#"{"pagination":{"count":0},"results":[]}"#),
        Err(e) => reply(StatusCode::INTERNAL_SERVER_ERROR, &format!("{e}")),
    }
}
