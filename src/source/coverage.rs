//! What became of every YAML file of the repository, and how much of what
//! Flux applies was rendered: a run never looks clean when part of the
//! repository did not reach the rules.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::files::Input;
use super::{Budget, Issue, PathKey, PathMap, PathQuery, PathSet};
use crate::yaml::FileId;

/// The fate of one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Its objects were rendered through this Flux Kustomization
    /// (`namespace/name`); `complete` is false when Flux fails that
    /// Kustomization or part of it was left out.
    Rendered { by: String, complete: bool },
    /// No Flux Kustomization reaches it and no kustomization holds it: its
    /// objects are loaded as written (applied by hand or by bootstrap).
    AsWritten,
    /// Listed by a top-level kustomization applied by hand (`kubectl
    /// apply -k`) to start Flux: its objects are loaded as written.
    ByHand { kustomization: PathBuf },
    /// A kustomization reads it as a patch, generator input, ...
    Input { role: Input, by: PathBuf },
    /// A kustomization file: configuration of its directory's build.
    Kustomization,
    /// Flux would apply it, but the Flux Kustomization it is under did not
    /// render here.
    Lost { by: String, why: String },
    /// Its directory's kustomization is built but does not list it.
    NotListed { kustomization: PathBuf },
    /// Under the path of a Flux Kustomization (`namespace/name`, written at
    /// `at`, `file:line`) that no root reaches, below the kustomization
    /// that does not list it: that Kustomization would apply it. `why` is
    /// why that one is not applied, when known.
    UnderUnapplied {
        by: String,
        at: String,
        why: Option<String>,
    },
    /// Under a kustomization no Flux Kustomization builds: nothing applies it.
    Unreachable { kustomization: PathBuf },
    /// Holds the Flux Kustomization `by` (`namespace/name`) of a tree moved
    /// away from where its paths start; `why` says so.
    Moved { by: String, why: String },
    /// Holds a Flux Kustomization outside every kustomization that no
    /// other one lists or waits for, in a repository whose bootstrap is
    /// found: nothing applies it.
    Stray,
    /// YAML with no Kubernetes object in it; what it is instead, when
    /// known (a Talos machine configuration, see [`super::talos`]).
    NoObject { what: Option<String> },
    /// Not loadable (a template, a syntax error), and why.
    Unloadable(String),
}

impl Fate {
    /// A short stable key, for JSON and for the summary.
    pub fn key(&self) -> &'static str {
        match self {
            Fate::Rendered { .. } => "rendered",
            Fate::AsWritten => "as-written",
            Fate::ByHand { .. } => "applied-by-hand",
            Fate::Input { .. } => "kustomize-input",
            Fate::Kustomization => "kustomization",
            Fate::Lost { .. } => "lost",
            Fate::NotListed { .. } => "not-listed",
            Fate::Unreachable { .. }
            | Fate::UnderUnapplied { .. }
            | Fate::Stray
            | Fate::Moved { .. } => "unreachable",
            Fate::NoObject { .. } => "no-object",
            Fate::Unloadable(_) => "unloadable",
        }
    }

    /// The reason, in words.
    pub fn reason(&self) -> String {
        match self {
            Fate::Rendered { by, complete: true } => {
                format!("rendered through Flux Kustomization {by}")
            }
            Fate::Rendered { by, .. } => format!(
                "rendered through Flux Kustomization {by}, which Flux fails or which was \
                 rendered in part (see its issues)"
            ),
            Fate::AsWritten => {
                "loaded as written: no Flux Kustomization or kustomization includes it".into()
            }
            Fate::ByHand { kustomization } => format!(
                "loaded as written: applied by hand with kubectl apply -k {} (it starts Flux)",
                kustomization.display()
            ),
            Fate::Input { role, by } => {
                format!("applied as {} by {}", role.as_str(), by.display())
            }
            Fate::Kustomization => "kustomization: read when its directory is built".into(),
            Fate::Lost { by, why } => {
                format!("not rendered: under Flux Kustomization {by}, which did not render: {why}")
            }
            Fate::NotListed { kustomization } => {
                format!("not applied: {} does not list it", kustomization.display())
            }
            Fate::UnderUnapplied { by, at, why } => {
                let mut text = format!(
                    "not applied: under the path of Flux Kustomization {by} ({at}), which is \
                     not applied"
                );
                if let Some(why) = why {
                    text.push_str(&format!(": {why}"));
                }
                text
            }
            Fate::Unreachable { kustomization } => format!(
                "not applied: not reachable from any root (no Flux Kustomization builds {})",
                kustomization.display()
            ),
            Fate::Moved { by, why } => {
                format!("not applied: Flux Kustomization {by} is of a moved tree: {why}")
            }
            Fate::Stray => "not applied: a Flux Kustomization that no kustomization or Flux \
                            Kustomization lists and none waits for (dependsOn), so no root \
                            reaches it"
                .into(),
            Fate::NoObject { what: None } => {
                "no Kubernetes object in it (no apiVersion and kind)".into()
            }
            Fate::NoObject { what: Some(what) } => {
                format!("no Kubernetes object in it: {what}, which Kubernetes does not read")
            }
            Fate::Unloadable(why) => why.clone(),
        }
    }
}

/// A file and its fate.
#[derive(Clone, Debug)]
pub struct FileFate {
    pub path: PathBuf,
    pub fate: Fate,
}

/// Figures for the summary line, JSON and SARIF.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    /// Manifest files Flux applies and that were rendered through a Flux
    /// Kustomization.
    pub rendered: usize,
    /// Manifest files Flux applies that were not rendered.
    pub lost: usize,
    /// Every file by fate key.
    pub by_fate: BTreeMap<&'static str, usize>,
    /// Flux Kustomizations: all met while rendering, and those that did not
    /// render completely, by outcome.
    pub kustomizations: usize,
    pub incomplete: BTreeMap<String, usize>,
}

impl Coverage {
    /// Takes references, not a slice: a report counts a filtered part of
    /// the repository's fates, and a copy of each (its path) was 5 % of
    /// the heap's peak on the 20k-object synthetic repository.
    pub fn of<'a>(
        fates: impl IntoIterator<Item = &'a FileFate>,
        renders: impl IntoIterator<Item = &'a FluxRender>,
    ) -> Coverage {
        let mut c = Coverage::default();
        for f in fates {
            *c.by_fate.entry(f.fate.key()).or_default() += 1;
            match f.fate {
                Fate::Rendered { .. } => c.rendered += 1,
                Fate::Lost { .. } => c.lost += 1,
                _ => {}
            }
        }
        for r in renders {
            c.kustomizations += 1;
            if r.outcome.is_complete() {
                continue;
            }
            *c.incomplete
                .entry(r.outcome.key().into_owned())
                .or_default() += 1;
        }
        c
    }

    /// One line: `412 of 415 manifest files rendered through Flux; 3 not
    /// (lost); Flux Kustomizations: 80, incomplete: 2 failed`.
    pub fn summary(&self) -> String {
        let total = self.rendered + self.lost;
        let mut line = format!(
            "{} of {total} manifest files rendered through Flux",
            self.rendered
        );
        let not: Vec<String> = self
            .by_fate
            .iter()
            .filter(|(k, _)| !matches!(**k, "rendered" | "kustomization" | "no-object"))
            .map(|(k, n)| format!("{n} {k}"))
            .collect();
        if !not.is_empty() {
            line.push_str(&format!("; other files: {}", not.join(", ")));
        }
        if self.kustomizations > 0 {
            line.push_str(&format!("; {} Flux Kustomizations", self.kustomizations));
            if !self.incomplete.is_empty() {
                let parts: Vec<String> = self
                    .incomplete
                    .iter()
                    .map(|(k, n)| format!("{n} {k}"))
                    .collect();
                line.push_str(&format!(" ({})", parts.join(", ")));
            }
        }
        line
    }
}

/// A Flux Kustomization written in the repository that no root reaches.
#[derive(Clone, Debug)]
pub struct Unapplied {
    /// `namespace/name`, or `name` when written without a namespace.
    pub id: String,
    /// The file it is written in, and the line.
    pub file: PathBuf,
    pub line: u32,
    /// Its `spec.path` in the repository: for one of a moved tree, the
    /// directory it names from the folder it was moved to.
    pub path: PathBuf,
    /// Why Flux applies nothing through it, for one of a moved tree
    /// ([`crate::source::flux`]'s `moved`).
    pub moved: Option<String>,
}

/// Where the Flux Kustomizations of moved trees are, for the files no
/// Flux Kustomization applies: each file holding one, and each one's
/// directory.
pub(crate) struct MovedTrees<'u> {
    by_file: HashMap<&'u Path, &'u Unapplied>,
    by_dir: HashMap<&'u Path, &'u Unapplied>,
}

impl<'u> MovedTrees<'u> {
    pub(crate) fn of(unapplied: &'u [Unapplied]) -> MovedTrees<'u> {
        let moved = || unapplied.iter().filter(|u| u.moved.is_some());
        MovedTrees {
            by_file: moved().map(|u| (u.file.as_path(), u)).collect(),
            by_dir: moved().map(|u| (u.path.as_path(), u)).collect(),
        }
    }

    /// The fate of a file that holds a moved tree's Flux Kustomization.
    pub(crate) fn holding(&self, file: &Path) -> Option<Fate> {
        let u = self.by_file.get(file)?;
        Some(Fate::Moved {
            by: u.id.clone(),
            why: u.moved.clone()?,
        })
    }

    /// The fate of a file under the directory of a moved tree's Flux
    /// Kustomization (the deepest), which nothing else applies.
    pub(crate) fn under(&self, file: &Path) -> Option<Fate> {
        if self.by_dir.is_empty() {
            return None;
        }
        let u = file.ancestors().skip(1).find_map(|d| self.by_dir.get(d))?;
        Some(Fate::UnderUnapplied {
            by: u.id.clone(),
            at: format!("{}:{}", u.file.display(), u.line),
            why: u.moved.clone(),
        })
    }
}

/// A file its directory's kustomization does not list, but that lies
/// deeper, under the `spec.path` of a Flux Kustomization no root reaches:
/// Flux would apply it through that one (a path without a kustomization
/// file gets one generated that lists every file), so that one not being
/// applied is the true cause, and listing the file would be the wrong fix.
/// The deepest such path wins. Likewise a file under a kustomization that
/// nothing built, when an unapplied Flux Kustomization's path is that
/// kustomization's folder or the one just above: that one would build it.
pub(crate) fn blame_unapplied(fates: &mut [FileFate], unapplied: &[Unapplied]) {
    let blamed = |f: &FileFate| matches!(f.fate, Fate::NotListed { .. } | Fate::Unreachable { .. });
    if unapplied.is_empty() || !fates.iter().any(blamed) {
        return;
    }
    // The reasons of the files that hold an unapplied one, as they were
    // before any is blamed (the reason of every file was 1.6 M
    // instructions of joryirving__home-ops' main thread).
    let holding: PathSet<PathQuery> = unapplied.iter().map(|u| PathKey::of(&u.file)).collect();
    let reasons: PathMap<PathBuf, String> = fates
        .iter()
        .filter(|f| holding.contains(&PathKey::of(&f.path)))
        .map(|f| (f.path.clone(), f.fate.reason()))
        .collect();
    for f in fates.iter_mut() {
        let (kustomization, listed) = match &f.fate {
            Fate::NotListed { kustomization } => (kustomization, true),
            Fate::Unreachable { kustomization } => (kustomization, false),
            _ => continue,
        };
        let dir = kustomization.parent().unwrap_or(Path::new(""));
        let builds = |u: &&Unapplied| match listed {
            // The kustomization of `dir` is built and leaves the file out:
            // only a deeper path would take it in.
            true => u.path != dir && u.path.starts_with(dir) && f.path.starts_with(&u.path),
            // Nothing built the kustomization of `dir`: the unapplied
            // one whose path it is, or whose path holds it (a folder its
            // kustomization lists), would.
            false => u.path == dir || dir.parent() == Some(u.path.as_path()),
        };
        let Some(u) = unapplied
            .iter()
            .filter(builds)
            .max_by_key(|u| u.path.components().count())
        else {
            continue;
        };
        let why = u.moved.clone().or_else(|| {
            reasons
                .get(&u.file)
                .and_then(|r| r.strip_prefix("not applied: "))
                .map(str::to_string)
        });
        f.fate = Fate::UnderUnapplied {
            by: u.id.clone(),
            at: format!("{}:{}", u.file.display(), u.line),
            why,
        };
    }
}

/// What became of one Flux Kustomization of the repository.
#[derive(Clone, Debug)]
pub struct FluxRender {
    /// The cluster tree it belongs to.
    pub tree: u32,
    pub namespace: String,
    pub name: String,
    /// Where it is written.
    pub file: FileId,
    /// Its `spec.path` in the repository, when known.
    pub path: Option<PathBuf>,
    pub outcome: Outcome,
}

/// How far a Flux Kustomization rendered.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Everything it applies.
    Rendered,
    /// All but this many remote entries (each an issue at its line).
    Partial(usize),
    /// Flux fails it: these local entries are missing, malformed or of
    /// the wrong kind. The rest is rendered anyway, for the other rules.
    Failed(Vec<Issue>),
    /// kustomize fails on it; nothing rendered.
    BuildFailed(Issue),
    /// A budget of the load stopped its build or render (the issue says
    /// where): nothing rendered, or, when its postBuild substitution
    /// stopped, the value there left as written. Not a fault of what is
    /// written.
    Stopped(Budget, Issue),
    /// Not built, and why.
    NotBuilt(String),
    /// It builds from a source that is not this repository.
    OtherSource(String),
}

impl Outcome {
    /// Whether Flux applies all of it as rendered here.
    pub fn is_complete(&self) -> bool {
        matches!(self, Outcome::Rendered)
    }

    pub fn key(&self) -> std::borrow::Cow<'static, str> {
        match self {
            Outcome::Rendered => "rendered".into(),
            Outcome::Partial(_) => "partly rendered (remote entries)".into(),
            Outcome::Failed(_) => "failed (build errors)".into(),
            Outcome::BuildFailed(_) => "build failed".into(),
            Outcome::Stopped(budget, _) => format!("stopped: {budget}").into(),
            Outcome::NotBuilt(_) => "not built".into(),
            Outcome::OtherSource(_) => "other source".into(),
        }
    }

    /// The outcome of a build that failed with `issue`: stopped, when a
    /// budget stopped it.
    pub fn of_failed_build(issue: Issue) -> Outcome {
        match issue.budget {
            Some(budget) => Outcome::Stopped(budget, issue),
            None => Outcome::BuildFailed(issue),
        }
    }

    /// What went wrong, in words (empty when it rendered).
    pub fn why(&self) -> String {
        match self {
            Outcome::Rendered => String::new(),
            Outcome::Partial(n) => format!("{n} remote entries left out (not fetched)"),
            Outcome::Failed(missing) => missing
                .iter()
                .map(Issue::to_string)
                .collect::<Vec<_>>()
                .join("; "),
            Outcome::BuildFailed(issue) | Outcome::Stopped(_, issue) => issue.to_string(),
            Outcome::NotBuilt(why) | Outcome::OtherSource(why) => why.clone(),
        }
    }

    /// Why nothing of it rendered, for the files under its path.
    fn lost_reason(&self) -> Option<String> {
        match self {
            Outcome::BuildFailed(issue) | Outcome::Stopped(_, issue) => Some(issue.to_string()),
            Outcome::NotBuilt(why) => Some(why.clone()),
            _ => None,
        }
    }
}

/// The Flux Kustomization whose path holds `path` and that did not render,
/// with why: the deepest such path wins.
pub(crate) fn lost_under(renders: &[FluxRender], path: &Path) -> Option<(String, String)> {
    renders
        .iter()
        .filter_map(|r| Some((r, r.path.as_deref()?, r.outcome.lost_reason()?)))
        .filter(|(_, dir, _)| path.starts_with(dir))
        .max_by_key(|(_, dir, _)| dir.components().count())
        .map(|(r, _, why)| ([r.namespace.as_str(), &r.name].join("/"), why))
}
