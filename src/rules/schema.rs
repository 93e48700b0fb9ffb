//! The rule file format. Built-in rules and user rules use this one
//! schema; its doc comments are the field documentation printed by
//! `rules schema` (JSON Schema) and shown in `docs/rules.md`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::steps::SessionSpec;

/// One rule: metadata that doubles as its documentation, and the steps
/// that find risky combinations across objects.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    /// Stable identifier, kebab-case, naming the bad pattern
    /// (`authentik-cache-on-sync-replicated-postgres`).
    pub id: String,
    /// Ids the rule had before it was renamed. Each still works wherever
    /// an id is accepted (rule selection, the configuration file,
    /// suppressions, `explain`), with a warning that names `id`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub former_ids: Vec<String>,
    /// One-line title, in sentence case.
    pub title: String,
    pub severity: Severity,
    pub category: Category,
    /// The diagnostic, one line, lower-case start and no trailing period
    /// (rustc style). `{binding.field}` placeholders are filled from the
    /// steps: `{app.version}`, `{database.name}`, `{setting.value}`,
    /// `{storage.class}`, `{env.name}`, `{env.value}`, `{object.name}`.
    pub message: String,
    /// What the rule finds.
    pub what: String,
    /// Why it hurts.
    pub why: String,
    /// A configuration that the rule flags (YAML).
    pub example: String,
    /// The same configuration, fixed (YAML).
    pub use_instead: String,
    /// What to do, as one or more sentences ending with a period.
    pub remediation: String,
    /// Links to the upstream facts the rule relies on.
    pub references: Vec<String>,
    /// Steps evaluated in order; the rule fires once per combination of
    /// objects for which every step holds.
    #[serde(rename = "match")]
    pub steps: Vec<super::steps::Spec>,
    /// The binding the diagnostic points at (default: the first step's).
    #[serde(default)]
    pub primary: Option<String>,
    /// How to fix a finding: a built-in fix template with its parameters,
    /// applied where the bound values are written.
    #[serde(default)]
    pub fix: Option<FixSpec>,
    /// The live measurement that confirms or refutes a finding, with the
    /// thresholds it is judged by. Runs only against a target the user
    /// pointed at (`--probe-dsn`, or the live cluster with `--live`).
    #[serde(default)]
    pub probe: Option<ProbeSpec>,
    /// Rules whose findings this one's replace: a finding of a listed
    /// rule whose every labelled place is also one of this finding's is
    /// the same hazard said twice (a static finding and the upgrade that
    /// brings it in), and only this finding is reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subsumes: Vec<String>,
    /// How often a finding of the rule is right (GitHub code scanning
    /// sorts alerts by it); default `high`.
    #[serde(default)]
    pub precision: Precision,
    /// Shipped with the tool (its page is `docs/rules/<id>.md` of the
    /// repository); false for a user's rule.
    #[serde(skip)]
    pub builtin: bool,
}

/// The `precision` GitHub code scanning reads from a SARIF rule's
/// properties (docs.github.com, "SARIF support for code scanning",
/// reportingDescriptor object).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Precision {
    VeryHigh,
    #[default]
    High,
    Medium,
    Low,
}

impl Precision {
    pub fn as_str(self) -> &'static str {
        match self {
            Precision::VeryHigh => "very-high",
            Precision::High => "high",
            Precision::Medium => "medium",
            Precision::Low => "low",
        }
    }
}

/// A rule's probe: exactly one kind, with its thresholds.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ProbeSpec {
    /// The commit probe: commit latency with the server's
    /// synchronous_commit, with `SET LOCAL synchronous_commit = local`
    /// and with `= off`. Confirmed when the p50 commit, counting the flush
    /// wait of `cause` only, waits at least `minP50Ms` and at least
    /// `minRatio` times longer than without the flush wait, and (when
    /// `cause` names a part) that part is the larger of the two.
    PostgresCommit {
        #[serde(default = "default_min_p50_ms")]
        min_p50_ms: f64,
        #[serde(default = "default_min_ratio")]
        min_ratio: f64,
        /// Which part of the flush wait the finding blames.
        #[serde(default)]
        cause: CommitWait,
    },
    /// The connection probe: the server's TCP keepalive settings.
    /// Confirmed when the server sends no keepalive within `maxIdleSeconds`
    /// of silence (tcp_keepalives_idle 0 means the kernel default, 7200 s),
    /// so nothing keeps a firewall's state of an idle connection alive.
    PostgresKeepalive {
        #[serde(default = "default_max_idle_seconds")]
        max_idle_seconds: u64,
    },
}

/// A part of a commit's flush wait, as the commit probe splits it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommitWait {
    /// The whole wait: the effective setting against off.
    #[default]
    Any,
    /// The wait for synchronous standbys: the effective setting against
    /// local.
    StandbyWait,
    /// The wait for the local WAL flush (the storage): local against off.
    LocalFlush,
}

impl CommitWait {
    pub fn as_str(self) -> &'static str {
        match self {
            CommitWait::Any => "the flush wait",
            CommitWait::StandbyWait => "the standby wait",
            CommitWait::LocalFlush => "the local flush",
        }
    }
}

fn default_min_p50_ms() -> f64 {
    2.0
}

fn default_min_ratio() -> f64 {
    3.0
}

/// Shorter than the idle timeouts of common stateful firewalls and NAT
/// (often 5 to 60 minutes).
fn default_max_idle_seconds() -> u64 {
    300
}

/// A rule's fix: exactly one template (`setPostgresParameter` or
/// `setAppEnv`) and how safe it is.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FixSpec {
    /// `safe` (applied by `--fix`), `unsafe` (needs `--unsafe-fixes`) or
    /// `display-only` (shown as advice).
    pub applicability: super::fixes::Applicability,
    /// What the fix does, lower-case, with the message's `{binding.field}`
    /// placeholders.
    pub title: String,
    /// What applying the fix changes or can lose, as a sentence.
    pub safety: String,
    /// Set a Postgres parameter of the bound database where its provider
    /// reads parameters (operator CR, Bitnami values, container args).
    #[serde(default)]
    pub set_postgres_parameter: Option<SetParameterFix>,
    /// Set environment variables of the bound app next to the bound
    /// variable that triggered the finding, in the same form (env list,
    /// env map, chart values, ConfigMap).
    #[serde(default)]
    pub set_app_env: Vec<EnvFix>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SetParameterFix {
    pub name: String,
    pub value: String,
    /// Variables of the bound app that name its database and role
    /// (`AUTHENTIK_POSTGRESQL__NAME`, `AUTHENTIK_POSTGRESQL__USER`): with
    /// them, the fix also offers the per-database and per-role setting
    /// as a narrower, display-only alternative.
    #[serde(default)]
    pub per_database: Option<SessionSpec>,
}

/// One variable to set: `value`, or `base64Json` keys merged into the
/// variable's base64 JSON object (Authentik's `CONN_OPTIONS`), keeping
/// the keys it already has.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvFix {
    pub name: String,
    #[serde(default)]
    pub value: Option<String>,
    #[serde(default)]
    pub base64_json: Option<serde_json::Map<String, serde_json::Value>>,
    /// The first release of the app that reads the variable (`2025.8`):
    /// for an app pinned before it, or whose version text allows releases
    /// on both sides of it, the fix is display-only and says why.
    #[serde(default)]
    pub since: Option<String>,
    /// The release that deprecates the variable and why: the fix writes
    /// it only for an app whose every allowed release is older, and
    /// otherwise leaves it out with a note giving the reason (a setting
    /// announced for removal is not worth adding).
    #[serde(default)]
    pub deprecated: Option<Deprecation>,
}

/// When a variable was deprecated upstream, and what that means for a fix.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Deprecation {
    /// The first release that deprecates it (`2026.5`).
    pub from: String,
    /// Why it is left out from that release, as a clause (what upstream
    /// says, what takes its place or that nothing does).
    pub reason: String,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// Slow under normal load.
    Performance,
    /// Breaks, or loses data, under conditions that will happen.
    Reliability,
    /// Does not do what the author meant (ignored or dead settings).
    Correctness,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Performance => "performance",
            Category::Reliability => "reliability",
            Category::Correctness => "correctness",
        }
    }
}
