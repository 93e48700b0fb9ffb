//! Flux postBuild variable substitution.
//!
//! Flux (fluxcd/pkg `kustomize/kustomize_varsub.go`, called by
//! kustomize-controller's `generator.SubstituteVariables`) serialises each
//! object to YAML, runs envsubst ([`super::envsubst`]) over the text and
//! reads the result back. We expand every string scalar and mapping key
//! instead, so that each value keeps the place where it was written and
//! learns where its variable was defined, and reproduce the round trip
//! per scalar ([`super::goyaml_v2`]): how go-yaml v2 writes the string,
//! then how it reads the expanded text back, which gives the type Flux
//! applies (`"${N:-568}"` becomes the integer 568).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::envsubst::{self, BUDGET, Budget, Expanded, Lookup};
use super::goyaml_v2::{self, Emit};
use crate::source::Gap;
use crate::source::data::{self, DataValue};
use crate::source::{Issue, Object, StepKind};
use crate::yaml::{Limits, Node, Origin, SourceMap, Span, Style, Value, parse_documents};
use dollar::{anew, first_dollar, holds_dollar, item, value};
pub use memo::Origins;
use memo::Outcome;

const DISABLE_KEY: &str = "kustomize.toolkit.fluxcd.io/substitute";

/// A postBuild variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// With newlines removed, as Flux stores it.
    pub value: String,
    /// The value node in the ConfigMap/Secret or the inline `substitute`.
    pub defined_at: Option<Span>,
    /// Encrypted: the cluster sees a value we cannot read. `value` is empty.
    pub unknown: bool,
    /// From a Secret (`substituteFrom` kind Secret): what it gives is
    /// never shown.
    pub secret: bool,
}

/// The variables of one Flux Kustomization.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Vars {
    pub map: BTreeMap<String, Var>,
    /// A `substituteFrom` source is not in the repository, or may hold
    /// keys the repository does not name (an ExternalSecret's `dataFrom`):
    /// any variable might be defined there, so an undefined one is
    /// unknown rather than empty.
    pub incomplete: bool,
    /// `spec.postBuild.substituteStrategy: Always` (kustomize-controller
    /// v1.9): substitute even when no variable is defined.
    pub always: bool,
    /// `spec.postBuild` of the Kustomization, for the objects' chains.
    pub at: Option<Span>,
    /// Each variable read from a Secret, and that Secret (`ns/name`):
    /// what a name made from it is printed as.
    pub secret_of: BTreeMap<String, String>,
}

impl Vars {
    pub fn get(&self, name: &str) -> Option<&Var> {
        self.map.get(name)
    }

    /// Flux skips substitution entirely when it found no variable, so
    /// `${X:=default}` then reaches the cluster as written, unless the
    /// strategy is `Always`.
    pub fn is_active(&self) -> bool {
        !self.map.is_empty() || self.incomplete || self.always
    }

    fn lookup(&self, name: &str) -> Lookup<'_> {
        match self.map.get(name) {
            Some(v) if v.unknown => Lookup::Unknown,
            Some(v) => Lookup::Value(&v.value),
            None if self.incomplete => Lookup::Unknown,
            None => Lookup::Undefined,
        }
    }
}

/// The substitution budgets of one run, set from [`Limits`]: each
/// expanded value is capped, and so is what all of them add together.
pub fn budget(limits: &super::Limits) -> Budget {
    Budget {
        max_value_bytes: limits.max_subst_value_bytes,
        growth_left: limits.max_subst_growth_bytes,
        steps_left: limits.max_subst_steps,
        exceeded: false,
    }
}

/// `ns/` before a name, nothing for a Kustomization written without a
/// namespace (the one it is applied in is not known here).
fn qualifier(namespace: &str) -> String {
    match namespace {
        "" => String::new(),
        ns => format!("{ns}/"),
    }
}

/// Reads `spec.postBuild` of a Flux Kustomization: `substituteFrom` in
/// order (later sources win), then inline `substitute`. `lookup` finds the
/// object that provides a ConfigMap or Secret ([`data::provides`]: also a
/// SealedSecret or ExternalSecret) by kind, namespace and name; the
/// namespace is the Kustomization's (`""` when it has none).
pub fn collect_vars<'a>(
    sources: &SourceMap,
    ks: &Object,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
) -> (Vars, Vec<Issue>) {
    let mut vars = Vars::default();
    let mut issues = Vec::new();
    let Some(post) = ks.root.path(&["spec", "postBuild"]) else {
        return (vars, issues);
    };
    vars.at = Some(post.span());
    vars.always = post.str_at(&["substituteStrategy"]) == Some("Always");
    let namespace = ks.namespace().unwrap_or("");
    for entry in post
        .get("substituteFrom")
        .and_then(Node::as_seq)
        .into_iter()
        .flatten()
    {
        if waits(entry) {
            // Named by a value the parent substitutes from one the
            // repository does not show: the source is the cluster's.
            vars.incomplete = true;
            continue;
        }
        let kind = entry.str_at(&["kind"]).unwrap_or("");
        let name = entry.str_at(&["name"]).unwrap_or("");
        let optional = entry
            .get("optional")
            .and_then(Node::as_bool_lenient)
            .unwrap_or(false);
        if kind != "ConfigMap" && kind != "Secret" {
            issues.push(Issue::at(
                sources,
                entry.span(),
                format!("substituteFrom kind {kind:?} is not ConfigMap or Secret; Flux ignores it"),
            ));
            continue;
        }
        let found = lookup(kind, namespace, name);
        let missing = match found {
            None => Some(
                "is not in the repository and not optional: Flux fails this Kustomization \
                 unless it exists in the cluster"
                    .to_string(),
            ),
            Some(source) => data::namespace_unknown(source, namespace).map(|why| {
                format!(
                    "may not exist in namespace {namespace}: {why}; Flux fails this \
                     Kustomization unless it does"
                )
            }),
        };
        let (Some(source), None) = (found, &missing) else {
            // Even an optional source may exist in the cluster only.
            vars.incomplete = true;
            if let Some(what) = missing.filter(|_| !optional) {
                issues.push(Issue::at(
                    sources,
                    entry.span(),
                    format!(
                        "substituteFrom {kind} {}{name} {what}",
                        qualifier(namespace)
                    ),
                ));
            }
            continue;
        };
        let by_hand = applied_by_hand(source, namespace);
        if by_hand && !optional {
            issues.push(Issue::at(
                sources,
                entry.span(),
                format!(
                    "substituteFrom {kind}/{name} is only in {}:{}, which names no namespace \
                     and which no Flux Kustomization applies: a bootstrap step (a script or \
                     task recipe) must apply it in namespace {namespace}, else Flux fails this \
                     Kustomization; its keys are read from there",
                    sources.path(source.root.span().file).display(),
                    source.root.span().line,
                ),
            ));
        }
        // More keys than the repository names: any variable may be one.
        vars.incomplete |= data::keys_complete(source, lookup).is_err();
        let secret = kind == "Secret";
        for (key, value) in data::entries(source, lookup) {
            if !valid_name(&key) {
                issues.push(Issue::at(
                    sources,
                    value.node().span(),
                    invalid_name_message(&key, &format!("{kind}/{name}")),
                ));
                continue;
            }
            let var = match value {
                DataValue::Text { text, node } if by_hand && is_secret_reference(&text) => Var {
                    value: String::new(),
                    defined_at: Some(node.span()),
                    unknown: true,
                    secret,
                },
                DataValue::Text { text, node } => Var {
                    value: text.replace('\n', ""),
                    defined_at: Some(node.span()),
                    unknown: false,
                    secret,
                },
                DataValue::Unknown { node, .. }
                | DataValue::Template { node, .. }
                | DataValue::Concealed { node, .. } => Var {
                    value: String::new(),
                    defined_at: Some(node.span()),
                    unknown: true,
                    secret,
                },
                DataValue::Invalid { node, message } => {
                    issues.push(Issue::at(sources, node.span(), message));
                    Var {
                        value: String::new(),
                        defined_at: Some(node.span()),
                        unknown: true,
                        secret,
                    }
                }
            };
            if secret {
                vars.secret_of
                    .insert(key.clone(), format!("{}{name}", qualifier(namespace)));
            }
            vars.map.insert(key, var);
        }
    }
    for (key, value) in post
        .get("substitute")
        .and_then(Node::as_map)
        .into_iter()
        .flatten()
    {
        let Some(name) = key.scalar_text() else {
            continue;
        };
        if waits(key) {
            vars.incomplete = true;
            continue;
        }
        if !valid_name(&name) {
            issues.push(Issue::at(
                sources,
                key.span(),
                invalid_name_message(&name, &ks.id()),
            ));
            continue;
        }
        if !matches!(value.value, Value::Str(_)) {
            // The CRD types `substitute` as map[string]string.
            issues.push(Issue::at(
                sources,
                value.span(),
                format!("postBuild.substitute.{name} must be a string: quote it"),
            ));
        }
        vars.map.insert(
            name,
            Var {
                value: value.scalar_text().unwrap_or_default().replace('\n', ""),
                defined_at: Some(value.span()),
                unknown: waits(value),
                secret: false,
            },
        );
    }
    (vars, issues)
}

/// Whether a value at or below `node` is one a parent's substitution
/// could not know (an encrypted variable's): it waits for the cluster's.
/// A Flux Kustomization's variables come from its own postBuild text, so
/// this is how unknowns upstream reach them.
fn waits(node: &Node) -> bool {
    matches!(
        node.origin(),
        Some(Origin::Substituted { unknown: true, .. })
    ) || match &node.value {
        Value::Seq(items) => items.iter().any(waits),
        Value::Map(entries) => entries.iter().any(|(k, v)| waits(k) || waits(v)),
        _ => false,
    }
}

/// Whether the `substituteFrom` source `lookup` found for a Kustomization
/// in `namespace` is one no Flux Kustomization applies: the lookup offers
/// a copy that names no namespace only when no Flux build holds it, the
/// cluster-template layout's `bootstrap/.../secret.yaml` that a just or
/// Task recipe pipes through `kubectl apply` into its namespace.
fn applied_by_hand(source: &Object, namespace: &str) -> bool {
    !namespace.is_empty() && source.namespace().is_none() && !data::provided_in(source, namespace)
}

/// A 1Password secret reference (`op://vault/item/field`), which the
/// bootstrap recipes that apply such files replace with `op inject`
/// (developer.1password.com/docs/cli/secret-references): the cluster holds
/// the secret, not the reference.
fn is_secret_reference(text: &str) -> bool {
    text.trim().starts_with("op://")
}

/// Applies the variables to every string scalar and mapping key of `obj`,
/// unless it opts out with the label or annotation
/// `kustomize.toolkit.fluxcd.io/substitute: disabled`. A scalar with bad
/// syntax, or one whose expansion no longer reads as one YAML value, is
/// left as written and reported (Flux fails the whole Kustomization);
/// the others are still substituted. A budget hit is reported the same
/// way, at the scalar. `parsed`: the object's document as parsed, when no
/// string of that parse holds a `$` ([`Files::dollar_free_document`]):
/// what the object still shares with it is not looked at.
///
/// [`Files::dollar_free_document`]: crate::source::Files::dollar_free_document
pub fn substitute(
    sources: &SourceMap,
    obj: &mut Object,
    vars: &Vars,
    budget: &mut Budget,
    origins: &mut Origins,
    parsed: Option<&Node>,
) -> Vec<Issue> {
    let mut issues = Vec::new();
    // Without a `$` nothing expands: the object stays shared with the
    // build it came from instead of being copied for a no-op.
    let mut way = Vec::new();
    if !vars.is_active() || is_disabled(&obj.root) || !anew(&obj.root, parsed, &mut way) {
        return issues;
    }
    let mut cx = Cx {
        vars,
        sources,
        budget,
        issues: &mut issues,
        changed: 0,
        origins,
    };
    cx.node(obj.root_mut(), parsed, &mut way);
    let changed = cx.changed;
    hide_secret_names(sources, obj, vars);
    if changed > 0 {
        obj.push_step(StepKind::Substitution, step_detail(changed), vars.at);
    }
    issues
}

/// The values of Secret variables that the object's name or namespace
/// (or those it gives what it makes: a Flux Kustomization's or a
/// HelmRelease's target namespace, a release's name) is made from,
/// registered to be hidden in every print ([`crate::yaml::hidden`]): a
/// name is copied into identities, messages and the names derived from
/// it, where no mark follows. Only these: a value registered is searched
/// for in every text printed.
fn hide_secret_names(sources: &SourceMap, obj: &Object, vars: &Vars) {
    const NAMES: [[&str; 2]; 5] = [
        ["metadata", "name"],
        ["metadata", "namespace"],
        ["spec", "targetNamespace"],
        ["spec", "releaseName"],
        ["spec", "storageNamespace"],
    ];
    if vars.secret_of.is_empty() {
        return;
    }
    for path in NAMES {
        let Some(node) = obj.root.path(&path) else {
            continue;
        };
        if !node.origin().is_some_and(Origin::is_secret) {
            continue;
        }
        // The variables written in it, as `${NAME`: one look-up each, not
        // one per Secret variable (a Secret may hold thousands).
        let written = sources
            .get(node.span().file)
            .text
            .get(node.span().start as usize..node.span().end as usize)
            .unwrap_or_default();
        let first = match node.origin() {
            Some(Origin::Substituted { variable, .. }) => Some(variable.as_str()),
            _ => None,
        };
        for variable in first.into_iter().chain(referenced(written)) {
            if let (Some(var), Some(secret)) = (vars.get(variable), vars.secret_of.get(variable))
                && !var.unknown
            {
                crate::yaml::hidden::hide(&var.value, variable, secret);
            }
        }
    }
}

/// The names after each `${` of `text`.
fn referenced(text: &str) -> impl Iterator<Item = &str> {
    text.match_indices("${").filter_map(|(at, _)| {
        let rest = &text[at + 2..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        (end > 0).then(|| &rest[..end])
    })
}

/// Whether any string under `node`, key or value, holds a `$`: where
/// none does, substitution leaves it as it is.
pub(super) fn holds_dollar_anywhere(node: &Node) -> bool {
    first_dollar(node, None, &mut Vec::new())
}

/// Whether an object opts out of postBuild substitution.
pub fn is_disabled(root: &Node) -> bool {
    ["labels", "annotations"]
        .iter()
        .any(|field| root.str_at(&["metadata", field, DISABLE_KEY]) == Some("disabled"))
}

/// By bytes: a byte of a char outside ASCII is none of those allowed,
/// and every key of every `substituteFrom` source is checked for each
/// Kustomization that reads it.
fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(c) if c == b'_' || c.is_ascii_alphabetic())
        && bytes.all(|c| c == b'_' || c.is_ascii_alphanumeric())
}

fn invalid_name_message(name: &str, from: &str) -> String {
    format!(
        "variable name {name:?} from {from} is invalid (must match ^[_[:alpha:]][_[:alpha:][:digit:]]*$): \
         Flux fails substitution for the whole Kustomization"
    )
}

/// One object's substitution.
struct Cx<'a> {
    vars: &'a Vars,
    sources: &'a SourceMap,
    budget: &'a mut Budget,
    issues: &'a mut Vec<Issue>,
    changed: usize,
    origins: &'a mut Origins,
}

/// The substitution step's text for `changed` values, one per count for
/// the whole run: every substituted object carries one, and a text each
/// was a block per object. Counts past the table get a text of their own.
fn step_detail(changed: usize) -> Arc<str> {
    const SHARED_COUNTS: usize = 64;
    static SHARED: std::sync::OnceLock<Vec<Arc<str>>> = std::sync::OnceLock::new();
    let text =
        |n: usize| -> Arc<str> { format!("postBuild substitution changed {n} value(s)").into() };
    let shared = SHARED.get_or_init(|| (0..SHARED_COUNTS).map(text).collect());
    shared
        .get(changed)
        .cloned()
        .unwrap_or_else(|| text(changed))
}

impl Cx<'_> {
    /// Expands the scalars under `node`, whose first `$` `way` leads to
    /// ([`first_dollar`], with `parsed` as there); what comes after it is
    /// looked at once. Only what holds a `$` is visited for change: the
    /// collections on the way to one are all that is copied of a tree
    /// shared with the parse or the build.
    fn node(&mut self, node: &mut Node, parsed: Option<&Node>, way: &mut Vec<usize>) {
        let known = way.pop();
        match &mut node.value {
            Value::Str(_) => {
                self.scalar(node, false);
            }
            Value::Seq(items) => {
                let parsed = parsed.and_then(Node::as_seq);
                for i in known.unwrap_or(0)..items.len() {
                    let parsed = item(parsed, i);
                    if known == Some(i) || anew(&items[i], parsed, way) {
                        self.node(&mut Arc::make_mut(items)[i], parsed, way);
                    }
                }
            }
            Value::Map(entries) => {
                let parsed = parsed.and_then(Node::as_map);
                let mut renamed = false;
                for i in known.map_or(0, |at| at / 2)..entries.len() {
                    let key = match known {
                        Some(at) if at / 2 == i => at % 2 == 0,
                        _ => anew(&entries[i].0, None, way),
                    };
                    if key {
                        renamed |= self.scalar(&mut Arc::make_mut(entries)[i].0, true);
                    }
                    let parsed = value(parsed, i);
                    let value = known == Some(2 * i + 1) || anew(&entries[i].1, parsed, way);
                    if value {
                        self.node(&mut Arc::make_mut(entries)[i].1, parsed, way);
                    }
                }
                if renamed {
                    crate::yaml::edit_vec(entries, |e| self.drop_duplicate_keys(e));
                }
            }
            Value::Null | Value::Bool(_) | Value::Int(_) | Value::Float(_) => {}
        }
    }

    /// Two keys equal after substitution: go-yaml v2 keeps the value it
    /// reads last, and it wrote the keys sorted (sorter.go; byte order for
    /// the keys seen here) before substitution.
    fn drop_duplicate_keys(&mut self, entries: &mut Vec<(Node, Node)>) {
        let mut i = 0;
        while i < entries.len() {
            let dup = (i + 1..entries.len()).find(|&j| entries[j].0.value == entries[i].0.value);
            let Some(j) = dup else {
                i += 1;
                continue;
            };
            let written = |n: &Node| written_key(self.sources, n);
            let (lose, win) = if written(&entries[i].0) <= written(&entries[j].0) {
                (i, j)
            } else {
                (j, i)
            };
            let key = entries[lose].0.as_str().unwrap_or_default().to_string();
            let at = entries[win].0.span();
            self.issues.push(Issue::at(
                self.sources,
                entries[lose].0.span(),
                format!(
                    "after substitution the key {key:?} is written twice (again at {}): \
                     Flux keeps only the other value",
                    self.sources.location(at)
                ),
            ));
            entries.remove(lose);
        }
    }

    /// Expands one scalar in place; `true` when a key changed. What its
    /// text gave before is put in place again, with the same budget
    /// spent, when that reported nothing and the budget covers it.
    fn scalar(&mut self, node: &mut Node, key: bool) -> bool {
        let Value::Str(text) = &node.value else {
            return false;
        };
        // A parent's substitution already stood here for a value the
        // repository does not show (a child's `spec.patches` carry it):
        // Flux substitutes that value, not the `${...}` text kept for it.
        if !holds_dollar(text) || waits(node) {
            return false;
        }
        if let Some(seen) = self.origins.outcome(text, key)
            && let Some(left) = self.budget.replay(&seen.before, &seen.after)
        {
            *self.budget = left;
            let Outcome { set, renamed, .. } = seen.clone();
            if let Some((value, origin)) = set {
                self.changed += 1;
                node.set_origin(origin);
                set_value(node, value);
            }
            return renamed;
        }
        let text = text.clone();
        let (before, issues, changed) = (self.budget.clone(), self.issues.len(), self.changed);
        let renamed = self.expand_scalar(node, &text, key);
        if self.issues.len() == issues && text.len() <= Origins::REMEMBERED_LEN {
            let set = (self.changed > changed).then(|| {
                (
                    Node::new(node.value.clone(), Span::default()),
                    node.shared_origin(),
                )
            });
            let after = self.budget.clone();
            let outcome = Outcome {
                set,
                renamed,
                before,
                after,
            };
            self.origins.remember(text, key, outcome);
        }
        renamed
    }

    /// [`Self::scalar`] for a text not seen before (or one the budget
    /// left no longer covers): `true` when a key changed.
    fn expand_scalar(&mut self, node: &mut Node, text: &str, key: bool) -> bool {
        let report = |cx: &mut Self, message: String| {
            let issue = if message.starts_with(BUDGET) {
                let message = format!(
                    "{message} in {}: left as written",
                    crate::source::quoted(text)
                );
                Issue::at(cx.sources, node.span(), message)
                    .stopped_by(crate::source::Budget::Substitution)
            } else {
                let message = format!(
                    "variable substitution failed in {}: {message}",
                    crate::source::quoted(text)
                );
                Issue::at(cx.sources, node.span(), message)
            };
            cx.issues.push(issue);
        };
        let expanded = match self.expand(text) {
            Ok(e) => e,
            // Text envsubst cannot parse fails the Flux Kustomization
            // whatever the variables hold; an error that depends on their
            // values (here maybe a guess: a value from the cluster) stays a
            // warning.
            Err(message) if !message.starts_with(BUDGET) && !envsubst::parses(text) => {
                let unparsable = envsubst::first_unparsable(text);
                let span = unparsable
                    .and_then(|at| self.sources.find_within(node.span(), at))
                    .unwrap_or(node.span());
                let message = match unparsable {
                    Some(at) => format!(
                        "variable substitution failed at {at:?}: {message} (escape it as \
                         $${{...}}, or disable substitution for the object with the \
                         kustomize.toolkit.fluxcd.io/substitute: disabled annotation)"
                    ),
                    None => format!(
                        "variable substitution failed in {}: {message}",
                        crate::source::quoted(text)
                    ),
                };
                self.issues
                    .push(Issue::at(self.sources, span, message).gap(Gap::Substitution));
                return false;
            }
            Err(message) => {
                report(self, message);
                return false;
            }
        };
        if expanded.text == text && expanded.uses.is_empty() {
            return false;
        }
        // Used ones render empty (rule flux-variable-undefined); one read
        // only inside the default of a set variable renders right here,
        // but kustomize-controller's strict substitution, on by default
        // since v1.9 (feature gate StrictPostBuildSubstitutions,
        // internal/features/features.go), fails the Kustomization on it:
        // fluxcd/pkg envsubst/template.go `evalFunc` evaluates every
        // argument before the variable, and a bare `${B}` is not a default
        // operator (`errVarNotSet`).
        let strict: Vec<&str> = expanded
            .strict_unset
            .iter()
            .filter(|v| !expanded.undefined.contains(v))
            .map(String::as_str)
            .collect();
        if !strict.is_empty() {
            self.issues.push(Issue::at(
                self.sources,
                node.span(),
                format!(
                    "Flux fails this Kustomization: {} in {} is defined nowhere and has no \
                     default; unused here, but strict substitution (on by default since \
                     kustomize-controller v1.9) rejects it",
                    strict.join(", "),
                    crate::source::quoted(text)
                ),
            ));
        }
        let mut origin = origin_of(&expanded, self.vars);
        if expanded.unresolved {
            if let Some(Origin::Substituted {
                variable,
                defined_at,
                if_unset,
                ..
            }) = &mut origin
            {
                *if_unset = self.expand_if_unset(text);
                // The variable that leaves it unknown, not the first
                // defined one (`APP` of `${CLAIM:-${APP}}`).
                let hidden = expanded.uses.iter().find(|u| self.vars.get(u).is_none());
                if let (Some(hidden), Some(_)) = (hidden, &if_unset) {
                    *variable = hidden.clone();
                    *defined_at = None;
                }
            }
            // A value we cannot know (SOPS, a source only in the cluster)
            // keeps its `${...}` text: an empty string would be a guess,
            // and a wrong one that rules would then report on.
            self.changed += 1;
            node.set_origin(origin.map(|o| self.origins.share(o)));
            node.value = Value::Str(expanded.text.into());
            return false;
        }
        let secret = matches!(origin, Some(Origin::Substituted { secret: true, .. }));
        let typed = match self.round_trip(text, expanded, key) {
            Ok(v) => v,
            // Why it does not read back quotes the text, which here holds
            // a Secret's value.
            Err(message) if secret && !message.starts_with(BUDGET) => {
                report(
                    self,
                    "with a value from a Secret (not shown), the text no longer reads as one \
                     YAML value or key: Flux fails to decode the object"
                        .into(),
                );
                return false;
            }
            Err(message) => {
                report(self, message);
                return false;
            }
        };
        self.changed += 1;
        node.set_origin(origin.map(|o| self.origins.share(o)));
        set_value(node, typed);
        key
    }

    /// `text` expanded with every variable the repository does not
    /// name taken as unset, when that leaves nothing unknown: what a
    /// name reads unless a hidden source sets one of its variables.
    fn expand_if_unset(&mut self, text: &str) -> Option<String> {
        let vars = self.vars;
        let lookup = |name: &str| match vars.map.get(name) {
            Some(v) if v.unknown => Lookup::Unknown,
            Some(v) => Lookup::Value(&v.value),
            None => Lookup::Undefined,
        };
        let expanded = envsubst::expand(text, &lookup, self.budget).ok()?;
        (!expanded.unresolved).then_some(expanded.text)
    }

    fn expand(&mut self, text: &str) -> Result<Expanded, String> {
        let vars = self.vars;
        envsubst::expand(text, &|name| vars.lookup(name), self.budget)
    }

    /// What the text becomes once go-yaml v2 has written it, envsubst has
    /// expanded that, and go-yaml v2 has read it back.
    fn round_trip(&mut self, text: &str, expanded: Expanded, key: bool) -> Result<Node, String> {
        let style = goyaml_v2::style(text, key);
        let out = if style == Emit::Plain {
            expanded.text
        } else {
            // Quotes and escapes are part of what envsubst sees.
            self.expand(&goyaml_v2::written(text, style))?.text
        };
        if style == Emit::Plain && is_simple(&out) {
            let r = goyaml_v2::resolve(&out);
            return Ok(Node::new(
                if key {
                    Value::Str(goyaml_v2::key_text(r, &out)?.into())
                } else {
                    goyaml_v2::to_value(r, &out)?
                },
                Span::default(),
            ));
        }
        reread(&out, key)
    }
}

/// Parses `out` where go-yaml v2 would meet it: as the value (or key) of a
/// one-entry mapping. Anything but one value is what breaks Flux's
/// `YAMLToJSON`.
fn reread(out: &str, key: bool) -> Result<Node, String> {
    let doc = if key {
        format!("{out}: x\n")
    } else {
        format!("k: {out}\n")
    };
    let broken = |why: &str| {
        format!(
            "after substitution the text is {}, which no longer reads as one YAML {} \
             ({why}): Flux fails to decode the object",
            crate::source::quoted(out),
            if key { "key" } else { "value" }
        )
    };
    let mut docs = parse_documents(&doc, crate::yaml::FileId(0), &Limits::default())
        .map_err(|e| broken(&e.message))?;
    let mut entries = match (docs.pop(), docs.is_empty()) {
        (
            Some(Node {
                value: Value::Map(entries),
                ..
            }),
            true,
        ) if entries.len() == 1 => entries,
        _ => return Err(broken("not a single value")),
    };
    let Some((k, v)) = crate::yaml::take_entries(&mut entries).pop() else {
        return Err(broken("not a single value"));
    };
    let node = if key { k } else { v };
    if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
        // A flow collection (`[a, b]`) is what Flux then applies; as a
        // key, go-yaml v2 refuses it.
        return if key {
            Err(broken("a collection as a key"))
        } else {
            Ok(node)
        };
    }
    // Plain text resolves as go-yaml v2 does; quoted, block and tagged
    // scalars are what the parser read.
    let resolved = if node.style() == Style::Plain && !out.contains('!') {
        let raw = doc
            .get(node.span().start as usize..node.span().end as usize)
            .unwrap_or_default()
            .trim();
        goyaml_v2::resolve(raw)
    } else {
        match &node.value {
            Value::Null => goyaml_v2::Resolved::Null,
            Value::Bool(b) => goyaml_v2::Resolved::Bool(*b),
            Value::Int(i) => goyaml_v2::Resolved::Int(*i),
            Value::Float(f) => goyaml_v2::Resolved::Float(*f),
            _ => goyaml_v2::Resolved::Str,
        }
    };
    let text = node.scalar_text().unwrap_or_default();
    let value = if key {
        Value::Str(goyaml_v2::key_text(resolved, &text)?.into())
    } else {
        goyaml_v2::to_value(resolved, &text)?
    };
    Ok(Node::new(value, Span::default()))
}

/// Plain text that reads back as one plain scalar with nothing around it.
fn is_simple(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".,_/+=~()<>;^-".contains(&b))
        || s.len() > 1
            && s.starts_with('-')
            && s[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._".contains(&b))
}

/// Puts the re-read value in place: the node keeps where it was written
/// (collections made by substitution take the scalar's place too).
fn set_value(node: &mut Node, mut typed: Node) {
    let span = node.span();
    typed.each_mut(&mut |n| n.set_span(span));
    node.value = typed.value;
    if !matches!(node.value, Value::Str(_)) {
        node.set_style(Style::Plain);
    }
}

/// A key as written before substitution, the order go-yaml v2 wrote them.
fn written_key(sources: &SourceMap, key: &Node) -> String {
    let text = &sources.get(key.span().file).text;
    text.get(key.span().start as usize..key.span().end as usize)
        .unwrap_or_default()
        .to_string()
}

/// The variable reported for a scalar: the first one (outermost first)
/// that is defined, else the first one referenced. Unknown when the
/// expansion read a value the repository does not hold.
fn origin_of(e: &Expanded, vars: &Vars) -> Option<Origin> {
    let first = e.uses.first()?;
    let (variable, defined_at) = e
        .uses
        .iter()
        .find_map(|u| vars.get(u).map(|v| (u.clone(), v.defined_at)))
        .unwrap_or_else(|| (first.clone(), None));
    Some(Origin::Substituted {
        variable,
        defined_at,
        unknown: e.unresolved,
        undefined: e.undefined.clone(),
        secret: e.uses.iter().any(|u| vars.get(u).is_some_and(|v| v.secret)),
        if_unset: None,
    })
}

mod dollar;
mod memo;
#[cfg(test)]
mod tests;
