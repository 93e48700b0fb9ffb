//! The rule file format. Built-in rules and user rules use this one
//! schema; its doc comments are the field documentation printed by
//! `rules schema` (JSON Schema) and shown in `docs/rules.md`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use crate::fix::templates::PerDatabase;

/// One rule: metadata that doubles as its documentation, and the steps
/// that find risky combinations across objects.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Rule {
    /// Stable identifier, kebab-case, naming the bad pattern
    /// (`authentik-cache-on-sync-replicated-postgres`).
    pub id: String,
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
    pub steps: Vec<Step>,
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
    pub applicability: crate::fix::Applicability,
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
    pub per_database: Option<PerDatabase>,
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

/// One step of a rule. Each step is a built-in resolver with typed
/// parameters; it binds its result under its own name (or `as`) for
/// later steps and for the message.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub enum Step {
    /// Apps identified by Helm chart or container image, optionally with
    /// a version constraint. Binds `app`.
    App(AppStep),
    /// Every Postgres cluster the repo declares (Zalando, CloudNativePG,
    /// Crunchy PGO, Bitnami chart, postgres StatefulSet). Binds `database`.
    Postgres(PostgresStep),
    /// The Postgres an app uses, from its host setting through the
    /// operator's Service names. Binds `database`.
    Database(DatabaseStep),
    /// An effective Postgres setting of the bound database. Binds `setting`.
    Setting(SettingStep),
    /// The storage under the bound volume (`dataVolume`), the class
    /// written at `classAt` in the bound object or app values, or else
    /// under the bound database. Binds `storage`.
    Storage(StorageStep),
    /// Apps that keep their database files under a path, found by image,
    /// with the volume mounted over that path (pod `volumes`, StatefulSet
    /// `volumeClaimTemplates`, bjw-s app-template `persistence`). Binds
    /// `app` and `volume`: `{volume.path}`, `{volume.mount}`,
    /// `{volume.name}`, `{volume.app}`.
    DataVolume(DataVolumeStep),
    /// The bound database replicates synchronously (CNPG
    /// `minSyncReplicas`/`maxSyncReplicas`/`postgresql.synchronous`,
    /// Patroni `synchronous_mode` on Zalando and Crunchy, Bitnami
    /// `replication.numSynchronousReplicas`, `synchronous_standby_names`),
    /// with a standby to wait for. Binds `replication`: `{replication.setting}`.
    SynchronousReplication,
    /// An environment variable of the bound app. Binds `env` (or `as`).
    Env(EnvStep),
    /// A value in the bound app's effective Helm values. Binds `value`.
    Values(ValuesStep),
    /// Objects of a kind whose fields pass tests; with an app bound, only
    /// those of the app's cluster (the Flux tree that applies it). Binds
    /// `object`.
    Object(ObjectStep),
    /// Storage classes the repo declares, when at least `minDefaults` of
    /// them are marked default. Binds `classes`.
    StorageClasses(StorageClassesStep),
    /// Flux Kustomizations whose `spec.path` is not a directory of the
    /// repository. Binds `kustomization`.
    FluxPathMissing,
    /// Flux Kustomizations that kustomize-controller fails because a local
    /// file or directory their build names is missing. Binds
    /// `kustomization` (the missing entry, with kustomize's error).
    FluxBuildFails,
    /// With a repository and the cluster (`--live`, `--snapshot`): Postgres
    /// parameters of an operator's cluster whose value in the cluster
    /// differs from the repository's. Binds `drift`: `{drift.name}`,
    /// `{drift.repo}`, `{drift.cluster}`, `{drift.object}`.
    ParameterDrift(ParameterDriftStep),
    /// Values made from a Flux postBuild variable that is defined nowhere
    /// and has no default, so it rendered as empty. Binds `variable`.
    UndefinedVariable,
    /// Suppressions that match no finding. Not evaluated over objects:
    /// the suppression pass reports them after all other rules ran.
    UnusedSuppression,
    /// With `--base`: apps whose version moved, since the base commit,
    /// across a release listed in `rules/releases/` (a known breaking
    /// release); with a repository and the cluster, from the version the
    /// cluster runs. Uses the bound `app`, or finds the release file's apps
    /// and binds `app` too. Binds `bump`: `{bump.app}`, `{bump.from}`,
    /// `{bump.since}` (the base commit, or the cluster), `{bump.to}`,
    /// `{bump.releases}`, `{bump.facts}`, `{bump.references}`,
    /// `{bump.count}`. A change with `when` steps counts only where they
    /// hold. Never holds without `--base` or the cluster (`--live`, `--snapshot`)
    /// with a repository.
    ReleaseCrossed(ReleaseCrossedStep),
    /// Apps whose current version is at or after a release listed in
    /// `rules/releases/`, where the release's change applies (its `when`
    /// steps hold): the static form of `releaseCrossed`, which needs no
    /// base commit. Uses the bound `app`, or finds the release file's
    /// apps and binds `app` too. Binds `release`: `{release.app}`,
    /// `{release.to}` (the version now), `{release.releases}`,
    /// `{release.facts}`, `{release.references}`, `{release.count}` (how
    /// many places the `when` steps matched).
    ReleaseReached(ReleaseCrossedStep),
    /// Holds when any of the listed step sequences holds (the first that
    /// does binds).
    AnyOf(Vec<Vec<Step>>),
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AppStep {
    /// Helm chart names.
    #[serde(default)]
    pub charts: Vec<String>,
    /// Image repositories (registry optional for Docker Hub).
    #[serde(default)]
    pub images: Vec<String>,
    /// Semver constraint on the app version (`>=2025.10`). An app whose
    /// version cannot be read does not match a constrained step.
    #[serde(default)]
    pub version: Option<String>,
    /// Chart values subtrees the chart turns into environment variables:
    /// `{authentik: AUTHENTIK}` makes `authentik.postgresql.host`
    /// `AUTHENTIK_POSTGRESQL__HOST`.
    #[serde(default)]
    pub values_env_prefixes: std::collections::BTreeMap<String, String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReleaseCrossedStep {
    /// The `app` of a release file (`authentik`); default: every file.
    #[serde(default)]
    pub app: Option<String>,
    /// Only releases with one of these change ids (`cache-in-postgres`)
    /// that apply (their `when` steps hold); default: any listed release.
    #[serde(default)]
    pub changes: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PostgresStep {
    /// Only clusters with at least this many instances.
    #[serde(default)]
    pub min_instances: Option<i64>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DatabaseStep {
    /// Environment variables that hold the database host.
    #[serde(default)]
    pub host_env: Vec<String>,
    /// Values key of a chart-bundled Bitnami Postgres, used when
    /// `<key>.enabled` is true.
    #[serde(default)]
    pub bundled: Option<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SettingStep {
    /// Postgres parameter name.
    pub name: String,
    /// The step holds when the effective value is one of these
    /// (compared after Postgres' boolean normalisation: off, on).
    #[serde(rename = "in")]
    pub values: Vec<String>,
    /// With an app bound: the value in the app's own sessions wins when
    /// the repository shows one (connection options, or bootstrap SQL
    /// `ALTER DATABASE/ROLE ... SET`, which turns the finding into info).
    #[serde(default)]
    pub session: Option<SessionSpec>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SessionSpec {
    /// Variable with the app's database name, and the app's default.
    #[serde(default)]
    pub database_env: Option<String>,
    #[serde(default)]
    pub default_database: Option<String>,
    /// Variable with the app's role (user) name, and the app's default.
    #[serde(default)]
    pub user_env: Option<String>,
    #[serde(default)]
    pub default_user: Option<String>,
    /// Variables with libpq connection options: Authentik's CONN_OPTIONS
    /// (base64 JSON with an `options` key) or `PGOPTIONS`.
    #[serde(default)]
    pub options_env: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageStep {
    /// The step holds when the storage is of one of these categories:
    /// `network-replicated-block`, `network-block` (one copy over the
    /// network), `network-filesystem`, `local`.
    pub category: Vec<String>,
    /// JSONPath (RFC 9535) to a storage class name in the bound `object`
    /// (`$.spec.storage.storageClassName`), or else in the bound app's
    /// Helm values. Nothing written there: the step does not hold.
    #[serde(default)]
    pub class_at: Option<String>,
    /// Only storage mounted with one of these options (`soft`), as the
    /// StorageClass or PersistentVolume `mountOptions` write them
    /// (`nfsvers=4.1` matches `nfsvers`).
    #[serde(default)]
    pub mount_options: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DataVolumeStep {
    /// The apps, each with the images it runs from and where it keeps
    /// its database.
    pub apps: Vec<DataApp>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DataApp {
    /// The app's name, for messages (`{volume.app}`).
    pub name: String,
    /// Image repositories (registry optional for Docker Hub).
    pub images: Vec<String>,
    /// The database file or directory in the container.
    pub path: String,
    /// Variables that move the database elsewhere (`SONARR__POSTGRES__HOST`):
    /// when one is set, or may be set by a Secret the repository does not
    /// show, the app does not match.
    #[serde(default)]
    pub unless_env: Vec<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EnvStep {
    /// Variable name.
    pub name: String,
    /// Name to bind the variable under (default `env`).
    #[serde(default, rename = "as")]
    pub bind_as: Option<String>,
    /// The test the variable must pass.
    pub is: ValueTest,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ValuesStep {
    /// JSONPath (RFC 9535) into the merged values, e.g. `$.redis.enabled`.
    #[serde(deserialize_with = "crate::yaml::jsonpath::deserialize")]
    pub path: String,
    pub is: ValueTest,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ObjectStep {
    /// Only the object a binding of an earlier step is in (`app`: the
    /// bound app's HelmRelease or workload); default: every object.
    #[serde(default)]
    pub of: Option<String>,
    /// API group (`""` for core objects, `acid.zalan.do`, ...).
    pub group: String,
    /// The kind, or `*` for every kind of the group.
    pub kind: String,
    /// Tests that must all hold. The last test's match is where the
    /// finding points.
    #[serde(rename = "where")]
    pub tests: Vec<PathTest>,
    /// The last test's match holds Postgres parameters (a parameters map,
    /// or the keys a `keysOtherThan` map should not have): when every one
    /// is at PostgreSQL's default, the finding is info and says so.
    #[serde(default)]
    pub postgres_parameters: bool,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PathTest {
    /// JSONPath (RFC 9535) from the object's root, e.g. `$.spec.postgresql.parameters.*`.
    /// With several matches, the test holds when any match passes. At
    /// most one descendant segment (`..`).
    #[serde(deserialize_with = "crate::yaml::jsonpath::deserialize")]
    pub path: String,
    pub is: ValueTest,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ParameterDriftStep {
    /// Only these parameters (default: every one).
    #[serde(default)]
    pub names: Vec<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StorageClassesStep {
    pub min_defaults: usize,
}

/// Tests on a value (an environment variable, a Helm value, a field).
/// A variable whose value the repo does
/// not show (`valueFrom` a Secret) passes none of them. When a Secret the
/// repo cannot read feeds the whole environment (`envFrom`), tests that
/// expect a variable to be absent still pass and the finding says so.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub enum ValueTest {
    /// Set, to any value.
    Set,
    /// Not set anywhere the repo shows.
    Unset,
    /// Set to one of these values (case-insensitive).
    OneOf(Vec<String>),
    /// Set, and not to one of these values (case-insensitive).
    NoneOf(Vec<String>),
    /// Not set, or set to none of these values (case-insensitive): a
    /// setting whose default is not among them.
    NotOneOf(Vec<String>),
    /// Not set, or set to anything but true, 1, yes or on.
    NotEnabled,
    /// Set to one of true, 1, yes, on.
    Enabled,
    /// Not set, or set to base64 of a JSON object that has none of these
    /// keys (Authentik's `CONN_OPTIONS`).
    LacksJsonKeys(Vec<String>),
    /// Set, to a value this regular expression finds a match in
    /// (`pgvecto[.-]rs`: an image of that name, any registry and tag).
    Matches(#[schemars(with = "String")] Pattern),
    /// Set to something other than a string (a number, boolean or null
    /// where the API expects a string).
    NotString,
    /// A map with a key other than these (a Postgres parameter written
    /// beside Patroni's own `postgresql` keys); the finding names the key.
    KeysOtherThan(Vec<String>),
}

/// A `matches` regular expression, compiled once, when the rule file
/// is read: one that does not compile, or compiles past the `regex`
/// crate's size limit, is an error at its line and column in the file,
/// and a rule's evaluation never compiles it again per value.
#[derive(Clone, Debug)]
pub struct Pattern(regex::Regex);

impl Pattern {
    pub fn is_match(&self, text: &str) -> bool {
        self.0.is_match(text)
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.as_str())
    }
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pattern, D::Error> {
        let text = String::deserialize(d)?;
        regex::Regex::new(&text).map(Pattern).map_err(|e| {
            // A syntax error quotes the whole pattern over several lines,
            // its last line says what is wrong; the issue is one line.
            let why = match &e {
                regex::Error::Syntax(text) => text.lines().last().unwrap_or("").to_string(),
                other => other.to_string(),
            };
            let shown: String = text.chars().take(80).collect();
            let more = match shown.len() < text.len() {
                true => format!("… ({} bytes)", text.len()),
                false => String::new(),
            };
            serde::de::Error::custom(format!(
                "pattern {shown:?}{more} is not a regular expression: {why}"
            ))
        })
    }
}
