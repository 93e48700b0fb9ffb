//! Checks on the shape of the source tree that a reviewer would otherwise
//! have to hold in mind: data flows one way through the top-level modules,
//! so a module names only the ones before it, and no source file grows
//! past what one reader takes in.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The top-level modules in the order data flows through them: each may
/// use only those before it. A rule's fix is computed with its finding
/// (`rules::fixes`); `fix` only shows and writes it.
const FLOW: &[&str] = &[
    "yaml", "source", "model", "rules", "probe", "fix", "report", "pipeline", "server", "cli",
];

/// Top-level modules outside the flow: each uses no other module of the
/// crate, so any of them may use it.
const LEAVES: &[&str] = &["alloc", "cores", "example"];

/// The longest a source file may be.
const MAX_LINES: usize = 900;

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| e.into_path())
        .collect();
    out.sort();
    out
}

/// The top-level module a file of `src/` belongs to (`None`: the crate
/// root, `lib.rs` or `main.rs`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The code of a Rust file without its comments and the text of its
/// string literals: a doc link to a later module is no use of it, and a
/// glob such as `"**/*.yaml"` opens no comment.
fn without_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    while i < chars.len() {
        let c = chars[i];
        if c == '/' && at(i + 1) == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (at(i + 1) == '"' || (at(i + 1) == '#' && at(i + 2) != '[')) {
            // A raw string: r"..." or r#"..."#, closed by as many #.
            let mut j = i + 1;
            let mut hashes = 0;
            while at(j) == '#' {
                hashes += 1;
                j += 1;
            }
            if at(j) != '"' {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            while j < chars.len() && !(chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == '#')) {
                j += 1;
            }
            out.push_str("\"\"");
            i = j + 1 + hashes;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i = j + 1;
        } else if c == '\'' && at(i + 1) == '\\' {
            // A char literal such as '\'' or '\\'.
            let mut j = i + 3;
            while j < chars.len() && chars[j] != '\'' {
                j += 1;
            }
            i = j + 1;
        } else if c == '\'' && at(i + 2) == '\'' {
            i += 3;
        } else {
            if c.is_alphanumeric() || c == '_' {
                // An identifier ending in r (`for"`) is no raw string.
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    out.push(chars[i]);
                    i += 1;
                }
                continue;
            }
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The top-level modules `code` names through `crate::`, grouped
/// imports (`use crate::{a, b::c}`) included.
fn crate_modules(code: &str) -> BTreeSet<String> {
    let single = regex::Regex::new(r"\bcrate::([a-z_][a-z0-9_]*)").expect("valid regex");
    let grouped = regex::Regex::new(r"\bcrate::\{([^}]*)\}").expect("valid regex");
    let mut out: BTreeSet<String> = single
        .captures_iter(code)
        .map(|c| c[1].to_string())
        .collect();
    for group in grouped.captures_iter(code) {
        for entry in group[1].split(',') {
            let head = entry.trim().split("::").next().unwrap_or("").trim();
            if !head.is_empty() {
                out.insert(head.to_string());
            }
        }
    }
    out
}

/// Every use of a top-level module that is not before the user in
/// [`FLOW`], as `file: user -> used`.
fn backward_uses(src: &Path) -> Vec<String> {
    let rank = |m: &str| FLOW.iter().position(|f| *f == m);
    let mut found = Vec::new();
    for file in rust_files(src) {
        let Some(user) = module_of(src, &file) else {
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("source file reads");
        for used in crate_modules(&without_comments(&text)) {
            if used == user {
                continue;
            }
            let allowed = match (rank(&user), rank(&used)) {
                (Some(a), Some(b)) => b < a,
                // A leaf may be used from anywhere and uses nothing.
                (Some(_), None) => LEAVES.contains(&used.as_str()),
                (None, _) => false,
            };
            if !allowed {
                let rel = file.strip_prefix(src).unwrap_or(&file);
                found.push(format!("src/{}: {user} -> {used}", rel.display()));
            }
        }
    }
    found
}

#[test]
fn top_level_modules_use_only_those_before_them() {
    let src = src_dir();
    let modules: BTreeSet<String> = rust_files(&src)
        .iter()
        .filter_map(|f| module_of(&src, f))
        .collect();
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !FLOW.contains(&m.as_str()) && !LEAVES.contains(&m.as_str()))
        .filter(|m| m.as_str() != "layering")
        .collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules in neither FLOW nor LEAVES: {unplaced:?}"
    );
    let backward = backward_uses(&src);
    assert!(
        backward.is_empty(),
        "uses against the flow {FLOW:?}:\n{}",
        backward.join("\n")
    );
}

/// The submodules of `source` that `source/mod.rs` re-exports items of,
/// by item: `super::Files` is a use of `files`.
const SOURCE_REEXPORTS: &[(&str, &str)] = &[
    ("Files", "files"),
    ("join_within", "confine"),
    ("Gap", "issue"),
    ("Issue", "issue"),
    ("Limits", "limits"),
    ("Concealed", "object"),
    ("Object", "object"),
    ("Step", "object"),
    ("StepKind", "object"),
];

/// Which submodules of `source` each submodule names, through
/// `crate::source::`, `super::` or a re-exported item.
fn source_uses(src: &Path) -> std::collections::BTreeMap<String, BTreeSet<String>> {
    let source = src.join("source");
    let path_re =
        regex::Regex::new(r"\b((?:super::)+|crate::source::)(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*)")
            .expect("valid regex");
    let mut uses: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    for file in rust_files(&source) {
        let rel = file.strip_prefix(&source).expect("under source");
        let parts: Vec<String> = rel
            .iter()
            .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
            .collect();
        if parts == ["mod"] {
            continue;
        }
        // The module path of the file below `source`.
        let mut module: Vec<String> = parts.clone();
        if module.last().is_some_and(|l| l == "mod") {
            module.pop();
        }
        let sub = parts[0].clone();
        let code = without_comments(&std::fs::read_to_string(&file).expect("source file reads"));
        let entry = uses.entry(sub.clone()).or_default();
        for c in path_re.captures_iter(&code) {
            let ups = c[1].matches("super::").count();
            let names: Vec<String> = match c[2].strip_prefix('{') {
                Some(group) => group
                    .trim_end_matches('}')
                    .split(',')
                    .map(|e| e.trim().split("::").next().unwrap_or("").trim().to_string())
                    .filter(|e| !e.is_empty())
                    .collect(),
                None => vec![c[2].to_string()],
            };
            // `crate::source::` or enough `super::` to reach `source`.
            let at_source = c[1].starts_with("crate") || ups >= module.len();
            for name in names {
                let used = if !at_source {
                    sub.clone()
                } else {
                    SOURCE_REEXPORTS
                        .iter()
                        .find(|(item, _)| *item == name)
                        .map_or(name, |(_, m)| m.to_string())
                };
                if used != sub && used != "self" && used != "super" {
                    entry.insert(used);
                }
            }
        }
    }
    uses
}

/// The rings (strongly connected sets of more than one) of `uses`.
fn rings(uses: &std::collections::BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    let reaches = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for next in uses.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: std::collections::BTreeMap<&String, BTreeSet<String>> =
        uses.keys().map(|m| (m, reaches(m))).collect();
    let mut out: Vec<BTreeSet<String>> = Vec::new();
    for (m, r) in &reach {
        let ring: BTreeSet<String> = r
            .iter()
            .filter(|o| reach.get(o).is_some_and(|back| back.contains(*m)))
            .cloned()
            .collect();
        if ring.len() > 1 && !out.contains(&ring) {
            out.push(ring);
        }
    }
    out
}

#[test]
fn submodules_of_source_form_no_ring() {
    let uses = source_uses(&src_dir());
    assert!(
        uses["commit_tree"].contains("git") && uses["kustomize"].contains("files"),
        "the check must see uses: {uses:?}"
    );
    let found = rings(&uses);
    assert!(
        found.is_empty(),
        "submodules of source in a ring (each uses the next): {found:?}"
    );
}

/// The ring check must see a ring that goes through several modules,
/// and leave out what the ring merely uses.
#[test]
fn the_check_finds_rings() {
    let uses: std::collections::BTreeMap<String, BTreeSet<String>> = [
        ("a", &["b"][..]),
        ("b", &["c"][..]),
        ("c", &["a", "d"][..]),
        ("d", &[][..]),
    ]
    .into_iter()
    .map(|(m, used)| (m.to_string(), used.iter().map(|u| u.to_string()).collect()))
    .collect();
    let expected: BTreeSet<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(rings(&uses), vec![expected]);
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let src = src_dir();
    let long: Vec<String> = rust_files(&src)
        .into_iter()
        .filter_map(|file| {
            let lines = std::fs::read_to_string(&file).ok()?.lines().count();
            (lines > MAX_LINES).then(|| format!("{} ({lines} lines)", file.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "source files over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

/// The check must see what it is for: a use against the flow, in every
/// spelling, and none in a comment.
#[test]
fn the_check_finds_backward_uses() {
    let code = without_comments(
        "use crate::fix::Fix;\nuse crate::{model, report::json};\n\
         /// [`crate::cli::Args`]\nlet x = 1; // crate::pipeline\n/* crate::probe */ fn f() {}\n\
         let g = \"**/*.yaml\"; let q = '\"'; let s = r#\"crate::cli\"#;\n\
         fn h<'a>(x: &'a str) -> &'a str { crate::yaml::f(x) }\n",
    );
    let found = crate_modules(&code);
    let expected: BTreeSet<String> = ["fix", "model", "report", "yaml"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(found, expected);
}
