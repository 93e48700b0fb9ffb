//! `--base <git ref>`: lint the base commit too, report only findings
//! whose fingerprint the base run did not have, and give the
//! `releaseCrossed` rule step the app versions of the base commit (so
//! that version bumps across a known breaking release are found).

use std::collections::HashSet;

use crate::model::Model;
use crate::rules::releases::{self, Baseline};
use crate::rules::{self, Finding, Rule, config::Config};
use crate::source::{git, repo};
use crate::yaml::Limits;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct BaseArgs {
    /// Report only findings that are new against this git commit, branch
    /// or tag (e.g. origin/main), and find version bumps since it that
    /// cross a known breaking release. Needs `git` on PATH.
    #[arg(long, value_name = "GIT_REF", conflicts_with = "example")]
    pub base: Option<String>,

    /// With --base, report every finding, not only new ones; version bumps
    /// are still found. For SARIF uploads: code scanning compares with the
    /// base branch's analysis itself, and would take a missing finding as
    /// fixed.
    #[arg(long, requires = "base")]
    pub all_findings: bool,
}

/// What the base commit contributes to a run.
#[derive(Default)]
pub struct BaseRun {
    pub baseline: Baseline,
    /// Fingerprints of the base commit's findings; `None` without --base.
    fingerprints: Option<HashSet<String>>,
}

impl BaseRun {
    /// Whether a finding of the linted tree is to be reported: always
    /// without --base, else when the base run did not have it. A
    /// fingerprint names the rule and the objects involved, not lines,
    /// so a finding that only moved is not new.
    pub fn is_new(&self, f: &Finding) -> bool {
        self.fingerprints
            .as_ref()
            .is_none_or(|seen| !seen.contains(&f.fingerprint))
    }
}

/// Lints the base commit with the same rules and configuration.
pub fn prepare(
    args: &BaseArgs,
    root: &std::path::Path,
    rules: &[Rule],
    config: &Config,
) -> Result<BaseRun, String> {
    let Some(reference) = &args.base else {
        return Ok(BaseRun::default());
    };
    let checkout = git::checkout(root, reference).map_err(|e| e.to_string())?;
    let base_repo = repo::load(&checkout.root, Limits::default());
    let model = Model::new(&base_repo);
    let outcome = rules::lint(&model, rules);
    let sources = &base_repo.files.sources;
    let fingerprints: HashSet<String> = outcome
        .findings
        .into_iter()
        .filter(|f| !config.ignores(f, sources))
        .map(|f| f.fingerprint)
        .collect();
    eprintln!(
        "base {reference} ({}): {} objects, {} findings",
        &checkout.commit[..checkout.commit.len().min(12)],
        base_repo.objects.len(),
        fingerprints.len()
    );
    Ok(BaseRun {
        baseline: Baseline::of(
            &model,
            releases::builtin(),
            format!("the base commit {reference}"),
        ),
        fingerprints: (!args.all_findings).then_some(fingerprints),
    })
}
