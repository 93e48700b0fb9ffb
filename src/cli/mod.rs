//! Command line: argument parsing and the commands it runs.

mod args;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

pub use args::{Args, Command, InventoryArgs, OutputFormat, RepoArgs};

use crate::report::inventory;
use crate::source::repo::{self, Repo};
use crate::yaml::Limits;

/// Exit status, as ripgrep and ruff use them.
pub const EXIT_CLEAN: u8 = 0;
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
        None => run_load_summary(&args.repo, args.verbose),
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
        (repo_args.path.clone().unwrap_or_else(|| PathBuf::from(".")), None)
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

fn run_load_summary(repo_args: &RepoArgs, verbose: u8) -> Result<u8, String> {
    let loaded = load(repo_args)?;
    print_diagnostics(&loaded.repo, verbose);
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

/// A closed pipe (`| head`) is not an error.
fn write_stdout(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.to_string()),
        _ => Ok(()),
    }
}
