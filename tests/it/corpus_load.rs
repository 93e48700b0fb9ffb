//! The loader on every real repository of the corpus: it finishes, exits
//! 0, and accounts for every file it skipped.

use crate::common;

use std::process::Command;

#[test]
fn loader_finishes_on_every_corpus_repo() {
    let repos = common::corpus_repos();
    for repo in &repos {
        let out = Command::new(common::BIN)
            .arg("inventory")
            .arg(repo)
            .output()
            .unwrap();
        let name = repo.file_name().unwrap().to_string_lossy();
        assert!(
            out.status.success(),
            "{name}: exit {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let objects = json["objects"].as_array().unwrap().len();
        let skipped = json["skipped"].as_array().unwrap();
        let issues = json["issues"].as_array().unwrap();
        assert!(objects > 0, "{name}: no objects loaded");
        assert!(
            skipped
                .iter()
                .all(|s| !s["reason"].as_str().unwrap_or("").is_empty()),
            "{name}: a skipped file without a reason"
        );
        eprintln!(
            "{name}: {objects} objects, {} skipped files, {} problems",
            skipped.len(),
            issues.len()
        );
    }
}
