//! The command line definition. Flags follow kubectl's conventions where
//! they overlap, since users reach the tool as `kubectl homelab-lint`.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "kubectl-homelab_lint",
    bin_name = "kubectl homelab-lint",
    version,
    about = "Flux-aware configuration linter for self-hosted Kubernetes",
    long_about = "Reads a Flux GitOps repository (Flux Kustomizations, kustomize overlays, \
                  HelmReleases and their values, postBuild variables) and flags risky \
                  combinations of settings across objects."
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    #[command(flatten)]
    pub repo: RepoArgs,

    #[command(flatten)]
    pub lint: LintArgs,

    #[command(flatten)]
    pub base: BaseArgs,

    #[command(flatten)]
    pub fixes: FixArgs,

    #[command(flatten)]
    pub selection: super::selection::SelectionArgs,

    /// When to colour human output.
    #[arg(
        long,
        value_enum,
        default_value_t,
        global = true,
        env = "HOMELAB_LINT_COLOR"
    )]
    pub color: ColorChoice,

    /// Show more: skipped files and why (-v); -vv or -v=2 and more: each
    /// API call (kubectl's -v=N is read as N times -v).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

#[derive(clap::Args, Debug, Clone)]
pub struct RepoArgs {
    /// Folders or files to report on (default: the current directory).
    /// The whole repository that holds them is read: its git top level,
    /// or without git the nearest folder above from which the Flux
    /// Kustomizations' paths resolve; a finding is shown when one of its
    /// places is under a path given. With --pre-commit, files are the
    /// ones pre-commit passes.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,

    /// Use the example repo bundled in the binary (the founding incident:
    /// Authentik 2025.10 on Postgres on Ceph RBD).
    #[arg(long, conflicts_with_all = ["paths", "staged", "reference"])]
    pub example: bool,

    /// Read the index (what the next commit holds) from git's object
    /// store instead of the working tree.
    #[arg(long, conflicts_with = "reference")]
    pub staged: bool,

    /// Read this commit's tree (a commit, branch or tag) from git's
    /// object store instead of the working tree.
    #[arg(long = "ref", value_name = "GIT_REF")]
    pub reference: Option<String>,

    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Remote kustomize entries: fetched only when the user asks.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct RemoteArgs {
    /// Fetch remote kustomize resources and components (https URLs of
    /// manifests, git repositories such as
    /// github.com/org/repo/folder?ref=v1) as Flux would, over https and
    /// without credentials, through a cache.
    /// Without it, each is reported as not fetched.
    #[arg(long, env = "HOMELAB_LINT_REMOTE")]
    pub remote: bool,

    /// Where --remote keeps what it fetched (default:
    /// $XDG_CACHE_HOME/homelab-lint, else ~/.cache/homelab-lint).
    #[arg(long, value_name = "DIR", env = "HOMELAB_LINT_REMOTE_CACHE")]
    pub remote_cache: Option<PathBuf>,

    /// Remote entries one run may fetch or take from the cache.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub remote_max_fetches: usize,

    /// Bytes all remote entries of a run may hold together.
    #[arg(long, value_name = "BYTES", default_value_t = 64 << 20)]
    pub remote_max_bytes: u64,

    /// Wall-clock time all fetches of a run may take.
    #[arg(long, value_name = "DURATION", default_value = "2m", value_parser = crate::probe::parse_duration)]
    pub remote_budget: std::time::Duration,
}

#[derive(clap::Args, Debug, Clone)]
pub struct LintArgs {
    /// Output format.
    #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = ReportFormat::Human, env = "HOMELAB_LINT_OUTPUT")]
    pub format: ReportFormat,

    /// Exit 1 when a finding has at least this severity.
    #[arg(long, value_enum, default_value_t = FailOn::Warning, env = "HOMELAB_LINT_FAIL_ON")]
    pub fail_on: FailOn,

    /// More rule files (*.yaml) to load; a rule with a built-in's id replaces it.
    #[arg(long = "rules", value_name = "DIR")]
    pub rule_dirs: Vec<PathBuf>,

    /// Configuration file (default: .homelab-lint.yaml in the linted
    /// directory, else at the top of its git repository).
    #[arg(long, value_name = "FILE", env = "HOMELAB_LINT_CONFIG")]
    pub config: Option<PathBuf>,

    /// Also write Prometheus metrics (text exposition) to this file, for
    /// node_exporter's textfile collector.
    #[arg(long, value_name = "FILE")]
    pub metrics_file: Option<PathBuf>,

    /// Also push the metrics to this Prometheus Pushgateway (its base URL,
    /// e.g. http://pushgateway.monitoring:9091), replacing the group
    /// job="homelab-lint"; for a CronJob, whose pod no one scrapes.
    #[arg(long, value_name = "URL")]
    pub pushgateway: Option<String>,

    #[command(flatten)]
    pub live: LiveArgs,
}

/// Cluster state on the command line: `--snapshot`, and the live cluster
/// flags kubectl users know (`--kubeconfig`, `--context`, `-n`, `-A`).
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

    /// Items per list call, as kubectl's --chunk-size (0: no chunking).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 500,
        env = "HOMELAB_LINT_CHUNK_SIZE"
    )]
    pub chunk_size: usize,

    /// Give up on the cluster after this long (10s, 1m; a bare number is seconds).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = crate::probe::parse_duration, env = "HOMELAB_LINT_REQUEST_TIMEOUT")]
    pub request_timeout: std::time::Duration,

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
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = crate::probe::parse_duration, env = "HOMELAB_LINT_PROBE_BUDGET")]
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
}

/// `--base <git ref>`: only findings new against a commit.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BaseArgs {
    /// Report only findings that are new against this git commit, branch
    /// or tag (e.g. origin/main), and find version bumps since it that
    /// cross a known breaking release. The commit compared with is the
    /// merge-base of it and the commit under test (HEAD, or --ref), as
    /// `git diff REV...HEAD`. Needs `git` on PATH.
    #[arg(long, value_name = "GIT_REF", conflicts_with_all = ["example", "from_ref"])]
    pub base: Option<String>,

    /// Compare two commits: lint --to-ref's tree, reporting what is new
    /// against its merge-base with this one (pre-commit's
    /// PRE_COMMIT_FROM_REF under --pre-commit).
    #[arg(long, value_name = "GIT_REF", requires = "to_ref", conflicts_with_all = ["example", "reference", "staged"])]
    pub from_ref: Option<String>,

    /// The commit whose tree --from-ref compares.
    #[arg(long, value_name = "GIT_REF", requires = "from_ref")]
    pub to_ref: Option<String>,

    /// Run as a pre-commit hook: in a commit, the index against HEAD; for
    /// `pre-commit run --all-files` (pre-commit.ci), a plain lint of the
    /// working tree; for --from-ref/--to-ref (PRE_COMMIT_FROM_REF and
    /// PRE_COMMIT_TO_REF), that range. The files pre-commit passes only
    /// tell a commit from --all-files.
    #[arg(long, conflicts_with_all = ["example", "reference", "staged", "base", "from_ref"])]
    pub pre_commit: bool,

    /// With --base, report every finding, not only new ones; version bumps
    /// are still found. For SARIF uploads: code scanning compares with the
    /// base branch's analysis itself, and would take a missing finding as
    /// fixed.
    #[arg(long)]
    pub all_findings: bool,
}

/// `--fix`, `--unsafe-fixes` and `--diff`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct FixArgs {
    /// Apply safe fixes to the repository's files (atomically) and report
    /// what changed; the findings shown are those left afterwards.
    #[arg(long)]
    pub fix: bool,

    /// With --fix or --diff, include unsafe fixes (they change behaviour;
    /// each says what it trades).
    #[arg(long)]
    pub unsafe_fixes: bool,

    /// Print the fixes as unified diffs instead of the report; writes nothing.
    #[arg(long, conflicts_with = "fix")]
    pub diff: bool,
}

/// `--output` of a lint report ([`crate::report::Format`]).
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReportFormat {
    /// Source snippets with labels, for people.
    #[default]
    Human,
    /// One JSON document (see docs/output.md).
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// One line per finding: `path:line:col: severity rule: message`.
    Concise,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions workflow commands: annotations on the changed files.
    Github,
    /// A Markdown summary for a pull request comment or
    /// $GITHUB_STEP_SUMMARY, each finding's chain drawn in Mermaid.
    Markdown,
}

impl From<ReportFormat> for crate::report::Format {
    fn from(format: ReportFormat) -> Self {
        use crate::report::Format;
        match format {
            ReportFormat::Human => Format::Human,
            ReportFormat::Json => Format::Json,
            ReportFormat::Yaml => Format::Yaml,
            ReportFormat::Concise => Format::Concise,
            ReportFormat::Sarif => Format::Sarif,
            ReportFormat::Github => Format::Github,
            ReportFormat::Markdown => Format::Markdown,
        }
    }
}

/// `--color`: when human output is coloured ([`crate::report::human::Color`]).
#[derive(ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    /// On a terminal, unless NO_COLOR is set; FORCE_COLOR turns it on
    /// anywhere (https://no-color.org, https://force-color.org).
    #[default]
    Auto,
    Always,
    Never,
}

impl From<ColorChoice> for crate::report::human::Color {
    fn from(choice: ColorChoice) -> Self {
        use crate::report::human::Color;
        match choice {
            ColorChoice::Auto => Color::Auto,
            ColorChoice::Always => Color::Always,
            ColorChoice::Never => Color::Never,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailOn {
    Info,
    Warning,
    Error,
    /// Never fail on findings.
    Never,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print the rendered objects with where every value was written.
    Inventory(InventoryArgs),
    /// Show a rule's documentation.
    Explain {
        /// Rule id.
        #[arg(value_name = super::complete::RULE)]
        rule: String,
        /// Also load rules from these directories.
        #[arg(long = "rules", value_name = "DIR")]
        rule_dirs: Vec<PathBuf>,
        /// Output format: the Markdown page, or its parts as data.
        #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = DataFormat::Text)]
        format: DataFormat,
    },
    /// Print the version.
    Version {
        /// Output format.
        #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = DataFormat::Text)]
        format: DataFormat,
    },
    /// List rules, or print the rule file JSON Schema.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
    },
    /// Print a JSON Schema for editors (`schema config`: .homelab-lint.yaml).
    Schema {
        #[command(subcommand)]
        command: super::schema::SchemaCommand,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(super::generate::CompletionsArgs),
    /// Print the man page (roff), generated from this command line definition.
    Man,
    /// Run one live probe alone (postgres: commit latency with and without
    /// a WAL flush wait; http: API latency) and print a table.
    Probe {
        #[command(subcommand)]
        command: super::probe::ProbeCommand,
    },
    /// Run the language server (LSP over stdin and stdout) for editors:
    /// findings as you type, where values come from, fixes as code
    /// actions. Offline: no cluster, no probe.
    Server,
    /// Completion candidates for kubectl's plugin completion (cobra's
    /// `__complete` protocol); called by `kubectl_complete-homelab_lint`.
    #[command(name = "__complete", hide = true)]
    Complete {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        words: Vec<String>,
    },
}

#[derive(Subcommand, Debug)]
pub enum RulesCommand {
    /// One line per rule: id, severity, title.
    List {
        #[arg(long = "rules", value_name = "DIR")]
        rule_dirs: Vec<PathBuf>,
        /// Output format.
        #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = DataFormat::Text)]
        format: DataFormat,
    },
    /// The JSON Schema of rule files, for editors.
    Schema {
        /// Output format.
        #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = OutputFormat::Json)]
        format: OutputFormat,
    },
}

#[derive(clap::Args, Debug)]
pub struct InventoryArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    /// Output format.
    #[arg(short = 'o', long = "output", visible_alias = "format", value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,

    /// Add, per object, the file:line:column of every value.
    #[arg(long)]
    pub provenance: bool,

    /// Only objects of this kind.
    #[arg(long)]
    pub kind: Option<String>,

    /// Only objects with this name.
    #[arg(long)]
    pub name: Option<String>,

    /// Draw the repository instead: every app and Postgres database (app →
    /// database (synchronous_commit) → storage class), grouped by
    /// namespace, the edges a finding rests on marked with its rule:
    /// Mermaid or Graphviz DOT.
    #[arg(long, value_enum, value_name = "LANGUAGE", conflicts_with_all = ["provenance", "kind", "name"])]
    pub graph: Option<GraphLanguage>,
}

/// `inventory --graph`: the language the graph is written in.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphLanguage {
    Mermaid,
    Dot,
}

impl From<GraphLanguage> for crate::report::graph::Language {
    fn from(language: GraphLanguage) -> Self {
        use crate::report::graph::Language;
        match language {
            GraphLanguage::Mermaid => Language::Mermaid,
            GraphLanguage::Dot => Language::Dot,
        }
    }
}

/// Data only: JSON or YAML.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Json,
    Yaml,
}

/// Text for people (a table, a page), or the same as data.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataFormat {
    /// For people: a table or a page.
    #[value(alias = "table", alias = "human")]
    Text,
    Json,
    Yaml,
}
