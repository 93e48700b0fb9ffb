//! The Postgres commit probe: how long a commit waits for its WAL flush,
//! and for which part of it.
//!
//! In one session, rounds of three short transactions that each write one
//! WAL record without touching any table (`pg_logical_emit_message(true,
//! …)`): one with the server's effective `synchronous_commit`, one with
//! `SET LOCAL synchronous_commit = local`, one with `= off`. PostgreSQL 15
//! defines the levels so that their differences are the parts of the wait
//! (<https://www.postgresql.org/docs/15/runtime-config-wal.html#GUC-SYNCHRONOUS-COMMIT>,
//! table "synchronous_commit Modes"): `off` waits for nothing, `local`
//! waits for the local flush of the WAL only, and `on`, `remote_write`
//! and `remote_apply` wait for that local flush and, when
//! `synchronous_standby_names` names standbys, for their replies too. So
//! the standby wait is t(effective) − t(local) and the local flush is
//! t(local) − t(off). The rounds interleave the three levels, so a change
//! of load on the machine moves all three alike.
//!
//! Where the emit function is revoked, each transaction creates a
//! temporary table `ON COMMIT DROP` instead: its catalog rows are
//! WAL-logged, so the commit flushes too, and no user table is written.
//!
//! Hard limits: a total wall-clock budget (the whole probe is dropped, and
//! its connection with it, when it runs out), `statement_timeout`,
//! `lock_timeout` and `idle_in_transaction_session_timeout` set to the
//! budget, a ROLLBACK after any failed transaction, and the connection
//! closed (Terminate sent) at the end. `SET LOCAL` ends with its
//! transaction, so the session and the server are left as found.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio_postgres::error::SqlState;
use tokio_postgres::tls::MakeTlsConnect;
use tokio_postgres::{Client, Config, SimpleQueryMessage};

use super::{Stats, describe_error};

/// `application_name` of every probe session, so it can be found in
/// `pg_stat_activity`.
pub const APPLICATION_NAME: &str = "homelab-lint-probe";

/// The statement each method runs inside its transaction.
const EMIT: &str = "SELECT pg_logical_emit_message(true, 'homelab-lint', 'probe')";
const TEMP: &str = "CREATE TEMP TABLE homelab_lint_probe (x int) ON COMMIT DROP";

/// The `synchronous_commit` of one timed transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// The session's own (server, database or role setting).
    Effective,
    /// Waits for the local WAL flush, not for standbys.
    Local,
    /// Waits for no flush.
    Off,
}

impl Level {
    const ALL: [Level; 3] = [Level::Effective, Level::Local, Level::Off];

    /// One transaction of `method` at this level.
    fn sql(self, method: &Method) -> String {
        let body = match method {
            Method::EmitMessage => EMIT,
            Method::TempTable { .. } => TEMP,
        };
        match self {
            Level::Effective => format!("BEGIN; {body}; COMMIT"),
            Level::Local => format!("BEGIN; SET LOCAL synchronous_commit = local; {body}; COMMIT"),
            Level::Off => format!("BEGIN; SET LOCAL synchronous_commit = off; {body}; COMMIT"),
        }
    }
}

/// Settings read from `pg_settings`, with where each was set.
const SETTINGS: &[&str] = &[
    "synchronous_commit",
    "fsync",
    "full_page_writes",
    "wal_sync_method",
    "synchronous_standby_names",
    "commit_delay",
    "wal_writer_delay",
    "tcp_keepalives_idle",
    "tcp_keepalives_interval",
    "tcp_keepalives_count",
    "tcp_user_timeout",
];

/// Where the probe connects.
#[derive(Debug, Clone)]
pub enum Target {
    /// libpq key=value string or `postgres://` URL.
    Dsn(String),
    /// A database pod, through a port-forward per connection.
    Pod(Box<super::tunnel::PodRoute>),
}

#[derive(Debug, Clone)]
pub struct Options {
    pub target: Target,
    /// Transactions per series.
    pub samples: usize,
    /// Connections timed by the connection probe (the last one is used).
    pub connect_tries: usize,
    /// Wall-clock limit of the whole probe.
    pub budget: Duration,
    /// PEM file of the CA that signed the server's certificate (trusted
    /// besides the webpki roots).
    pub ca_file: Option<std::path::PathBuf>,
    /// Accept any server certificate.
    pub insecure: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            target: Target::Dsn(String::new()),
            samples: 20,
            connect_tries: 3,
            budget: Duration::from_secs(2),
            ca_file: None,
            insecure: false,
        }
    }
}

/// How each sample forces a WAL flush.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Method {
    EmitMessage,
    /// The emit function could not be run; the reason is the server's.
    TempTable {
        reason: String,
    },
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Setting {
    pub name: String,
    pub value: String,
    /// `pg_settings.source`: default, configuration file, database, user, …
    pub source: String,
}

/// A per-database or per-role `synchronous_commit` (`pg_db_role_setting`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DbRoleSetting {
    /// Database name, or None for all databases.
    pub database: Option<String>,
    /// Role name, or None for all roles.
    pub role: Option<String>,
    pub value: String,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Where the probe connected (no password).
    pub target: String,
    pub server_version: String,
    /// TLS version of the probe's connection (`pg_stat_ssl`), or None.
    pub tls: Option<String>,
    pub connect: Stats,
    pub method: Method,
    /// `SHOW synchronous_commit` in the probe's session.
    pub synchronous_commit: String,
    /// Commits with the server's effective `synchronous_commit`.
    pub effective: Stats,
    /// Commits with `SET LOCAL synchronous_commit = local`.
    pub local: Stats,
    /// Commits with `SET LOCAL synchronous_commit = off`.
    pub off: Stats,
    /// p50 effective / p50 off.
    pub ratio: Option<f64>,
    /// The commit's wait split into its parts.
    pub attribution: Attribution,
    pub settings: Vec<Setting>,
    pub db_role_settings: Vec<DbRoleSetting>,
    /// Series cut short by the budget, settings that could not be read.
    pub notes: Vec<String>,
    pub elapsed_ms: f64,
}

/// The parts of a commit's wait, from the p50s of the three series
/// (a part measured below zero, which is noise, is zero).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attribution {
    /// p50 effective − p50 local: the wait for synchronous standbys.
    pub standby_wait_ms: f64,
    /// p50 local − p50 off: the wait for the local WAL flush.
    pub local_flush_ms: f64,
}

impl Attribution {
    /// `standbys`: whether the session's commits wait for standbys at
    /// all. They do not when `synchronous_standby_names` is empty or
    /// `synchronous_commit` is `local` or `off` (PostgreSQL 15,
    /// runtime-config-wal: with no synchronous standby names, on,
    /// remote_write and remote_apply "all provide the same local
    /// synchronization level as on"); a difference between the effective
    /// and the local series is then noise, and the standby wait is zero.
    pub fn of(effective: &Stats, local: &Stats, off: &Stats, standbys: bool) -> Attribution {
        Attribution {
            standby_wait_ms: if standbys {
                (effective.p50_ms - local.p50_ms).max(0.0)
            } else {
                0.0
            },
            local_flush_ms: (local.p50_ms - off.p50_ms).max(0.0),
        }
    }

    /// Which part dominates, with the figures: `the standby wait
    /// dominates: 8.10 ms standby wait, 0.20 ms local flush`.
    pub fn summary(&self) -> String {
        let dominant = if self.standby_wait_ms >= self.local_flush_ms {
            "the standby wait"
        } else {
            "the local flush"
        };
        format!(
            "{dominant} dominates: {:.2} ms standby wait, {:.2} ms local flush",
            self.standby_wait_ms, self.local_flush_ms
        )
    }
}

impl Report {
    pub fn setting(&self, name: &str) -> Option<&Setting> {
        self.settings.iter().find(|s| s.name == name)
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProbeError {
    #[error("invalid connection string: {0}")]
    Dsn(String),
    #[error("cannot connect to {target}: {reason}")]
    Connect { target: String, reason: String },
    #[error("authentication failed for {target}: {reason}")]
    Auth { target: String, reason: String },
    #[error("probe of {target} stopped: budget of {budget_ms} ms exhausted while {stage}")]
    Budget {
        target: String,
        budget_ms: u128,
        stage: String,
    },
    #[error("probe of {target} failed while {stage}: {reason}")]
    Query {
        target: String,
        stage: String,
        reason: String,
    },
}

/// Refuses a URL DSN whose user or password holds an unescaped `@`, `/`
/// or `?`. libpq ends the user info at the first `@` (and the authority
/// at the first `/`), so `postgres://u:p@ss@host` would connect to host
/// `ss@host` and every message naming the target would show part of the
/// password. The reason names no part of the DSN.
fn unescaped_credentials(dsn: &str) -> Result<(), String> {
    let Some((_, rest)) = dsn.split_once("://") else {
        // key=value form: values are quoted, an `@` in them is plain text.
        return Ok(());
    };
    let ats = rest.matches('@').count();
    let first_at = rest.find('@');
    let first_end = rest.find(['/', '?']);
    let broken = ats > 1 || matches!((first_at, first_end), (Some(at), Some(end)) if end < at);
    if broken {
        return Err(
            "the user or password holds an unescaped '@', '/' or '?': percent-encode it (%40, %2F, %3F) or use the key=value form (password='...')"
                .into(),
        );
    }
    Ok(())
}

/// tokio-postgres's reason for refusing a DSN, without the character it
/// quotes: in `password s3cret` (no `=`), "expected `=` but got `s`" is
/// the password's first character.
fn unquoted(reason: &str) -> String {
    match reason.split_once(" but got `") {
        Some((head, _)) => format!("{head} (what is there is not shown: it may be a password)"),
        None => reason.to_string(),
    }
}

/// Where a DSN points, without its password.
pub fn describe_target(config: &Config) -> String {
    let host = config
        .get_hosts()
        .first()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(h) => h.clone(),
            tokio_postgres::config::Host::Unix(p) => p.display().to_string(),
        })
        .unwrap_or_else(|| "localhost".into());
    let port = config.get_ports().first().copied().unwrap_or(5432);
    format!(
        "{}@{host}:{port}/{}",
        config.get_user().unwrap_or("?"),
        config.get_dbname().or(config.get_user()).unwrap_or("?")
    )
}

/// Runs the probe on a fresh current-thread runtime (for the CLI and tests).
pub fn run_blocking(options: &Options) -> Result<Report, ProbeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ProbeError::Connect {
            target: "-".into(),
            reason: format!("cannot start the async runtime: {e}"),
        })?;
    runtime.block_on(run(options))
}

/// A connection whose driver task is aborted (socket closed) on drop.
struct Session {
    client: Option<Client>,
    driver: tokio::task::JoinHandle<()>,
}

impl Session {
    fn client(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    /// Closes cleanly: Terminate is sent when the client goes away and the
    /// driver finishes; bounded so a stalled server cannot hold us.
    async fn close(mut self) {
        drop(self.client.take());
        let _ = tokio::time::timeout(Duration::from_millis(200), &mut self.driver).await;
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

pub async fn run(options: &Options) -> Result<Report, ProbeError> {
    let (mut config, target, tls) = match &options.target {
        Target::Dsn(dsn) => {
            unescaped_credentials(dsn).map_err(ProbeError::Dsn)?;
            let config: Config = dsn.parse().map_err(|e: tokio_postgres::Error| {
                let text = describe_error(&e, None);
                ProbeError::Dsn(unquoted(
                    text.strip_prefix("invalid connection string: ")
                        .unwrap_or(&text),
                ))
            })?;
            let target = describe_target(&config);
            let tls = super::pg_tls::client_config(options.ca_file.as_deref(), options.insecure)
                .map_err(|reason| ProbeError::Connect {
                    target: target.clone(),
                    reason,
                })?;
            (config, target, tls)
        }
        Target::Pod(route) => {
            let mut config = Config::new();
            config
                .host(&route.pod)
                .port(route.port)
                .user(&route.user)
                .password(&route.password)
                .dbname(&route.dbname);
            // The API server's tunnel already authenticates the far end
            // (it reaches the pod it was asked for) and encrypts the way
            // there; the operators' certificates are self-signed, so TLS
            // inside it is used when offered but not verified.
            let tls =
                super::pg_tls::client_config(None, true).map_err(|reason| ProbeError::Connect {
                    target: route.describe(),
                    reason,
                })?;
            (config, route.describe(), tls)
        }
    };
    let tls = super::pg_tls::MakeRustls::new(tls);
    config.application_name(APPLICATION_NAME);
    config.connect_timeout(options.budget);
    let password = config
        .get_password()
        .map(|p| String::from_utf8_lossy(p).into_owned());
    let stage = Mutex::new(String::from("connecting"));
    let start = Instant::now();
    let work = probe(
        options,
        &config,
        &tls,
        &target,
        password.as_deref(),
        &stage,
        start,
    );
    match tokio::time::timeout(options.budget, work).await {
        Ok(result) => result,
        // The probe future, its session and socket are dropped here.
        Err(_) => Err(ProbeError::Budget {
            target,
            budget_ms: options.budget.as_millis(),
            stage: stage.lock().map(|s| s.clone()).unwrap_or_default(),
        }),
    }
}

fn set_stage(stage: &Mutex<String>, text: &str) {
    if let Ok(mut s) = stage.lock() {
        *s = text.to_string();
    }
}

async fn connect(
    options: &Options,
    config: &Config,
    tls: &super::pg_tls::MakeRustls,
    target: &str,
    password: Option<&str>,
) -> Result<Session, ProbeError> {
    let connected = match &options.target {
        Target::Dsn(_) => config
            .connect(tls.clone())
            .await
            .map(|(client, connection)| {
                let driver = tokio::spawn(async move {
                    let _ = connection.await;
                });
                (client, driver)
            }),
        Target::Pod(route) => {
            let (stream, mut tunnel) =
                super::tunnel::Tunnel::open(route)
                    .await
                    .map_err(|e| ProbeError::Connect {
                        target: target.to_string(),
                        reason: e.to_string(),
                    })?;
            let tls_connect = MakeTlsConnect::<tokio::io::DuplexStream>::make_tls_connect(
                &mut tls.clone(),
                &route.pod,
            )
            .map_err(|e| ProbeError::Connect {
                target: target.to_string(),
                reason: e.to_string(),
            })?;
            let pod_error = tunnel.error(route.port);
            match config.connect_raw(stream, tls_connect).await {
                Ok((client, connection)) => {
                    // The tunnel lives as long as the connection's driver.
                    let driver = tokio::spawn(async move {
                        let _ = connection.await;
                        drop(tunnel);
                    });
                    Ok((client, driver))
                }
                Err(e) => {
                    // The pod's own words (`connection refused`) beat
                    // the client's "unexpected EOF".
                    let said = match pod_error {
                        Some(f) => tokio::time::timeout(Duration::from_millis(200), f)
                            .await
                            .ok()
                            .flatten(),
                        None => None,
                    };
                    if let Some(said) = said {
                        return Err(ProbeError::Connect {
                            target: target.to_string(),
                            reason: said,
                        });
                    }
                    Err(e)
                }
            }
        }
    };
    match connected {
        Ok((client, driver)) => Ok(Session {
            client: Some(client),
            driver,
        }),
        Err(e) => {
            let mut reason = describe_error(&e, password);
            if reason.contains("certificate") {
                reason.push_str(
                    " (give the server's CA with --ca, or skip verification with --insecure)",
                );
            }
            let auth = matches!(
                e.code(),
                Some(c) if *c == SqlState::INVALID_PASSWORD
                    || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
            );
            let target = target.to_string();
            Err(if auth {
                ProbeError::Auth { target, reason }
            } else {
                ProbeError::Connect { target, reason }
            })
        }
    }
}

/// Rows of a simple query as text columns.
async fn rows(
    client: &Client,
    sql: &str,
) -> Result<Vec<Vec<Option<String>>>, tokio_postgres::Error> {
    Ok(client
        .simple_query(sql)
        .await?
        .into_iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => {
                Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
            }
            _ => None,
        })
        .collect())
}

async fn probe(
    options: &Options,
    config: &Config,
    tls: &super::pg_tls::MakeRustls,
    target: &str,
    password: Option<&str>,
    stage: &Mutex<String>,
    start: Instant,
) -> Result<Report, ProbeError> {
    let query_err = |stage: &str, e: tokio_postgres::Error| ProbeError::Query {
        target: target.to_string(),
        stage: stage.to_string(),
        reason: describe_error(&e, password),
    };
    let mut notes = Vec::new();

    // Connection probe: each try is a full connect (TCP, startup, auth).
    let mut connect_times = Vec::new();
    let mut session = None;
    for i in 0..options.connect_tries.max(1) {
        set_stage(stage, &format!("connecting (try {})", i + 1));
        let t = Instant::now();
        let s = connect(options, config, tls, target, password).await?;
        connect_times.push(t.elapsed());
        if let Some(previous) = session.replace(s) {
            Session::close(previous).await;
        }
    }
    let Some(session) = session else {
        return Err(ProbeError::Connect {
            target: target.to_string(),
            reason: "no connection was made".into(),
        });
    };
    let Some(client) = session.client() else {
        return Err(ProbeError::Connect {
            target: target.to_string(),
            reason: "the connection was closed".into(),
        });
    };

    set_stage(stage, "setting session limits");
    let limit_ms = options.budget.as_millis().max(1);
    client
        .batch_execute(&format!(
            "SET statement_timeout = {limit_ms}; SET lock_timeout = {limit_ms}; \
             SET idle_in_transaction_session_timeout = {limit_ms}"
        ))
        .await
        .map_err(|e| query_err("setting session limits", e))?;
    // PG 14+: notice a vanished client even while waiting on a lock.
    let _ = client
        .batch_execute("SET client_connection_check_interval = 500")
        .await;

    set_stage(stage, "reading settings");
    let version = rows(client, "SHOW server_version")
        .await
        .map_err(|e| query_err("reading settings", e))?;
    let server_version = version
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .unwrap_or_default();
    let tls_version = match rows(
        client,
        "SELECT version FROM pg_stat_ssl WHERE pid = pg_backend_pid() AND ssl",
    )
    .await
    {
        Ok(r) => r.first().and_then(|r| r.first().cloned().flatten()),
        Err(_) => None,
    };
    let sync = rows(client, "SHOW synchronous_commit")
        .await
        .map_err(|e| query_err("reading settings", e))?;
    let synchronous_commit = sync
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .unwrap_or_default();
    let names = SETTINGS
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(",");
    let settings: Vec<Setting> = rows(
        client,
        &format!(
            "SELECT name, setting || COALESCE(unit, ''), source FROM pg_settings \
             WHERE name IN ({names}) ORDER BY name"
        ),
    )
    .await
    .map_err(|e| query_err("reading settings", e))?
    .into_iter()
    .map(|r| {
        let col = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
        Setting {
            name: col(0),
            value: col(1),
            source: col(2),
        }
    })
    .collect();
    let db_role_settings = match rows(
        client,
        "SELECT d.datname, r.rolname, substr(c, length('synchronous_commit=') + 1) \
         FROM pg_db_role_setting s \
         LEFT JOIN pg_database d ON d.oid = s.setdatabase \
         LEFT JOIN pg_roles r ON r.oid = s.setrole, unnest(s.setconfig) c \
         WHERE c LIKE 'synchronous_commit=%' ORDER BY 1, 2",
    )
    .await
    {
        Ok(rows) => rows
            .into_iter()
            .map(|r| DbRoleSetting {
                database: r.first().cloned().flatten(),
                role: r.get(1).cloned().flatten(),
                value: r.get(2).cloned().flatten().unwrap_or_default(),
            })
            .collect(),
        Err(e) => {
            notes.push(format!(
                "pg_db_role_setting not readable: {}",
                describe_error(&e, password)
            ));
            Vec::new()
        }
    };

    // The two series share the rest of the budget, keeping a margin for
    // closing the session.
    let remaining = options.budget.saturating_sub(start.elapsed());
    let share = remaining.mul_f64(0.8);
    // A transactional logical message is decoded by every logical
    // replication slot and handed to its consumer (pgoutput passes it on
    // when the subscriber asked for messages; Debezium and wal2json do),
    // so with such slots the probe writes temporary-table catalog rows
    // instead, which logical decoding never sends out.
    let mut method = match rows(
        client,
        "SELECT count(*) FROM pg_replication_slots WHERE slot_type = 'logical'",
    )
    .await
    {
        Ok(r) => match r
            .first()
            .and_then(|row| row.first().cloned().flatten())
            .unwrap_or_default()
            .as_str()
        {
            "0" | "" => Method::EmitMessage,
            n => Method::TempTable {
                reason: format!(
                    "{n} logical replication slot(s) exist: pg_logical_emit_message would send the probe's messages to their consumers"
                ),
            },
        },
        Err(e) => {
            notes.push(format!(
                "pg_replication_slots not readable, so temporary tables are used: {}",
                describe_error(&e, password)
            ));
            Method::TempTable {
                reason: "whether logical replication slots exist could not be read".into(),
            }
        }
    };
    set_stage(stage, "timing commits");
    let [effective, local, off] = series(client, options.samples, share, &mut method, &mut notes)
        .await
        .map_err(|e| query_err("timing commits", e))?;

    set_stage(stage, "closing the connection");
    session.close().await;

    let effective = Stats::from_durations(&effective);
    let local = Stats::from_durations(&local);
    let off = Stats::from_durations(&off);
    let named = settings
        .iter()
        .any(|s| s.name == "synchronous_standby_names" && !s.value.trim().is_empty());
    let standbys = named && !matches!(synchronous_commit.as_str(), "local" | "off");
    if !standbys {
        notes.push(format!(
            "commits wait for no standby here ({}), so the standby wait is 0 whatever the \
             effective and local series measured",
            if named {
                "synchronous_commit is local or off"
            } else {
                "synchronous_standby_names is empty"
            }
        ));
    }
    Ok(Report {
        target: target.to_string(),
        server_version,
        tls: tls_version,
        connect: Stats::from_durations(&connect_times),
        ratio: super::ratio(effective.p50_ms, off.p50_ms),
        method,
        synchronous_commit,
        attribution: Attribution::of(&effective, &local, &off, standbys),
        effective,
        local,
        off,
        settings,
        db_role_settings,
        notes,
        elapsed_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

/// Up to `samples` rounds of one timed transaction per [`Level`] within
/// `share` of wall time (at least one round); the times by level, in
/// [`Level::ALL`] order. Switches `method` to the temp table fallback
/// when the emit function is not permitted.
async fn series(
    client: &Client,
    samples: usize,
    share: Duration,
    method: &mut Method,
    notes: &mut Vec<String>,
) -> Result<[Vec<Duration>; 3], tokio_postgres::Error> {
    let started = Instant::now();
    let mut times: [Vec<Duration>; 3] = Default::default();
    let mut rounds = 0;
    // After the first round, a transaction is not started when one as
    // slow as the slowest so far would end past `share`: on very slow
    // storage or a loaded machine a round is long, and the budget must
    // hold (a cut round leaves its last levels one sample short).
    let mut slowest = Duration::ZERO;
    'rounds: while rounds < samples.max(1) {
        for (level, out) in Level::ALL.into_iter().zip(&mut times) {
            if rounds > 0 && started.elapsed() + slowest >= share {
                notes.push(format!(
                    "series cut to {rounds} of {samples} samples by the budget"
                ));
                break 'rounds;
            }
            let t = Instant::now();
            match client.batch_execute(&level.sql(method)).await {
                Ok(()) => {
                    slowest = slowest.max(t.elapsed());
                    out.push(t.elapsed());
                }
                Err(e) => {
                    // Never leave the failed transaction open.
                    let _ = client.batch_execute("ROLLBACK").await;
                    let denied = e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE)
                        || e.code() == Some(&SqlState::UNDEFINED_FUNCTION);
                    if denied && *method == Method::EmitMessage {
                        *method = Method::TempTable {
                            reason: e
                                .as_db_error()
                                .map(|d| d.message().to_string())
                                .unwrap_or_else(|| e.to_string()),
                        };
                        // Every series is timed with one method.
                        times = Default::default();
                        (rounds, slowest) = (0, Duration::ZERO);
                        continue 'rounds;
                    }
                    return Err(e);
                }
            }
        }
        rounds += 1;
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_and_errors_never_show_the_password() {
        let config: Config = "postgres://app:hunter2@db.example:6432/auth"
            .parse()
            .unwrap();
        assert_eq!(describe_target(&config), "app@db.example:6432/auth");
        let config: Config = "host=db user=app password=hunter2".parse().unwrap();
        assert_eq!(describe_target(&config), "app@db:5432/app");
        let options = Options {
            target: Target::Dsn("host=db password=hunter2 port=abc".into()),
            ..Options::default()
        };
        let err = run_blocking(&options).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid connection string: invalid value for option `port`"
        );
    }
}
