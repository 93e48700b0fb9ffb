//! `docs/rules/` is generated from the built-in rules. This test fails when
//! the checked-in pages differ from what the rules produce; with
//! `UPDATE_DOCS=1` it writes them instead (ruff's approach): the docs
//! cannot drift from the rules, and no separate generator binary ships.

use std::collections::BTreeMap;
use std::path::Path;

use homelab_lint::rules::{self, docs};

#[test]
fn every_rule_file_loads_as_a_builtin() {
    // `builtin()` leaves broken files out at run time; here that is a bug.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
    let mut problems = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            count += 1;
            let text = std::fs::read_to_string(&path).unwrap();
            if let Err(issue) = rules::parse(&path.display().to_string(), &text) {
                problems.push(issue.to_string());
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!(rules::builtin().len(), count);
}

/// A help is the same for every finding, so
/// it cannot know the database's name; the fix's notes name it, or write
/// `<database>`/`<role>` when the repository does not show it. A help that
/// said `ALTER DATABASE authentik` beside a note saying the name is unknown
/// contradicted itself.
#[test]
fn builtin_help_names_no_database_or_role() {
    let mut named = Vec::new();
    for rule in rules::builtin() {
        let words: Vec<&str> = rule.remediation.split_whitespace().collect();
        for w in words.windows(3) {
            if w[0].ends_with("ALTER")
                && matches!(w[1], "DATABASE" | "ROLE")
                && !w[2].starts_with('<')
            {
                named.push(format!("{}: ALTER {} {}", rule.id, w[1], w[2]));
            }
        }
    }
    assert!(named.is_empty(), "{named:?}");
}

#[test]
fn rule_docs_are_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules");
    let builtin = rules::builtin();
    let mut expected: BTreeMap<String, String> = builtin
        .iter()
        .map(|r| (format!("{}.md", r.id), docs::markdown(r)))
        .collect();
    expected.insert("README.md".into(), docs::index(&builtin));

    let update = std::env::var("UPDATE_DOCS").is_ok_and(|v| v == "1");
    if update {
        std::fs::create_dir_all(&dir).unwrap();
    }
    let mut stale = Vec::new();
    for entry in std::fs::read_dir(&dir).into_iter().flatten() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|e| e == "md") && !expected.contains_key(&name) {
            if update {
                std::fs::remove_file(&path).unwrap();
            } else {
                stale.push(format!("{name}: no rule has this id (remove it)"));
            }
        }
    }
    for (name, text) in &expected {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(current) if current == *text => {}
            _ if update => std::fs::write(&path, text).unwrap(),
            Ok(_) => stale.push(format!("{name}: differs from the rule")),
            Err(_) => stale.push(format!("{name}: missing")),
        }
    }
    assert!(
        stale.is_empty(),
        "docs/rules is out of date; regenerate with `UPDATE_DOCS=1 cargo test --test it rule_docs::`:\n{}",
        stale.join("\n")
    );
}
