//! ruff's command-line habits, through the real binary on a copy of the
//! example repository: `--quiet`, rule selection (`--select`,
//! `--extend-select`, `--ignore`, and `rules.select` in the
//! configuration), `--statistics`, `--output-file`, `--exit-zero`; a
//! misspelt rule id in a suppression or in the configuration named with
//! the nearest id; `schema config` and its copy in the repository.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::{self, edit};

const CACHE: &str = "authentik-cache-on-sync-replicated-postgres";
const CONN: &str = "authentik-persistent-connections-without-keepalives";

/// A copy of the example repository in a temporary directory, and runs
/// of the binary on it (ripgrep's `Dir`/`TestCommand` in one).
struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn example() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        common::copy_dir(&common::example_repo(), dir.path());
        Repo { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, name: &str, text: &str) {
        std::fs::write(self.path().join(name), text).unwrap();
    }

    /// The binary on the repository with `args`.
    fn run(&self, args: &[&str]) -> Run {
        let out = Command::new(common::BIN)
            .arg(self.path())
            .args(args)
            .env_remove("HOMELAB_LINT_OUTPUT")
            .output()
            .unwrap();
        Run(out)
    }
}

struct Run(Output);

impl Run {
    fn code(&self) -> Option<i32> {
        self.0.status.code()
    }

    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Asserts the run was a usage error (exit 2) saying `text`.
    fn fails_with(&self, text: &str) {
        assert_eq!(self.code(), Some(2), "{}", self.stdout());
        assert!(self.stderr().contains(text), "{}", self.stderr());
    }

    /// The rule ids of a `-o json` run's findings, sorted.
    fn rules(&self) -> Vec<String> {
        let mut rules: Vec<String> = common::report(&self.0)
            .findings
            .into_iter()
            .map(|f| f.rule)
            .collect();
        rules.sort();
        rules
    }
}

#[test]
fn quiet_prints_the_findings_and_the_summary_line_only() {
    let repo = Repo::example();
    let loud = repo.run(&[]);
    assert!(
        loud.stderr().contains("loaded 9 objects"),
        "{}",
        loud.stderr()
    );
    assert!(loud.stdout().contains("manifest files rendered"));
    assert!(loud.stdout().contains("fixable with --fix"));

    let quiet = repo.run(&["--quiet"]);
    assert_eq!(quiet.stderr(), "", "no progress lines");
    let out = quiet.stdout();
    assert!(out.contains(CACHE) && out.contains(CONN), "{out}");
    assert_eq!(
        out.lines().last(),
        Some("2 findings: 0 errors, 2 warnings, 0 info"),
        "{out}"
    );
    assert!(!out.contains("manifest files rendered"), "{out}");
    assert!(!out.contains("fixable with --fix"), "{out}");
    assert_eq!(quiet.code(), Some(1));

    let concise = repo.run(&["-q", "-o", "concise"]);
    assert_eq!(concise.stdout().lines().count(), 3, "{}", concise.stdout());
    assert_eq!(
        concise.stdout().lines().last(),
        Some("2 findings: 0 errors, 2 warnings, 0 info")
    );
    // Warnings about inputs are still said.
    repo.write(
        "apps/broken.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: [\n",
    );
    let broken = repo.run(&["-q"]);
    assert!(
        broken.stderr().starts_with("warning: "),
        "{}",
        broken.stderr()
    );
    assert!(!broken.stderr().contains("loaded "), "{}", broken.stderr());
}

#[test]
fn a_quiet_hook_prints_the_summary_line_only() {
    if !common::git_available() {
        return;
    }
    let repo = Repo::example();
    common::git(repo.path(), &["init", "-q"]);
    common::git(repo.path(), &["add", "-A"]);
    common::git(repo.path(), &["commit", "-qm", "example"]);
    let loud = repo.run(&["--pre-commit", "-o", "concise"]);
    assert!(loud.stderr().contains("pre-commit: "), "{}", loud.stderr());
    assert!(
        loud.stderr().contains("9 objects, 2 findings"),
        "{}",
        loud.stderr()
    );
    let quiet = repo.run(&["--pre-commit", "-q", "-o", "concise"]);
    assert_eq!(quiet.stderr(), "");
    assert_eq!(quiet.stdout(), "0 findings: 0 errors, 0 warnings, 0 info\n");
}

#[test]
fn quiet_and_verbose_conflict() {
    Repo::example()
        .run(&["-q", "-v"])
        .fails_with("cannot be used with");
}

#[test]
fn select_extend_select_and_ignore_take_ids_and_prefixes() {
    let repo = Repo::example();
    let json = ["-o", "json"];
    assert_eq!(repo.run(&json).rules(), [CACHE, CONN]);
    let with = |more: &[&str]| {
        let mut args = json.to_vec();
        args.extend(more);
        repo.run(&args)
    };
    assert_eq!(with(&["--select", CACHE]).rules(), [CACHE]);
    assert_eq!(
        with(&["--select", "postgres"]).rules(),
        Vec::<String>::new()
    );
    // A prefix ends at a dash: this one names no rule.
    let partial = with(&["--extend-select", "authentik-persist"]);
    assert_eq!(partial.code(), Some(2), "{}", partial.stdout());
    assert_eq!(
        with(&["--select", "postgres", "--extend-select", CONN]).rules(),
        [CONN]
    );
    assert_eq!(
        with(&["--ignore", "authentik"]).rules(),
        Vec::<String>::new()
    );
    // The more specific entry wins; comma-separated lists.
    assert_eq!(
        with(&["--select", "ALL", "--ignore", &format!("authentik,{CONN}")]).rules(),
        Vec::<String>::new()
    );
    assert_eq!(
        with(&["--ignore", "authentik", "--extend-select", CACHE]).rules(),
        [CACHE]
    );
}

#[test]
fn a_misspelt_selection_is_an_error_with_the_nearest_id() {
    Repo::example()
        .run(&["--ignore", "authentik-cache-on-sync-replicated-postgre"])
        .fails_with(&format!(
            "unknown rule id \"authentik-cache-on-sync-replicated-postgre\"; did you mean \"{CACHE}\"?"
        ));
    Repo::example()
        .run(&["--select", "zzz"])
        .fails_with("`rules list` shows them");
}

#[test]
fn the_configuration_selects_and_the_command_line_overrides() {
    let repo = Repo::example();
    repo.write(
        ".homelab-lint.yaml",
        &format!("rules:\n  select: [{CACHE}]\n  extendSelect: [postgres]\n"),
    );
    assert_eq!(repo.run(&["-o", "json"]).rules(), [CACHE]);
    // --select replaces the file's select; --ignore adds to its disable.
    assert_eq!(repo.run(&["-o", "json", "--select", CONN]).rules(), [CONN]);
    assert_eq!(
        repo.run(&["-o", "json", "--ignore", CACHE]).rules(),
        Vec::<String>::new()
    );
    repo.write(".homelab-lint.yaml", "rules:\n  disable: [authentik]\n");
    assert_eq!(repo.run(&["-o", "json"]).rules(), Vec::<String>::new());
}

#[test]
fn a_misspelt_config_id_names_the_nearest_at_its_line_and_column() {
    let repo = Repo::example();
    repo.write(
        ".homelab-lint.yaml",
        "rules:\n  severity:\n    postgres-durabilty-off: error\n",
    );
    let run = repo.run(&[]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr().contains(
            ".homelab-lint.yaml:3:29: unknown rule id \"postgres-durabilty-off\"; did you mean \"postgres-durability-off\"?"
        ),
        "{}",
        run.stderr()
    );
    repo.write(".homelab-lint.yaml", "rules:\n  select: [authentik-cach]\n");
    let run = repo.run(&[]);
    assert_eq!(run.code(), Some(2));
    assert!(
        run.stderr()
            .contains(".homelab-lint.yaml:2:12: unknown rule id \"authentik-cach\"; did you mean"),
        "{}",
        run.stderr()
    );
}

#[test]
fn a_misspelt_suppression_is_a_finding_and_the_summary_counts_the_suppressed() {
    let repo = Repo::example();
    edit(
        repo.path(),
        "apps/authentik/database.yaml",
        "    parameters:\n",
        "    parameters: # homelab-lint: ignore authentik-cache-on-sync-replicated-postgre -- measured\n",
    );
    let json = repo.run(&["-o", "json"]);
    assert_eq!(
        json.rules(),
        [CACHE, CONN, "unknown-rule-in-suppression"],
        "the finding stays, and the typo is reported"
    );
    let report = common::report(&json.0);
    let typo = report
        .findings
        .iter()
        .find(|f| f.rule == "unknown-rule-in-suppression")
        .unwrap();
    assert_eq!(
        typo.message,
        format!(
            "unknown rule id \"authentik-cache-on-sync-replicated-postgre\"; did you mean \"{CACHE}\"?"
        )
    );
    assert_eq!(
        (typo.location.path.as_str(), typo.location.line),
        ("apps/authentik/database.yaml", 20)
    );
    // A rule the configuration disables is still a rule.
    edit(
        repo.path(),
        "apps/authentik/database.yaml",
        "postgre -- measured",
        "postgres -- measured",
    );
    let human = repo.run(&[]);
    assert!(
        human
            .stdout()
            .contains("1 finding: 0 errors, 1 warning, 0 info; 1 suppressed\n"),
        "{}",
        human.stdout()
    );
    repo.write(
        ".homelab-lint.yaml",
        &format!("rules:\n  disable: [{CACHE}]\n"),
    );
    assert_eq!(repo.run(&["-o", "json"]).rules(), [CONN]);
}

#[test]
fn statistics_count_findings_per_rule() {
    let repo = Repo::example();
    let run = repo.run(&["--statistics"]);
    assert_eq!(run.code(), Some(1), "the exit status is the lint's");
    let width = CONN.len();
    assert_eq!(
        run.stdout(),
        format!(
            "1  {CACHE:<width$}  Authentik's Postgres cache commits synchronously to network-replicated storage\n\
             1  {CONN}  [*] Authentik keeps database connections open without keepalives or health checks\n"
        )
    );
    let json = repo.run(&["--statistics", "-o", "json"]);
    let stats: serde_json::Value = serde_json::from_slice(&json.0.stdout).unwrap();
    assert_eq!(stats[1]["rule"], CONN);
    assert_eq!(stats[1]["count"], 1);
    assert_eq!(stats[1]["fixable"], 1);
    let sarif = repo.run(&["--statistics", "-o", "sarif"]);
    assert_eq!(sarif.code(), Some(2), "{}", sarif.stdout());
}

#[test]
fn output_file_takes_the_report_and_exit_zero_the_findings_status() {
    let repo = Repo::example();
    let out = tempfile::tempdir().unwrap();
    let file: PathBuf = out.path().join("report.json");
    let run = repo.run(&["-o", "json", "--output-file", file.to_str().unwrap()]);
    assert_eq!(run.code(), Some(1));
    assert_eq!(run.stdout(), "");
    let written = std::fs::read(&file).unwrap();
    assert_eq!(
        homelab_lint::report::json::Report::from_json(&written)
            .unwrap()
            .findings
            .len(),
        2
    );
    let run = repo.run(&["--exit-zero"]);
    assert_eq!(run.code(), Some(0));
    assert!(run.stdout().contains("2 findings"));
    // An error is still an error.
    let run = repo.run(&["--exit-zero", "--select", "zzz"]);
    assert_eq!(run.code(), Some(2));
}

#[test]
fn schema_config_is_the_file_kept_in_the_repository() {
    let out = Command::new(common::BIN)
        .args(["schema", "config"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let kept = Path::new(env!("CARGO_MANIFEST_DIR")).join("schema/homelab-lint.json");
    let kept = std::fs::read_to_string(kept).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        kept,
        "schema/homelab-lint.json is stale: kubectl-homelab_lint schema config > schema/homelab-lint.json"
    );
    let schema: serde_json::Value = serde_json::from_str(&kept).unwrap();
    for key in ["select", "extendSelect", "disable", "severity"] {
        assert!(
            schema["$defs"]["RuleSettings"]["properties"]
                .get(key)
                .is_some(),
            "{key}"
        );
    }
}

/// The load's summary line comes after every warning of the run and
/// counts them: a problem met while evaluating (a HelmRelease's
/// `valuesFrom` of a kind helm-controller refuses) is said before it,
/// not after a line that says "0 problems".
#[test]
fn the_load_summary_is_the_last_warning_line_and_counts_later_problems() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("release.yaml"),
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app, namespace: default}\nspec:\n  chart:\n    spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}\n  valuesFrom:\n    - kind: Foo\n      name: app-values\n",
    )
    .unwrap();
    if !common::git_available() {
        return;
    }
    // A git checkout, so that the folder is not also warned of as read alone.
    common::git(dir.path(), &["init", "-q"]);
    let out = common::lint(dir.path(), &["-o", "human"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    let warning = lines
        .iter()
        .position(|l| l.contains("is not ConfigMap or Secret"))
        .unwrap_or_else(|| panic!("no valuesFrom warning:\n{stderr}"));
    let summary = lines
        .iter()
        .position(|l| l.starts_with("loaded "))
        .unwrap_or_else(|| panic!("no summary:\n{stderr}"));
    assert!(warning < summary, "{stderr}");
    assert!(lines[summary].ends_with("; 1 problem"), "{stderr}");
}
