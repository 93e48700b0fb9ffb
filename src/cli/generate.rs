//! `completions <shell>` and `man`: shell completion scripts and a man page
//! generated from the clap definition in `args.rs`, so they cannot drift
//! from the flags the binary accepts.
//!
//! Completion scripts complete the executable's own name,
//! `kubectl-homelab_lint`. kubectl (1.26+) completes a plugin only through
//! a separate `kubectl_complete-homelab_lint` executable speaking cobra's
//! `__complete` protocol, which clap does not generate; calling the binary
//! by its own name gets full completion.

use clap::CommandFactory;
use clap_complete::Shell;

use super::Args;

/// The executable name the generated files are for.
pub const BIN: &str = "kubectl-homelab_lint";

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to generate the script for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// The completion script for `shell`.
pub fn completions(shell: Shell) -> Vec<u8> {
    let mut cmd = Args::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, BIN, &mut out);
    out
}

/// The man page, section 1, in roff, with EXIT STATUS, ENVIRONMENT and
/// FILES after the subcommands (before VERSION).
pub fn man_page() -> std::io::Result<Vec<u8>> {
    let cmd = Args::command().name(BIN).bin_name(BIN);
    let sections = super::man_sections::roff(&cmd);
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut out)?;
    let text = String::from_utf8_lossy(&out);
    let at = text.find("\n.SH VERSION").map_or(text.len(), |i| i + 1);
    let mut page = text[..at].to_string();
    page.push_str(&sections);
    page.push_str(&text[at..]);
    Ok(page.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_a_script_that_names_the_binary_and_its_flags() {
        for shell in [
            Shell::Bash,
            Shell::Zsh,
            Shell::Fish,
            Shell::Elvish,
            Shell::PowerShell,
        ] {
            let text = String::from_utf8(completions(shell)).unwrap();
            assert!(text.contains(BIN), "{shell}: no {BIN} in\n{text}");
            assert!(text.contains("fail-on"), "{shell}: no --fail-on in\n{text}");
            assert!(
                text.contains("inventory"),
                "{shell}: no inventory in\n{text}"
            );
        }
    }

    #[test]
    fn man_page_documents_the_flags() {
        let text = String::from_utf8(man_page().unwrap()).unwrap();
        assert!(text.starts_with(".ie \\n(.g .ds Aq"), "{text}");
        assert!(text.contains(".TH kubectl-homelab_lint 1"), "{text}");
        assert!(text.contains("fail\\-on"), "{text}");
        assert!(text.contains("base"), "{text}");
        let order: Vec<usize> = [
            ".SH SUBCOMMANDS",
            ".SH \"EXIT STATUS\"",
            ".SH \"ENVIRONMENT\"",
            ".SH \"FILES\"",
            ".SH VERSION",
        ]
        .iter()
        .map(|s| text.find(s).unwrap_or_else(|| panic!("no {s} in\n{text}")))
        .collect();
        assert!(order.is_sorted(), "{order:?}");
        for env in [
            "HOMELAB_LINT_OUTPUT",
            "HOMELAB_LINT_CONFIG",
            "NO_COLOR",
            "CLICOLOR_FORCE",
        ] {
            assert!(
                text.contains(&format!("\\fB{}\\fR", env.replace('-', "\\-"))),
                "{env}"
            );
        }
        assert!(text.contains(".homelab\\-lint.yaml\\fR"), "{text}");
    }
}
