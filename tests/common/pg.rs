//! A throwaway PostgreSQL 15 server for the probe tests, started from
//! `/usr/lib/postgresql/15/bin` as the `postgres` user (Postgres refuses to
//! run as root), optionally with fsync/fdatasync slowed by the LD_PRELOAD
//! shim `tests/support/slow_fsync.c`. Stopped and removed on drop.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

pub const BIN: &str = "/usr/lib/postgresql/15/bin";
/// A login role that must authenticate with a password (scram) over TCP;
/// every other role is trusted.
pub const PW_USER: &str = "pwuser";
pub const PW_PASSWORD: &str = "s3cret-pw";

pub struct PgServer {
    dir: tempfile::TempDir,
    pub port: u16,
    stopped: bool,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// A command run as the postgres user when we are root, else as ourselves.
fn as_postgres(program: &str) -> Command {
    if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--", program]);
        c
    } else {
        Command::new(program)
    }
}

fn check(what: &str, out: std::io::Result<Output>) -> Output {
    let out = out.unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether a throwaway server can be started here; skips loudly (fails
/// under CI) when not.
pub fn available() -> bool {
    let mut missing = Vec::new();
    if !Path::new(BIN).join("pg_ctl").exists() {
        missing.push("PostgreSQL 15 (/usr/lib/postgresql/15/bin; Debian: postgresql-15)");
    }
    if Command::new("cc").arg("--version").output().is_err() {
        missing.push("a C compiler `cc` for the fsync shim (Debian: gcc)");
    }
    let postgres_user = || {
        Command::new("id")
            .arg("postgres")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if is_root() && !postgres_user() {
        missing.push("the postgres user to run Postgres as, since we run as root");
    }
    if !missing.is_empty() {
        super::skip_or_fail(&format!("missing {}", missing.join(", ")));
    }
    missing.is_empty()
}

/// Timing tests run one at a time: two cores, and each starts a server.
static SERIAL: Mutex<()> = Mutex::new(());

/// When a throwaway server can be started here (see [`available`]), the
/// lock that keeps this test from timing beside another one.
pub fn ready() -> Option<MutexGuard<'static, ()>> {
    available().then(|| SERIAL.lock().unwrap_or_else(|e| e.into_inner()))
}

impl PgServer {
    /// Starts a server whose fsync and fdatasync sleep `slow_fsync_us`
    /// microseconds (0: no shim).
    pub fn start(slow_fsync_us: u64) -> PgServer {
        PgServer::start_with(slow_fsync_us, false)
    }

    /// As `start`, with TLS on: a test CA (`ca_file()`) signs a server
    /// certificate for 127.0.0.1 and localhost.
    pub fn start_with(slow_fsync_us: u64, tls: bool) -> PgServer {
        PgServer::start_in(&std::env::temp_dir(), slow_fsync_us, tls)
    }

    /// A server on fast storage: its data directory on tmpfs
    /// (`/dev/shm`), where a flush returns at once. The disk of a test
    /// machine is no reference for "fast": a loaded VM's fsync can take
    /// milliseconds.
    pub fn start_fast() -> PgServer {
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        PgServer::start_in(&base, 0, false)
    }

    fn start_in(base: &Path, slow_fsync_us: u64, tls: bool) -> PgServer {
        PgServer::start_from(base, slow_fsync_us, tls, None)
    }

    /// A hot standby of `primary`, copied with `pg_basebackup -R` (which
    /// writes `standby.signal` and `primary_conninfo`), streaming from it
    /// over TCP; its fsync and fdatasync sleep `slow_fsync_us`. The primary
    /// waits for it once its `synchronous_standby_names` names it.
    pub fn start_standby_of(primary: &PgServer, slow_fsync_us: u64) -> PgServer {
        PgServer::start_from(&std::env::temp_dir(), slow_fsync_us, false, Some(primary))
    }

    fn start_from(
        base: &Path,
        slow_fsync_us: u64,
        tls: bool,
        primary: Option<&PgServer>,
    ) -> PgServer {
        let dir = tempfile::Builder::new()
            .prefix("hl-pg-")
            .tempdir_in(base)
            .unwrap();
        let root = dir.path();
        std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o755)).unwrap();
        if is_root() {
            check(
                "chown",
                Command::new("chown")
                    .args(["postgres:postgres"])
                    .arg(root)
                    .output(),
            );
        }
        let shim = root.join("slow_fsync.so");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/slow_fsync.c");
        check(
            "cc slow_fsync.c",
            Command::new("cc")
                .args(["-shared", "-fPIC", "-O2", "-o"])
                .arg(&shim)
                .arg(&src)
                .arg("-ldl")
                .output(),
        );
        std::fs::set_permissions(&shim, std::fs::Permissions::from_mode(0o755)).unwrap();
        let data = root.join("data");
        match primary {
            Some(p) => {
                check(
                    "pg_basebackup",
                    as_postgres(&format!("{BIN}/pg_basebackup"))
                        .args(["-h", "127.0.0.1", "-p", &p.port.to_string()])
                        .args(["-U", "postgres", "-R", "--no-sync", "-X", "stream", "-D"])
                        .arg(&data)
                        .output(),
                );
            }
            None => {
                check(
                    "initdb",
                    as_postgres(&format!("{BIN}/initdb"))
                        .args([
                            "-A",
                            "trust",
                            "-U",
                            "postgres",
                            "--no-sync",
                            "-E",
                            "UTF8",
                            "-D",
                        ])
                        .arg(&data)
                        .output(),
                );
            }
        }
        // The password role must authenticate over TCP; the rest is
        // trusted, replication (a standby's) included.
        let hba = format!(
            "local all all trust\nlocal replication all trust\n\
             host all {PW_USER} 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n\
             host replication all 127.0.0.1/32 trust\n"
        );
        std::fs::write(data.join("pg_hba.conf"), hba).unwrap();
        if is_root() {
            check(
                "chown pg_hba",
                Command::new("chown")
                    .arg("postgres:postgres")
                    .arg(data.join("pg_hba.conf"))
                    .output(),
            );
        }
        let port = free_port();
        let mut opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections=40",
            root.display()
        );
        if tls {
            make_certs(root);
            opts.push_str(&format!(
                " -c ssl=on -c ssl_cert_file={0}/server.crt -c ssl_key_file={0}/server.key",
                root.display()
            ));
        }
        let mut cmd = as_postgres("env");
        if slow_fsync_us > 0 {
            cmd.arg(format!("LD_PRELOAD={}", shim.display()))
                .arg(format!("SLOW_FSYNC_US={slow_fsync_us}"));
        }
        check(
            "pg_ctl start",
            cmd.arg(format!("{BIN}/pg_ctl"))
                .args(["-w", "-t", "30", "-D"])
                .arg(&data)
                .arg("-l")
                .arg(root.join("server.log"))
                .args(["-o", &opts, "start"])
                .output(),
        );
        let server = PgServer {
            dir,
            port,
            stopped: false,
        };
        // A standby is read-only and has the role from its primary.
        if primary.is_none() {
            server.psql(&format!(
                "CREATE ROLE {PW_USER} LOGIN PASSWORD '{PW_PASSWORD}'"
            ));
        }
        server
    }

    /// The test CA's certificate (PEM), for servers started with TLS.
    pub fn ca_file(&self) -> PathBuf {
        self.dir().join("ca.crt")
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// A primary on fast storage whose every commit waits for one
    /// synchronous standby (`synchronous_standby_names = '*'`), a real
    /// streaming replica whose fsync and fdatasync sleep
    /// `standby_fsync_us`. Returns `(primary, standby)` once the primary
    /// reports the standby as synchronous.
    pub fn sync_pair(standby_fsync_us: u64) -> (PgServer, PgServer) {
        let primary = PgServer::start_fast();
        let standby = PgServer::start_standby_of(&primary, standby_fsync_us);
        primary.psql("ALTER SYSTEM SET synchronous_standby_names = '*'");
        primary.psql("SELECT pg_reload_conf()");
        // Readiness, not timing: the 30 s only bound a hang.
        let streaming = (0..120).any(|_| {
            let state = primary.psql("SELECT string_agg(sync_state, ',') FROM pg_stat_replication");
            state == "sync" || {
                std::thread::sleep(Duration::from_millis(250));
                false
            }
        });
        assert!(
            streaming,
            "the standby never became synchronous:\n{}\n{}",
            primary.log(),
            standby.log()
        );
        (primary, standby)
    }

    /// A `postgres://` URL for the password role ([`PW_USER`]) over TCP.
    pub fn password_url(&self) -> String {
        format!(
            "postgres://{PW_USER}:{PW_PASSWORD}@127.0.0.1:{}/postgres",
            self.port
        )
    }

    /// A DSN (key=value) for `user` over TCP.
    pub fn dsn(&self, user: &str) -> String {
        format!(
            "host=127.0.0.1 port={} user={user} dbname=postgres",
            self.port
        )
    }

    /// Waits until no probe session is left in pg_stat_activity (a backend
    /// leaves it a moment after its client closed; the 10 s only bound a
    /// hang).
    pub fn assert_no_probe_session(&self) {
        use homelab_lint::probe::postgres::APPLICATION_NAME;
        let sql = format!(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = '{APPLICATION_NAME}'"
        );
        let start = std::time::Instant::now();
        loop {
            let n = self.psql(&sql);
            if n == "0" {
                return;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(10),
                "{n} probe sessions still in pg_stat_activity: {}",
                self.psql(&format!(
                    "SELECT pid, state, xact_start IS NOT NULL FROM pg_stat_activity \
                     WHERE application_name = '{APPLICATION_NAME}'"
                ))
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Runs SQL as the superuser through the Unix socket; returns stdout
    /// (unaligned, tuples only). Panics on failure.
    pub fn psql(&self, sql: &str) -> String {
        let out = check(
            &format!("psql {sql}"),
            self.psql_cmd().args(["-c", sql]).output(),
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn psql_cmd(&self) -> Command {
        let mut c = as_postgres(&format!("{BIN}/psql"));
        c.arg("-h")
            .arg(self.dir())
            .args([
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                "postgres",
            ])
            .args(["-X", "-A", "-t", "-v", "ON_ERROR_STOP=1"]);
        c
    }

    /// Runs pgbench with a custom script for `transactions` transactions
    /// on one client; returns the reported average latency in ms.
    pub fn pgbench(&self, script: &str, transactions: u32, pgoptions: Option<&str>) -> f64 {
        let file = self.dir().join(format!("bench-{}.sql", free_port()));
        std::fs::write(&file, script).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut cmd = as_postgres("env");
        if let Some(o) = pgoptions {
            cmd.arg(format!("PGOPTIONS={o}"));
        }
        let out = check(
            "pgbench",
            cmd.arg(format!("{BIN}/pgbench"))
                .arg("-h")
                .arg(self.dir())
                .args(["-p", &self.port.to_string(), "-U", "postgres", "-n", "-f"])
                .arg(&file)
                .args(["-t", &transactions.to_string(), "postgres"])
                .output(),
        );
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .find_map(|l| {
                l.strip_prefix("latency average = ")
                    .and_then(|r| r.trim_end_matches(" ms").trim().parse::<f64>().ok())
            })
            .unwrap_or_else(|| panic!("no latency in pgbench output:\n{text}"))
    }

    /// The server's log so far (for assertion messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir().join("server.log")).unwrap_or_default()
    }

    /// Restarts the server with the options it was started with
    /// (postmaster.opts), for settings such as `wal_level` that need a
    /// restart. Without the slow-fsync shim, which is an environment
    /// variable of the first start only.
    pub fn restart(&self) {
        check(
            "pg_ctl restart",
            as_postgres(&format!("{BIN}/pg_ctl"))
                .args(["-w", "-t", "30", "-m", "fast", "-D"])
                .arg(self.data_dir())
                .arg("-l")
                .arg(self.dir().join("server.log"))
                .arg("restart")
                .output(),
        );
    }

    /// Stops the server now (fast shutdown); drop does it otherwise.
    pub fn stop(&mut self) {
        if !self.stopped {
            let _ = as_postgres(&format!("{BIN}/pg_ctl"))
                .args(["-w", "-m", "immediate", "-D"])
                .arg(self.dir().join("data"))
                .arg("stop")
                .output();
            self.stopped = true;
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir().join("data")
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A test CA and a server certificate it signs (127.0.0.1, localhost),
/// with the key readable by the postgres user only.
pub fn make_certs(root: &Path) {
    let openssl = |args: &[&str]| {
        check(
            &format!("openssl {args:?}"),
            Command::new("openssl")
                .current_dir(root)
                .args(args)
                .output(),
        )
    };
    openssl(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=homelab-lint test CA",
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
    ]);
    openssl(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
    ]);
    std::fs::write(
        root.join("server.ext"),
        "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.crt",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "server.ext",
        "-out",
        "server.crt",
    ]);
    for f in ["server.crt", "ca.crt"] {
        std::fs::set_permissions(root.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    std::fs::set_permissions(
        root.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    if is_root() {
        check(
            "chown server.key",
            Command::new("chown")
                .arg("postgres:postgres")
                .arg(root.join("server.key"))
                .arg(root.join("server.crt"))
                .output(),
        );
    }
}
