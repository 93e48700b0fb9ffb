//! Per-rule fixtures, in the style of ruff and clippy: every built-in rule
//! has `testdata/rules/<rule-id>/fires/<case>/` repos in which it must fire
//! and `testdata/rules/<rule-id>/does_not_fire/<case>/` repos in which it
//! must not. Each case is a tiny GitOps repo loaded the way the binary
//! loads one, and evaluated with every built-in rule. The rendered
//! diagnostic of each `fires` case is an insta snapshot
//! (`tests/snapshots/`): review changes with `cargo insta review`.
//! A case with `base/` and `head/` directories is a `--base` run: `head/`
//! is linted with the app versions of `base/` (rules with a
//! `releaseCrossed` step). A case with `repo/` and `cluster/` directories
//! is a run with `--snapshot`: `cluster/` holds `kubectl get -o yaml`
//! output, linked to the repository's declarations.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use homelab_lint::model::Model;
use homelab_lint::report::human;
use homelab_lint::rules::releases::{self, Baseline};
use homelab_lint::rules::{self, Finding};
use homelab_lint::source::{link, live, repo, snapshot};
use homelab_lint::yaml::Limits;

const KINDS: [&str; 2] = ["fires", "does_not_fire"];

fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

fn name_of(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What one case produced.
struct Outcome {
    /// Findings of the case's own rule, in report order.
    hits: Vec<Finding>,
    /// Ids of the other rules that fired, sorted and deduplicated.
    others: Vec<String>,
    rendered: String,
    undecided: Vec<String>,
    problems: Vec<String>,
}

fn run_case(case: &Path, rule_id: &str, all: &[rules::Rule]) -> Outcome {
    let (head, base) = if case.join("head").is_dir() && case.join("base").is_dir() {
        (case.join("head"), Some(case.join("base")))
    } else if case.join("repo").is_dir() {
        (case.join("repo"), None)
    } else {
        (case.to_path_buf(), None)
    };
    let base_repo = base.map(|b| repo::load(&b, Default::default()));
    let baseline = match &base_repo {
        Some(r) => Baseline::of(&Model::new(r), releases::builtin(), "the base commit"),
        None => Baseline::none(),
    };
    let mut loaded = repo::load(&head, Default::default());
    let mut problems: Vec<String> = loaded.issues.iter().map(|i| i.to_string()).collect();
    if case.join("cluster").is_dir() {
        match snapshot::load(
            &case.join("cluster"),
            &mut loaded.files.sources,
            &Limits::default(),
        ) {
            Ok(snap) => {
                problems.extend(snap.issues.iter().map(|i| i.to_string()));
                link::merge(&mut loaded.objects, live::lintable(snap.objects));
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    problems.extend(
        loaded
            .skipped
            .iter()
            // A directory no Flux Kustomization builds is what some
            // fixtures are about (a path pointing next to it).
            .filter(|s| !s.reason.starts_with("not applied"))
            .map(|s| format!("skipped {}: {}", s.path.display(), s.reason)),
    );
    let model = Model::new(&loaded);
    let outcome = rules::lint_with(&model, all, &baseline);
    let sources = &loaded.files.sources;
    let (mut hits, other): (Vec<Finding>, Vec<Finding>) = outcome
        .findings
        .into_iter()
        .partition(|f| f.rule == rule_id);
    hits.sort_by_key(|f| {
        (
            sources.path(f.primary.span.file).to_path_buf(),
            f.primary.span.start,
        )
    });
    let mut others: Vec<String> = other.into_iter().map(|f| f.rule).collect();
    others.sort();
    others.dedup();
    let rendered = human::render(&hits, sources, false);
    let undecided = outcome
        .undecided
        .iter()
        .filter(|u| u.rule == rule_id)
        .map(|u| format!("{}: {}", u.subject, u.reason))
        .collect();
    Outcome {
        hits,
        others,
        rendered,
        undecided,
        problems,
    }
}

#[test]
fn every_rule_fires_and_stays_quiet_where_its_fixtures_say() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules");
    let all = rules::builtin();
    assert!(
        all.len() >= 10,
        "only {} built-in rules parsed: a rule file is broken",
        all.len()
    );
    let mut failures: Vec<String> = Vec::new();
    // Rule id -> number of cases per kind.
    let mut counts: BTreeMap<String, [usize; 2]> = BTreeMap::new();

    for rule_dir in subdirs(&root) {
        let rule_id = name_of(&rule_dir);
        if !all.iter().any(|r| r.id == rule_id) {
            failures.push(format!(
                "{}: no built-in rule has the id {rule_id:?}",
                rule_dir.display()
            ));
            continue;
        }
        for (k, kind) in KINDS.iter().enumerate() {
            for case in subdirs(&rule_dir.join(kind)) {
                counts.entry(rule_id.clone()).or_default()[k] += 1;
                let shown = case
                    .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                    .unwrap_or(&case)
                    .display()
                    .to_string();
                let out = run_case(&case, &rule_id, &all);
                if !out.problems.is_empty() {
                    failures.push(format!(
                        "{shown}: the fixture does not load cleanly:\n  {}",
                        out.problems.join("\n  ")
                    ));
                }
                // A quiet case may pin what the rule says it could not
                // decide, line by line: the reason must name the fact.
                if let Ok(expected) = std::fs::read_to_string(case.join("undecided.txt")) {
                    let expected: Vec<&str> = expected.lines().filter(|l| !l.is_empty()).collect();
                    if out.undecided != expected {
                        failures.push(format!(
                            "{shown}: undecided lines differ from undecided.txt:\n  {}",
                            out.undecided.join("\n  ")
                        ));
                    }
                }
                match *kind {
                    "fires" if out.hits.is_empty() => failures.push(format!(
                        "{shown}: {rule_id} did not fire{}",
                        if out.undecided.is_empty() {
                            String::new()
                        } else {
                            format!("; undecided:\n  {}", out.undecided.join("\n  "))
                        }
                    )),
                    "fires" => {
                        let snapshot = format!(
                            "case: {shown}\nfindings of {rule_id}: {}\nother rules that fired: {}\n\n{}",
                            out.hits.len(),
                            if out.others.is_empty() {
                                "none".to_string()
                            } else {
                                out.others.join(", ")
                            },
                            out.rendered
                        );
                        let name = format!("{rule_id}__{}", name_of(&case));
                        // Every case gets its snapshot written even when an
                        // earlier one differs; the differences are reported
                        // together below.
                        let result = catch_unwind(AssertUnwindSafe(|| {
                            let mut settings = insta::Settings::clone_current();
                            settings.set_description(shown.clone());
                            settings.set_prepend_module_to_snapshot(false);
                            settings.bind(|| insta::assert_snapshot!(name, snapshot));
                        }));
                        if result.is_err() {
                            failures.push(format!(
                                "{shown}: the rendered diagnostic differs from its snapshot (cargo insta review)"
                            ));
                        }
                    }
                    _ if !out.hits.is_empty() => failures.push(format!(
                        "{shown}: {rule_id} fired {} time(s) but should not:\n{}",
                        out.hits.len(),
                        out.rendered
                    )),
                    _ => {}
                }
            }
        }
    }

    for rule in &all {
        let [fires, quiet] = counts.get(&rule.id).copied().unwrap_or_default();
        if fires == 0 {
            failures.push(format!(
                "testdata/rules/{}/fires/: built-in rule {} has no case where it fires",
                rule.id, rule.id
            ));
        }
        if quiet == 0 {
            failures.push(format!(
                "testdata/rules/{}/does_not_fire/: built-in rule {} has no case where it stays quiet",
                rule.id, rule.id
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} fixture failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
