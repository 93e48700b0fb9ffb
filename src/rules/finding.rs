//! What a rule reports: a message at one place, labels at every other
//! object involved, the facts it rests on, and what to do.

use crate::model::ObjRef;
use crate::yaml::Span;

use super::schema::Severity;

/// A span with the text shown next to it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub span: Span,
    pub text: String,
}

/// A fact the finding rests on, shown in every output format.
#[derive(Clone, Debug, PartialEq)]
pub struct Evidence {
    pub key: String,
    pub value: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    pub primary: Label,
    /// Every other object involved (database, storage class, variable
    /// definition), possibly in other files.
    pub related: Vec<Label>,
    pub evidence: Vec<Evidence>,
    /// Caveats: what the linter could not see.
    pub notes: Vec<String>,
    /// The rule's remediation.
    pub help: String,
    /// The rule's severity, when the finding is reported as info because
    /// of a remedy the repository only partly shows (bootstrap SQL): a
    /// probe that confirms the hazard restores it.
    pub unconfirmed_severity: Option<Severity>,
    /// Stable across runs and machines: the rule and the identities of
    /// the objects involved, not their line numbers.
    pub fingerprint: String,
    /// How to fix it, when the rule declares a fix.
    pub fix: Option<super::fixes::Fix>,
    /// The objects the finding is about, for the stages after the rules.
    pub subjects: Subjects,
    /// The objects the finding rests on, in the order its rule's steps
    /// bound them (app, database, storage), for the formats that draw it.
    pub chain: Vec<Link>,
    /// With `--base`: whether the base commit had the finding too.
    pub baseline: Option<BaselineState>,
}

/// One binding of a finding's rule: the object it names, if any, and
/// the facts it contributed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The binding's name in the rule (`app`, `database`, `setting`).
    pub binding: String,
    /// `Kind/namespace/name` of the object bound; `None` for a fact that
    /// belongs to the object bound before it (a setting of a database).
    pub object: Option<String>,
    /// The fact's evidence fields, in the order the fact gives them.
    pub facts: Vec<(String, String)>,
    /// The namespace of the object bound, when the link is drawn as that
    /// object: a graph of a whole repository groups its nodes by it.
    pub group: Option<String>,
}

/// A finding compared with the base commit's findings (`--base`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineState {
    /// The base commit did not have it: the change brings it.
    New,
    /// The base commit had it too (reported with `--all-findings`).
    Existing,
}

impl BaselineState {
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineState::New => "new",
            BaselineState::Existing => "existing",
        }
    }
}

/// The objects a finding is about, as the model holds them: the probe
/// stage measures the database they name, or the one another finding
/// names for the same app.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Subjects {
    /// The app (HelmRelease or workload) a step bound.
    pub app: Option<ObjRef>,
    /// The Postgres cluster a step bound.
    pub database: Option<ObjRef>,
}
