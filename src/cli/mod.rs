//! Command line: argument parsing and the commands it runs.

mod args;
pub mod base;
mod complete;
mod contexts;
mod fix;
pub mod generate;
mod live;
pub mod probe;
mod verdicts;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;

pub use args::{
    Args, Command, FailOn, InventoryArgs, LintArgs, OutputFormat, RepoArgs, ReportFormat,
    RulesCommand,
};

use crate::model::Model;
use crate::report::{github, human, inventory, json, metrics, sarif};
use crate::rules::{self, Severity, config};
use crate::source::repo::{self, Repo};
use crate::yaml::Limits;

/// Exit status, as ripgrep and ruff use them.
pub const EXIT_CLEAN: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

pub fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn run(args: Args) -> Result<u8, String> {
    match args.command {
        Some(Command::Inventory(inv)) => run_inventory(&inv, args.verbose),
        Some(Command::Explain { rule, rule_dirs }) => run_explain(&rule, &rule_dirs),
        Some(Command::Rules { command }) => run_rules(command),
        Some(Command::Completions(c)) => {
            write_bytes(&generate::completions(c.shell))?;
            Ok(EXIT_CLEAN)
        }
        Some(Command::Probe { command }) => {
            write_stdout(&probe::run(&command)?)?;
            Ok(EXIT_CLEAN)
        }
        Some(Command::Complete { words }) => {
            write_stdout(complete::complete(&words).trim_end())?;
            Ok(EXIT_CLEAN)
        }
        Some(Command::Man) => {
            write_bytes(&generate::man_page().map_err(|e| e.to_string())?)?;
            Ok(EXIT_CLEAN)
        }
        None if args.lint.live.context.len() > 1 => {
            contexts::run(&args.lint.live.context, args.lint.format)
        }
        None => run_lint(
            &args.repo,
            &args.lint,
            &args.base,
            &args.fixes,
            args.verbose,
        ),
    }
}

/// Keeps the extracted example alive while the repo is used.
struct Loaded {
    repo: Repo,
    _example: Option<tempfile::TempDir>,
}

fn load(repo_args: &RepoArgs) -> Result<Loaded, String> {
    let (root, example) = if repo_args.example {
        let dir = crate::example::extract()
            .map_err(|e| format!("cannot unpack the bundled example repo: {e}"))?;
        (dir.path().to_path_buf(), Some(dir))
    } else {
        (
            repo_args.path.clone().unwrap_or_else(|| PathBuf::from(".")),
            None,
        )
    };
    if !root.is_dir() {
        return Err(format!("{} is not a directory", root.display()));
    }
    Ok(Loaded {
        repo: repo::load(&root, Limits::default()),
        _example: example,
    })
}

/// Problems with single files go to stderr; skipped files only with -v.
fn print_diagnostics(repo: &Repo, verbose: u8) {
    let mut err = std::io::stderr().lock();
    for issue in &repo.issues {
        let _ = writeln!(err, "warning: {issue}");
    }
    if verbose > 0 {
        for s in &repo.skipped {
            let _ = writeln!(err, "skipped: {}: {}", s.path.display(), s.reason);
        }
    }
    let _ = writeln!(
        err,
        "loaded {} objects from {} files; {} files skipped{}; {} problems",
        repo.objects.len(),
        repo.files.sources.len(),
        repo.skipped.len(),
        if verbose > 0 { "" } else { " (-v lists them)" },
        repo.issues.len()
    );
}

fn load_rules(dirs: &[PathBuf]) -> Result<Vec<rules::Rule>, String> {
    let (rules, issues) = rules::load(dirs);
    if issues.is_empty() {
        Ok(rules)
    } else {
        // A broken rule file is a usage error: the user asked for it.
        Err(issues
            .iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join("\n"))
    }
}

fn run_lint(
    repo_args: &RepoArgs,
    lint: &LintArgs,
    base_args: &base::BaseArgs,
    fixes: &fix::FixArgs,
    verbose: u8,
) -> Result<u8, String> {
    if fixes.fix && repo_args.example {
        return Err("--fix writes files: give a repository path, not --example".into());
    }
    // With cluster state and no repository named, the cluster alone is linted.
    let repo_given = repo_args.path.is_some() || repo_args.example;
    let mut loaded = if lint.live.wanted() && !repo_given {
        None
    } else {
        Some(load(repo_args)?)
    };
    let config_path = lint.config.clone().or_else(|| {
        loaded
            .as_ref()
            .map(|l| l.repo.files.root().join(config::FILE_NAME))
    });
    // The repository's own config file is the repository's: confined to
    // it like every file it holds. A file the user named is theirs.
    if lint.config.is_none()
        && let (Some(l), Some(p)) = (&loaded, &config_path)
        && let Some(reason) = l.repo.files.outside(Path::new(config::FILE_NAME))
    {
        return Err(format!("{}: {reason}", p.display()));
    }
    let config = match &config_path {
        Some(p) => config::Config::load(p, lint.config.is_some()).map_err(|e| e.to_string())?,
        None => config::Config::default(),
    };
    let all_rules = load_rules(&lint.rule_dirs)?;
    if let Some(p) = &config_path
        && let Some(problem) = config.check(&all_rules, p).first()
    {
        return Err(problem.to_string());
    }
    let rules = config.apply_to_rules(all_rules);
    let mut base = match &loaded {
        Some(l) => base::prepare(base_args, l.repo.files.root(), &rules, &config)?,
        None if base_args.base.is_some() => {
            return Err("--base compares two commits of a repository: give its path".into());
        }
        None => base::BaseRun::default(),
    };
    if let Some(l) = &loaded {
        print_diagnostics(&l.repo, verbose);
    }
    let mut live_only = live::State::default();
    let mut live_sources = crate::yaml::SourceMap::default();
    if lint.live.wanted() {
        let with_repo = loaded.is_some();
        let sources = match &mut loaded {
            Some(l) => &mut l.repo.files.sources,
            None => &mut live_sources,
        };
        let state = live::collect(&lint.live, sources, verbose)?;
        for w in &state.warnings {
            eprintln!("warning: {w}");
        }
        eprintln!("{}", state.summary);
        // Without --base, the versions the cluster runs are what the repo's
        // versions are bumps from: the next reconcile crosses the releases
        // in between.
        if with_repo && !base.baseline.is_present() {
            base.baseline = rules::releases::Baseline::of(
                &Model::from_parts(&state.objects, sources),
                rules::releases::builtin(),
                "running in the cluster",
            );
        }
        match &mut loaded {
            Some(l) => live::merge_into(&mut l.repo.objects, state),
            None => live_only = state,
        }
        match &mut loaded {
            Some(l) => crate::source::live::drop_rendered_workloads(&mut l.repo.objects),
            None => crate::source::live::drop_rendered_workloads(&mut live_only.objects),
        }
    }
    let model = match &loaded {
        Some(l) => Model::new(&l.repo),
        None => Model::from_parts(&live_only.objects, &live_sources),
    };
    let outcome = rules::lint_with(&model, &rules, &base.baseline);
    if verbose > 0 {
        for u in &outcome.undecided {
            eprintln!("undecided: {}: {}: {}", u.rule, u.subject, u.reason);
        }
    }
    let sources = model.sources;
    for issue in &outcome.issues {
        eprintln!("warning: {issue}");
    }
    let mut findings: Vec<rules::Finding> = outcome
        .findings
        .into_iter()
        .filter(|f| !config.ignores(f, sources))
        .filter(|f| base.is_new(f))
        .collect();
    findings.sort_by(|a, b| {
        let key = |f: &rules::Finding| {
            (
                sources.path(f.primary.span.file).to_path_buf(),
                f.primary.span.start,
                f.rule.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    // After fixing, the report is a fresh lint of the files as written.
    if fixes.fix
        && let Some(l) = &loaded
        && fix::write(fixes, &findings, sources, l.repo.files.root())?
    {
        let after = fix::FixArgs {
            fix: false,
            ..fixes.clone()
        };
        return run_lint(repo_args, lint, base_args, &after, verbose);
    }
    verdicts::attach(&mut findings, &rules, &model, &lint.live, verbose);
    let text = match lint.format {
        _ if fixes.diff => fix::diffs(fixes, &findings, sources),
        ReportFormat::Human => {
            let mut text = human::render(&findings, sources, human::use_color());
            text.push_str(&summary_line(&findings));
            text
        }
        ReportFormat::Json => serde_json::to_string_pretty(&json::render(&findings, sources))
            .map_err(|e| e.to_string())?,
        ReportFormat::Sarif => {
            serde_json::to_string_pretty(&sarif::render(&findings, &rules, sources))
                .map_err(|e| e.to_string())?
        }
        // Each command already ends its line.
        ReportFormat::Github => github::render(&findings, sources).trim_end().to_string(),
    };
    write_stdout(&text)?;
    if let Some(path) = &lint.metrics_file {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        metrics::write(path, &metrics::render(&findings, &rules, now))
            .map_err(|e| format!("cannot write metrics to {}: {e}", path.display()))?;
    }
    let threshold = match lint.fail_on {
        FailOn::Info => Some(Severity::Info),
        FailOn::Warning => Some(Severity::Warning),
        FailOn::Error => Some(Severity::Error),
        FailOn::Never => None,
    };
    let failing = threshold.is_some_and(|t| findings.iter().any(|f| f.severity >= t));
    Ok(if failing { EXIT_FINDINGS } else { EXIT_CLEAN })
}

fn summary_line(findings: &[rules::Finding]) -> String {
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    format!(
        "{} findings: {} errors, {} warnings, {} info",
        findings.len(),
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Info)
    )
}

fn run_explain(id: &str, dirs: &[PathBuf]) -> Result<u8, String> {
    let rules = load_rules(dirs)?;
    let rule = rules
        .iter()
        .find(|r| r.id == id)
        .ok_or_else(|| format!("no rule {id:?}; `rules list` shows them"))?;
    write_stdout(&crate::rules::docs::markdown(rule))?;
    Ok(EXIT_CLEAN)
}

fn run_rules(command: RulesCommand) -> Result<u8, String> {
    match command {
        RulesCommand::List { rule_dirs } => {
            let rules = load_rules(&rule_dirs)?;
            let lines: Vec<String> = rules
                .iter()
                .map(|r| format!("{:<55} {:<8} {}", r.id, r.severity.as_str(), r.title))
                .collect();
            write_stdout(&lines.join("\n"))?;
        }
        RulesCommand::Schema => {
            let schema = schemars::schema_for!(rules::Rule);
            write_stdout(&serde_json::to_string_pretty(&schema).map_err(|e| e.to_string())?)?;
        }
    }
    Ok(EXIT_CLEAN)
}

fn run_inventory(inv: &InventoryArgs, verbose: u8) -> Result<u8, String> {
    let loaded = load(&inv.repo)?;
    print_diagnostics(&loaded.repo, verbose);
    let mut json = inventory::to_json(
        &loaded.repo,
        inventory::Options {
            provenance: inv.provenance,
        },
    );
    if let Some(objects) = json.get_mut("objects").and_then(|o| o.as_array_mut()) {
        objects.retain(|o| {
            let matches = |field: &str, want: &Option<String>| {
                want.as_deref()
                    .is_none_or(|w| o.get(field).and_then(|v| v.as_str()) == Some(w))
            };
            matches("kind", &inv.kind) && matches("name", &inv.name)
        });
    }
    let text = match inv.format {
        OutputFormat::Json => serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?,
        OutputFormat::Yaml => serde_saphyr::to_string(&json).map_err(|e| e.to_string())?,
    };
    write_stdout(&text)?;
    Ok(EXIT_CLEAN)
}

/// Generated files are written as they are, without a final newline added.
fn write_bytes(bytes: &[u8]) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}

/// A closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}
