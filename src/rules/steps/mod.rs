//! Rule steps: one file per step, each with its typed parameters (the
//! rule schema), its evaluation, the facts it binds and how they read in
//! a finding. The registry below is the only other place a step is named:
//! it makes the schema's `match` list and dispatches evaluation.

mod any_of;
mod app;
mod data_volume;
mod database;
mod env;
mod flux_build_fails;
mod flux_path_missing;
mod object;
mod parameter_drift;
mod postgres;
mod release;
mod setting;
mod storage;
mod storage_classes;
mod suppressions;
mod synchronous_replication;
mod test;
mod undefined_variable;
mod values;

pub(crate) use test::deferring;

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use any_of::AnyOf;
pub use app::{AppStep, AppVersionStep, VersionConstraint};
pub use data_volume::{DataApp, DataVolumeStep};
pub use database::DatabaseStep;
pub use env::EnvStep;
pub use object::{ObjectStep, PathTest};
pub use parameter_drift::ParameterDriftStep;
pub use postgres::PostgresStep;
pub use release::{ReleaseCrossedStep, ReleaseReached};
pub use setting::{SessionSpec, SettingStep};
pub use storage::{StorageCategory, StorageStep};
pub use storage_classes::StorageClassesStep;
pub use test::{Pattern, ValueTest};
pub use values::ValuesStep;

pub(crate) use app::AppFact;
pub(crate) use data_volume::VolumeFact;
pub(crate) use database::DatabaseFact;
pub(crate) use env::EnvFact;
pub(crate) use object::ValueFact;
pub(crate) use setting::SettingFact;
pub(crate) use storage::StorageFact;
pub(crate) use synchronous_replication::ReplicationFact;

use super::engine::Ctx;
use super::finding::{Label, Link};
use crate::model::{Model, ObjRef};
use crate::yaml::{Node, Origin, Span};

/// One step of a rule: given what earlier steps bound, the candidates it
/// yields, each a list of new bindings (usually one).
pub(crate) trait Step {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings>;
}

/// A value a step bound, and how it reads in a finding.
pub(crate) trait Fact: Any + std::fmt::Debug + Send + Sync {
    /// Labels, evidence fields and a stable identity.
    fn describe(&self, model: &Model) -> Described;
    /// The object the fact is about: for steps restricted to it (`of`),
    /// and for the finding's references.
    fn object(&self) -> Option<ObjRef> {
        None
    }
    /// The object a drawing of the finding's chain shows for the fact:
    /// by default the object it is about; `None` for a fact that belongs
    /// to the object drawn before it (a setting of a database).
    fn node(&self, model: &Model) -> Option<String> {
        self.object().map(|r| model.object(r).id())
    }
    /// Where in a file the fact's value is written, to tell two
    /// branches' bindings of one place apart from bindings of two.
    fn place(&self) -> Option<(u32, u32)> {
        None
    }
    /// What the fact changes in its finding beyond its labels and
    /// evidence: severity, notes, a clause after the message.
    fn shape(&self, _finding: &mut Shape) {}
    /// Message-only wording under the fact's binding name.
    fn message_fields(&self, _name: &str, _fields: &mut BTreeMap<String, String>) {}
}

/// The link `fact`, bound as `binding`, is in a chain, with the evidence
/// it describes: grouped under its object's namespace when it is drawn
/// as that object (a storage class drawn from a chart's values is not).
pub(crate) fn link(
    model: &Model,
    binding: &str,
    fact: &dyn Fact,
    evidence: Vec<(String, String)>,
) -> Link {
    let object = fact.node(model);
    let group = fact
        .object()
        .map(|r| model.object(r))
        .filter(|o| object.as_deref() == Some(o.id().as_str()))
        .and_then(|o| o.namespace().map(str::to_string));
    Link {
        binding: binding.to_string(),
        object,
        facts: evidence,
        group,
    }
}

/// One fact's part of a finding.
#[derive(Default)]
pub(crate) struct Described {
    pub labels: Vec<Label>,
    pub evidence: Vec<(String, String)>,
    pub identity: String,
}

/// What facts may change in the finding they are part of.
pub(crate) struct Shape {
    pub severity: crate::rules::Severity,
    pub notes: Vec<String>,
    /// Said after the message when what is ignored changes nothing.
    pub harmless: Option<String>,
    /// The remedy of this case, when it is one of several the rule's
    /// remediation lists.
    pub help: Option<String>,
}

pub(crate) type Bound = Arc<dyn Fact>;
pub(crate) type Bindings = Vec<(String, Bound)>;

/// The last binding named `name`, when it is a `T`.
pub(crate) fn find<'b, T: Fact>(bound: &'b Bindings, name: &str) -> Option<&'b T> {
    let (_, fact) = bound.iter().rev().find(|(n, _)| n == name)?;
    (&**fact as &dyn Any).downcast_ref::<T>()
}

/// The first binding, of any name, that is a `T`.
pub(crate) fn first<T: Fact>(bound: &Bindings) -> Option<&T> {
    bound
        .iter()
        .find_map(|(_, f)| (&**f as &dyn Any).downcast_ref::<T>())
}

/// The fact as a `T`, when it is one.
pub(crate) fn downcast<T: Fact>(fact: &Bound) -> Option<&T> {
    (&**fact as &dyn Any).downcast_ref::<T>()
}

pub(crate) fn bind(name: &str, fact: impl Fact) -> (String, Bound) {
    (name.to_string(), Arc::new(fact))
}

/// Expands to its first argument: names a variant's parameters in the
/// registry's patterns only for variants that have them.
macro_rules! param {
    ($p:ident, $t:ty) => {
        $p
    };
}

/// The step registry: each line is a variant of the rule schema's `match`
/// list (its doc comment is the schema's documentation) and the type that
/// evaluates it, its parameters or, for a step without parameters, a
/// unit value.
macro_rules! registry {
    ($( $(#[$doc:meta])* $variant:ident $(($params:ty))? $(= $unit:expr)?, )*) => {
        /// One step of a rule. Each step is a built-in resolver with typed
        /// parameters; it binds its result under its own name (or `as`) for
        /// later steps and for the message.
        #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields, rename_all = "camelCase")]
        #[schemars(rename = "Step")]
        pub enum Spec {
            $( $(#[$doc])* $variant $(($params))?, )*
        }

        impl Spec {
            fn step(&self) -> &dyn Step {
                match self {
                    $( Spec::$variant $((param!(p, $params)))? => {
                        $( param!(p, $params) as &dyn Step )? $( &$unit as &dyn Step )?
                    } )*
                }
            }
        }
    };
}

impl Spec {
    pub(crate) fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        self.step().eval(cx, bound)
    }
}

registry! {
    /// Apps identified by Helm chart or container image, optionally with
    /// a version constraint. Binds `app`.
    App(AppStep),
    /// The bound `app` runs a release within a semver constraint
    /// (`"<2024.10"`): for a premise that holds only on some releases. An
    /// app whose version cannot tell is undecided. Binds nothing.
    AppVersion(AppVersionStep),
    /// Every Postgres cluster the repo declares (Zalando, CloudNativePG,
    /// Crunchy PGO, Bitnami chart, a postgres Deployment or StatefulSet).
    /// Binds `database`.
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
    SynchronousReplication = synchronous_replication::SynchronousReplication,
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
    FluxPathMissing = flux_path_missing::FluxPathMissing,
    /// Flux Kustomizations that kustomize-controller fails because a local
    /// file or directory their build names is missing. Binds
    /// `kustomization` (the missing entry, with kustomize's error).
    FluxBuildFails = flux_build_fails::FluxBuildFails,
    /// With a repository and the cluster (`--live`, `--snapshot`): Postgres
    /// parameters of an operator's cluster whose value in the cluster
    /// differs from the repository's. Binds `drift`: `{drift.name}`,
    /// `{drift.repo}`, `{drift.cluster}`, `{drift.object}`.
    ParameterDrift(ParameterDriftStep),
    /// Values made from a Flux postBuild variable that is defined nowhere
    /// and has no default, so it rendered as empty. Binds `variable`.
    UndefinedVariable = undefined_variable::UndefinedVariable,
    /// Suppressions that match no finding. Not evaluated over objects:
    /// the suppression pass reports them after all other rules ran.
    UnusedSuppression = suppressions::Suppressions,
    /// Suppressions that name no rule (a mistyped id). Not evaluated over
    /// objects: the suppression pass reports them after all other rules
    /// ran.
    UnknownRuleInSuppression = suppressions::Suppressions,
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
    ReleaseReached(ReleaseReached),
    /// Holds when any of the listed step sequences holds (the first that
    /// does binds).
    AnyOf(AnyOf),
}

/// The span of an object's name, or of the whole object.
fn object_span(model: &Model, object: ObjRef) -> Span {
    let o = model.object(object);
    o.root
        .path(&["metadata", "name"])
        .map_or(o.root.span(), |n| n.span())
}

/// `text`, the value `node` holds, as a finding shows it: its length
/// only when it came from a Secret.
fn shown(model: &Model, node: Option<&Node>, text: String) -> String {
    match node {
        Some(n) => model.sources.shown_value(n, text),
        None => text,
    }
}

/// The first line of a multi-line span: a label on a whole map would
/// underline every line of it.
fn first_line(model: &Model, span: Span) -> Span {
    let text = &model.sources.get(span.file).text;
    let start = span.start as usize;
    let end = text
        .get(start..span.end as usize)
        .and_then(|t| t.find('\n'))
        .map_or(span.end, |i| (start + i) as u32);
    Span { end, ..span }
}

/// Where a Flux variable that produced a value is defined.
fn variable_label(node: &Node) -> Option<Label> {
    match node.origin()? {
        Origin::Substituted {
            variable,
            defined_at: Some(span),
            ..
        } => Some(Label {
            span: *span,
            text: format!("${{{variable}}} is defined here"),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rule whose `match` list is `steps`, every other field valid.
    fn rule_with(steps: &str) -> String {
        format!(
            "id: r\ntitle: T\nseverity: info\ncategory: performance\nmessage: m\n\
             what: W.\nwhy: W.\nexample: e\nuseInstead: u\nremediation: R.\n\
             references: [https://example.com]\nmatch:\n{steps}"
        )
    }

    #[test]
    fn a_broken_step_parameter_is_an_error_at_its_line_and_column() {
        // The steps start on line 13 of the rule.
        for (steps, what, line) in [
            (
                "  - app: {images: [x]}\n  - postgres: {}\n  - storage: {category: [network-replicated-blok]}\n",
                "network-replicated-blok",
                15,
            ),
            (
                "  - postgres: {}\n  - app:\n      images: [x]\n      version: \">=2025.10 or so\"\n",
                "is not a semver constraint",
                16,
            ),
        ] {
            let issue = crate::rules::parse("r.yaml", &rule_with(steps))
                .expect_err("the rule must not load");
            assert!(issue.message.contains(what), "{}", issue.message);
            assert_eq!(issue.line, line, "{}", issue.message);
            assert!(issue.col > 0);
        }
    }

    #[test]
    fn every_step_of_the_schema_round_trips() {
        let text = rule_with(
            "  - app: {charts: [authentik], version: \">=2025.10\"}\n\
             \x20 - database: {hostEnv: [AUTHENTIK_POSTGRESQL__HOST]}\n\
             \x20 - setting: {name: synchronous_commit, in: [on]}\n\
             \x20 - synchronousReplication\n\
             \x20 - storage: {category: [network-replicated-block]}\n\
             \x20 - anyOf: [[fluxPathMissing], [releaseReached: {app: authentik}]]\n",
        );
        let rule = crate::rules::parse("r.yaml", &text).expect("the rule loads");
        let back = serde_json::to_value(&rule.steps).unwrap();
        assert_eq!(
            back,
            serde_json::json!([
                {"app": {"charts": ["authentik"], "images": [], "version": ">=2025.10", "valuesEnvPrefixes": {}}},
                {"database": {"hostEnv": ["AUTHENTIK_POSTGRESQL__HOST"], "bundled": null}},
                {"setting": {"name": "synchronous_commit", "in": ["on"], "session": null}},
                "synchronousReplication",
                {"storage": {"category": ["network-replicated-block"], "classAt": null, "mountOptions": []}},
                {"anyOf": [["fluxPathMissing"], [{"releaseReached": {"app": "authentik", "changes": []}}]]},
            ])
        );
    }

    #[derive(Debug)]
    struct Named(&'static str);

    impl Fact for Named {
        fn describe(&self, _model: &Model) -> Described {
            Described::default()
        }
    }

    #[derive(Debug)]
    struct Other;

    impl Fact for Other {
        fn describe(&self, _model: &Model) -> Described {
            Described::default()
        }
    }

    #[test]
    fn a_binding_is_found_by_its_last_name_and_its_type() {
        let bound: Bindings = vec![
            bind("app", Named("first")),
            bind("env", Other),
            bind("app", Named("second")),
        ];
        assert_eq!(find::<Named>(&bound, "app").map(|n| n.0), Some("second"));
        assert!(find::<Other>(&bound, "app").is_none());
        assert!(find::<Named>(&bound, "env").is_none());
        assert_eq!(first::<Named>(&bound).map(|n| n.0), Some("first"));
        assert!(first::<Other>(&bound).is_some());
    }
}
