//! The repository's `.homelab-lint.yaml`: which rules run, at which
//! severity, and which paths are left out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_saphyr::Spanned;

use super::redirect;
use super::select::{self, Selection, Unknown};
use super::{Finding, Rule, Severity};
use crate::source::Issue;
use crate::source::confine::Refused;
use crate::yaml::SourceMap;

/// File name looked up at the repository root.
pub const FILE_NAME: &str = ".homelab-lint.yaml";

/// Bytes of `ignorePaths` globs, all together: they compile into one
/// regular expression set whose time and memory grow with their text
/// (2,000 globs of 900 bytes took 656 MB before the set refused them); a
/// real configuration holds a few hundred bytes.
const MAX_IGNORE_BYTES: usize = 64 * 1024;

/// `.homelab-lint.yaml`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigFile {
    #[serde(default)]
    pub rules: RuleSettings,
    /// Globs (relative to the repository root) of files whose findings are
    /// not reported, e.g. `kubernetes/apps/test/**`.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub ignore_paths: Vec<Spanned<String>>,
    /// Remote kustomize resources, as `--remote` and its flags. Honoured
    /// only in a file the user names with `--config`: a repository's own
    /// `.homelab-lint.yaml` cannot make the linter reach the network.
    #[serde(default)]
    pub remote: Option<RemoteConfig>,
}

/// `remote:` of the configuration file.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RemoteConfig {
    /// Fetch remote kustomize resources, as `--remote`.
    #[serde(default)]
    pub enabled: bool,
    /// Where fetched entries are kept, as `--remote-cache`.
    pub cache: Option<PathBuf>,
    /// Remote entries one run may fetch or take from the cache.
    pub max_fetches: Option<usize>,
    /// Bytes all remote entries of a run may hold together.
    pub max_bytes: Option<u64>,
    /// Wall-clock time all fetches of a run may take (`2m`, `90s`).
    pub budget: Option<String>,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuleSettings {
    /// The rules that run instead of every rule: rule ids, id prefixes
    /// ending at a `-` (`authentik`), or `ALL`; as `--select`, which
    /// replaces it.
    #[serde(default)]
    #[schemars(with = "Option<Vec<String>>")]
    pub select: Option<Vec<Spanned<String>>>,
    /// Rules added to `select` (ids or prefixes); `--extend-select` adds more.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub extend_select: Vec<Spanned<String>>,
    /// Rules that do not run (ids or prefixes), as `--ignore`, which adds
    /// to them. The more specific of a selected and a disabled entry wins.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub disable: Vec<Spanned<String>>,
    /// Severity per rule id, replacing the rule's own.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Severity>")]
    pub severity: BTreeMap<String, Spanned<Severity>>,
}

fn located(path: &Path, at: &serde_saphyr::Location, message: String) -> Issue {
    Issue::located(
        path.display().to_string(),
        at.line() as u32,
        at.column() as u32,
        message,
    )
}

/// The configuration in force.
#[derive(Debug, Default)]
pub struct Config {
    file: ConfigFile,
    ignore: Option<GlobSet>,
    /// The folder of the file, as reports name folders (from the git top
    /// level, or the root): its `ignorePaths` may name files from there too.
    folder: PathBuf,
}

impl Config {
    /// Reads `path`, a regular file within the size budget; when it does
    /// not exist, the default config, unless the user named it
    /// (`required`), for whom a missing file is an error.
    pub fn load(path: &Path, required: bool) -> Result<Config, Issue> {
        let limit = crate::yaml::Limits::default().max_bytes;
        let bytes = match crate::source::confine::read_regular(path, limit) {
            Ok(b) => b,
            Err(Refused::Io(e)) if e.kind() == std::io::ErrorKind::NotFound && !required => {
                return Ok(Config::default());
            }
            Err(e) => return Err(Issue::file(path, e.to_string())),
        };
        let text =
            String::from_utf8(bytes).map_err(|_| Issue::file(path, "file is not valid UTF-8"))?;
        Config::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Config, Issue> {
        let file: ConfigFile =
            super::from_yaml(&path.display().to_string(), text, "invalid configuration")?;
        let at = |s: &serde_saphyr::Location, message: String| {
            Issue::located(
                path.display().to_string(),
                s.line() as u32,
                s.column() as u32,
                message,
            )
        };
        let ignore = match file.ignore_paths.first() {
            None => None,
            Some(first) => {
                let mut builder = GlobSetBuilder::new();
                let mut bytes = 0;
                for pattern in &file.ignore_paths {
                    bytes += pattern.value.len();
                    if bytes > MAX_IGNORE_BYTES {
                        return Err(at(
                            &pattern.referenced,
                            format!(
                                "ignorePaths: the globs up to this one hold {bytes} bytes, \
                                 over the limit of {MAX_IGNORE_BYTES}"
                            ),
                        ));
                    }
                    let glob = Glob::new(&pattern.value)
                        .map_err(|e| at(&pattern.referenced, format!("ignorePaths: {e}")))?;
                    builder.add(glob);
                }
                // Each glob is valid; together they may pass the size of
                // the regular expression set they are matched with.
                Some(builder.build().map_err(|e| {
                    at(
                        &first.referenced,
                        format!(
                            "ignorePaths: the {} globs together: {e}",
                            file.ignore_paths.len()
                        ),
                    )
                })?)
            }
        };
        Ok(Config {
            file,
            ignore,
            folder: PathBuf::new(),
        })
    }

    /// What `remote:` of the file at `path` asks for, if it turns fetching
    /// on; `Err` says why its budget is not a duration.
    pub fn remote(&self, path: &Path) -> Result<Option<crate::source::remote::Settings>, Issue> {
        let Some(r) = self.file.remote.as_ref().filter(|r| r.enabled) else {
            return Ok(None);
        };
        let mut settings = crate::source::remote::Settings::default();
        settings.cache_dir.clone_from(&r.cache);
        settings.max_fetches = r.max_fetches.unwrap_or(settings.max_fetches);
        settings.max_bytes = r.max_bytes.unwrap_or(settings.max_bytes);
        if let Some(budget) = &r.budget {
            settings.budget = humantime::parse_duration(budget)
                .map_err(|e| Issue::file(path, format!("remote.budget {budget:?}: {e}")))?;
        }
        Ok(Some(settings))
    }

    /// Whether the file has a `remote:` section that turns fetching on.
    pub fn asks_for_remote(&self) -> bool {
        self.file.remote.as_ref().is_some_and(|r| r.enabled)
    }

    /// The same configuration, read from a file in `folder` (named as
    /// reports name folders).
    pub fn in_folder(self, folder: PathBuf) -> Config {
        Config { folder, ..self }
    }

    /// Every rule entry of the file, where it is written, and whether it
    /// must name one rule exactly (a severity) rather than be a prefix.
    fn entries(&self) -> impl Iterator<Item = (&String, &serde_saphyr::Location, bool)> {
        let settings = &self.file.rules;
        // A severity is written on its rule id's line, and names one rule.
        let severities = settings
            .severity
            .iter()
            .map(|(id, s)| (id, &s.referenced, true));
        settings
            .select
            .iter()
            .flatten()
            .chain(&settings.extend_select)
            .chain(&settings.disable)
            .map(|id| (&id.value, &id.referenced, false))
            .chain(severities)
    }

    /// Problems that make the config wrong for these rules: unknown ids
    /// would silently do nothing. Each names the nearest id. A renamed
    /// rule's former id is no problem ([`Config::renamed`] warns of it).
    pub fn check(&self, rules: &[Rule], path: &Path) -> Vec<Issue> {
        let names = |entry: &str, exact: bool| {
            redirect::successor(rules, entry).is_some()
                || rules.iter().any(|r| {
                    if exact {
                        r.id == entry
                    } else {
                        select::names(entry, &r.id)
                    }
                })
        };
        self.entries()
            .filter(|(id, _, exact)| !names(id, *exact))
            .map(|(id, at, _)| {
                located(
                    path,
                    at,
                    Unknown::of(id, rules.iter().map(|r| r.id.as_str())).to_string(),
                )
            })
            .collect()
    }

    /// The former ids of renamed rules the file names, each a warning at
    /// its line and column that names the rule's id now.
    pub fn renamed(&self, rules: &[Rule], path: &Path) -> Vec<Issue> {
        self.entries()
            .filter_map(|(id, at, _)| {
                let (_, renamed) = redirect::resolve(rules, id);
                Some(located(path, at, renamed?.to_string()))
            })
            .collect()
    }

    /// The rules the configuration file chooses.
    pub fn selection(&self) -> Selection {
        let values = |v: &[Spanned<String>]| v.iter().map(|s| s.value.clone()).collect();
        let settings = &self.file.rules;
        Selection {
            select: settings.select.as_deref().map(values),
            extend_select: values(&settings.extend_select),
            ignore: values(&settings.disable),
        }
    }

    /// The rules that run, chosen by this file and then `over` (the
    /// command line's), with severities overridden.
    /// Former ids of renamed rules in either stand for the rules' ids now
    /// (the warnings are [`Config::renamed`]'s and the caller's).
    pub fn apply_to_rules(&self, rules: Vec<Rule>, over: &Selection) -> Result<Vec<Rule>, Unknown> {
        let (selection, _) = self.selection().overridden_by(over).redirected(&rules);
        let rules = selection.apply(rules)?;
        let severities = &self.file.rules.severity;
        Ok(rules
            .into_iter()
            .map(|mut r| {
                let written = std::iter::once(&r.id)
                    .chain(&r.former_ids)
                    .find_map(|id| severities.get(id));
                if let Some(s) = written {
                    r.severity = s.value;
                }
                r
            })
            .collect())
    }

    /// Whether a finding's file is ignored. A pattern may name the file
    /// from the linted root, from the repository's top level (as reports
    /// name it) or from the configuration file's folder.
    pub fn ignores(&self, finding: &Finding, sources: &SourceMap) -> bool {
        let file = finding.primary.span.file;
        let shown = sources.shown(file);
        self.ignore.as_ref().is_some_and(|g| {
            g.is_match(sources.path(file))
                || g.is_match(&shown)
                || shown
                    .strip_prefix(&self.folder)
                    .is_ok_and(|p| g.is_match(p))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_fields_are_errors_with_a_position() {
        let err =
            Config::parse(Path::new(".homelab-lint.yaml"), "rules:\n  disabel: [x]\n").unwrap_err();
        assert_eq!(err.line, 2, "{err}");
        assert!(err.message.contains("disabel"), "{err}");
    }

    #[test]
    fn disable_and_severity() {
        let cfg = Config::parse(
            Path::new("c"),
            "rules:\n  disable: [a]\n  severity: {b: error}\nignorePaths: ['test/**']\n",
        )
        .unwrap();
        let rule = |id: &str| -> Rule {
            serde_saphyr::from_str(&format!(
                "{{id: {id}, title: t, severity: info, category: correctness, message: m, what: w., why: y., example: e, useInstead: u, remediation: r., references: [x], match: [fluxPathMissing]}}"
            ))
            .unwrap()
        };
        let rules = cfg
            .apply_to_rules(vec![rule("a"), rule("b")], &Selection::default())
            .unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].severity, Severity::Error);
        // The unknown id `a`, at its line and column.
        let issues = cfg.check(&[rule("b")], Path::new("c"));
        assert_eq!(
            issues.iter().map(|i| i.to_string()).collect::<Vec<_>>(),
            ["c:2:13: unknown rule id \"a\" (`rules list` shows them)"]
        );
        let err =
            Config::parse(Path::new("c"), "ignorePaths:\n  - ok/**\n  - 'a[b'\n").unwrap_err();
        assert_eq!((err.line, err.col), (3, 5), "{err}");
    }

    #[test]
    fn ignore_globs_past_their_byte_budget_are_refused_at_the_one_that_passes_it() {
        let glob = format!("**/{}", "a*".repeat(500));
        let n = MAX_IGNORE_BYTES / glob.len() + 1;
        let text: String = std::iter::once("ignorePaths:\n".to_string())
            .chain((0..n).map(|_| format!("  - '{glob}'\n")))
            .collect();
        let err = Config::parse(Path::new("c"), &text).unwrap_err();
        assert_eq!((err.line, err.col), (n as u32 + 1, 5), "{err}");
        assert!(err.to_string().contains("over the limit of 65536"), "{err}");
        let under: String = text.lines().take(n).map(|l| format!("{l}\n")).collect();
        Config::parse(Path::new("c"), &under).unwrap();
    }
}
