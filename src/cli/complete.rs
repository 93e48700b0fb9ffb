//! `__complete`: completion for `kubectl homelab-lint <TAB>`. kubectl
//! (1.26+) completes a plugin's arguments by running an executable named
//! `kubectl_complete-homelab_lint` with the words typed after the plugin
//! name, the last one being the word under the cursor, and reads cobra's
//! answer: one candidate per line (`value<TAB>description`), then
//! `:<directive>`. That executable is a two-line script calling this
//! subcommand (`scripts/kubectl_complete-homelab_lint`). Candidates come
//! from the clap definition, so they cannot drift from the real flags.

use clap::CommandFactory;

use super::args::Args;

/// cobra's `ShellCompDirectiveDefault`: the shell may complete file names.
const FILES: u8 = 0;
/// cobra's `ShellCompDirectiveNoFileComp`.
const NO_FILES: u8 = 4;
/// The value name of arguments that take rule ids.
pub const RULE: &str = "RULE";

/// The answer for the typed `words` (the last one is being completed).
pub fn complete(words: &[String]) -> String {
    let mut root = Args::command();
    // Resolves what each flag takes (number of values) and the globals.
    root.build();
    let root = root;
    let (cur, before) = match words.split_last() {
        Some((cur, before)) => (cur.as_str(), before),
        None => ("", &[][..]),
    };
    // The subcommand the words are in, and the flag waiting for a value.
    let mut cmd = &root;
    let mut pending: Option<&clap::Arg> = None;
    for word in before {
        if pending.take().is_some() {
            continue;
        }
        if let Some(long) = word.strip_prefix("--") {
            if !long.contains('=') {
                pending = find_long(&root, cmd, long).filter(|a| takes_value(a));
            }
        } else if let Some(short) = word.strip_prefix('-').and_then(|s| s.chars().last()) {
            pending = find_short(&root, cmd, short).filter(|a| takes_value(a));
        } else if let Some(sub) = cmd.find_subcommand(word) {
            cmd = sub;
        }
    }
    let mut lines = Vec::new();
    let positional = cmd
        .get_positionals()
        .find(|a| !a.is_hide_set())
        .filter(|_| !cur.starts_with('-') && cmd.get_subcommands().next().is_none());
    let directive = if pending.or(positional).is_some_and(names_rules) {
        lines.extend(rule_ids(cur));
        NO_FILES
    } else if let Some(arg) = pending {
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_string())
            .filter(|v| v.starts_with(cur))
            .collect();
        if values.is_empty() {
            // A path, a duration, a name: the shell's own completion.
            FILES
        } else {
            lines.extend(values);
            NO_FILES
        }
    } else if cur.starts_with('-') {
        for arg in flags(&root, cmd) {
            for long in arg.get_long_and_visible_aliases().into_iter().flatten() {
                let flag = format!("--{long}");
                if flag.starts_with(cur) {
                    lines.push(with_help(flag, arg.get_help()));
                }
            }
        }
        NO_FILES
    } else {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            if sub.get_name().starts_with(cur) {
                lines.push(with_help(sub.get_name().to_string(), sub.get_about()));
            }
        }
        // The top level also takes a repository path.
        if cmd.get_name() == root.get_name() {
            FILES
        } else {
            NO_FILES
        }
    };
    lines.push(format!(":{directive}"));
    lines.join("\n") + "\n"
}

/// Whether `arg` takes rule ids (its value is named `RULE`).
fn names_rules(arg: &clap::Arg) -> bool {
    arg.get_value_names()
        .is_some_and(|names| names.iter().any(|n| n == RULE))
}

/// The built-in rule ids that complete `cur`, with their titles; in a
/// comma-separated list (`--select a,b`), the entry after the last comma.
fn rule_ids(cur: &str) -> Vec<String> {
    let (done, partial) = match cur.rfind(',') {
        Some(i) => cur.split_at(i + 1),
        None => ("", cur),
    };
    crate::rules::builtin()
        .into_iter()
        .filter(|r| r.id.starts_with(partial))
        .map(|r| format!("{done}{}\t{}", r.id, r.title))
        .collect()
}

/// The flags `cmd` accepts: its own and the root's global ones.
fn flags<'c>(root: &'c clap::Command, cmd: &'c clap::Command) -> Vec<&'c clap::Arg> {
    let mut out: Vec<&clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set())
        .collect();
    if !std::ptr::eq(root, cmd) {
        out.extend(root.get_arguments().filter(|a| a.is_global_set()));
    }
    out
}

fn find_long<'c>(
    root: &'c clap::Command,
    cmd: &'c clap::Command,
    long: &str,
) -> Option<&'c clap::Arg> {
    flags(root, cmd).into_iter().find(|a| {
        a.get_long_and_visible_aliases()
            .into_iter()
            .flatten()
            .any(|l| l == long)
    })
}

fn find_short<'c>(
    root: &'c clap::Command,
    cmd: &'c clap::Command,
    short: char,
) -> Option<&'c clap::Arg> {
    flags(root, cmd)
        .into_iter()
        .find(|a| a.get_short() == Some(short))
}

fn takes_value(arg: &clap::Arg) -> bool {
    arg.get_num_args().is_some_and(|n| n.takes_values())
}

/// `value<TAB>first line of help`, as cobra shows descriptions.
fn with_help(value: String, help: Option<&clap::builder::StyledStr>) -> String {
    match help.map(|h| h.to_string()) {
        Some(h) if !h.is_empty() => {
            format!("{value}\t{}", h.lines().next().unwrap_or_default())
        }
        _ => value,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(words: &[&str]) -> Vec<String> {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        complete(&words)
            .lines()
            .map(|l| l.split('\t').next().unwrap().to_string())
            .collect()
    }

    #[test]
    fn flags_subcommands_and_values() {
        let flags = answer(&["--fo"]);
        assert!(flags.contains(&"--format".to_string()), "{flags:?}");
        assert_eq!(flags.last().unwrap(), ":4");

        let subs = answer(&["pro"]);
        assert_eq!(subs, ["probe", ":0"]);

        let formats = answer(&["--format", "s"]);
        assert_eq!(formats, ["sarif", ":4"]);
        assert_eq!(answer(&["-o", "g"]), ["github", ":4"]);

        // Inside a subcommand: its flags, and files for a path value.
        let probe = answer(&["probe", "postgres", "--data"]);
        assert_eq!(probe, ["--database", ":4"]);
        assert_eq!(answer(&["probe", "http", "--kubeconfig", ""]), [":0"]);
        assert_eq!(answer(&["probe", ""]), ["postgres", "http", "help", ":4"]);
        // Rule ids: explain's argument, and --select's entries.
        let ids = answer(&["explain", "postgres-dur"]);
        assert_eq!(ids, ["postgres-durability-off", ":4"]);
        let ids = answer(&["--select", "unused-suppression,postgres-durab"]);
        assert_eq!(ids, ["unused-suppression,postgres-durability-off", ":4"]);
        assert_eq!(answer(&["--ignore", "zzz"]), [":4"]);
        // The hidden __complete itself is never offered.
        assert!(!answer(&[""]).iter().any(|c| c.starts_with("__")));
    }
}
