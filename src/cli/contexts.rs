//! `--context a --context b`: several clusters linted in parallel, one
//! process per context (the same command line with one `--context`), so
//! each run stays the single-cluster run that is tested, and a slow or
//! unreachable cluster delays only its own report.

use std::process::Command;

use super::ReportFormat;
use crate::pipeline::{EXIT_CLEAN, EXIT_ERROR};

/// The command line without its `--context` flags.
fn without_contexts(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
        } else if a == "--context" {
            skip = true;
        } else if !a.starts_with("--context=") {
            out.push(a.clone());
        }
    }
    out
}

/// Runs one child per context and prints their reports in the order the
/// contexts were given. The exit status is the worst of the children's.
pub fn run(contexts: &[String], format: ReportFormat) -> Result<u8, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
    let base = without_contexts(&std::env::args().skip(1).collect::<Vec<_>>());
    let children: Vec<_> = contexts
        .iter()
        .map(|context| {
            let mut args = base.clone();
            args.extend(["--context".to_string(), context.clone()]);
            let exe = exe.clone();
            std::thread::spawn(move || Command::new(exe).args(args).output())
        })
        .collect();
    let mut code = EXIT_CLEAN;
    let mut reports = Vec::new();
    for (context, child) in contexts.iter().zip(children) {
        let out = child
            .join()
            .map_err(|_| format!("the run for context {context} failed"))?
            .map_err(|e| format!("cannot run for context {context}: {e}"))?;
        for line in String::from_utf8_lossy(&out.stderr).lines() {
            super::stderr_line(&format!("[{context}] {line}"));
        }
        let status = out.status.code().map_or(EXIT_ERROR, |c| c as u8);
        code = code.max(status);
        reports.push((context, status, out.stdout));
    }
    let text = match format {
        // One JSON document: the per-context reports side by side.
        ReportFormat::Json => {
            let items: Vec<serde_json::Value> = reports
                .iter()
                .map(|(context, status, stdout)| {
                    serde_json::json!({
                        "context": context,
                        "exitCode": status,
                        "report": serde_json::from_slice::<serde_json::Value>(stdout).unwrap_or(serde_json::Value::Null),
                    })
                })
                .collect();
            crate::report::control::to_json(&serde_json::json!({ "contexts": items }))
                .map_err(|e| e.to_string())?
        }
        _ => reports
            .iter()
            .map(|(context, _, stdout)| {
                format!("== context {context}\n{}", String::from_utf8_lossy(stdout))
            })
            .collect::<Vec<_>>()
            .join("\n"),
    };
    super::write_stdout(text.trim_end())?;
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_flags_are_removed_in_both_forms() {
        let args: Vec<String> = ["--live", "--context", "a", "--context=b", "-o", "json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(without_contexts(&args), ["--live", "-o", "json"]);
    }
}
