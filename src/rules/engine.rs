//! Evaluates rules over the model: each step narrows or extends a set of
//! bindings; every complete set of bindings is one finding.

use std::collections::BTreeMap;

use semver::VersionReq;
use sha2::{Digest, Sha256};

use super::finding::{Evidence, Finding, Label};
use super::releases::Baseline;
use super::schema::{
    DataVolumeStep, FixSpec, ReleaseCrossedStep, Rule, Step, StorageStep, ValueTest,
};
use crate::fix::{Applicability, Edit, Fix, templates};
use crate::model::app::{self, App, AppQuery};
use crate::model::database::{self, Database, HostQuery};
use crate::model::env::{self, EnvVar, ValuesPrefix};
use crate::model::replication::{self, Synchronous};
use crate::model::session::{self, SessionQuery, SessionSetting};
use crate::model::settings::{self, Setting};
use crate::model::storage::{self, Category, ClassDecl, Storage};
use crate::model::volume::{self, Mount};
use crate::model::{Model, ObjRef, Unknown};
use crate::rules::schema::Severity;
use crate::yaml::jsonpath::select;
use crate::yaml::{Node, Origin, Span};

/// A value a step bound.
#[derive(Clone, Debug)]
enum Fact {
    App(App, Vec<ValuesPrefix>),
    Database(Database),
    Setting(Setting),
    Storage(Storage),
    /// The volume over an app's data path, and the app's name.
    Volume(Mount, String),
    Replication(Synchronous),
    /// A per-database or per-role value from bootstrap SQL that the rule
    /// does not flag, with caveats: the finding stands as info.
    Session(SessionSetting, Vec<String>),
    /// Caveats about the app's session settings (an option it ignores).
    SessionNotes(Vec<String>),
    Env(EnvVar),
    /// A variable a test expected to be absent, and is.
    EnvAbsent {
        name: String,
        hidden_source: Option<String>,
    },
    /// A value a path test matched, in an object.
    Value {
        object: ObjRef,
        node: Option<Node>,
        path: String,
        /// Postgres parameters the match holds, each at PostgreSQL's
        /// default (`name=value`); empty unless the step asked
        /// (`postgresParameters`) and every one is.
        at_default: Vec<String>,
    },
    Classes(Vec<ClassDecl>),
    /// An app version moved across known releases since the base commit
    /// (`from` set), or has reached them (`from` unset).
    Bump {
        object: ObjRef,
        app: String,
        /// Where `from` comes from: the base commit, or the cluster.
        since: String,
        from: Option<semver::Version>,
        to: semver::Version,
        /// Version and the texts of its changes, per crossed release.
        crossed: Vec<(String, Vec<String>)>,
        references: Vec<String>,
        /// What the changes' `when` steps matched, one list per match.
        context: Vec<Bindings>,
    },
    /// A Flux postBuild variable that rendered empty.
    Variable {
        object: ObjRef,
        name: String,
        node: Node,
    },
    /// A Postgres parameter the repository and the cluster disagree on.
    Drift {
        object: ObjRef,
        drift: crate::source::link::Drift,
    },
}

type Bindings = Vec<(String, Fact)>;

/// What evaluation could not decide, per rule (shown with `--verbose`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undecided {
    pub rule: String,
    pub subject: String,
    pub reason: String,
}

pub struct Outcome {
    pub findings: Vec<Finding>,
    pub undecided: Vec<Undecided>,
    /// Rules whose evaluation stopped at the work budget.
    pub issues: Vec<crate::source::Issue>,
}

pub fn evaluate(model: &Model, rules: &[Rule]) -> Outcome {
    evaluate_with(model, rules, &Baseline::none())
}

/// Evaluates with what the base commit of a `--base` run ran, for the
/// `releaseCrossed` step.
pub fn evaluate_with(model: &Model, rules: &[Rule], baseline: &Baseline) -> Outcome {
    let mut out = Outcome {
        findings: Vec::new(),
        undecided: Vec::new(),
        issues: Vec::new(),
    };
    let budget = super::MAX_RULE_WORK;
    // Rules are pure over the model: each runs on its own, on both cores,
    // and their results are merged in rule order, as a serial run would.
    use rayon::prelude::*;
    let runs: Vec<_> = rules
        .par_iter()
        .map(|rule| {
            let mut matches = Vec::new();
            let mut undecided = Vec::new();
            let mut ctx = Ctx {
                model,
                rule,
                undecided: &mut undecided,
                baseline,
                work: 0,
                budget,
                max_matches: super::MAX_RULE_MATCHES,
            };
            ctx.run(&rule.steps, Vec::new(), &mut matches);
            let over_budget = if matches.len() >= ctx.max_matches {
                Some(format!(
                    "rule match budget exceeded: evaluation stopped at {} matches; others may be missing",
                    matches.len()
                ))
            } else if ctx.work > budget {
                Some(format!(
                    "rule evaluation budget exceeded: more than {budget} candidates and objects examined (its steps multiply: each step is tried for every match of the steps before it); the {} matches found so far are reported, others may be missing",
                    matches.len()
                ))
            } else {
                None
            };
            let findings = super::subsume::merge_same_place(
                matches.iter().map(|b| finding(model, rule, b)).collect(),
            );
            (findings, undecided, over_budget)
        })
        .collect();
    let mut fingerprints = std::collections::HashSet::new();
    let mut first_span = std::collections::HashMap::new();
    for (rule, (findings, mut undecided, over_budget)) in rules.iter().zip(runs) {
        out.undecided.append(&mut undecided);
        if let Some(message) = over_budget {
            out.issues.push(crate::source::Issue::located(
                format!("rule {}", rule.id),
                0,
                0,
                message,
            ));
        }
        // The same facts reached twice (one base app rendered into two
        // clusters' trees) are one finding; a same-named object written
        // apart for a second cluster is its own, and gets a fingerprint of
        // its own too (else `--base` and code scanning would take the two
        // for one alert): the first keeps the plain one, so a repository
        // with one cluster sees no change.
        for mut f in findings {
            if !fingerprints.insert((f.fingerprint.clone(), f.primary.span)) {
                continue;
            }
            match first_span.get(&f.fingerprint) {
                Some(span) if *span != f.primary.span => {
                    let path = model.sources.path(f.primary.span.file);
                    f.fingerprint = rehash(&f.fingerprint, &path.to_string_lossy());
                }
                Some(_) => {}
                None => {
                    first_span.insert(f.fingerprint.clone(), f.primary.span);
                }
            }
            out.findings.push(f);
        }
    }
    out
}

struct Ctx<'a, 'm> {
    model: &'a Model<'m>,
    rule: &'a Rule,
    undecided: &'a mut Vec<Undecided>,
    baseline: &'a Baseline,
    /// Candidates, objects and JSONPath matches examined so far, against
    /// [`super::MAX_RULE_WORK`]: a rule of several `object` steps is a
    /// cartesian product of the repository's objects.
    work: usize,
    budget: usize,
    /// Complete matches (findings before deduplication) one rule may have.
    max_matches: usize,
}

impl Ctx<'_, '_> {
    fn run(&mut self, steps: &[Step], bindings: Bindings, out: &mut Vec<Bindings>) {
        let Some((step, rest)) = steps.split_first() else {
            out.push(bindings);
            return;
        };
        if self.work > self.budget || out.len() >= self.max_matches {
            return;
        }
        let candidates = self.step(step, &bindings);
        self.work += 1 + candidates.len();
        for next in candidates {
            if self.work > self.budget || out.len() >= self.max_matches {
                return;
            }
            let mut b = bindings.clone();
            b.extend(next);
            self.run(rest, b, out);
        }
    }

    fn note_unknown(&mut self, subject: String, Unknown(reason): Unknown) {
        self.undecided.push(Undecided {
            rule: self.rule.id.clone(),
            subject,
            reason,
        });
    }

    /// The candidates a step yields given what is bound so far; each is a
    /// list of new bindings (usually one).
    fn step(&mut self, step: &Step, bound: &Bindings) -> Vec<Bindings> {
        let model = self.model;
        match step {
            Step::App(p) => {
                let req = p.version.as_deref().and_then(|v| VersionReq::parse(v).ok());
                let prefixes: Vec<ValuesPrefix> = p
                    .values_env_prefixes
                    .iter()
                    .map(|(k, v)| ValuesPrefix {
                        key: k.clone(),
                        prefix: v.clone(),
                    })
                    .collect();
                let query = AppQuery {
                    charts: &p.charts,
                    images: &p.images,
                };
                app::find(model, &query)
                    .into_iter()
                    .filter(|a| match (&req, &a.version) {
                        (None, _) => true,
                        (Some(r), Some(v)) => crate::model::version::satisfies(r, v),
                        (Some(_), None) => false,
                    })
                    .map(|a| vec![("app".to_string(), Fact::App(a, prefixes.clone()))])
                    .collect()
            }
            Step::Postgres(p) => database::all(model)
                .into_iter()
                .filter(|db| p.min_instances.is_none_or(|m| db.instances >= m))
                .map(|db| vec![("database".to_string(), Fact::Database(db))])
                .collect(),
            Step::Database(p) => {
                let Some(Fact::App(app, prefixes)) = find(bound, "app") else {
                    return Vec::new();
                };
                let query = HostQuery {
                    env: &p.host_env,
                    bundled: p.bundled.as_deref(),
                    prefixes,
                };
                match database::of_app(model, app, &query) {
                    Ok(db) => vec![vec![("database".to_string(), Fact::Database(db))]],
                    Err(unknown) => {
                        let subject = model.object(app.object).id();
                        self.note_unknown(subject, unknown);
                        Vec::new()
                    }
                }
            }
            Step::Setting(p) => {
                let Some(Fact::Database(db)) = find(bound, "database") else {
                    return Vec::new();
                };
                let setting = settings::effective(model, db, &p.name);
                let wanted: Vec<String> = p
                    .values
                    .iter()
                    .map(|v| settings::normalize(&p.name, v))
                    .collect();
                if !wanted.contains(&setting.value) {
                    return Vec::new();
                }
                let mut found = vec![("setting".to_string(), Fact::Setting(setting))];
                if let (Some(spec), Some(Fact::App(app, prefixes))) =
                    (&p.session, find(bound, "app"))
                {
                    let query = SessionQuery {
                        database_env: spec.database_env.as_deref(),
                        default_database: spec.default_database.as_deref(),
                        user_env: spec.user_env.as_deref(),
                        default_user: spec.default_user.as_deref(),
                        options_env: &spec.options_env,
                    };
                    let vars = env::of_app(model, app, prefixes);
                    let unseen = env::has_hidden_sources(model, app);
                    let session =
                        session::of_app(model, db, &vars, &query, &p.name, unseen.as_deref());
                    match session.setting {
                        // The app's sessions run with a value the rule
                        // does not flag, on every connection: no finding.
                        Some(s) if !s.bootstrap_only && !wanted.contains(&s.value) => {
                            return Vec::new();
                        }
                        Some(s) if !wanted.contains(&s.value) => {
                            found.push(("session".to_string(), Fact::Session(s, session.notes)));
                        }
                        _ if !session.notes.is_empty() => {
                            found.push(("session".to_string(), Fact::SessionNotes(session.notes)));
                        }
                        _ => {}
                    }
                }
                vec![found]
            }
            Step::Storage(p) => self.storage(p, bound),
            Step::DataVolume(p) => self.data_volume(p),
            Step::SynchronousReplication => {
                let Some(Fact::Database(db)) = find(bound, "database") else {
                    return Vec::new();
                };
                replication::synchronous(model, db)
                    .map(|s| vec![("replication".to_string(), Fact::Replication(s))])
                    .into_iter()
                    .collect()
            }
            Step::Env(p) => {
                let Some(Fact::App(app, prefixes)) = find(bound, "app") else {
                    return Vec::new();
                };
                let vars = env::of_app(model, app, prefixes);
                let name = p.bind_as.clone().unwrap_or_else(|| "env".to_string());
                let fact = match env::lookup(&vars, &p.name) {
                    None => Fact::EnvAbsent {
                        name: p.name.clone(),
                        hidden_source: env::has_hidden_sources(model, app),
                    },
                    Some(v) => Fact::Env(v.clone()),
                };
                let seen = match &fact {
                    Fact::Env(v) => match v.known() {
                        Some(text) => Seen::Known {
                            text: text.to_string(),
                            node: v.node.as_ref(),
                        },
                        None => Seen::Hidden,
                    },
                    _ => Seen::Absent,
                };
                if passes(&p.is, &seen) {
                    vec![vec![(name, fact)]]
                } else {
                    Vec::new()
                }
            }
            Step::Values(p) => {
                let Some(Fact::App(app, _)) = find(bound, "app") else {
                    return Vec::new();
                };
                let Some(release) = model.release(app.object) else {
                    return Vec::new();
                };
                match path_test(&p.path, &p.is, &release.values, &mut self.work) {
                    Some(hit) => vec![vec![(
                        "value".to_string(),
                        Fact::Value {
                            object: app.object,
                            path: hit
                                .as_ref()
                                .map_or(p.path.clone(), |(_, shown)| shown.clone()),
                            node: hit.map(|(n, _)| n),
                            at_default: Vec::new(),
                        },
                    )]],
                    None => Vec::new(),
                }
            }
            Step::Object(p) => {
                let only = match &p.of {
                    Some(name) => match find(bound, name).and_then(object_of) {
                        Some(object) => Some(object),
                        None => return Vec::new(),
                    },
                    None => None,
                };
                // With an app bound, objects another cluster's Flux tree
                // applies are not the app's concern.
                let tree = match find(bound, "app") {
                    Some(Fact::App(a, _)) => model.object(a.object).tree,
                    _ => None,
                };
                model
                    .objects
                    .iter()
                    .enumerate()
                    .filter_map(|(i, o)| {
                        self.work += 1;
                        let kind_matches = p.kind == "*" || o.kind() == p.kind;
                        let other_tree = tree.is_some() && o.tree.is_some() && o.tree != tree;
                        if only.is_some_and(|only| only != i)
                            || o.group() != p.group
                            || !kind_matches
                            || other_tree
                        {
                            return None;
                        }
                        let mut last = None;
                        for t in &p.tests {
                            last = Some(path_test(&t.path, &t.is, &o.root, &mut self.work)?);
                        }
                        let hit = last.flatten();
                        let at_default = match (p.postgres_parameters, p.tests.last()) {
                            (true, Some(t)) => parameters_at_default(t, &o.root, hit.as_ref()),
                            _ => Vec::new(),
                        };
                        Some(vec![(
                            "object".to_string(),
                            Fact::Value {
                                object: i,
                                at_default,
                                path: match &hit {
                                    Some((_, shown)) => shown.clone(),
                                    None => {
                                        p.tests.last().map(|t| t.path.clone()).unwrap_or_default()
                                    }
                                },
                                node: hit.map(|(n, _)| n),
                            },
                        )])
                    })
                    .collect()
            }
            Step::StorageClasses(p) => {
                // Per cluster: several trees of one repo each have their own default.
                let defaults: Vec<ClassDecl> = storage::classes(model, None)
                    .into_iter()
                    .filter(|c| c.is_default)
                    .collect();
                let mut trees: Vec<Option<u32>> = defaults
                    .iter()
                    .map(|c| model.object(c.object).tree)
                    .collect();
                trees.sort();
                trees.dedup();
                trees
                    .into_iter()
                    .filter_map(|t| {
                        let mut group: Vec<ClassDecl> = defaults
                            .iter()
                            .filter(|c| {
                                let tree = model.object(c.object).tree;
                                tree == t || tree.is_none() || t.is_none()
                            })
                            .cloned()
                            .collect();
                        // One name is one cluster object: two releases that
                        // declare the same class do not make two defaults
                        // (Helm refuses to adopt an object another release
                        // owns), so count each name once, first declaration kept.
                        let mut seen = std::collections::HashSet::new();
                        group.retain(|c| seen.insert(c.name.clone()));
                        (group.len() >= p.min_defaults.max(1))
                            .then(|| vec![("classes".to_string(), Fact::Classes(group))])
                    })
                    .collect()
            }
            Step::FluxPathMissing => crate::model::flux::missing_paths(model)
                .into_iter()
                .map(|(object, node)| {
                    vec![(
                        "kustomization".to_string(),
                        Fact::Value {
                            object,
                            node: Some(node),
                            path: "$.spec.path".into(),
                            at_default: Vec::new(),
                        },
                    )]
                })
                .collect(),
            Step::FluxBuildFails => crate::model::flux::failed_builds(model)
                .into_iter()
                .map(|(object, node, what)| {
                    vec![(
                        "kustomization".to_string(),
                        Fact::Value {
                            object,
                            node: Some(node),
                            path: what.into(),
                            at_default: Vec::new(),
                        },
                    )]
                })
                .collect(),
            Step::UndefinedVariable => crate::model::flux::undefined_variables(model)
                .into_iter()
                .map(|(object, name, node)| {
                    vec![(
                        "variable".to_string(),
                        Fact::Variable { object, name, node },
                    )]
                })
                .collect(),
            Step::ReleaseCrossed(p) => self.release_step(p, bound, true),
            Step::ReleaseReached(p) => self.release_step(p, bound, false),
            Step::ParameterDrift(p) => model
                .objects
                .iter()
                .enumerate()
                .filter_map(|(i, o)| Some((i, o, o.live.as_deref()?)))
                .flat_map(|(i, o, live)| {
                    crate::source::link::parameter_drift(&o.root, live)
                        .into_iter()
                        .map(move |drift| (i, drift))
                })
                .filter(|(_, d)| p.names.is_empty() || p.names.contains(&d.name))
                .map(|(object, drift)| vec![("drift".to_string(), Fact::Drift { object, drift })])
                .collect(),
            Step::UnusedSuppression => Vec::new(),
            // Per subject, the first branch that holds: branches that bind
            // objects of their own (`object:`) each find every object they
            // match, but a place two branches match (the same object, the
            // same node) is bound once; a branch that binds no object holds
            // once.
            Step::AnyOf(branches) => {
                let mut out = Vec::new();
                let mut subjects = std::collections::HashSet::new();
                for branch in branches {
                    let mut found = Vec::new();
                    self.run(branch, bound.clone(), &mut found);
                    for result in found {
                        let new = result[bound.len()..].to_vec();
                        let subject: Vec<_> = new.iter().map(|(_, f)| subject_of(f)).collect();
                        if subjects.insert(subject) {
                            out.push(new);
                        }
                    }
                }
                out
            }
        }
    }
}

impl Ctx<'_, '_> {
    /// The storage a rule asks about: under the bound volume, at the
    /// bound object's (or app's) `classAt`, or under the bound database.
    fn storage(&mut self, p: &StorageStep, bound: &Bindings) -> Vec<Bindings> {
        let model = self.model;
        let (subject, found) = match (
            find(bound, "volume"),
            &p.class_at,
            find(bound, "object"),
            find(bound, "app"),
            find(bound, "database"),
        ) {
            (Some(Fact::Volume(m, _)), ..) => (m.object, volume::storage(model, m)),
            (None, Some(path), Some(Fact::Value { object, .. }), ..) => (
                *object,
                class_at(model, *object, path, &model.object(*object).root),
            ),
            (None, Some(path), _, Some(Fact::App(a, _)), _) => match model.release(a.object) {
                Some(release) => (a.object, class_at(model, a.object, path, &release.values)),
                None => return Vec::new(),
            },
            (None, None, _, _, Some(Fact::Database(db))) => {
                (db.object, storage::of_database(model, db).map(Some))
            }
            _ => return Vec::new(),
        };
        match found {
            Ok(Some(s))
                if p.category
                    .iter()
                    .any(|c| Category::parse(c) == Some(s.category))
                    && (p.mount_options.is_empty()
                        || storage::mount_options(model, &s.decl)
                            .iter()
                            .any(|o| p.mount_options.contains(o))) =>
            {
                vec![vec![("storage".to_string(), Fact::Storage(s))]]
            }
            Ok(_) => Vec::new(),
            Err(unknown) => {
                let subject = model.object(subject).id();
                self.note_unknown(subject, unknown);
                Vec::new()
            }
        }
    }

    /// Each listed app found, with the volume over its data path, unless
    /// a variable moves its database elsewhere.
    fn data_volume(&mut self, p: &DataVolumeStep) -> Vec<Bindings> {
        let model = self.model;
        let mut out = Vec::new();
        for entry in &p.apps {
            let query = AppQuery {
                charts: &[],
                images: &entry.images,
            };
            for a in app::find(model, &query) {
                let subject = model.object(a.object).id();
                if !entry.unless_env.is_empty() {
                    let vars = env::of_app(model, &a, &[]);
                    if entry
                        .unless_env
                        .iter()
                        .any(|n| env::lookup(&vars, n).is_some())
                    {
                        continue;
                    }
                    if let Some(src) = env::has_hidden_sources(model, &a) {
                        let names = entry.unless_env.join(", ");
                        self.note_unknown(
                            subject,
                            Unknown(format!(
                                "{src} could set {names}, which moves {}'s database off {}",
                                entry.name, entry.path
                            )),
                        );
                        continue;
                    }
                }
                match volume::at(model, &a, &entry.images, &entry.path) {
                    Ok(Some(m)) => out.push(vec![
                        ("app".to_string(), Fact::App(a, Vec::new())),
                        ("volume".to_string(), Fact::Volume(m, entry.name.clone())),
                    ]),
                    Ok(None) => {}
                    Err(unknown) => self.note_unknown(subject, unknown),
                }
            }
        }
        out
    }

    /// `releaseCrossed` (`bump`, against the baseline's version) and
    /// `releaseReached` (`release`, the releases the current version has
    /// reached). A change counts where its `when` steps hold.
    fn release_step(
        &mut self,
        p: &ReleaseCrossedStep,
        bound: &Bindings,
        against_baseline: bool,
    ) -> Vec<Bindings> {
        let model = self.model;
        let baseline = self.baseline;
        let mut out = Vec::new();
        if against_baseline && !baseline.is_present() {
            return out;
        }
        let files = baseline
            .releases
            .iter()
            .filter(|f| p.app.as_ref().is_none_or(|a| *a == f.app));
        for file in files {
            // The bound app, or the release file's apps (bound too).
            let (apps, bind_app) = match find(bound, "app") {
                Some(Fact::App(a, _)) => (vec![a.clone()], false),
                _ => (app::find(model, &file.query()), true),
            };
            for a in apps {
                let Some(to) = a.version.clone() else {
                    // A floating tag (`release`, `latest`) says nothing
                    // about which releases it has reached.
                    if !against_baseline {
                        let shown = a
                            .version_node
                            .as_ref()
                            .and_then(Node::scalar_text)
                            .unwrap_or_else(|| "no version".into());
                        self.note_unknown(
                            model.object(a.object).id(),
                            Unknown(format!(
                                "the {} version ({shown}) is not a release number, so the releases it runs are unknown",
                                file.app
                            )),
                        );
                    }
                    continue;
                };
                let from = if against_baseline {
                    let id = model.object(a.object).id();
                    let Some(from) = baseline.version(&file.app, &id).cloned() else {
                        continue;
                    };
                    Some(from)
                } else {
                    None
                };
                let mut scope = bound.clone();
                if bind_app {
                    scope.push(("app".to_string(), Fact::App(a.clone(), Vec::new())));
                }
                let mut crossed = Vec::new();
                let mut references = Vec::new();
                let mut context = Vec::new();
                let mut wanted = false;
                for r in file.crossed(from.as_ref(), &to) {
                    let mut texts = Vec::new();
                    for c in &r.changes {
                        let mut found = Vec::new();
                        if c.when.is_empty() {
                            found.push(scope.clone());
                        } else {
                            self.run(&c.when, scope.clone(), &mut found);
                        }
                        if found.is_empty() {
                            continue;
                        }
                        texts.push(c.text.clone());
                        if p.changes.is_empty() || p.changes.contains(&c.id) {
                            wanted = true;
                            context.extend(
                                found
                                    .into_iter()
                                    .map(|b| b[scope.len()..].to_vec())
                                    .filter(|b| !b.is_empty()),
                            );
                        }
                    }
                    if !texts.is_empty() {
                        crossed.push((r.version.clone(), texts));
                        references.extend(r.references.iter().cloned());
                    }
                }
                if !wanted {
                    continue;
                }
                let fact = Fact::Bump {
                    object: a.object,
                    app: file.app.clone(),
                    since: if against_baseline {
                        baseline.source.clone()
                    } else {
                        String::new()
                    },
                    from,
                    to,
                    crossed,
                    references,
                    context,
                };
                let mut b = Vec::new();
                if bind_app {
                    b.push(("app".to_string(), Fact::App(a, Vec::new())));
                }
                let name = if against_baseline { "bump" } else { "release" };
                b.push((name.to_string(), fact));
                out.push(b);
            }
        }
        out
    }
}

/// The object a fact is about, for steps restricted to it (`of`).
/// What a fact is about, to tell two branches' bindings of one place apart
/// from bindings of two: its object and, for a value, the node's place.
fn subject_of(fact: &Fact) -> (Option<ObjRef>, Option<(u32, u32)>) {
    let place = match fact {
        Fact::Value { node: Some(n), .. } => Some((n.span.file.0, n.span.start)),
        _ => None,
    };
    (object_of(fact), place)
}

fn object_of(fact: &Fact) -> Option<ObjRef> {
    match fact {
        Fact::App(a, _) => Some(a.object),
        Fact::Database(db) => Some(db.object),
        Fact::Value { object, .. }
        | Fact::Bump { object, .. }
        | Fact::Variable { object, .. }
        | Fact::Drift { object, .. } => Some(*object),
        _ => None,
    }
}

/// The storage of the class named at `path` in `root` (an object, or a
/// release's values); `Ok(None)` when nothing is written there.
fn class_at(
    model: &Model,
    object: ObjRef,
    path: &str,
    root: &Node,
) -> Result<Option<Storage>, Unknown> {
    let written = select(path, root)
        .unwrap_or_default()
        .into_iter()
        .find(|n| n.scalar_text().is_some_and(|t| !t.is_empty()));
    match written {
        Some(node) => storage::of_request(model, object, Some(node.clone())).map(Some),
        None => Ok(None),
    }
}

fn find<'b>(bound: &'b Bindings, name: &str) -> Option<&'b Fact> {
    bound.iter().rev().find(|(n, _)| n == name).map(|(_, f)| f)
}

/// What a test sees of a value.
enum Seen<'a> {
    Known {
        text: String,
        node: Option<&'a Node>,
    },
    /// Set where the repo does not show the value (a Secret).
    Hidden,
    Absent,
}

fn passes(test: &ValueTest, seen: &Seen) -> bool {
    let in_list =
        |val: &str, list: &[String]| list.iter().any(|l| l.eq_ignore_ascii_case(val.trim()));
    let is_true = |val: &str| {
        matches!(
            val.trim().to_ascii_lowercase().as_str(),
            "true" | "1" | "yes" | "on"
        )
    };
    match (seen, test) {
        (
            Seen::Absent,
            ValueTest::Unset
            | ValueTest::NotEnabled
            | ValueTest::LacksJsonKeys(_)
            | ValueTest::NotOneOf(_),
        ) => true,
        (Seen::Absent | Seen::Hidden, _) => false,
        (Seen::Known { text, node }, test) => match test {
            ValueTest::Set => true,
            ValueTest::Unset => false,
            ValueTest::OneOf(list) => in_list(text, list),
            ValueTest::NoneOf(list) | ValueTest::NotOneOf(list) => !in_list(text, list),
            ValueTest::Enabled => is_true(text),
            ValueTest::NotEnabled => !is_true(text),
            ValueTest::LacksJsonKeys(keys) => lacks_json_keys(text, keys),
            ValueTest::Matches(pattern) => pattern.is_match(text),
            ValueTest::NotString => {
                node.is_some_and(|n| !matches!(n.value, crate::yaml::Value::Str(_)))
            }
            // Decided on the map itself, in `path_test`.
            ValueTest::KeysOtherThan(_) => false,
        },
    }
}

/// `CONN_OPTIONS` is base64 of a JSON object of libpq keywords.
fn lacks_json_keys(val: &str, keys: &[String]) -> bool {
    let Some(bytes) = crate::source::flux::data::decode_base64(val.trim()) else {
        return true;
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(&bytes)
    else {
        return true;
    };
    !keys.iter().any(|k| map.contains_key(k))
}

/// Runs a JSONPath test on `root`: `Some(node)` when it holds (the node
/// that passed, `None` for tests on absence), `None` when it does not.
fn path_test(
    path: &str,
    test: &ValueTest,
    root: &Node,
    work: &mut usize,
) -> Option<Option<(Node, String)>> {
    // Paths are checked when the rule is loaded (jsonpath::validate).
    let hits = select(path, root).unwrap_or_default();
    *work += hits.len();
    if hits.is_empty() {
        return passes(test, &Seen::Absent).then_some(None);
    }
    if let ValueTest::KeysOtherThan(allowed) = test {
        // The first key the map should not have, shown with its path.
        return hits.into_iter().find_map(|n| {
            let (key, value) = n
                .as_map()?
                .iter()
                .find(|(k, _)| k.as_str().is_some_and(|k| !allowed.iter().any(|a| a == k)))?;
            let shown = format!("{}.{}", path.trim_start_matches("$."), key.as_str()?);
            Some(Some((value.clone(), shown)))
        });
    }
    hits.into_iter()
        .find(|n| {
            let seen = match n.scalar_text() {
                Some(text) => Seen::Known {
                    text,
                    node: Some(n),
                },
                None if n.is_null() => Seen::Known {
                    text: String::new(),
                    node: Some(n),
                },
                None => Seen::Known {
                    text: n.to_json().to_string(),
                    node: Some(n),
                },
            };
            passes(test, &seen)
        })
        .map(|n| Some((n.clone(), path.to_string())))
}

/// The Postgres parameters a matched test found (the keys a
/// `keysOtherThan` map should not have, or every entry of a matched
/// parameters map) as `name=value`, when each is at PostgreSQL's default;
/// empty when one is not, or its default is not known here.
fn parameters_at_default(
    test: &super::schema::PathTest,
    root: &Node,
    hit: Option<&(Node, String)>,
) -> Vec<String> {
    let entries: Vec<(&Node, &Node)> = match &test.is {
        // The same map `path_test` named its first stray key from.
        ValueTest::KeysOtherThan(allowed) => {
            let stray = |k: &Node| k.as_str().is_some_and(|k| !allowed.iter().any(|a| a == k));
            select(&test.path, root)
                .unwrap_or_default()
                .into_iter()
                .filter_map(Node::as_map)
                .find(|m| m.iter().any(|(k, _)| stray(k)))
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| stray(k))
                        .map(|(k, v)| (k, v))
                        .collect()
                })
                .unwrap_or_default()
        }
        _ => hit
            .and_then(|(n, _)| n.as_map())
            .map(|m| m.iter().map(|(k, v)| (k, v)).collect())
            .unwrap_or_default(),
    };
    let at_default: Vec<String> = entries
        .iter()
        .filter_map(|(k, v)| {
            let name = k.as_str()?;
            let value = settings::normalize(name, &v.scalar_text()?);
            (value == settings::normalize(name, settings::default_of(name)?))
                .then(|| format!("{name}={value}"))
        })
        .collect();
    if at_default.len() == entries.len() {
        at_default
    } else {
        Vec::new()
    }
}

/// The first 8 bytes of sha256(`prefix` `text`), in hex: a finding's
/// fingerprint, and a fingerprint told apart from a same-named twin's.
fn rehash(prefix: &str, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prefix);
    hasher.update(text);
    hasher
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Builds the finding for one complete set of bindings.
fn finding(model: &Model, rule: &Rule, bindings: &Bindings) -> Finding {
    let mut labels: Vec<(String, Label)> = Vec::new();
    let mut evidence = Vec::new();
    let mut notes = Vec::new();
    let mut severity = rule.severity;
    // Said after the message when what is ignored changes nothing.
    let mut harmless: Option<String> = None;
    let mut identity = vec![rule.id.clone()];
    for (name, fact) in bindings {
        let (ls, ev, id) = describe(model, fact);
        labels.extend(ls.into_iter().map(|l| (name.clone(), l)));
        evidence.extend(ev.into_iter().map(|(k, v)| Evidence {
            key: format!("{name}.{k}"),
            value: v,
        }));
        identity.push(id);
        match fact {
            Fact::Session(setting, caveats) => {
                severity = Severity::Info;
                notes.push(format!(
                    "a remedy the repository only partly shows: {}; that SQL runs once, when \
                     the cluster is created, so whether this cluster has it (or had it changed \
                     since) is not in the repository; the commit probe (--probe-dsn, or --live \
                     with probes), connected as the app, sees the value its sessions get \
                     (pg_db_role_setting)",
                    setting.source
                ));
                notes.extend(caveats.iter().cloned());
            }
            Fact::SessionNotes(caveats) => notes.extend(caveats.iter().cloned()),
            _ => {}
        }
        if let Fact::Value { at_default, .. } = fact
            && !at_default.is_empty()
        {
            severity = Severity::Info;
            harmless = Some(format!(
                ", but {} {} PostgreSQL's default, so the server runs as written",
                at_default.join(", "),
                if at_default.len() == 1 { "is" } else { "are" }
            ));
            notes.push(
                "harmless today; a value changed there later will not take effect either: \
                 move it where the operator reads it, or delete it"
                    .into(),
            );
        }
        if let Fact::EnvAbsent {
            name: var,
            hidden_source: Some(src),
        } = fact
        {
            notes.push(format!(
                "{var} is not set in the repository; {src} could still set it"
            ));
        }
    }
    let primary_name = rule
        .primary
        .clone()
        .or_else(|| bindings.first().map(|(n, _)| n.clone()))
        .unwrap_or_default();
    // A setting left at its default in an object without a parameters
    // map has no label of its own: the database it would be added to is
    // where the fix edits then, and a place that stays put across bumps.
    let primary_index = labels
        .iter()
        .position(|(n, _)| *n == primary_name)
        .or_else(|| {
            (primary_name == "setting")
                .then(|| labels.iter().rposition(|(n, _)| n == "database"))
                .flatten()
        })
        .unwrap_or(0);
    let primary = if labels.is_empty() {
        Label {
            span: Default::default(),
            text: String::new(),
        }
    } else {
        labels.remove(primary_index).1
    };
    notes.extend(applied_as_written_note(model, primary.span.file));
    let mut fields: BTreeMap<String, String> = evidence
        .iter()
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect();
    // Wording for messages only, not evidence: the facts behind it (the
    // copies label) are shown already.
    for (name, fact) in bindings {
        if let Fact::Storage(st) = fact {
            fields.insert(format!("{name}.replication"), replication(st).into());
        }
    }
    let fingerprint = rehash("", &identity.join("\u{1f}"));
    Finding {
        rule: rule.id.clone(),
        severity,
        message: fill(&rule.message, &fields) + harmless.as_deref().unwrap_or(""),
        primary,
        related: labels.into_iter().map(|(_, l)| l).collect(),
        evidence,
        notes,
        help: rule.remediation.trim().to_string(),
        unconfirmed_severity: (severity != rule.severity).then_some(rule.severity),
        fingerprint,
        fix: rule
            .fix
            .as_ref()
            .map(|spec| build_fix(model, spec, bindings, &fields)),
    }
}

/// In a repository that Flux renders, a finding in a file no Flux
/// Kustomization applies (objects loaded as written: a bootstrap file, or
/// one nothing applies any more, as an old cluster's directory) says so:
/// whether it runs depends on something the repository does not show.
fn applied_as_written_note(model: &Model, file: crate::yaml::FileId) -> Option<String> {
    if model.flux.is_empty() {
        return None;
    }
    let mut objects = model.with_text_in(file).map(|r| model.object(r)).peekable();
    objects.peek()?;
    // A loose Flux Kustomization is linted only when a rendered one waits
    // for it (dependsOn), which says something applies it.
    if !objects.all(|o| {
        o.tree.is_none() && !o.is_live() && !o.is("kustomize.toolkit.fluxcd.io", "Kustomization")
    }) {
        return None;
    }
    Some(format!(
        "no Flux Kustomization applies {}: its objects were checked as written, as `kubectl \
         apply` would send them; if nothing applies this file by hand, none of this reaches \
         the cluster",
        model.sources.path(file).display()
    ))
}

/// The rule's fix for these bindings. A fix the tool cannot write (a
/// value it cannot see, a form it cannot edit) becomes display-only and
/// says why, rather than guessing.
fn build_fix(
    model: &Model,
    spec: &FixSpec,
    bindings: &Bindings,
    fields: &BTreeMap<String, String>,
) -> Fix {
    let mut notes = vec![spec.safety.trim().to_string()];
    let app = find(bindings, "app");
    let edits: Result<Vec<Edit>, String> = if let Some(p) = &spec.set_postgres_parameter {
        match (find(bindings, "database"), find(bindings, "setting")) {
            (Some(Fact::Database(db)), Some(Fact::Setting(_)))
                if model.object(db.object).is_live() =>
            {
                notes.extend(templates::live_postgres_parameter(
                    model, db, &p.name, &p.value,
                ));
                Ok(Vec::new())
            }
            (Some(Fact::Database(db)), Some(Fact::Setting(setting))) => {
                if let Some(per) = &p.per_database {
                    let (vars, hidden) = match app {
                        Some(Fact::App(a, prefixes)) => (
                            env::of_app(model, a, prefixes),
                            env::has_hidden_sources(model, a).is_some(),
                        ),
                        _ => (Vec::new(), true),
                    };
                    notes.extend(templates::per_database_notes(
                        db, &vars, hidden, per, &p.name, &p.value,
                    ));
                }
                templates::postgres_parameter(model, db, setting, &p.value).map(|e| vec![e])
            }
            _ => Err("the rule binds no database setting to change".into()),
        }
    } else {
        match app {
            Some(Fact::App(a, _)) if model.object(a.object).is_live() => {
                notes.extend(templates::flux_managed_note(model.object(a.object)));
                Err("the app is not declared in the repository; change its values where it is installed".into())
            }
            Some(Fact::App(a, prefixes)) => {
                let anchor = bindings.iter().find_map(|(_, f)| match f {
                    Fact::Env(v) => Some(v),
                    _ => None,
                });
                let targets: Vec<(&str, templates::EnvTarget)> = spec
                    .set_app_env
                    .iter()
                    .map(|e| {
                        let target = match (&e.base64_json, &e.value) {
                            (Some(keys), _) => templates::EnvTarget::Base64Json(keys),
                            (None, v) => templates::EnvTarget::Value(v.as_deref().unwrap_or("")),
                        };
                        (e.name.as_str(), target)
                    })
                    .collect();
                templates::app_env(model, a, prefixes, anchor, &targets)
            }
            _ => Err("the rule binds no app to change".into()),
        }
    };
    // The object whose value the fix is for: an edit that also changes
    // text other objects or other places render is not written.
    let target = match (find(bindings, "database"), app) {
        (Some(Fact::Database(db)), _) if spec.set_postgres_parameter.is_some() => Some(db.object),
        (_, Some(Fact::App(a, _))) => Some(a.object),
        _ => None,
    };
    let edits = edits.and_then(|edits| {
        let shared = target.and_then(|t| {
            edits
                .iter()
                .find_map(|e| crate::fix::shared::why_shared(model, t, e))
        });
        match shared {
            Some(why) => Err(why),
            None => Ok(edits),
        }
    });
    let title = fill(&spec.title, fields);
    match edits {
        Ok(edits) if !edits.is_empty() => Fix {
            applicability: spec.applicability,
            title,
            edits,
            notes,
        },
        Ok(_) => Fix {
            applicability: Applicability::DisplayOnly,
            title,
            edits: Vec::new(),
            notes,
        },
        Err(reason) => {
            notes.insert(0, format!("not applied automatically: {reason}"));
            Fix {
                applicability: Applicability::DisplayOnly,
                title,
                edits: Vec::new(),
                notes,
            }
        }
    }
}

/// Fills `{binding.field}` placeholders; unknown ones stay visible.
/// `{storage.replication}`: how sure the repository lets a message be
/// that a class copies every write to other nodes. A class of an external
/// Ceph cluster (ceph-csi's `rbd.csi.ceph.com` with a `clusterID`) names
/// a pool whose size only that cluster knows; Chrtol's could be size 1.
fn replication(st: &crate::model::storage::Storage) -> &'static str {
    match &st.decl.copies {
        Some(_) => "already replicates every write over the network",
        None => {
            "usually replicates every write over the network (how many copies it keeps is \
             not in the repository)"
        }
    }
}

fn fill(template: &str, fields: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => {
                let key = &rest[open + 1..open + close];
                match fields.get(key) {
                    Some(v) => out.push_str(v),
                    None => out.push_str(&rest[open..open + close + 1]),
                }
                rest = &rest[open + close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Labels, evidence fields and a stable identity for one fact.
fn describe(model: &Model, fact: &Fact) -> (Vec<Label>, Vec<(String, String)>, String) {
    let obj_span = |r: usize| {
        let o = model.object(r);
        o.root
            .path(&["metadata", "name"])
            .map_or(o.root.span, |n| n.span)
    };
    match fact {
        Fact::App(app, _) => {
            let version = app
                .version
                .as_ref()
                .map(|v| shown(model, app.version_node.as_ref(), v.to_string()))
                .unwrap_or_else(|| "?".into());
            let span = app
                .version_node
                .as_ref()
                .map_or_else(|| obj_span(app.object), |n| n.span);
            let mut labels = vec![Label {
                span,
                text: format!("{} {version}", app.identity),
            }];
            labels.extend(app.version_node.as_ref().and_then(variable_label));
            (
                labels,
                vec![
                    ("name".into(), app.identity.clone()),
                    ("version".into(), version),
                    ("object".into(), model.object(app.object).id()),
                ],
                model.object(app.object).id(),
            )
        }
        Fact::Database(db) => {
            let name = db.name(model).to_string();
            let mut labels = Vec::new();
            if let Some(host) = &db.host {
                labels.push(Label {
                    span: host.span,
                    text: format!("uses database {name}"),
                });
            }
            labels.push(Label {
                span: obj_span(db.object),
                text: if db.values_key.is_empty() {
                    format!("{} cluster {name}", db.provider.as_str())
                } else {
                    format!(
                        "{name}'s bundled Postgres (Bitnami subchart, values `{}`)",
                        db.values_key
                    )
                },
            });
            (
                labels,
                vec![
                    ("name".into(), name),
                    ("provider".into(), db.provider.as_str().into()),
                    ("instances".into(), db.instances.to_string()),
                    ("object".into(), model.object(db.object).id()),
                ],
                format!("{}#{}", model.object(db.object).id(), db.values_key),
            )
        }
        Fact::Setting(s) => {
            let value = shown(model, s.node.as_ref(), s.value.clone());
            let label = match (&s.node, &s.container) {
                (Some(n), _) => Label {
                    span: n.span,
                    text: format!("{} = {value}", s.name),
                },
                (None, Some(c)) => Label {
                    span: first_line(model, c.span),
                    text: format!(
                        "{} is not set here, so it is {} (the default)",
                        s.name, s.value
                    ),
                },
                (None, None) => Label {
                    span: Default::default(),
                    text: String::new(),
                },
            };
            let labels = if label.text.is_empty() {
                Vec::new()
            } else {
                vec![label]
            };
            let source = if s.node.is_some() {
                "written"
            } else {
                "default"
            };
            (
                labels,
                vec![
                    ("name".into(), s.name.clone()),
                    ("value".into(), value),
                    ("source".into(), source.into()),
                ],
                s.name.clone(),
            )
        }
        Fact::Storage(st) => {
            let class = shown(model, st.requested_at.as_ref(), st.class.clone());
            let mut labels = Vec::new();
            if let Some(req) = &st.requested_at {
                labels.push(Label {
                    span: req.span,
                    text: format!("storage class {class}"),
                });
                labels.extend(variable_label(req));
            }
            labels.push(Label {
                span: st.decl.span,
                text: format!(
                    "{}{}: {}",
                    st.decl.provisioner,
                    if st.decl.is_default && st.requested_at.is_none() {
                        " (default class)"
                    } else {
                        ""
                    },
                    st.category.as_str()
                ),
            });
            if let Some(copies) = &st.decl.copies {
                labels.push(Label {
                    span: copies.span,
                    text: format!("{}: {} (copies of each block)", copies.key, copies.count),
                });
            }
            (
                labels,
                vec![
                    ("class".into(), class.clone()),
                    ("provisioner".into(), st.decl.provisioner.clone()),
                    ("category".into(), st.category.as_str().into()),
                ],
                class,
            )
        }
        Fact::Volume(m, app) => (
            vec![Label {
                span: first_line(model, m.node.span),
                text: format!(
                    "{} is on volume {}, mounted at {}",
                    m.data_path, m.volume, m.mount_path
                ),
            }],
            vec![
                ("app".into(), app.clone()),
                ("path".into(), m.data_path.clone()),
                ("mount".into(), m.mount_path.clone()),
                ("name".into(), m.volume.clone()),
            ],
            format!("{}:{}", m.volume, m.data_path),
        ),
        Fact::Session(s, _) => (
            vec![Label {
                span: s.span,
                text: format!("run once at bootstrap: {}", s.source),
            }],
            vec![
                ("value".into(), s.value.clone()),
                ("source".into(), s.source.clone()),
            ],
            String::new(),
        ),
        Fact::SessionNotes(_) => (Vec::new(), Vec::new(), String::new()),
        Fact::Replication(r) => (
            vec![Label {
                span: r.node.span,
                text: format!("synchronous replication: {}", r.setting),
            }],
            vec![("setting".into(), r.setting.clone())],
            r.setting.clone(),
        ),
        Fact::Env(v) => {
            let secret = v.secret
                || model.sources.is_secret_span(v.span)
                || v.node.as_ref().is_some_and(|n| model.sources.is_secret(n));
            let value = |unknown: &str| match v.known() {
                Some(text) if secret => crate::yaml::redacted(text),
                known => known.unwrap_or(unknown).to_string(),
            };
            (
                vec![Label {
                    span: v.span,
                    text: format!("{}={}", v.name, value("?")),
                }],
                vec![("name".into(), v.name.clone()), ("value".into(), value(""))],
                v.name.clone(),
            )
        }
        Fact::Value {
            object, node, path, ..
        } => {
            let id = model.object(*object).id();
            let value = |n: &Node| match secret_field(model.object(*object), path) {
                true => n
                    .scalar_text()
                    .map_or_else(|| "<redacted>".into(), |text| crate::yaml::redacted(&text)),
                false => n
                    .scalar_text()
                    .map(|text| model.sources.shown_value(n, text))
                    .unwrap_or_else(|| model.sources.shown_json(n).to_string()),
            };
            let (span, text) = match node {
                Some(n) => (n.span, format!("{path}: {}", value(n))),
                None => (obj_span(*object), format!("{path} is not set")),
            };
            let mut labels = vec![Label { span, text }];
            labels.extend(node.as_ref().and_then(variable_label));
            (
                labels,
                vec![
                    ("object".into(), id.clone()),
                    ("name".into(), model.object(*object).name().to_string()),
                    ("kind".into(), model.object(*object).kind().to_string()),
                    ("path".into(), path.clone()),
                    (
                        "value".into(),
                        node.as_ref()
                            .filter(|n| n.scalar_text().is_some())
                            .map(value)
                            .unwrap_or_default(),
                    ),
                ],
                format!("{id}{path}"),
            )
        }
        Fact::Classes(classes) => (
            classes
                .iter()
                .map(|c| Label {
                    span: c.span,
                    text: format!("{} is marked default", c.name),
                })
                .collect(),
            vec![
                (
                    "names".into(),
                    classes
                        .iter()
                        .map(|c| c.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                ("count".into(), classes.len().to_string()),
            ],
            classes
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(","),
        ),
        Fact::Bump {
            object,
            app,
            since,
            from,
            to,
            crossed,
            references,
            context,
        } => {
            let releases: Vec<&str> = crossed.iter().map(|(v, _)| v.as_str()).collect();
            let facts: Vec<String> = crossed
                .iter()
                .map(|(v, texts)| format!("{v}: {}", texts.join("; ")))
                .collect();
            // The places the changes' `when` steps matched, each once.
            let mut labels: Vec<Label> = Vec::new();
            for (name, f) in context.iter().flatten() {
                // A Helm value that is absent (left at its default) is
                // part of the condition, not a place worth pointing at.
                if name == "value" && matches!(f, Fact::Value { node: None, .. }) {
                    continue;
                }
                for l in describe(model, f).0 {
                    if !labels.iter().any(|s| s.span == l.span && s.text == l.text) {
                        labels.push(l);
                    }
                }
            }
            let mut evidence = vec![
                ("app".into(), app.clone()),
                (
                    "from".into(),
                    from.as_ref().map(|v| v.to_string()).unwrap_or_default(),
                ),
                ("since".into(), since.clone()),
                ("to".into(), to.to_string()),
                ("releases".into(), releases.join(", ")),
                ("facts".into(), facts.join("; ")),
                ("references".into(), references.join(" ")),
            ];
            // Only changes with `when` steps have places to count.
            if !context.is_empty() {
                evidence.push(("count".into(), context.len().to_string()));
            }
            (
                labels,
                evidence,
                format!(
                    "{}@{app}:{}",
                    model.object(*object).id(),
                    releases.join(",")
                ),
            )
        }
        Fact::Variable { object, name, node } => (
            vec![Label {
                span: node.span,
                text: format!(
                    "${{{name}}} is defined nowhere: strict substitution fails the \
                     Kustomization here"
                ),
            }],
            vec![
                ("name".into(), name.clone()),
                ("object".into(), model.object(*object).id()),
            ],
            format!("{}${name}", model.object(*object).id()),
        ),
        Fact::Drift { object, drift } => {
            let show = |v: Option<String>| v.map_or("unset".to_string(), |v| format!("{v:?}"));
            let (repo, cluster) = (
                show(drift.declared.as_ref().and_then(Node::scalar_text)),
                show(drift.live.clone()),
            );
            let span = drift
                .declared
                .as_ref()
                .or(drift.container.as_ref())
                .map_or_else(|| obj_span(*object), |n| first_line(model, n.span));
            let id = model.object(*object).id();
            (
                vec![Label {
                    span,
                    text: format!("{} is {repo} here but {cluster} in the cluster", drift.name),
                }],
                vec![
                    ("name".into(), drift.name.clone()),
                    ("repo".into(), repo),
                    ("cluster".into(), cluster),
                    ("path".into(), drift.path.clone()),
                    ("object".into(), id.clone()),
                ],
                format!("{id}#{}.{}", drift.path, drift.name),
            )
        }
        Fact::EnvAbsent { name, .. } => (
            Vec::new(),
            vec![
                ("name".into(), name.clone()),
                ("value".into(), "(not set)".into()),
            ],
            format!("!{name}"),
        ),
    }
}

/// Whether `path` in `object` may reach a Secret's values: anything but
/// its metadata, kind, apiVersion and type named without wildcards. A
/// Secret a generator made is written in a plain file (an env file, a
/// literal), where no mask of the text finds its values.
fn secret_field(object: &crate::source::Object, path: &str) -> bool {
    let plain = ["$.metadata.", "$.kind", "$.apiVersion", "$.type"]
        .iter()
        .any(|p| path.starts_with(p))
        && !path.contains('*')
        && !path.contains("..");
    object.kind() == "Secret" && object.group().is_empty() && !plain
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
    match node.origin.as_deref()? {
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
