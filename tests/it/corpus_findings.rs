//! The built-in rules on every corpus repository: exit status 0 or 1, no
//! crash, and exactly the findings in testdata/corpus-expectations.yaml,
//! each of which carries its justification.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use homelab_lint::yaml::{FileId, Limits, parse_documents};

#[test]
fn corpus_findings_match_the_expectations() {
    let repos = common::corpus_repos();
    if repos.is_empty() {
        return;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/corpus-expectations.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    let doc = parse_documents(&text, FileId(0), &Limits::default())
        .unwrap()
        .remove(0);
    let mut problems = Vec::new();
    for repo in &repos {
        let name = repo.file_name().unwrap().to_string_lossy().to_string();
        let Some(expected) = doc.get(&name) else {
            problems.push(format!("{name}: not in the expectations file"));
            continue;
        };
        let expected: BTreeSet<(String, String)> = expected
            .as_seq()
            .unwrap()
            .iter()
            .map(|e| {
                let why = e.str_at(&["why"]).unwrap_or("");
                assert!(
                    why.len() > 20,
                    "{name}: expectation without a justification"
                );
                (
                    e.str_at(&["rule"]).unwrap().to_string(),
                    e.str_at(&["at"]).unwrap().to_string(),
                )
            })
            .collect();
        let out = Command::new(common::BIN)
            .arg(repo)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "{name}: exit {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let found: BTreeSet<(String, String)> =
            common::report(&out).rule_locations().into_iter().collect();
        for extra in found.difference(&expected) {
            problems.push(format!(
                "{name}: unexpected finding {} at {}",
                extra.0, extra.1
            ));
        }
        for gone in expected.difference(&found) {
            problems.push(format!(
                "{name}: expected finding {} at {} is gone",
                gone.0, gone.1
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
