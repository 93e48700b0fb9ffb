//! The lint pipeline: every stage of a lint, in order, for whichever
//! front door asks (the command line today; an in-cluster server or an
//! editor would call the same [`run`]). [`run`] reads top to bottom as
//! the stages: load, config, rules, base, live, model, evaluate, filter,
//! fix, verdicts, render, exit code. The larger stages have a module of
//! their own here; the front door only turns its input into a
//! [`Request`] and writes the [`Outcome`].

mod base;
mod cluster;
pub mod editor;
mod error;
mod fixes;
mod lint;
pub mod pre_commit;
mod scope;
mod subject;
mod verdicts;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub use base::BaseRequest;
pub use cluster::ClusterRequest;
pub use error::Error;
pub use fixes::FixRequest;
pub use lint::{Linted, Options, lint_repo};
pub use verdicts::ProbeRequest;

use crate::model::Model;
use crate::report::{
    Format, concise,
    control::{self, Breaks},
    github, graph, human, inventory, json, markdown, metrics, pushgateway, sarif, statistics,
};
use crate::rules::{self, Finding, Rule, Severity, config};
use crate::source::Limits;
use crate::source::commit_tree::Tree;
use crate::source::confine::{Refused, Root};
use crate::source::ignored::Ignored;
use crate::source::repo::{self, Repo};
use crate::source::root::{self as found, Found};
use crate::source::{Files, Issue, git};
use crate::yaml::{Shown, SourceMap};
use scope::{finding_in_scope, issue_in_scope, undecided_in_scope};
use subject::Subject;

/// Exit status, as ripgrep and ruff use them.
pub const EXIT_CLEAN: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

/// Where the pipeline tells what it read and did, line by line, as it
/// goes (the command line prints each line on stderr).
pub type Log<'a> = dyn FnMut(&str) + 'a;

/// Everything a lint is asked to do.
#[derive(Debug, Clone, Default)]
pub struct Request {
    pub input: Input,
    /// Configuration file; default: `.homelab-lint.yaml` at the repository root.
    pub config: Option<PathBuf>,
    /// More rule directories; a rule with a built-in's id replaces it.
    pub rule_dirs: Vec<PathBuf>,
    pub base: BaseRequest,
    pub cluster: ClusterRequest,
    pub probe: ProbeRequest,
    pub fixes: FixRequest,
    pub format: Format,
    /// Exit 1 when a finding has at least this severity; `None`: never.
    pub fail_on: Option<Severity>,
    /// Also write Prometheus metrics (text exposition) to this file.
    pub metrics_file: Option<PathBuf>,
    /// Colour in human output.
    pub color: human::Color,
    /// Also push the metrics to this Prometheus Pushgateway (base URL).
    pub pushgateway: Option<String>,
    /// The rules chosen on the command line, over the configuration's.
    pub selection: rules::select::Selection,
    /// Findings and the summary line only: no progress lines, no coverage.
    pub quiet: bool,
    /// A count per rule instead of the findings.
    pub statistics: bool,
    pub verbose: u8,
}

/// The repository to read.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Folders or files to report on; the whole repository that holds
    /// them is read (see [`crate::source::root`]). Default: the current
    /// directory (unless only cluster state is linted).
    pub paths: Vec<PathBuf>,
    /// The example repository bundled in the binary.
    pub example: bool,
    /// What git holds to read instead of the work tree: the index or a
    /// commit. `None`: the work tree, without what git ignores.
    pub held: Option<git::Held>,
    /// Fetch remote kustomize entries within these settings (`--remote`);
    /// `None`: they are reported as not fetched.
    pub remote: Option<crate::source::remote::Settings>,
}

/// What a lint produced: the report text and the exit status.
#[derive(Debug)]
pub struct Outcome {
    pub text: String,
    pub exit: u8,
}

/// Runs a lint from reading the inputs to the exit status.
pub fn run(req: &Request, log: &mut Log) -> Result<Outcome, Error> {
    run_freeing(req, log, true)
}

/// [`run`] for a process that exits once the report is written: what was
/// loaded is left to the exit instead of freed node by node, which was 3 %
/// of a joryirving__home-ops lint (the kernel takes the pages back anyway).
pub fn run_then_exit(req: &Request, log: &mut Log) -> Result<Outcome, Error> {
    run_freeing(req, log, false)
}

fn run_freeing(req: &Request, log: &mut Log, free: bool) -> Result<Outcome, Error> {
    if req.fixes.fix && req.input.example {
        return Err(Error::FixExample);
    }
    if req.fixes.fix && req.input.held.is_some() {
        return Err(Error::FixHeld);
    }
    // The user's own --config may turn remote fetches on (never the
    // repository's: see SECURITY.md).
    let remote_req;
    let req = match (&req.config, &req.input.remote) {
        (Some(path), None) => {
            let given = config::Config::load(path, true).map_err(Error::Config)?;
            match given.remote(path).map_err(Error::Config)? {
                Some(settings) => {
                    let mut with = req.clone();
                    with.input.remote = Some(settings);
                    remote_req = with;
                    &remote_req
                }
                None => req,
            }
        }
        _ => req,
    };
    // load, and the rules, release files and kustomize's field specs beside
    // it: they need nothing of the repository, and the load's walk leaves
    // a core idle (5 % of a joryirving__home-ops lint's instructions, off
    // the wall). Errors keep their order: the load's, the configuration's, the rules'.
    let (loaded, all_rules) = std::thread::scope(|s| {
        let rules = s.spawn(|| {
            rules::releases::builtin();
            crate::source::kustomize::parsed_defaults();
            load_rules(&req.rule_dirs)
        });
        let loaded = load_subject(req);
        let rules = rules
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (loaded, rules)
    });
    let (mut subject, located) = loaded?;
    // config
    let (config, config_path) = load_config(req, &subject)?;
    if req.config.is_none() && config.asks_for_remote() {
        log(&format!(
            "warning: {}: remote.enabled is not honoured in the repository's own configuration \
             (only --remote, or a --config file you name, fetches remote resources)",
            config_path
                .as_deref()
                .map(control::path)
                .unwrap_or_default()
        ));
    }
    // rules
    let all_rules = all_rules?;
    // Suppressions may name any rule loaded, running or not.
    let known = rules::redirect::Known::of(&all_rules);
    let rules = select_rules(
        all_rules,
        &config,
        config_path.as_deref(),
        &req.selection,
        log,
    )?;
    // base
    let mut base = base::prepare(
        &req.base,
        located,
        subject.repo_mut(),
        &rules,
        &config,
        req.verbose,
        log,
    )?;
    let scope = subject.found().cloned();
    let scope = scope.as_ref();
    if let Subject::Repo(l) = &subject {
        log_listed(&l.repo, &l.found, req.verbose, log);
    }
    // live
    if req.cluster.namespace.is_some() && !req.cluster.wanted() {
        log("warning: -n/--namespace applies to cluster state: give --live or --snapshot");
    }
    if req.cluster.wanted() {
        cluster::read_into(&req.cluster, &mut subject, &mut base.baseline, log)?;
    }
    // model
    let model = subject.model();
    // evaluate
    let mut outcome = rules::lint_known(&model, &rules, &known, &base.baseline);
    outcome.issues.extend(model.release_issues());
    if req.verbose > 0 {
        let shown = scope.map(|f| undecided_in_scope(&model, f));
        for u in &outcome.undecided {
            if shown.as_ref().is_some_and(|s| !s.contains(&u.subject)) {
                continue;
            }
            // One line, whatever the names in it hold.
            let line = format!("undecided: {}: {}: {}", u.rule, u.subject, u.reason);
            log(&control::escape(&line, Breaks::Escape));
        }
        // Not problems (the cluster often makes them), but Helm gets
        // none of their values here.
        for absent in model.release_absent() {
            if issue_in_scope(&absent, scope) {
                let shown =
                    absent.shown_as(|path| control::escape(path, Breaks::Escape).into_owned());
                log(&format!("absent: {shown}"));
            }
        }
    }
    log_issues(&outcome.issues, scope, log);
    if let Subject::Repo(l) = &subject {
        log_summary(&l.repo, &l.found, &outcome.issues, req.verbose, log);
    }
    // filter
    let sources = model.sources;
    let findings = filter(outcome.findings, &config, &base, sources, scope);
    let mut findings = rules::subsume::drop_subsumed(findings, &rules);
    // Cluster state is not part of a re-render, so the finding is looked
    // for again only when the objects are the repository's alone.
    if let Subject::Repo(l) = &subject {
        let relint = (!req.cluster.wanted()).then_some((&rules[..], &base.baseline));
        fixes::verify(&req.fixes, &mut findings, &l.repo, relint, log);
    }
    // fix: the report is then a fresh lint of the files as written.
    if req.fixes.fix
        && let Some(root) = subject.root()
        && fixes::write(&req.fixes, &findings, sources, root, log)?
    {
        let mut after = req.clone();
        after.fixes.fix = false;
        return run_freeing(&after, log, free);
    }
    // verdicts
    verdicts::attach(&mut findings, &rules, &model, req, log);
    // Unread past here: the releases' values and indexes go before the
    // report, where a large run's memory peaked (BENCHMARKS.md). A small
    // run on its way to exit leaves them to it.
    if free || crate::cores::count() > 1 {
        model.free();
    } else {
        std::mem::forget(model);
    }
    // render
    let repo = match &subject {
        Subject::Repo(l) => Some(&l.repo),
        Subject::Cluster { .. } => None,
    };
    // The inputs that could not be used, for the formats that carry them.
    let problems: Vec<Issue> = repo
        .map_or(&[][..], |r| &r.issues[..])
        .iter()
        .chain(&outcome.issues)
        .filter(|i| issue_in_scope(i, scope))
        .filter(|i| base.shows_problem(i))
        .cloned()
        .collect();
    let counts = Counts {
        suppressed: outcome
            .suppressed
            .iter()
            .filter(|f| finding_in_scope(f, sources, scope))
            .count(),
    };
    let text = render(
        req, &findings, counts, &rules, sources, repo, scope, &problems, log,
    )?;
    let mut exit = exit_code(req.fail_on, &findings);
    if req.metrics_file.is_some() || req.pushgateway.is_some() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let metrics = metrics::render(&findings, &rules, now);
        if let Some(path) = &req.metrics_file {
            metrics::write(path, &metrics).map_err(|source| Error::Metrics {
                path: path.clone(),
                source,
            })?;
        }
        // A failed push still leaves the report to print: the error is
        // said and the run exits 2.
        if let Some(url) = &req.pushgateway
            && let Err(e) = pushgateway::push(url, &metrics, pushgateway::TIMEOUT)
        {
            log(&format!("error: {e}"));
            exit = EXIT_ERROR;
        }
    }
    if !free {
        std::mem::forget(findings);
        std::mem::forget(base);
        std::mem::forget(rules);
        std::mem::forget(known);
        subject.leave_to_exit();
    }
    // exit code
    Ok(Outcome { text, exit })
}

/// A repository read, and the extracted example kept alive while it is used.
pub struct Loaded {
    pub repo: Repo,
    /// Where the repository is and what of it is reported.
    pub found: Found,
    _example: Option<tempfile::TempDir>,
}

/// Reads the repository of `input`: the example, or the path given.
pub fn load(input: &Input) -> Result<Loaded, Error> {
    load_recording(input, &BaseRequest::default()).map(|(loaded, _)| loaded)
}

/// [`load`], and the base commit `base` names, if any: the load records
/// what a load of that commit can reuse when it differs from the files
/// (see [`crate::source::reuse`]).
fn load_recording(
    input: &Input,
    base: &BaseRequest,
) -> Result<(Loaded, Option<base::Located>), Error> {
    let ((found, ahead), example) = if input.example {
        let dir = crate::example::extract().map_err(Error::Example)?;
        ((Found::alone(dir.path().to_path_buf()), None), Some(dir))
    } else {
        (found::find_reading(&input.paths)?, None)
    };
    let root = &found.root;
    if !root.is_dir() {
        return Err(Error::NotADirectory(root.clone()));
    }
    let located = base::Located::of(base, &found, input.held.as_ref())?;
    let record = located.as_ref().is_some_and(base::Located::wants_reuse);
    let limits = Limits::default();
    let files = match &input.held {
        None => work_tree_files(&found, ignored_in(&found)?, HashMap::new()).reading_ahead(ahead),
        Some(held) => Files::in_commit(root, held_tree(&found, held)?, limits),
    };
    let fetcher = input
        .remote
        .clone()
        .map(|s| std::sync::Arc::new(crate::source::remote::Fetcher::new(s)));
    let files = files.fetching(fetcher);
    let files = match record {
        true => crate::source::reuse::recording(files),
        false => files,
    };
    let mut repo = repo::load_files(files);
    show_from_top(&mut repo, &found);
    scope::warn_if_read_alone(&mut repo, &found);
    let loaded = Loaded {
        repo,
        found,
        _example: example,
    };
    Ok((loaded, located))
}

/// What git ignores below the root found (nothing outside git); `Err`
/// when git did not answer in time.
fn ignored_in(found: &Found) -> Result<Ignored, Error> {
    Ok(if found.in_git() {
        Ignored::new(git::ignored(&found.root)?)
    } else {
        Ignored::default()
    })
}

/// The work tree's files below the root found, without what git ignores,
/// with the texts of `overlay` read instead of those files' (an editor's
/// unsaved buffers).
fn work_tree_files(found: &Found, ignored: Ignored, overlay: HashMap<PathBuf, String>) -> Files {
    Files::with_overlay(&found.root, Limits::default(), overlay).ignoring(ignored)
}

/// Reports name files from the git top level. The bundled example is in
/// no repository, whatever holds the temporary directory.
fn show_from_top(repo: &mut Repo, found: &Found) {
    if found.in_git() {
        repo.files.sources.set_shown(Shown {
            top: found.top.clone(),
            prefix: found.prefix.clone(),
        });
    }
}

/// The tree of the index or of a commit below the root, from git's
/// object store.
fn held_tree(found: &Found, held: &git::Held) -> Result<Tree, Error> {
    match (held, &found.top) {
        (git::Held::Index, Some(top)) => {
            let prefix = found.prefix.to_str().ok_or(Error::RootNotUtf8)?;
            Tree::open_index(top, prefix).map_err(|source| Error::Index {
                top: top.clone(),
                source,
            })
        }
        (git::Held::Commit(reference), Some(_)) => {
            Ok(git::resolve(&found.root, reference).and_then(|c| c.tree())?)
        }
        (_, None) => Err(Error::NotInGit(found.root.clone())),
    }
}

/// With cluster state and no repository named, the cluster alone is linted.
fn load_subject(req: &Request) -> Result<(Subject, Option<base::Located>), Error> {
    let repo_given = !req.input.paths.is_empty() || req.input.example;
    if req.cluster.wanted() && !repo_given {
        if req.base.reference.is_some() {
            return Err(Error::BaseWithoutRepository);
        }
        // Snapshot files are then named from the repository the
        // command runs in, if any.
        let mut sources = SourceMap::default();
        sources.set_shown(Shown {
            top: git::top_level(Path::new(".")),
            prefix: PathBuf::new(),
        });
        let cluster = Subject::Cluster {
            objects: Vec::new(),
            sources,
        };
        return Ok((cluster, None));
    }
    let (loaded, located) = load_recording(&req.input, &req.base)?;
    Ok((Subject::Repo(Box::new(loaded)), located))
}

/// One warning line per distinct issue, in first-seen order, with a
/// count when the same one was met several times (a base kustomization
/// built by many Flux Kustomizations repeats its problems).
fn log_issues(issues: &[Issue], scope: Option<&Found>, log: &mut Log) {
    let mut counted: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for issue in issues.iter().filter(|i| issue_in_scope(i, scope)) {
        // A path is shown on one line, whatever its name holds.
        let text = issue
            .clone()
            .shown_as(|path| control::escape(path, Breaks::Escape).into_owned())
            .to_string();
        match at.get(&text) {
            Some(&i) => counted[i].1 += 1,
            None => {
                at.insert(text.clone(), counted.len());
                counted.push((text, 1));
            }
        }
    }
    for (text, n) in counted {
        if n > 1 {
            log(&format!("warning: {text} (\u{d7}{n})"));
        } else {
            log(&format!("warning: {text}"));
        }
    }
}

/// What a run that only loads says: [`log_listed`], then the summary.
pub fn log_load(repo: &Repo, found: &Found, verbose: u8, log: &mut Log) {
    log_listed(repo, found, verbose, log);
    log_summary(repo, found, &[], verbose, log);
}

/// Problems with single files are warnings; skipped files (and what git
/// ignores) are listed only with -v; only those under the paths reported.
fn log_listed(repo: &Repo, found: &Found, verbose: u8, log: &mut Log) {
    log_issues(&repo.issues, Some(found), log);
    if verbose > 0 {
        for s in repo.skipped.iter().filter(|s| found.in_scope(&s.path)) {
            log(&format!(
                "skipped: {}: {}",
                control::path(&s.path),
                s.reason
            ));
        }
        for path in repo.files.ignored().iter().filter(|p| found.in_scope(p)) {
            log(&format!(
                "ignored: {}: git ignores it and does not track it, so Flux never gets it",
                control::path(path)
            ));
        }
        for line in repo.files.remote().map(|f| f.log()).unwrap_or_default() {
            log(&control::escape(&line, Breaks::Escape));
        }
    }
}

/// The summary line, after every warning of the run: its count takes in
/// `later`, the problems met after the load (a rule's or a release's
/// inputs), which were said after the load's own.
fn log_summary(repo: &Repo, found: &Found, later: &[Issue], verbose: u8, log: &mut Log) {
    if repo.objects.is_empty() {
        // A lint of the wrong directory would otherwise pass as clean.
        log(&format!(
            "warning: no Kubernetes manifests found in {}: nothing was linted (give the \
             directory of the GitOps repository)",
            repo.files.root().display()
        ));
    }
    // The counts are of what is listed: the paths reported, not the whole
    // repository read for them.
    let skipped = repo.skipped.iter().filter(|s| found.in_scope(&s.path));
    let problems = repo
        .issues
        .iter()
        .chain(later)
        .filter(|i| issue_in_scope(i, Some(found)))
        .count();
    log(&format!(
        "loaded {} from {}; {} skipped{}; {}",
        plural(repo.objects.len(), "object"),
        plural(repo.files.sources.len(), "file"),
        plural(skipped.count(), "file"),
        if verbose > 0 { "" } else { " (-v lists them)" },
        plural(problems, "problem")
    ));
}

/// The configuration file given, which must exist, or the closest one
/// from the folder reported up to the repository root, as the repository
/// holds it (the work tree, the index, a commit), if there is one.
fn load_config(
    req: &Request,
    subject: &Subject,
) -> Result<(config::Config, Option<PathBuf>), Error> {
    let given = |p: &Path| config::Config::load(p, true).map_err(Error::Config);
    let Subject::Repo(loaded) = subject else {
        let config = req.config.as_deref().map(given).transpose()?;
        return Ok((config.unwrap_or_default(), req.config.clone()));
    };
    if let Some(p) = &req.config {
        return Ok((given(p)?, Some(p.clone())));
    }
    repo_config(req, loaded)
}

/// The configuration file closest to the folder reported, in the
/// repository or the folders above it up to the git top level.
fn repo_config(req: &Request, loaded: &Loaded) -> Result<(config::Config, Option<PathBuf>), Error> {
    let Loaded { repo, found, .. } = loaded;
    // The folders searched, closest first: from the folder reported up to
    // the root, then (on disk) up to the git top level.
    let abs_root = found.root.canonicalize().map_err(|source| Error::Path {
        path: found.root.clone(),
        source,
    })?;
    let highest = found.top.clone().unwrap_or_else(|| abs_root.clone());
    let held = req.input.held.is_some();
    let in_repo = found
        .start
        .ancestors()
        .take_while(|d| d.starts_with(&highest))
        .map(|d| d.join(config::FILE_NAME))
        .find(|candidate| match candidate.strip_prefix(&abs_root) {
            Ok(rel) if held => repo.files.is_file(rel),
            // What git holds has no file above the root to read.
            Err(_) if held => false,
            // Anything but a folder is the config, and what is not a
            // regular file is then refused by type, not passed over.
            _ => candidate.symlink_metadata().is_ok_and(|m| !m.is_dir()),
        });
    let Some(path) = in_repo else {
        return Ok((config::Config::default(), None));
    };
    let config = match path.strip_prefix(&abs_root) {
        Ok(rel) if held => {
            let bytes = repo.files.bytes(rel).map_err(Error::ConfigRead)?;
            let text =
                String::from_utf8(bytes).map_err(|_| Error::ConfigNotUtf8(rel.to_path_buf()))?;
            config::Config::parse(rel, &text).map_err(Error::Config)?
        }
        _ => {
            // The repository's own config file is the repository's:
            // confined to it like every file it holds.
            if let Err(refused @ Refused::Outside { .. }) = Root::new(&highest).resolve(&path) {
                return Err(Error::ConfigOutside { path, refused });
            }
            config::Config::load(&path, false).map_err(Error::Config)?
        }
    };
    // Its globs may name files from its folder, as reports name them
    // (from the git top level, or the root).
    let folder = path
        .parent()
        .and_then(|d| d.strip_prefix(&highest).ok())
        .unwrap_or(Path::new(""))
        .to_path_buf();
    // Named as the user named the root, when it is under it.
    let shown = match path.strip_prefix(&abs_root) {
        Ok(rel) => found.root.join(rel),
        Err(_) => path,
    };
    Ok((config.in_folder(folder), Some(shown)))
}

/// The built-in and user rules, as the configuration sets them. A former
/// id of a renamed rule, in the file or on the command line, is a warning
/// that names the rule's id now.
fn select_rules(
    all: Vec<Rule>,
    config: &config::Config,
    config_path: Option<&Path>,
    selection: &rules::select::Selection,
    log: &mut Log,
) -> Result<Vec<Rule>, Error> {
    if let Some(p) = config_path {
        if let Some(problem) = config.check(&all, p).into_iter().next() {
            return Err(Error::Config(problem));
        }
        for renamed in config.renamed(&all, p) {
            log(&control::escape_line(&format!("warning: {renamed}")));
        }
    }
    let (_, renamed) = selection.redirected(&all);
    for renamed in renamed {
        log(&control::escape_line(&format!("warning: {renamed}")));
    }
    config
        .apply_to_rules(all, selection)
        .map_err(Error::Selection)
}

/// The built-in rules and those in `dirs`.
pub fn load_rules(dirs: &[PathBuf]) -> Result<Vec<Rule>, Error> {
    let (rules, issues) = rules::load(dirs);
    if issues.is_empty() {
        Ok(rules)
    } else {
        // A broken rule file is a usage error: the user asked for it.
        Err(Error::Rules(issues))
    }
}

/// The findings to report, in file and position order: those the
/// configuration does not ignore and, with --base, the new ones.
fn filter(
    findings: Vec<Finding>,
    config: &config::Config,
    base: &base::BaseRun,
    sources: &SourceMap,
    scope: Option<&Found>,
) -> Vec<Finding> {
    let in_scope = |f: &Finding| finding_in_scope(f, sources, scope);
    let mut findings: Vec<Finding> = findings
        .into_iter()
        .filter(|f| !config.ignores(f, sources))
        .filter_map(|mut f| {
            f.baseline = base.state(&f);
            base.reports(f.baseline).then_some(f)
        })
        .filter(in_scope)
        .collect();
    findings.sort_by(|a, b| {
        let key = |f: &Finding| {
            (
                sources.path(f.primary.span.file).to_path_buf(),
                f.primary.span.start,
                f.rule.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    findings
}

/// What the summary line counts beside the findings.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// Findings dropped by suppressions.
    suppressed: usize,
}

/// `repo`: the repository linted, whose coverage every format reports
/// (none when only cluster state is linted), of the files under `scope`.
#[allow(clippy::too_many_arguments)]
fn render(
    req: &Request,
    findings: &[Finding],
    counts: Counts,
    rules: &[Rule],
    sources: &SourceMap,
    repo: Option<&Repo>,
    scope: Option<&Found>,
    problems: &[Issue],
    log: &mut Log,
) -> Result<String, Error> {
    // Coverage is of the paths reported, as the findings are.
    let shown = &|p: &Path| scope.is_none_or(|f| f.in_scope(p));
    Ok(match req.format {
        _ if req.fixes.diff => {
            control::escape_line(&fixes::diffs(&req.fixes, findings, sources, log)).into_owned()
        }
        _ if req.statistics => {
            statistics::render(req.format, findings, rules).ok_or(Error::StatisticsFormat)??
        }
        Format::Human => {
            let mut text =
                human::render_sized(findings, sources, req.color.enabled(), req.verbose > 0);
            text.push_str(&summary_line(findings, counts));
            if let Some(repo) = repo.filter(|_| !req.quiet) {
                text.push_str(&format!("\n{}", repo.coverage_of(shown).0.summary()));
            }
            if let Some(line) = fixes::fixable_line(findings).filter(|_| !req.quiet) {
                text.push('\n');
                text.push_str(&line);
            }
            control::defuse_commands(&text).into_owned()
        }
        Format::Json => {
            let mut out = json::render(findings, sources);
            if let Some(repo) = repo {
                out["coverage"] = inventory::coverage_json(repo, shown);
            }
            control::to_json(&out)?
        }
        Format::Yaml => {
            let mut out = json::render(findings, sources);
            if let Some(repo) = repo {
                out["coverage"] = inventory::coverage_json(repo, shown);
            }
            control::to_yaml(&out)?
        }
        Format::Concise => {
            let mut text = concise::render(findings, sources);
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&summary_line(findings, counts));
            if let Some(repo) = repo.filter(|_| !req.quiet) {
                text.push_str(&format!("; {}", repo.coverage_of(shown).0.summary()));
            }
            control::defuse_commands(&text).into_owned()
        }
        Format::Sarif => {
            let mut out = sarif::render(findings, rules, sources);
            if let Some(repo) = repo {
                sarif::add_coverage(&mut out, repo, shown);
            }
            sarif::add_problems(&mut out, problems, sources);
            if let Some(p) = sources
                .shown_root()
                .top
                .as_deref()
                .and_then(git::provenance)
            {
                sarif::add_provenance(&mut out, &p);
            }
            control::to_json(&out)?
        }
        // Each command already ends its line.
        Format::Github => github::render(findings, problems, sources)
            .trim_end()
            .to_string(),
        Format::Markdown => {
            let coverage = repo.map(|r| r.coverage_of(shown).0.summary());
            let text = markdown::render(findings, problems, sources, coverage.as_deref());
            control::defuse_commands(text.trim_end()).into_owned()
        }
        Format::Graph(language) => {
            // Every app and database of the repository, then the findings'
            // chains over them, marked with their rules.
            let mut drawn = graph::Graph::by_namespace();
            if let Some(repo) = repo {
                for chain in rules::chains::of_repository(&Model::new(repo), rules) {
                    drawn.add_chain(&chain);
                }
            }
            for f in findings {
                drawn.add_finding(&f.chain, &f.rule);
            }
            drawn.write(language).trim_end().to_string()
        }
    })
}

/// `2 findings: 1 error, 1 warning, 0 info`, and how many were
/// suppressed when some were.
fn summary_line(findings: &[Finding], counts: Counts) -> String {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    let mut line = format!(
        "{}: {}, {}, {} info",
        plural(findings.len(), "finding"),
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
        count(Severity::Info)
    );
    if counts.suppressed > 0 {
        line.push_str(&format!("; {} suppressed", counts.suppressed));
    }
    line
}

/// `1 finding`, `2 findings`, `2 fixes`.
pub(crate) fn plural(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        _ if noun.ends_with(['s', 'x']) => format!("{n} {noun}es"),
        _ => format!("{n} {noun}s"),
    }
}

fn exit_code(fail_on: Option<Severity>, findings: &[Finding]) -> u8 {
    if fail_on.is_some_and(|t| findings.iter().any(|f| f.severity >= t)) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An identical warning is printed once, with its count.
    #[test]
    fn identical_issues_are_logged_once_with_a_count() {
        let same = Issue::file(Path::new("apps/base/kustomization.yaml"), "a problem");
        let other = Issue::file(Path::new("apps/other.yaml"), "another");
        let issues = [same.clone(), other, same.clone(), same];
        let mut lines = Vec::new();
        log_issues(&issues, None, &mut |l: &str| lines.push(l.to_string()));
        assert_eq!(
            lines,
            [
                "warning: apps/base/kustomization.yaml: a problem (\u{d7}3)",
                "warning: apps/other.yaml: another",
            ]
        );
    }
}
