//! The man page's sections that clap_mangen does not generate: EXIT
//! STATUS, ENVIRONMENT and FILES (man-pages(7) orders them after the
//! options). ENVIRONMENT lists every variable a flag reads (clap's
//! `env = …`), so it cannot drift from the flags, then those the tool
//! reads itself.

use std::fmt::Write;

use crate::pipeline::{EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS};
use crate::rules::config;

/// Variables read outside clap's flags, and what they do.
const READ: &[(&str, &str)] = &[
    (
        "NO_COLOR",
        "Set and not empty: no colour in human output (https://no-color.org).",
    ),
    (
        "CLICOLOR_FORCE",
        "Set and not 0: colour even when standard output is not a terminal.",
    ),
    (
        "FORCE_COLOR",
        "Set and not 0: colour even when standard output is not a terminal (https://force-color.org).",
    ),
    ("CLICOLOR", "0: no colour in human output."),
    ("TERM", "dumb: no colour in human output."),
    (
        "COLUMNS",
        "The width human output is wrapped to when standard output is not a terminal.",
    ),
    (
        "KUBECONFIG",
        "The kubeconfig files of --live, as kubectl reads them (default ~/.kube/config).",
    ),
    (
        "PRE_COMMIT_FROM_REF, PRE_COMMIT_TO_REF",
        "With --pre-commit: the range pre-commit passes for a push or a CI run.",
    ),
];

/// EXIT STATUS, ENVIRONMENT and FILES in roff, for `cmd`'s page.
pub fn roff(cmd: &clap::Command) -> String {
    let mut out = String::new();
    section(&mut out, "EXIT STATUS");
    for (code, meaning) in [
        (
            EXIT_CLEAN,
            "No finding at or above the --fail-on severity (or --exit-zero), or a command other than a lint succeeded.",
        ),
        (
            EXIT_FINDINGS,
            "Findings at or above the --fail-on severity (default warning); for server, the editor sent exit without shutdown, as the Language Server Protocol asks.",
        ),
        (
            EXIT_ERROR,
            "An error: a flag, the configuration, a rule file or the repository could not be used, or a report could not be written.",
        ),
    ] {
        item(&mut out, &code.to_string(), meaning);
    }
    section(&mut out, "ENVIRONMENT");
    let mut flags: Vec<(String, String)> = Vec::new();
    collect_env(cmd, &mut flags);
    for (name, text) in flags
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .chain(READ.iter().copied())
    {
        item(&mut out, name, text);
    }
    section(&mut out, "FILES");
    item(
        &mut out,
        config::FILE_NAME,
        "The configuration (rule selection, severities, ignored paths): the closest one from the folder linted up to the top of its git repository, unless --config names one. Its JSON Schema is printed by `schema config`.",
    );
    item(
        &mut out,
        "~/.kube/config",
        "The kubeconfig read by --live when KUBECONFIG is not set.",
    );
    out
}

/// Every variable a flag of `cmd` or of its subcommands reads, with the
/// flag, once each.
fn collect_env(cmd: &clap::Command, out: &mut Vec<(String, String)>) {
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        let (Some(env), Some(long)) = (arg.get_env(), arg.get_long()) else {
            continue;
        };
        let name = env.to_string_lossy().into_owned();
        if out.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        let end = if help.ends_with('.') { "" } else { "." };
        out.push((name, format!("--{long}: {help}{end}")));
    }
    for sub in cmd.get_subcommands() {
        collect_env(sub, out);
    }
}

fn section(out: &mut String, title: &str) {
    let _ = writeln!(out, ".SH \"{title}\"");
}

fn item(out: &mut String, tag: &str, text: &str) {
    let _ = writeln!(out, ".TP\n\\fB{}\\fR\n{}", escape(tag), escape(text));
}

/// Text as roff reads it literally: backslashes and dashes escaped, and a
/// line that would start with a control character guarded.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    let text = text.replace('\n', " ");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}
