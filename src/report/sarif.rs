//! `--format sarif`: SARIF 2.1.0, the log GitHub code scanning and other
//! SAST dashboards import. Every loaded rule is described in the driver,
//! not only those that fired, so that a dashboard can show the rule
//! documentation of alerts it closes too.

use std::path::{Component, Path};

use serde_json::{Map, Value as J, json};

use crate::rules::{BaselineState, Finding, Label, Rule, Severity, docs};
use crate::yaml::SourceMap;

pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// Result locations are relative to this base, the top of the git
/// repository of the linted directory (else the linted directory), so
/// that logs from different checkouts compare equal and GitHub finds the
/// files whichever subdirectory was linted.
pub const SRCROOT: &str = "%SRCROOT%";

/// The key of our fingerprint in `partialFingerprints`, versioned as the
/// SARIF spec asks, so that a change of the scheme can be told apart.
pub const FINGERPRINT_KEY: &str = "findingIdentity/v1";

pub fn render(findings: &[Finding], rules: &[Rule], sources: &SourceMap) -> J {
    // A result without a location is rejected by GitHub code scanning
    // (the whole upload fails): such a finding (an object read only from
    // the live cluster) is left out and said in a notification instead.
    let (located, unlocated): (Vec<&Finding>, Vec<&Finding>) = findings
        .iter()
        .partition(|f| physical_location(&f.primary, sources).is_some());
    let notifications: Vec<J> = unlocated
        .iter()
        .map(|f| {
            json!({
                "level": level(f.severity),
                "message": { "text": sentence(&format!(
                    "{} (finding {} left out of the results: it has no location in a file)",
                    f.message, f.rule
                )) },
                "descriptor": { "id": f.rule },
            })
        })
        .collect();
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": driver(rules) },
            // Our columns count characters, not UTF-16 code units (the
            // default a consumer would otherwise assume).
            "columnKind": "unicodeCodePoints",
            "originalUriBaseIds": {
                SRCROOT: {
                    "description": { "text": "The top of the git repository of the linted directory (else the linted directory)." }
                }
            },
            "results": located.iter().map(|f| result(f, rules, sources)).collect::<Vec<_>>(),
            "invocations": [{
                "executionSuccessful": true,
                "toolExecutionNotifications": notifications,
            }],
        }]
    })
}

/// Adds the repository's coverage to the invocation: one note with the
/// figures (a warning when manifest files Flux applies were lost), and a
/// warning per Flux Kustomization that did not render completely, at its
/// file. A run that lost part of the repository never looks clean, and
/// figures that say every file was rendered are not a warning on every
/// run because one Kustomization elsewhere has a remote entry: that one
/// has its own warning.
pub fn add_coverage(
    log: &mut J,
    repo: &crate::source::repo::Repo,
    shown: &dyn Fn(&std::path::Path) -> bool,
) {
    let (c, incomplete) = repo.coverage_of(shown);
    let sources = &repo.files.sources;
    let mut notes = vec![json!({
        "level": if c.lost > 0 { "warning" } else { "note" },
        "message": { "text": sentence(&c.summary()) },
    })];
    for r in incomplete {
        let mut n = json!({
            "level": "warning",
            "message": { "text": sentence(&format!(
                "Flux Kustomization {}/{}: {}: {}",
                r.namespace, r.name, r.outcome.key(), r.outcome.why()
            )) },
        });
        if let Some(artifact) = artifact(sources, r.file) {
            n["locations"] = json!([{ "physicalLocation": { "artifactLocation": artifact } }]);
        }
        notes.push(n);
    }
    if let Some(list) =
        log["runs"][0]["invocations"][0]["toolExecutionNotifications"].as_array_mut()
    {
        list.extend(notes);
    }
}

fn driver(rules: &[Rule]) -> J {
    json!({
        "name": "homelab-lint",
        "version": env!("CARGO_PKG_VERSION"),
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "informationUri": env!("CARGO_PKG_HOMEPAGE"),
        "rules": rules.iter().map(rule).collect::<Vec<_>>(),
    })
}

/// Where a built-in rule's page is published: `docs/rules/<id>.md` of the
/// repository at the release tag of this version (the release workflow
/// builds from tags `vX.Y.Z`), generated from the rule file (README
/// "Rules"): the page of the rule as this binary has it, not as `main`
/// has it since. A user's rule has no page.
pub fn help_uri(r: &Rule) -> Option<String> {
    r.builtin.then(|| {
        format!(
            "{}/blob/v{}/docs/rules/{}.md",
            env!("CARGO_PKG_REPOSITORY"),
            env!("CARGO_PKG_VERSION"),
            r.id
        )
    })
}

fn rule(r: &Rule) -> J {
    let help = docs::markdown(r);
    let mut out = json!({
        "id": r.id,
        "name": pascal_case(&r.id),
        "shortDescription": { "text": r.title },
        "fullDescription": { "text": r.what.trim() },
        "help": { "text": help, "markdown": help },
        "defaultConfiguration": { "level": level(r.severity) },
        // What GitHub code scanning reads from a rule ("SARIF support for
        // code scanning", reportingDescriptor object): `precision` sorts
        // alerts, `problem.severity` (error, warning, recommendation) is
        // the severity shown for a non-security alert.
        "properties": {
            "category": r.category.as_str(),
            "tags": [r.category.as_str()],
            "precision": r.precision.as_str(),
            "problem.severity": match r.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "recommendation",
            },
        },
    });
    if let Some(uri) = help_uri(r) {
        out["helpUri"] = J::String(uri);
    }
    out
}

/// Adds `versionControlProvenance`: the repository and commit the
/// results are of, with [`SRCROOT`] mapped to the repository's top.
pub fn add_provenance(log: &mut J, p: &crate::source::git::Provenance) {
    let mut vcs = json!({
        "repositoryUri": p.repository_uri,
        "revisionId": p.revision,
        "mappedTo": { "uriBaseId": SRCROOT },
    });
    if let Some(branch) = &p.branch {
        vcs["branch"] = J::String(branch.clone());
    }
    log["runs"][0]["versionControlProvenance"] = json!([vcs]);
}

/// Adds the inputs that could not be used (a file that does not parse, a
/// link out of the repository, a suppression without a reason) to the
/// invocation's notifications, at their file and line: code scanning
/// shows them with the run, so a result set that lost a file says so.
/// A problem met several times (a kustomization that two clusters' Flux
/// Kustomizations build) is one notification, as it is one warning line.
pub fn add_problems(log: &mut J, problems: &[crate::source::Issue], sources: &SourceMap) {
    let mut seen = std::collections::HashSet::new();
    let notes = problems.iter().filter(|p| seen.insert(*p)).map(|p| {
        let mut n = json!({
            "level": "warning",
            "message": { "text": sentence(&format!("{}: {}", p.path, p.message)) },
        });
        if let Some(artifact) = issue_artifact(sources, &p.path) {
            let mut loc = json!({ "artifactLocation": artifact });
            if p.line > 0 {
                loc["region"] = json!({ "startLine": p.line, "startColumn": p.col.max(1) });
            }
            n["locations"] = json!([{ "physicalLocation": loc }]);
        }
        n
    });
    if let Some(list) =
        log["runs"][0]["invocations"][0]["toolExecutionNotifications"].as_array_mut()
    {
        list.extend(notes);
    }
}

/// The artifact of a problem's path: relative to the linted directory,
/// named from the repository's top like every file; absolute for a file
/// outside it (a rules directory given by its path).
fn issue_artifact(sources: &SourceMap, path: &str) -> Option<J> {
    if path.is_empty() {
        return None;
    }
    let path = Path::new(path);
    Some(if path.is_absolute() {
        json!({ "uri": format!("file:///{}", relative_uri(path)) })
    } else {
        json!({
            "uri": relative_uri(&sources.shown_root().prefix.join(path)),
            "uriBaseId": SRCROOT,
        })
    })
}

fn result(f: &Finding, rules: &[Rule], sources: &SourceMap) -> J {
    let mut text = sentence(&f.message);
    // Caveats belong with the message: code scanning shows only the text.
    for note in &f.notes {
        text.push_str(" Note: ");
        text.push_str(&sentence(note));
    }
    let mut out = Map::new();
    out.insert("ruleId".into(), json!(f.rule));
    if let Some(i) = rules.iter().position(|r| r.id == f.rule) {
        out.insert("ruleIndex".into(), json!(i));
    }
    out.insert("level".into(), json!(level(f.severity)));
    out.insert("message".into(), json!({ "text": text }));
    // SARIF 2.1.0 §3.27.24: a result the baseline run had too is
    // `unchanged` (its location may have moved; our fingerprint ignores
    // lines), one it did not have is `new`.
    if let Some(state) = f.baseline {
        let state = match state {
            BaselineState::New => "new",
            BaselineState::Existing => "unchanged",
        };
        out.insert("baselineState".into(), json!(state));
    }
    if let Some(primary) = physical_location(&f.primary, sources) {
        out.insert("locations".into(), json!([{ "physicalLocation": primary }]));
    }
    let related: Vec<J> = f
        .related
        .iter()
        .filter_map(|l| Some((l, physical_location(l, sources)?)))
        .enumerate()
        .map(|(id, (l, loc))| {
            json!({
                "id": id,
                "physicalLocation": loc,
                "message": { "text": l.text },
            })
        })
        .collect();
    if !related.is_empty() {
        out.insert("relatedLocations".into(), J::Array(related));
    }
    if let Some(fix) = f.fix.as_ref().and_then(|fix| sarif_fix(fix, sources)) {
        out.insert("fixes".into(), json!([fix]));
    }
    out.insert(
        "partialFingerprints".into(),
        json!({ FINGERPRINT_KEY: f.fingerprint }),
    );
    let evidence: Map<String, J> = f
        .evidence
        .iter()
        .map(|e| (e.key.clone(), J::String(e.value.clone())))
        .collect();
    out.insert("properties".into(), json!({ "evidence": evidence }));
    J::Object(out)
}

/// A fix as SARIF `fixes[]` wants it: per file, the regions to replace
/// (an empty region is an insertion) and the text that replaces them.
/// `None` for a fix without edits (display-only).
fn sarif_fix(fix: &crate::fix::Fix, sources: &SourceMap) -> Option<J> {
    let mut by_file: Vec<(crate::yaml::FileId, Vec<J>)> = Vec::new();
    for edit in &fix.edits {
        let (start_line, start_col) = sources.line_col(edit.file, edit.start)?;
        let (end_line, end_col) = sources.line_col(edit.file, edit.end)?;
        let replacement = json!({
            "deletedRegion": {
                "startLine": start_line,
                "startColumn": start_col,
                "endLine": end_line,
                "endColumn": end_col,
            },
            "insertedContent": { "text": edit.replacement },
        });
        match by_file.iter_mut().find(|(file, _)| *file == edit.file) {
            Some((_, replacements)) => replacements.push(replacement),
            None => by_file.push((edit.file, vec![replacement])),
        }
    }
    if by_file.is_empty() {
        return None;
    }
    let changes: Vec<J> = by_file
        .into_iter()
        .map(|(file, replacements)| {
            Some(json!({
                "artifactLocation": artifact(sources, file)?,
                "replacements": replacements,
            }))
        })
        .collect::<Option<_>>()?;
    Some(json!({
        "description": {
            "text": sentence(&format!("{} ({} fix)", fix.title, fix.applicability.as_str())),
        },
        "artifactChanges": changes,
    }))
}

/// The artifact and exact region of a label; `None` for a label that
/// points nowhere (line 0, a fact the repository does not show).
fn physical_location(label: &Label, sources: &SourceMap) -> Option<J> {
    let span = label.span;
    if span.line == 0 {
        return None;
    }
    let artifact = artifact(sources, span.file)?;
    let (end_line, end_col) = sources
        .line_col(span.file, span.end)
        .filter(|end| *end >= (span.line, span.col))
        .unwrap_or((span.line, span.col));
    Some(json!({
        "artifactLocation": artifact,
        "region": {
            "startLine": span.line,
            "startColumn": span.col,
            "endLine": end_line,
            "endColumn": end_col,
        },
    }))
}

/// Where a file is: relative to [`SRCROOT`] inside the repository, a
/// `file://` URI outside it (a snapshot given by its path), `None` for a
/// page of the live cluster, which is no artifact a viewer can open.
fn artifact(sources: &SourceMap, file: crate::yaml::FileId) -> Option<J> {
    if sources.is_virtual(file) {
        return None;
    }
    let path = sources.shown(file);
    Some(if path.is_absolute() {
        json!({ "uri": format!("file:///{}", relative_uri(&path)) })
    } else {
        json!({ "uri": relative_uri(&path), "uriBaseId": SRCROOT })
    })
}

/// A relative URI reference for a repo-relative path: `/` between
/// segments whatever the platform, and every byte outside RFC 3986's
/// unreserved set percent-encoded (spaces, `#`, `%`, non-ASCII).
pub fn relative_uri(path: &Path) -> String {
    let mut out = String::new();
    for c in path.components() {
        let seg = match c {
            Component::Normal(s) => s.to_string_lossy(),
            Component::ParentDir => "..".into(),
            // Repo-relative paths have no root or prefix; `.` adds nothing.
            _ => continue,
        };
        if !out.is_empty() {
            out.push('/');
        }
        for b in seg.bytes() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
                out.push(b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The result message is the message followed by the notes, so each must
/// be a sentence; messages and notes follow rustc's style without a final
/// period.
fn sentence(text: &str) -> String {
    let t = text.trim_end();
    if t.ends_with(['.', '!', '?']) {
        t.to_string()
    } else {
        format!("{t}.")
    }
}

/// `postgres-durability-off` becomes `PostgresDurabilityOff`, the
/// conventional form of a SARIF rule name.
fn pascal_case(id: &str) -> String {
    id.split('-')
        .flat_map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(cs)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::yaml::Span;

    fn finding(sources: &mut SourceMap) -> Finding {
        let text = "a:\n  b: ünï\n  c: |\n    x\n    y\n";
        let file = sources.add(PathBuf::from("apps/x.yaml"), Arc::from(text));
        let at = |needle: &str, len: usize, line, col| {
            let start = text.find(needle).unwrap() as u32;
            Span {
                file,
                start,
                end: start + len as u32,
                line,
                col,
            }
        };
        Finding {
            rule: "r".into(),
            severity: Severity::Info,
            message: "m".into(),
            primary: Label {
                span: at("ünï", "ünï".len(), 2, 6),
                text: "b".into(),
            },
            related: vec![
                Label {
                    span: at("x\n", "x\n    y\n".len(), 4, 5),
                    text: "block".into(),
                },
                Label {
                    span: Span::default(),
                    text: "nowhere".into(),
                },
            ],
            evidence: Vec::new(),
            notes: vec!["n".into()],
            unconfirmed_severity: None,
            chain: Vec::new(),
            baseline: None,
            help: String::new(),
            fingerprint: "f".into(),
            fix: None,
            subjects: Default::default(),
        }
    }

    #[test]
    fn regions_end_where_the_byte_range_ends_in_characters() {
        let mut sources = SourceMap::default();
        let f = finding(&mut sources);
        let r = result(&f, &[], &sources);
        assert_eq!(
            r["locations"][0]["physicalLocation"]["region"],
            json!({ "startLine": 2, "startColumn": 6, "endLine": 2, "endColumn": 9 })
        );
        // A label that points nowhere is left out, not given line 0.
        let related = r["relatedLocations"].as_array().unwrap();
        assert_eq!(related.len(), 1);
        assert_eq!(
            related[0]["physicalLocation"]["region"],
            json!({ "startLine": 4, "startColumn": 5, "endLine": 6, "endColumn": 1 })
        );
        assert_eq!(r["level"], "note");
        assert_eq!(r["message"]["text"], "m. Note: n.");
        assert!(r.get("ruleIndex").is_none());
    }

    #[test]
    fn a_problem_met_twice_is_one_notification() {
        let issue = |line| crate::source::Issue {
            path: "apps/x/kustomization.yaml".into(),
            line,
            col: 5,
            message: "remote resource is not fetched".into(),
            gap: None,
            budget: None,
        };
        let sources = SourceMap::default();
        let mut log = render(&[], &[], &sources);
        add_problems(&mut log, &[issue(4), issue(4), issue(9)], &sources);
        let notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
            .as_array()
            .unwrap();
        let lines: Vec<&J> = notes
            .iter()
            .map(|n| &n["locations"][0]["physicalLocation"]["region"]["startLine"])
            .collect();
        assert_eq!(lines, [&json!(4), &json!(9)]);
    }

    #[test]
    fn uris_are_relative_percent_encoded_and_use_slashes() {
        assert_eq!(
            relative_uri(Path::new("apps/auth ük/#1%.yaml")),
            "apps/auth%20%C3%BCk/%231%25.yaml"
        );
        assert_eq!(relative_uri(Path::new("./a/../b.yaml")), "a/../b.yaml");
    }

    #[test]
    fn names_and_sentences() {
        assert_eq!(
            pascal_case("authentik-redis-settings-after-2025-10"),
            "AuthentikRedisSettingsAfter202510"
        );
        assert_eq!(sentence("on ceph-block "), "on ceph-block.");
        assert_eq!(sentence("done."), "done.");
    }
}
