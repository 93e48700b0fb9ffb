//! Command line: argument parsing and the commands it runs.

mod args;
mod complete;
mod contexts;
pub mod generate;
mod man_sections;
pub mod probe;
mod schema;
mod selection;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

pub use args::{
    Args, BaseArgs, Command, DataFormat, FailOn, FixArgs, InventoryArgs, LintArgs, LiveArgs,
    OutputFormat, RemoteArgs, RepoArgs, ReportFormat, RulesCommand,
};

use crate::pipeline::{
    self, BaseRequest, ClusterRequest, EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, FixRequest, Input,
    ProbeRequest, Request, load_rules,
};
use crate::report::{control, graph, inventory};
use crate::rules::{self, Severity};
use crate::source::git::Held;

pub fn main() -> ExitCode {
    let args = Args::parse_from(kubectl_verbosity(std::env::args_os()));
    match run(args) {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("{}", control::escape_line(&format!("error: {err}")));
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// kubectl's `-v=N` and `--v=N` (and `--verbose=N`) as N times `-v`,
/// which is how clap counts verbosity.
fn kubectl_verbosity(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    for arg in args {
        let level = arg.to_str().and_then(|a| {
            ["-v=", "--v=", "--verbose="]
                .iter()
                .find_map(|p| a.strip_prefix(p))
                .and_then(|n| n.parse::<u8>().ok())
        });
        match level {
            Some(n) => out.extend((0..n).map(|_| "-v".into())),
            None => out.push(arg),
        }
    }
    out
}

fn run(args: Args) -> Result<u8, String> {
    match args.command {
        Some(Command::Inventory(inv)) => run_inventory(&inv, args.verbose),
        Some(Command::Explain {
            rule,
            rule_dirs,
            format,
        }) => run_explain(&rule, &rule_dirs, format),
        Some(Command::Rules { command }) => run_rules(command),
        Some(Command::Version { format }) => {
            let version = serde_json::json!({
                "name": env!("CARGO_PKG_NAME"),
                "version": env!("CARGO_PKG_VERSION"),
            });
            write_stdout(&render_data(format, &version, |_| {
                format!("{} {}", env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"))
            })?)?;
            Ok(EXIT_CLEAN)
        }
        Some(Command::Schema { command }) => {
            write_stdout(&schema::run(&command)?)?;
            Ok(EXIT_CLEAN)
        }
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
        Some(Command::Server) => match crate::server::run()? {
            true => Ok(EXIT_CLEAN),
            false => Ok(EXIT_FINDINGS),
        },
        Some(Command::Man) => {
            write_bytes(&generate::man_page().map_err(|e| e.to_string())?)?;
            Ok(EXIT_CLEAN)
        }
        None if args.lint.live.context.len() > 1 => {
            contexts::run(&args.lint.live.context, args.lint.format)
        }
        None => run_lint(&args),
    }
}

/// The lint request of the command line's flags.
fn lint_request(args: &Args) -> Request {
    let lint = &args.lint;
    let live = &lint.live;
    Request {
        input: Input {
            paths: args.repo.paths.clone(),
            example: args.repo.example,
            held: held(&args.repo).or_else(|| args.base.to_ref.clone().map(Held::Commit)),
            remote: remote_settings(&args.repo.remote),
        },
        config: lint.config.clone(),
        rule_dirs: lint.rule_dirs.clone(),
        base: BaseRequest {
            reference: args
                .base
                .base
                .clone()
                .or_else(|| args.base.from_ref.clone()),
            all_findings: args.base.all_findings,
        },
        cluster: ClusterRequest {
            snapshot: live.snapshot.clone(),
            live: live
                .live_wanted()
                .then(|| cluster_options(live, args.verbose)),
            namespace: live.namespace.clone(),
        },
        probe: ProbeRequest {
            no_probe: live.no_probe,
            dsn: live.probe_dsn.clone(),
            budget: live.probe_budget,
            ca_file: live.probe_ca.clone(),
            insecure: live.probe_insecure,
        },
        fixes: FixRequest {
            fix: args.fixes.fix,
            unsafe_fixes: args.fixes.unsafe_fixes,
            diff: args.fixes.diff,
        },
        format: lint.format.into(),
        fail_on: match lint.fail_on {
            FailOn::Info => Some(Severity::Info),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Error => Some(Severity::Error),
            FailOn::Never => None,
        },
        metrics_file: lint.metrics_file.clone(),
        color: args.color.into(),
        pushgateway: lint.pushgateway.clone(),
        selection: args.selection.selection(),
        quiet: args.selection.quiet,
        statistics: args.selection.statistics,
        verbose: args.verbose,
    }
}

/// What `--remote` allows, if given.
fn remote_settings(args: &RemoteArgs) -> Option<crate::source::remote::Settings> {
    args.remote.then(|| crate::source::remote::Settings {
        cache_dir: args.remote_cache.clone(),
        max_fetches: args.remote_max_fetches,
        max_bytes: args.remote_max_bytes,
        budget: args.remote_budget,
        ..Default::default()
    })
}

/// What git holds that `repo` asks to read instead of the working tree.
fn held(repo: &RepoArgs) -> Option<Held> {
    match (&repo.reference, repo.staged) {
        (Some(r), _) => Some(Held::Commit(r.clone())),
        (None, true) => Some(Held::Index),
        (None, false) => None,
    }
}

fn cluster_options(args: &LiveArgs, verbose: u8) -> crate::source::cluster::Options {
    crate::source::cluster::Options {
        kubeconfig: args.kubeconfig.clone(),
        context: args.context.first().cloned(),
        namespace: args.namespace.clone(),
        timeout: args.request_timeout,
        verbose,
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        chunk_size: args.chunk_size,
        kinds: crate::model::postgres::live_kinds(),
    }
}

/// The pipeline's progress lines go to stderr, control characters from
/// the repository made visible.
fn stderr_line(line: &str) {
    let line = control::escape_line(line);
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

fn run_lint(args: &Args) -> Result<u8, String> {
    let mut request = lint_request(args);
    let quiet = args.selection.quiet;
    let mut log = |line: &str| {
        // Quiet keeps what the user must act on.
        if !quiet || line.starts_with("warning:") || line.starts_with("error:") {
            stderr_line(line);
        }
    };
    if args.base.pre_commit {
        let mode = pipeline::pre_commit::adapt(&mut request.input, &mut request.base, |name| {
            std::env::var(name).ok()
        });
        log(&format!("pre-commit: {}", mode.describe()));
    }
    let outcome = pipeline::run_then_exit(&request, &mut log).map_err(|e| e.to_string())?;
    match &args.selection.output_file {
        Some(path) => std::fs::write(path, format!("{}\n", outcome.text))
            .map_err(|e| format!("cannot write the report to {}: {e}", path.display()))?,
        None => write_stdout(&outcome.text)?,
    }
    Ok(match outcome.exit {
        pipeline::EXIT_FINDINGS if args.selection.exit_zero => EXIT_CLEAN,
        exit => exit,
    })
}

/// Data as JSON or YAML, or as text for people.
fn render_data<T: serde::Serialize>(
    format: DataFormat,
    data: &T,
    text: impl FnOnce(&T) -> String,
) -> Result<String, String> {
    match format {
        DataFormat::Text => Ok(text(data)),
        DataFormat::Json => control::to_json(data).map_err(|e| e.to_string()),
        DataFormat::Yaml => control::to_yaml(data).map_err(|e| e.to_string()),
    }
}

/// The rule `id` names; a renamed rule's former id names it too, with a
/// warning that gives its id now.
fn find_rule<'r>(rules: &'r [rules::Rule], id: &str) -> Result<&'r rules::Rule, String> {
    if let (current, Some(renamed)) = rules::redirect::resolve(rules, id) {
        stderr_line(&format!("warning: {renamed}"));
        return find_rule(rules, &current);
    }
    rules.iter().find(|r| r.id == id).ok_or_else(|| {
        rules::select::Unknown::of(id, rules.iter().map(|r| r.id.as_str())).to_string()
    })
}

fn run_explain(id: &str, dirs: &[PathBuf], format: DataFormat) -> Result<u8, String> {
    let rules = load_rules(dirs).map_err(|e| e.to_string())?;
    let rule = find_rule(&rules, id)?;
    let page = crate::rules::docs::markdown(rule);
    let data = serde_json::json!({
        "id": rule.id,
        "title": rule.title,
        "severity": rule.severity.as_str(),
        "category": rule.category.as_str(),
        "markdown": page,
    });
    write_stdout(&render_data(format, &data, |_| page.clone())?)?;
    Ok(EXIT_CLEAN)
}

fn run_rules(command: RulesCommand) -> Result<u8, String> {
    match command {
        RulesCommand::List { rule_dirs, format } => {
            let rules = load_rules(&rule_dirs).map_err(|e| e.to_string())?;
            let data: Vec<serde_json::Value> = listed(&rules)
                .map(|(id, r)| {
                    let mut entry = serde_json::json!({
                        "id": id,
                        "severity": r.severity.as_str(),
                        "category": r.category.as_str(),
                        "fixable": fixable(r),
                        "title": r.title,
                    });
                    if id != r.id {
                        entry["deprecated"] = serde_json::json!({ "successor": r.id });
                    }
                    entry
                })
                .collect();
            write_stdout(&render_data(format, &data, |_| rules_table(&rules))?)?;
        }
        RulesCommand::Schema { format } => {
            let schema = schemars::schema_for!(rules::Rule);
            let data = if format == OutputFormat::Json {
                DataFormat::Json
            } else {
                DataFormat::Yaml
            };
            write_stdout(&render_data(data, &schema, |_| String::new())?)?;
        }
    }
    Ok(EXIT_CLEAN)
}

/// How a rule's findings can be fixed: its fix's applicability (`safe`:
/// by --fix, `unsafe`: with --unsafe-fixes, `display-only`: shown), or
/// `None` without a fix.
fn fixable(rule: &rules::Rule) -> Option<&'static str> {
    rule.fix.as_ref().map(|f| f.applicability.as_str())
}

/// Each id `rules list` lists, in order, with its rule: a rule's id, then
/// the former ids it was renamed from.
fn listed(rules: &[rules::Rule]) -> impl Iterator<Item = (&str, &rules::Rule)> {
    rules.iter().flat_map(|r| {
        std::iter::once(r.id.as_str())
            .chain(r.former_ids.iter().map(String::as_str))
            .map(move |id| (id, r))
    })
}

/// A header, then one line per rule: id, severity, category, fix and
/// title, the columns as wide as their longest entry; a former id's
/// title says it is deprecated and names the rule's id now.
fn rules_table(rules: &[rules::Rule]) -> String {
    let titles: Vec<String> = listed(rules)
        .map(|(id, r)| match id == r.id {
            true => r.title.clone(),
            false => format!("(deprecated: now {}) {}", r.id, r.title),
        })
        .collect();
    let rows: Vec<[&str; 5]> = std::iter::once(["ID", "SEVERITY", "CATEGORY", "FIX", "TITLE"])
        .chain(listed(rules).zip(&titles).map(|((id, r), title)| {
            [
                id,
                r.severity.as_str(),
                r.category.as_str(),
                fixable(r).unwrap_or("-"),
                title.as_str(),
            ]
        }))
        .collect();
    let width = |i: usize| rows.iter().map(|row| row[i].len()).max().unwrap_or(0);
    let widths = [width(0), width(1), width(2), width(3)];
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = (0..4)
                .map(|i| format!("{:<w$}", row[i], w = widths[i]))
                .collect();
            format!("{}  {}", cells.join("  "), row[4])
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn run_inventory(inv: &InventoryArgs, verbose: u8) -> Result<u8, String> {
    if let Some(language) = inv.graph {
        return run_graph(inv, language.into(), verbose);
    }
    let loaded = pipeline::load(&Input {
        paths: inv.repo.paths.clone(),
        example: inv.repo.example,
        held: held(&inv.repo),
        remote: remote_settings(&inv.repo.remote),
    })
    .map_err(|e| e.to_string())?;
    pipeline::log_load(&loaded.repo, &loaded.found, verbose, &mut stderr_line);
    let json = inventory::document(
        &loaded.repo,
        inventory::Options {
            provenance: inv.provenance,
            kind: inv.kind.as_deref(),
            name: inv.name.as_deref(),
        },
    );
    let text = match inv.format {
        OutputFormat::Json => control::to_json(&json).map_err(|e| e.to_string())?,
        OutputFormat::Yaml => control::to_yaml(&json).map_err(|e| e.to_string())?,
    };
    write_stdout(&text)?;
    Ok(EXIT_CLEAN)
}

/// `inventory --graph`: a lint of the repository with every rule, its
/// apps and databases drawn as one graph with the findings' chains marked.
fn run_graph(inv: &InventoryArgs, language: graph::Language, verbose: u8) -> Result<u8, String> {
    let req = pipeline::Request {
        input: Input {
            paths: inv.repo.paths.clone(),
            example: inv.repo.example,
            held: held(&inv.repo),
            remote: remote_settings(&inv.repo.remote),
        },
        format: crate::report::Format::Graph(language),
        verbose,
        ..pipeline::Request::default()
    };
    let outcome = pipeline::run(&req, &mut stderr_line).map_err(|e| e.to_string())?;
    write_stdout(&outcome.text)?;
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
