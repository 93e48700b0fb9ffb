//! One finding per hazard: a rule may say that its findings replace those
//! of other rules on the same places (`subsumes` in the rule file). An
//! upgrade across a breaking release that brings a static hazard in finds
//! the hazard three times otherwise: the crossing, the static rule and the
//! upgrade rule, all on the bumped line.

use std::collections::HashSet;

use super::{Finding, Rule};
use crate::yaml::Span;

/// Every labelled place of a finding, by file and byte range.
fn places(f: &Finding) -> HashSet<(u32, u32, u32)> {
    let key = |s: &Span| (s.file.0, s.start, s.end);
    std::iter::once(&f.primary)
        .chain(&f.related)
        .map(|l| key(&l.span))
        .collect()
}

/// Drops each finding that a finding of a rule subsuming its rule covers:
/// every place the dropped finding labels is one the other labels too.
pub fn drop_subsumed(findings: Vec<Finding>, rules: &[Rule]) -> Vec<Finding> {
    let subsumes = |f: &Finding| {
        rules
            .iter()
            .find(|r| r.id == f.rule)
            .map_or(&[][..], |r| &r.subsumes[..])
    };
    let subsumers: Vec<(usize, &[String], HashSet<_>)> = findings
        .iter()
        .enumerate()
        .filter(|(_, f)| !subsumes(f).is_empty())
        .map(|(i, f)| (i, subsumes(f), places(f)))
        .collect();
    if subsumers.is_empty() {
        return findings;
    }
    // For each finding, the finding that replaces it.
    let by: Vec<Option<usize>> = findings
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let mine = places(f);
            subsumers
                .iter()
                .find(|(by, ids, theirs)| {
                    *by != i && ids.contains(&f.rule) && mine.is_subset(theirs)
                })
                .map(|(by, _, _)| *by)
        })
        .collect();
    let mut findings: Vec<Option<Finding>> = findings.into_iter().map(Some).collect();
    // What the replaced finding could do is not lost: its fix and notes
    // go to the finding that replaces it, when that one has none.
    for (i, by) in by.iter().enumerate() {
        let Some(by) = *by else { continue };
        let Some(gone) = findings[i].take() else {
            continue;
        };
        if let Some(keeper) = findings[by].as_mut() {
            if keeper.fix.is_none() {
                keeper.fix = gone.fix;
            }
            for note in gone.notes {
                if !keeper.notes.contains(&note) {
                    keeper.notes.push(note);
                }
            }
        }
    }
    findings.into_iter().flatten().collect()
}

/// Merges one rule's findings that say the same thing at the same place
/// with the same fix: several branches of an `anyOf` holding for one app
/// (tvories' Authentik enables the chart's Redis and sets
/// `AUTHENTIK_REDIS__HOST`) are one problem, shown with every place that
/// shows it. The first keeps its fingerprint.
pub fn merge_same_place(findings: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::with_capacity(findings.len());
    for f in findings {
        let same = out.iter_mut().find(|k| {
            k.rule == f.rule && k.primary == f.primary && k.message == f.message && k.fix == f.fix
        });
        let Some(keeper) = same else {
            out.push(f);
            continue;
        };
        for label in f.related {
            if label != keeper.primary && !keeper.related.contains(&label) {
                keeper.related.push(label);
            }
        }
        for e in f.evidence {
            if !keeper.evidence.contains(&e) {
                keeper.evidence.push(e);
            }
        }
        for note in f.notes {
            if !keeper.notes.contains(&note) {
                keeper.notes.push(note);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Label, Severity, builtin};
    use crate::yaml::FileId;

    const UPGRADE: &str = "authentik-upgrade-moves-cache-to-sync-replicated-postgres";
    const STATIC: &str = "authentik-cache-on-sync-replicated-postgres";

    fn at(start: u32) -> Label {
        Label {
            span: Span {
                file: FileId(1),
                start,
                end: start + 4,
                line: 1,
                col: 1,
            },
            text: String::new(),
        }
    }

    fn finding(rule: &str, primary: u32, related: &[u32]) -> Finding {
        Finding {
            rule: rule.into(),
            severity: Severity::Warning,
            message: String::new(),
            primary: at(primary),
            related: related.iter().map(|s| at(*s)).collect(),
            evidence: Vec::new(),
            notes: Vec::new(),
            unconfirmed_severity: None,
            chain: Vec::new(),
            baseline: None,
            help: String::new(),
            fingerprint: format!("{rule}{primary}"),
            fix: None,
            subjects: Default::default(),
        }
    }

    fn rules_of(findings: &[Finding]) -> Vec<&str> {
        findings.iter().map(|f| f.rule.as_str()).collect()
    }

    #[test]
    fn the_upgrade_finding_replaces_the_static_one_on_the_same_places_only() {
        let rules = builtin();
        let mut with_note = finding(STATIC, 30, &[10, 20]);
        with_note
            .notes
            .push("AUTHENTIK_X could be set elsewhere".into());
        let kept = drop_subsumed(
            vec![
                with_note,
                finding(UPGRADE, 10, &[20, 30]),
                // The same rule on another database: another hazard.
                finding(STATIC, 30, &[10, 99]),
            ],
            &rules,
        );
        assert_eq!(rules_of(&kept), [UPGRADE, STATIC]);
        assert_eq!(kept[1].related[1].span.start, 99);
        assert_eq!(
            kept[0].notes,
            ["AUTHENTIK_X could be set elsewhere"],
            "notes kept"
        );
        // Without the upgrade finding the static one stays.
        let alone = drop_subsumed(vec![finding(STATIC, 30, &[10, 20])], &rules);
        assert_eq!(rules_of(&alone), [STATIC]);
    }

    #[test]
    fn every_subsumed_rule_is_a_built_in_rule() {
        let rules = builtin();
        for rule in &rules {
            for id in &rule.subsumes {
                assert!(
                    rules.iter().any(|r| &r.id == id && r.id != rule.id),
                    "{}: subsumes {id:?}, which is no other built-in rule",
                    rule.id
                );
            }
        }
        assert!(rules.iter().any(|r| !r.subsumes.is_empty()));
    }
}
