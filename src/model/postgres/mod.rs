//! What each way of running Postgres means, one file per operator behind
//! [`PostgresOperator`]: the objects that declare a cluster, the Services
//! it is reached by, where its server parameters are read and written,
//! the storage under its data, its replication, the Secrets it makes and
//! the pod a probe connects to. Everything else in the tool asks the
//! trait, so adding an operator is a new file here and a line in
//! [`OPERATORS`].

use super::database::Database;
use super::replication::Synchronous;
use super::storage::{self, Storage};
use super::{Model, ObjRef, Unknown};
use crate::source::Object;
use crate::yaml::{Entry, Node, Span};

pub mod drift;

/// What an operator writes under one key of a Secret it makes: `Ok` the
/// value, when it follows from what the repository declares; `Err` why
/// it does not (a password it generates, a setting the repository does
/// not show).
pub type Derived = Result<String, String>;

/// A parameter written where the server does not read it.
pub struct IgnoredCopy<'m> {
    /// Its path in the object, for messages.
    pub path: String,
    /// Where its value is written.
    pub at: Span,
    /// Why it is not read (`is read by neither ...`).
    pub why: String,
    /// The map entries from the object's root down to it, when it is a
    /// map entry of its own (empty for a line of a configuration block).
    pub entries: Vec<Entry<'m>>,
}

impl<'m> IgnoredCopy<'m> {
    /// A map entry at `at` of `root`.
    pub fn entry(root: &'m Node, at: &[&str], why: &str) -> Option<IgnoredCopy<'m>> {
        let entries = root.entries_along(at)?;
        Some(IgnoredCopy {
            path: at.join("."),
            at: entries.last()?.value.span(),
            why: why.to_string(),
            entries,
        })
    }
}

/// A place a server reads Postgres parameters from, as its operator
/// declares it.
#[derive(Clone, Debug)]
pub struct ParameterMap {
    pub node: Node,
    /// Its path in its object (or the ConfigMap key), for messages.
    pub path: String,
    pub form: ParameterForm,
}

impl ParameterMap {
    pub fn new(node: Node, path: impl Into<String>, form: ParameterForm) -> ParameterMap {
        ParameterMap {
            node,
            path: path.into(),
            form,
        }
    }
}

/// How parameters are written in a [`ParameterMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParameterForm {
    /// A map keyed by parameter name (`spec.postgresql.parameters`): a new
    /// parameter is a new entry.
    Map,
    /// postgresql.conf lines in a text block, or a file.
    ConfBlock,
    /// The server's command line (`-c name=value`, `--name=value`).
    Args,
    /// The section that would hold the parameter map when none is written
    /// yet (`spec.postgresql`): a new parameter goes where
    /// [`PostgresOperator::parameter_home`] says.
    Section,
}

/// Where a parameter that no parameter map holds yet is written.
pub enum ParameterHome<'m> {
    /// A map at this path of the declaring object, made where missing.
    Map(&'static [&'static str]),
    /// A postgresql.conf block under `key` of the map at `path`, made
    /// where missing, which must keep the lines of `keep` (a value Helm
    /// replaces drops what the chart's own default held).
    ConfBlock {
        path: Vec<String>,
        key: &'static str,
        keep: &'static [&'static str],
    },
    /// The `args` of the container running Postgres, or why there is
    /// none.
    Args(Result<&'m Node, String>),
    /// Where depends on what the repository does not show (the
    /// operator's release): why, for a display-only fix.
    Undecided(String),
}

/// A Secret a probe reads credentials from, and the keys it keeps them
/// under.
#[derive(Clone, Debug, PartialEq)]
pub struct SecretRef {
    pub name: String,
    pub user_key: String,
    pub password_key: String,
    /// Key of the database name, where the Secret has one.
    pub dbname_key: Option<String>,
    /// The database otherwise.
    pub dbname: String,
}

/// Where a cluster's primary pod and credentials are, tried in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Naming {
    /// Label selectors of the primary pod.
    pub selectors: Vec<String>,
    pub secrets: Vec<SecretRef>,
}

/// The resource an operator's cluster objects are served as by the API
/// server, for reading one by name.
#[derive(Clone, Copy, Debug)]
pub struct ApiResource {
    pub group: &'static str,
    pub version: &'static str,
    pub plural: &'static str,
}

/// One way of running Postgres. Every method has the answer of an
/// operator that does not have the feature, so each file says only what
/// its operator does.
pub trait PostgresOperator: Sync {
    /// How findings and messages name it.
    fn name(&self) -> &'static str;

    /// How a list of operators names it.
    fn short_name(&self) -> &'static str {
        self.name()
    }

    /// Whether object `r` declares a cluster it runs.
    fn declares(&self, _model: &Model, _r: ObjRef) -> bool {
        false
    }

    /// The API group and kind of every object [`Self::declares`] may
    /// take: the model asks only the objects of these kinds, through its
    /// kind index, where asking every operator about every object was
    /// most of the first `postgres` step's time.
    fn declared_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Postgres instances (primary plus replicas) the cluster declared
    /// by `object` runs; `values_key` as in [`Database::values_key`].
    fn instances(&self, _model: &Model, _object: ObjRef, _values_key: &str) -> i64 {
        1
    }

    /// Where the instance count is written (one node, or one per
    /// instance set), for a finding about the count to point at.
    fn instances_written<'m>(&self, _model: &Model<'m>, _object: ObjRef) -> Vec<&'m Node> {
        Vec::new()
    }

    /// The cluster that makes Service `service` in `ns`, as `near` sees it.
    fn by_service(
        &self,
        _model: &Model,
        _near: ObjRef,
        _service: &str,
        _ns: &str,
    ) -> Option<ObjRef> {
        None
    }

    /// Where the server reads parameters, in the order it gives them
    /// precedence, each with its path for messages; the first is where a
    /// new setting belongs.
    fn parameter_maps(&self, _model: &Model, _db: &Database) -> Vec<ParameterMap> {
        Vec::new()
    }

    /// The fields of a declaring object that hold parameter maps, which
    /// the repository and the cluster are compared on.
    fn parameter_fields(&self) -> &'static [&'static [&'static str]] {
        &[]
    }

    /// Where a parameter that no map holds yet is written; `None` when it
    /// has no place the tool can write.
    fn parameter_home<'m>(&self, _model: &Model<'m>, _db: &Database) -> Option<ParameterHome<'m>> {
        self.parameter_fields()
            .first()
            .map(|p| ParameterHome::Map(p))
    }

    /// A copy of parameter `name` written in the declaring object where
    /// neither the operator nor the server reads it: a fix of the setting
    /// deletes it (or warns of it), since it reads as the setting to
    /// anyone who opens the file.
    fn ignored_copy<'m>(
        &self,
        _model: &'m Model,
        _db: &Database,
        _name: &str,
    ) -> Option<IgnoredCopy<'m>> {
        None
    }

    /// Where a statement run once when the cluster is created goes, for
    /// advice.
    fn init_sql_home(&self) -> Option<&'static str> {
        None
    }

    /// SQL run once when the cluster is created, with where it is written.
    fn bootstrap_sql(&self, _model: &Model, _db: &Database) -> Vec<(Node, String)> {
        Vec::new()
    }

    /// Where the cluster asks for its storage class; `Ok(None)` when it
    /// asks for none (the default class applies).
    fn requested_class(&self, _model: &Model, _db: &Database) -> Result<Option<Node>, Unknown> {
        Ok(None)
    }

    /// The storage its data is on, as the repository declares it.
    fn storage(&self, model: &Model, db: &Database) -> Result<Storage, Unknown> {
        storage::of_request(model, db.object, self.requested_class(model, db)?)
    }

    /// The label it puts on its volume claims, naming the cluster.
    fn claim_label(&self) -> Option<&'static str> {
        None
    }

    /// Where synchronous replication is turned on in its own settings.
    fn synchronous(&self, _model: &Model, _db: &Database) -> Option<Synchronous> {
        None
    }

    /// Key `key` of Secret `secret` in `ns`, when it makes that Secret for
    /// something the repository declares; `None` when it does not make it.
    fn secret_value(
        &self,
        _model: &Model,
        _near: ObjRef,
        _ns: &str,
        _secret: &str,
        _key: &str,
    ) -> Option<Derived> {
        None
    }

    /// The resource its cluster objects are served as.
    fn api_resource(&self) -> Option<ApiResource> {
        None
    }

    /// The kinds (group, kind) of its own objects that a read of the live
    /// cluster lists.
    fn live_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// Where the primary pod of the cluster `object` declares is, and the
    /// Secrets with credentials; `None` when it is not its object or it
    /// keeps them nowhere known.
    fn probe_naming(&self, _object: &Object) -> Option<Naming> {
        None
    }
}

/// Declares the operator modules and registers each, in the order their
/// answers are tried (a host's Service, a Secret's name).
macro_rules! operators {
    ($($module:ident :: $operator:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// Every way of running Postgres the tool knows.
        pub static OPERATORS: &[&dyn PostgresOperator] = &[$(&$module::$operator),*];
    };
}

operators![
    zalando::Zalando,
    cnpg::Cnpg,
    crunchy::Crunchy,
    bitnami::Bitnami,
    plain::Plain,
    ext_postgres::ExtPostgres,
];

/// The operator that runs a database.
#[derive(Clone, Copy)]
pub struct Provider(pub &'static dyn PostgresOperator);

impl Provider {
    pub fn as_str(self) -> &'static str {
        self.0.name()
    }
}

impl std::ops::Deref for Provider {
    type Target = dyn PostgresOperator;

    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl std::fmt::Debug for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Provider {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Provider {}

/// The kinds of every operator's objects that a read of the live cluster
/// lists ([`PostgresOperator::live_kinds`]).
pub fn live_kinds() -> Vec<(&'static str, &'static str)> {
    OPERATORS
        .iter()
        .flat_map(|o| o.live_kinds())
        .copied()
        .collect()
}

/// The operator that declares a cluster in object `r`, if any.
pub fn declaring(model: &Model, r: ObjRef) -> Option<Provider> {
    OPERATORS
        .iter()
        .find(|o| o.declares(model, r))
        .map(|o| Provider(*o))
}

/// An integer at `path` of `root`.
pub(crate) fn int_at(root: &Node, path: &[&str]) -> Option<i64> {
    root.path(path)
        .and_then(|n| n.scalar_text())
        .and_then(|t| t.parse().ok())
}

/// The cluster of kind `group`/`kind` named after a Service: `service`
/// less one of `suffixes` (each operator's Services are the cluster's
/// name and a role suffix).
pub(crate) fn named_by_service(
    model: &Model,
    near: ObjRef,
    (group, kind): (&str, &str),
    names: impl IntoIterator<Item = String>,
    ns: &str,
) -> Option<ObjRef> {
    names
        .into_iter()
        .find_map(|name| model.find(near, group, kind, ns, &name))
}

/// `service` less each of `suffixes` it ends with.
pub(crate) fn strip(service: &str, suffixes: &[&str]) -> Vec<String> {
    suffixes
        .iter()
        .filter_map(|s| service.strip_suffix(s).map(str::to_string))
        .collect()
}

/// Parameters in `spec.postgresql.parameters`, or written straight under
/// `spec.postgresql` (which Zalando and CloudNativePG ignore, and a rule
/// says so).
pub(crate) fn postgresql_section(model: &Model, db: &Database) -> Vec<ParameterMap> {
    let root = &model.object(db.object).root;
    let at = |path: &[&str], form| {
        root.path(path)
            .cloned()
            .map(|n| ParameterMap::new(n, path.join("."), form))
    };
    at(&["spec", "postgresql", "parameters"], ParameterForm::Map)
        .or_else(|| at(&["spec", "postgresql"], ParameterForm::Section))
        .into_iter()
        .collect()
}

/// The maps at `fields` of the declaring object, in order.
pub(crate) fn maps_at(model: &Model, db: &Database, fields: &[&[&str]]) -> Vec<ParameterMap> {
    let root = &model.object(db.object).root;
    fields
        .iter()
        .filter_map(|path| {
            root.path(path)
                .cloned()
                .map(|n| ParameterMap::new(n, path.join("."), ParameterForm::Map))
        })
        .collect()
}

/// A probe's Secret with the usual `password` key.
pub(crate) fn secret(
    name: String,
    user_key: &str,
    dbname_key: Option<&str>,
    dbname: &str,
) -> SecretRef {
    SecretRef {
        name,
        user_key: user_key.to_string(),
        password_key: "password".to_string(),
        dbname_key: dbname_key.map(str::to_string),
        dbname: dbname.to_string(),
    }
}

/// A node that holds a non-empty value.
pub(crate) fn nonempty(node: Option<&Node>) -> Option<Node> {
    node.filter(|n| n.scalar_text().is_some_and(|s| !s.is_empty()))
        .cloned()
}

/// Users owning a database first: the app's role and database, where
/// per-database settings apply.
pub(crate) fn owners_first(users: &mut [(String, Option<String>)]) {
    users.sort_by_key(|(_, db)| db.is_none());
}
