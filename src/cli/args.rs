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
    pub base: super::base::BaseArgs,

    #[command(flatten)]
    pub fixes: super::fix::FixArgs,

    /// Show more: skipped files and why (-v).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

#[derive(clap::Args, Debug, Clone)]
pub struct RepoArgs {
    /// The GitOps repository to read (default: the current directory).
    pub path: Option<PathBuf>,

    /// Use the example repo bundled in the binary (the founding incident:
    /// Authentik 2025.10 on Postgres on Ceph RBD).
    #[arg(long, conflicts_with = "path")]
    pub example: bool,
}

#[derive(clap::Args, Debug, Clone)]
pub struct LintArgs {
    /// Output format (`-o`/`--output`, as kubectl spells it, also work).
    #[arg(short = 'o', long, visible_alias = "output", value_enum, default_value_t = ReportFormat::Human)]
    pub format: ReportFormat,

    /// Exit 1 when a finding has at least this severity.
    #[arg(long, value_enum, default_value_t = FailOn::Warning)]
    pub fail_on: FailOn,

    /// More rule files (*.yaml) to load; a rule with a built-in's id replaces it.
    #[arg(long = "rules", value_name = "DIR")]
    pub rule_dirs: Vec<PathBuf>,

    /// Configuration file (default: .homelab-lint.yaml at the repository root).
    #[arg(long, value_name = "FILE")]
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
    pub live: super::live::LiveArgs,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    /// Source snippets with labels, for people.
    Human,
    /// One JSON document (see docs/output.md).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions workflow commands: annotations on the changed files.
    Github,
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
        rule: String,
        /// Also load rules from these directories.
        #[arg(long = "rules", value_name = "DIR")]
        rule_dirs: Vec<PathBuf>,
    },
    /// List rules, or print the rule file JSON Schema.
    Rules {
        #[command(subcommand)]
        command: RulesCommand,
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
    },
    /// The JSON Schema of rule files, for editors.
    Schema,
}

#[derive(clap::Args, Debug)]
pub struct InventoryArgs {
    #[command(flatten)]
    pub repo: RepoArgs,

    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = OutputFormat::Json)]
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
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Json,
    Yaml,
}
