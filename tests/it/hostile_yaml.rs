//! Hostile YAML: each case is a repository with one bad file
//! beside a good one, linted by the binary as a subprocess under a memory
//! and CPU-time limit. Each must end with a clear issue at the bad file
//! (what was exceeded, where) or, for valid but large input, load in
//! bounded time; the good file is always still linted. Inputs are at most
//! 1 MB.

use std::fmt::Write as _;

use crate::support::limited;

const GOOD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: survivor\n  namespace: default\ndata:\n  a: b\n";

struct Run {
    objects: Vec<String>,
    /// `path:line:col: message`
    issues: Vec<String>,
}

/// Lints a repository holding GOOD and `file` with `text`, as a
/// subprocess under the shared harness's memory, CPU and wall limits.
fn lint(file: &str, text: &str) -> Run {
    assert!(text.len() <= 1 << 20, "{file}: input over 1 MB");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("good.yaml"), GOOD).unwrap();
    std::fs::write(dir.path().join(file), text).unwrap();
    let inv = limited::inventory(dir.path());
    Run {
        objects: inv.names(),
        issues: inv.issues(),
    }
}

impl Run {
    /// The one issue at `file`, which must name a line and mention every
    /// word of `words`; the good file must have been linted.
    fn issue_at(&self, file: &str, words: &[&str]) -> &str {
        assert!(
            self.objects.iter().any(|o| o == "survivor"),
            "the good file was not linted: {:?}",
            self.objects
        );
        let found: Vec<&String> = self
            .issues
            .iter()
            .filter(|i| i.starts_with(&format!("{file}:")))
            .collect();
        assert_eq!(found.len(), 1, "{file}: {:#?}", self.issues);
        let issue = found[0];
        assert!(!issue.contains(":0:0:"), "no position: {issue}");
        for w in words {
            assert!(issue.contains(w), "{issue} does not mention {w:?}");
        }
        issue
    }

    fn loaded_cleanly(&self, name: &str) {
        assert!(self.objects.iter().any(|o| o == "survivor"));
        assert!(
            self.objects.iter().any(|o| o == name),
            "{name} missing: {:?}",
            self.issues
        );
        assert!(self.issues.is_empty(), "{:#?}", self.issues);
    }
}

fn object(name: &str, body: &str) -> String {
    format!(
        "apiVersion: example.com/v1\nkind: Example\nmetadata:\n  name: {name}\n  namespace: default\n{body}"
    )
}

#[test]
fn aliases_used_as_keys_are_charged_in_bytes() {
    // 8 KiB of key text, used as a key 5,000 times: 40 MB of copies from a
    // 60 KB file.
    let mut text = object("keys", &format!("k: &k {}\nspec:\n", "x".repeat(8 << 10)));
    for i in 0..5000 {
        writeln!(text, "  *k : v{i}").unwrap();
    }
    let run = lint("keys.yaml", &text);
    run.issue_at("keys.yaml", &["alias expansion", "bytes"]);
}

#[test]
fn a_collection_used_as_a_key_is_refused() {
    let mut text = String::from("l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
    text.push_str("m:\n  ? *l0\n  : v\n");
    let run = lint("complex-key.yaml", &object("complex", &text));
    run.issue_at("complex-key.yaml", &["mapping key"]);
}

#[test]
fn depth_is_checked_on_the_expanded_tree() {
    // Each line nests the previous anchor one level deeper: about 80 KB
    // that used to overflow the stack once expanded.
    let mut text = String::from("l0: &l0 [x]\n");
    for i in 1..4000 {
        writeln!(text, "l{i}: &l{i} [*l{}]", i - 1).unwrap();
    }
    let run = lint("deep-alias.yaml", &object("deep", &text));
    let issue = run.issue_at("deep-alias.yaml", &["nesting deeper than", "alias"]);
    // The first alias past the limit, not the end of the file.
    assert!(issue.starts_with("deep-alias.yaml:2"), "{issue}");
}

#[test]
fn one_big_scalar_aliased_many_times_is_charged_in_bytes() {
    let mut text = object("big", &format!("s: &s {}\nl:\n", "y".repeat(900 << 10)));
    for _ in 0..8000 {
        text.push_str("- *s\n");
    }
    let run = lint("big-scalar.yaml", &text);
    run.issue_at("big-scalar.yaml", &["alias expansion", "bytes"]);
}

#[test]
fn fifty_thousand_keys_load_in_linear_time() {
    let mut text = object("wide", "data:\n");
    for i in 0..50_000 {
        writeln!(text, "  k{i:05}: v").unwrap();
    }
    let run = lint("wide.yaml", &text);
    run.loaded_cleanly("wide");
}

#[test]
fn merges_of_large_maps_are_linear() {
    let mut text = String::from("base: &base\n");
    for i in 0..25_000 {
        writeln!(text, "  b{i:05}: v").unwrap();
    }
    text.push_str("spec:\n  <<: *base\n");
    for i in 0..25_000 {
        writeln!(text, "  s{i:05}: v").unwrap();
    }
    let run = lint("merge.yaml", &object("merged", &text));
    run.loaded_cleanly("merged");
}

#[test]
fn integers_go_yaml_refuses_are_strings_not_overflows() {
    // `-0x-8000000000000000` used to overflow (a panic in debug builds).
    let text = object(
        "ints",
        "spec:\n  a: 0x-5\n  b: -0x-8000000000000000\n  c: -0x8000000000000000\n",
    );
    let run = lint("ints.yaml", &text);
    run.loaded_cleanly("ints");
}

#[test]
fn an_alias_used_as_a_key_ends_at_the_colon_as_in_go_yaml() {
    // gavinmcfall's ipmi-exporter HelmRelease writes `*app:`; go-yaml ends
    // the alias name at `:` (kubectl kustomize reads it), saphyr alone did
    // not and the file was dropped with "found unknown anchor".
    let text = object(
        "aliased",
        "spec:\n  controllers:\n    *app:\n      image: x\n  flow: {*app: v}\n",
    );
    let text = text.replace("name: aliased", "name: &app aliased");
    let run = lint("alias-key.yaml", &text);
    run.loaded_cleanly("aliased");
}

#[test]
fn odd_anchor_and_alias_names_end_in_an_issue_or_load() {
    // Each ends as go-yaml would have it read, or in an issue at its line:
    // nothing panics, hangs, or drops the good file.
    let cases = [
        "a: &app x\nk: *app:x\n",
        "a: &app x\nk: *app?\n",
        "a: &app x\nk: *app%\n",
        "a: &app x\nk: *app@\n",
        "a: &app x\nk: *app`\n",
        "a: &app x\nk: *app:",
        "a: &app x\nk: {*app:",
        "a: &app x\nk:\n  *app:\r\n",
        "a: &ü x\nk:\n  *ü:\n",
        "k:\n  *:\n",
        "k:\n  *-:\n",
        "k:\n  &:\n",
        "k:\n  &app: v\n",
        "k: &app: v\n",
    ];
    for (i, case) in cases.iter().enumerate() {
        let file = format!("odd-{i}.yaml");
        let run = lint(&file, case);
        assert!(
            run.objects.iter().any(|o| o == "survivor"),
            "{case:?}: the good file was not linted"
        );
        for issue in run.issues.iter().filter(|i| i.starts_with(&file)) {
            assert!(!issue.contains(":0:0:"), "{case:?}: no position: {issue}");
        }
    }
}

#[test]
fn a_finding_after_aliases_used_as_keys_points_at_the_value_as_written() {
    // Two aliases ended where go-yaml ends them, before the finding and on
    // its line: the column is counted in the file as written.
    let text = "apiVersion: postgresql.cnpg.io/v1\nkind: Cluster\nmetadata:\n  \
                name: &app pg\n  namespace: default\n  labels:\n    *app: x\nspec:\n  \
                postgresql:\n    parameters: {*app: \"on\", max_connections: 100}\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cluster.yaml"), text).unwrap();
    let run = limited::run_linter(&["-o", "concise", dir.path().to_str().unwrap()]);
    let out = run.stdout_text();
    let line = out
        .lines()
        .find(|l| l.contains("postgres-parameter-not-a-string"))
        .unwrap_or_else(|| panic!("no finding:\n{out}\n{}", run.stderr));
    let col = text.lines().nth(9).unwrap().find("100").unwrap() + 1;
    assert!(
        line.starts_with(&format!("cluster.yaml:10:{col}:")),
        "{line} (want cluster.yaml:10:{col})"
    );
}

#[test]
fn many_aliases_used_as_keys_end_in_an_issue_at_the_one_past_the_limit() {
    // Each `*a:` costs one more parse of the file: past the limit of
    // repairs (64), the file is refused where that limit was reached.
    let mut text = object("many", "a: &a x\nspec:\n");
    for i in 0..2000 {
        writeln!(text, "  m{i}:\n    *a: v").unwrap();
    }
    let run = lint("many-alias-keys.yaml", &text);
    let issue = run.issue_at("many-alias-keys.yaml", &["more than 64", "repairs"]);
    // The 65th alias (`i` = 64): two lines per key after the 7 before them.
    assert!(issue.starts_with("many-alias-keys.yaml:137:5:"), "{issue}");
}
