//! `probe postgres|http`: one live probe alone, printed as a before/after
//! table (or JSON). Connection strings and tokens are never printed.

use std::time::Duration;

use clap::Subcommand;

use super::args::DataFormat;
use crate::probe::{self, postgres};

#[derive(Subcommand, Debug)]
pub enum ProbeCommand {
    /// Time commits with the server's synchronous_commit and with it off,
    /// in one session that writes no table.
    Postgres(PostgresArgs),
    /// Time N sequential and N parallel GETs of a URL (Authentik:
    /// /api/v3/core/applications/) with a bearer token.
    Http(HttpArgs),
}

#[derive(clap::Args, Debug)]
pub struct HttpArgs {
    /// The URL to GET, e.g. https://auth.example.com/api/v3/core/applications/
    #[arg(long, required_unless_present = "service", conflicts_with = "service")]
    pub url: Option<String>,

    /// Reach the app through the Kubernetes API instead: a local port
    /// forwarded to a running pod of this Service (NAMESPACE/NAME).
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub service: Option<String>,

    /// With --service: the Service port (default: its first).
    #[arg(long, value_name = "PORT", requires = "service")]
    pub service_port: Option<u16>,

    /// With --service: the path to GET.
    #[arg(
        long,
        default_value = "/api/v3/core/applications/",
        requires = "service"
    )]
    pub path: String,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    /// Bearer token (never printed).
    #[arg(long, env = "HOMELAB_LINT_PROBE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Requests per series (sequential, then parallel).
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub requests: usize,

    /// Skip TLS certificate verification (self-signed test setups).
    #[arg(long)]
    pub insecure: bool,

    /// Wall-clock limit of the whole probe (e.g. 60s).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = probe::parse_duration)]
    pub budget: Duration,

    /// Output format: a table, or JSON or YAML.
    #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = DataFormat::Text)]
    pub format: DataFormat,
}

/// How `--database` and `--service` reach the cluster.
#[derive(clap::Args, Debug)]
pub struct ClusterArgs {
    /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<std::path::PathBuf>,

    /// Kubeconfig context.
    #[arg(long, value_name = "NAME")]
    pub context: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct PostgresArgs {
    /// libpq connection string or postgres:// URL (never printed); the
    /// same variable as the lint's --probe-dsn (HOMELAB_LINT_PG_DSN, the
    /// old name, is still read).
    #[arg(long, env = "HOMELAB_LINT_PROBE_DSN", hide_env_values = true)]
    pub dsn: Option<String>,

    /// Probe an operator's Postgres cluster (NAMESPACE/NAME: Zalando,
    /// CloudNativePG, Crunchy PGO) through the Kubernetes API: its primary
    /// pod by port-forward, with the operator's credentials Secret.
    #[arg(long, value_name = "NAMESPACE/NAME", conflicts_with = "dsn")]
    pub database: Option<String>,

    #[command(flatten)]
    pub cluster: ClusterArgs,

    /// Transactions per series.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub samples: usize,

    /// Connections timed before the commit probe.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub connect_tries: usize,

    /// Wall-clock limit of the whole probe (e.g. 2s, 500ms).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = probe::parse_duration)]
    pub budget: Duration,

    /// PEM file of the CA that signed the server's certificate (TLS is
    /// used as the DSN's sslmode says: disable, prefer (default), require).
    #[arg(long, value_name = "FILE")]
    pub ca: Option<std::path::PathBuf>,

    /// Do not verify the server's TLS certificate.
    #[arg(long)]
    pub insecure: bool,

    /// Output format: a table, or JSON or YAML.
    #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = DataFormat::Text)]
    pub format: DataFormat,
}

/// Runs the probe; the text to print, or an error for stderr.
pub fn run(command: &ProbeCommand) -> Result<String, String> {
    match command {
        ProbeCommand::Postgres(args) => {
            if args.samples == 0 || args.samples > 10_000 {
                return Err("--samples: give 1 to 10000".into());
            }
            let options = |target| postgres::Options {
                target,
                samples: args.samples,
                connect_tries: args.connect_tries.clamp(1, 100),
                budget: args.budget,
                ca_file: args.ca.clone(),
                insecure: args.insecure,
            };
            // The variable's old name, read when no other DSN is given.
            let dsn = args
                .dsn
                .clone()
                .or_else(|| std::env::var("HOMELAB_LINT_PG_DSN").ok())
                .filter(|d| !d.is_empty());
            let report = match (&args.database, &dsn) {
                (Some(database), _) => {
                    let (namespace, name) = namespaced("--database", database)?;
                    in_cluster(&args.cluster, namespace, async |client, timeout| {
                        let route = tokio::time::timeout(timeout, async {
                            let object =
                                crate::probe::tunnel::cluster_object(&client, namespace, name)
                                    .await?;
                            let cluster = crate::probe::tunnel::Cluster::of(&object)?;
                            crate::probe::tunnel::resolve(&client, &cluster).await
                        })
                        .await
                        .map_err(|_| no_answer(timeout))?
                        .map_err(|e| e.to_string())?;
                        postgres::run(&options(postgres::Target::Pod(Box::new(route))))
                            .await
                            .map_err(|e| e.to_string())
                    })?
                }
                (None, Some(dsn)) => {
                    postgres::run_blocking(&options(postgres::Target::Dsn(dsn.clone())))
                        .map_err(|e| e.to_string())?
                }
                (None, None) => {
                    return Err(
                        "give --dsn (or HOMELAB_LINT_PROBE_DSN) or --database NAMESPACE/NAME"
                            .into(),
                    );
                }
            };
            super::render_data(args.format, &report, crate::report::probe::postgres_table)
        }
        ProbeCommand::Http(args) => {
            if args.requests == 0 || args.requests > 1000 {
                return Err("--requests: give 1 to 1000".into());
            }
            let options = crate::probe::http::Options {
                url: args.url.clone().unwrap_or_default(),
                // The variable's old name, read when no other token is given.
                token: args
                    .token
                    .clone()
                    .or_else(|| std::env::var("HOMELAB_LINT_TOKEN").ok())
                    .filter(|t| !t.is_empty()),
                requests: args.requests,
                insecure: args.insecure,
                budget: args.budget,
            };
            let report = match &args.service {
                None => crate::probe::http::run_blocking(&options).map_err(|e| e.to_string())?,
                Some(service) => through_service(args, service, options)?,
            };
            super::render_data(args.format, &report, crate::report::probe::http_table)
        }
    }
}

/// `NAMESPACE/NAME` of a flag.
fn namespaced<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), String> {
    text.split_once('/')
        .filter(|(ns, n)| !ns.is_empty() && !n.is_empty() && !n.contains('/'))
        .ok_or_else(|| format!("{flag} {text:?}: give NAMESPACE/NAME"))
}

fn no_answer(timeout: Duration) -> String {
    format!("the cluster did not answer within {} s", timeout.as_secs())
}

/// Runs `work` with a client of the cluster, on a runtime of its own (the
/// client's connections live on it), with the time the cluster has to
/// answer each step.
fn in_cluster<T>(
    args: &ClusterArgs,
    namespace: &str,
    work: impl AsyncFnOnce(kube::Client, Duration) -> Result<T, String>,
) -> Result<T, String> {
    let options = crate::source::cluster::Options {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.clone(),
        namespace: Some(namespace.to_string()),
        timeout: Duration::from_secs(10),
        verbose: 0,
        progress: false,
        chunk_size: 500,
        kinds: Vec::new(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let (client, _, _) = crate::source::cluster::client(&options)
            .await
            .map_err(|e| e.to_string())?;
        work(client, options.timeout).await
    })
}

/// The HTTP probe through a local listener that forwards each connection
/// to a pod of `service` over the Kubernetes API.
fn through_service(
    args: &HttpArgs,
    service: &str,
    mut options: crate::probe::http::Options,
) -> Result<crate::probe::http::Report, String> {
    let (namespace, name) = namespaced("--service", service)?;
    in_cluster(&args.cluster, namespace, async |client, timeout| {
        let (pods, pod, port) = tokio::time::timeout(
            timeout,
            crate::probe::tunnel::service_pod(&client, namespace, name, args.service_port),
        )
        .await
        .map_err(|_| no_answer(timeout))?
        .map_err(|e| e.to_string())?;
        let listener = crate::probe::tunnel::Listener::start(pods, pod.clone(), port)
            .await
            .map_err(|e| e.to_string())?;
        options.url = format!("http://{}{}", listener.addr, args.path);
        let mut report = crate::probe::http::run(&options)
            .await
            .map_err(|e| e.to_string())?;
        report.target = format!(
            "{}{} (port-forward to pod {namespace}/{pod}:{port} of Service {name})",
            service, args.path
        );
        Ok(report)
    })
}
