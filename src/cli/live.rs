//! Cluster state on the command line: `--snapshot`, and the live cluster
//! flags kubectl users know (`--kubeconfig`, `--context`, `-n`, `-A`).
//! Kept apart from the repo flags so the two evolve independently.

use std::path::PathBuf;

use crate::source::{Object, link, live, snapshot};
use crate::yaml::{Limits, SourceMap};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct LiveArgs {
    /// Lint cluster state saved with `kubectl get … -o yaml|json` (a file,
    /// or a directory of them; List objects are unwrapped), alone or with
    /// a repository PATH.
    #[arg(long, value_name = "FILE|DIR")]
    pub snapshot: Option<PathBuf>,

    /// Read the live cluster of the current kubeconfig context, alone or
    /// with a repository PATH.
    #[arg(long)]
    pub live: bool,

    /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config); implies --live.
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use; implies --live. Repeat it to lint
    /// several clusters in parallel, one report per context.
    #[arg(long = "context", value_name = "NAME")]
    pub context: Vec<String>,

    /// Read only this namespace of the cluster (cluster-scoped kinds are
    /// read too).
    #[arg(
        short = 'n',
        long,
        value_name = "NAMESPACE",
        conflicts_with = "all_namespaces"
    )]
    pub namespace: Option<String>,

    /// Read every namespace (the default for a lint).
    #[arg(short = 'A', long)]
    pub all_namespaces: bool,

    /// Items per list call, as kubectl's --chunk-size (0 is read as 1).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub chunk_size: usize,

    /// Give up on the cluster after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 10)]
    pub request_timeout: u64,

    /// Measure the findings that name a Postgres probe on this server
    /// (libpq string or postgres:// URL; never printed). The environment
    /// variable keeps its password off the command line.
    #[arg(
        long,
        value_name = "DSN",
        env = "HOMELAB_LINT_PROBE_DSN",
        hide_env_values = true
    )]
    pub probe_dsn: Option<String>,

    /// Wall-clock limit of the probe run by --probe-dsn.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = crate::probe::parse_duration)]
    pub probe_budget: std::time::Duration,

    /// PEM file of the CA of the Postgres probed by --probe-dsn.
    #[arg(long, value_name = "FILE")]
    pub probe_ca: Option<PathBuf>,

    /// Do not verify the TLS certificate of the Postgres probed by --probe-dsn.
    #[arg(long)]
    pub probe_insecure: bool,

    /// Run no probe: findings that name one say it was skipped. Without
    /// it, --live probes each finding's database pod through a
    /// port-forward (reading the operator's credentials Secret).
    #[arg(long)]
    pub no_probe: bool,
}

impl LiveArgs {
    /// Whether the live cluster is to be read.
    pub fn live_wanted(&self) -> bool {
        self.live || self.kubeconfig.is_some() || !self.context.is_empty()
    }

    /// Whether any cluster state (live or snapshot) is to be read.
    pub fn wanted(&self) -> bool {
        self.snapshot.is_some() || self.live_wanted()
    }
}

/// Cluster state read for a run: objects plus warnings for stderr.
#[derive(Default)]
pub struct State {
    pub objects: Vec<Object>,
    pub warnings: Vec<String>,
    /// One line for stderr: what was read.
    pub summary: String,
}

/// Reads the snapshot and/or the live cluster, registering what was read
/// in `sources`.
pub fn collect(args: &LiveArgs, sources: &mut SourceMap, verbose: u8) -> Result<State, String> {
    let mut state = State::default();
    if let Some(path) = &args.snapshot {
        let snap = snapshot::load(path, sources, &Limits::default())?;
        state
            .warnings
            .extend(snap.issues.iter().map(|i| i.to_string()));
        state.summary = format!(
            "snapshot: {} objects from {} files",
            snap.objects.len(),
            snap.files
        );
        state.objects.extend(snap.objects);
    }
    if args.live_wanted() {
        let read = crate::source::cluster::read(&cluster_options(args, verbose), sources)
            .map_err(|e| e.to_string())?;
        state.warnings.extend(read.warnings);
        state.summary = read.summary;
        state.objects.extend(read.objects);
    }
    if let Some(ns) = &args.namespace {
        state
            .objects
            .retain(|o| o.namespace().is_none_or(|n| n == ns));
    }
    state.objects = live::lintable(std::mem::take(&mut state.objects));
    Ok(state)
}

pub fn cluster_options(args: &LiveArgs, verbose: u8) -> crate::source::cluster::Options {
    crate::source::cluster::Options {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.first().cloned(),
        namespace: args.namespace.clone(),
        timeout: std::time::Duration::from_secs(args.request_timeout.max(1)),
        verbose,
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        chunk_size: args.chunk_size,
    }
}

/// Adds live objects to the repo's: see [`link::merge`].
pub fn merge_into(repo_objects: &mut Vec<Object>, state: State) {
    let total = state.objects.len();
    let merged = link::merge(repo_objects, state.objects);
    eprintln!(
        "linked {} of {} live objects to their declarations in the repository",
        merged.linked, total
    );
}
