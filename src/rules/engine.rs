//! Evaluates rules over the model: each step narrows or extends a set of
//! bindings; every complete set of bindings is one finding. What a step
//! does, binds and shows lives in its own file under `steps/`.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use super::finding::{Evidence, Finding, Label, Subjects};
use super::releases::Baseline;
use super::schema::Rule;
use super::steps::{AppFact, Bindings, DatabaseFact, Shape, Spec, first, link};
use crate::model::{Model, Unknown};

/// What evaluation could not decide, per rule (shown with `--verbose`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Undecided {
    pub rule: String,
    pub subject: String,
    pub reason: String,
}

pub struct Outcome {
    pub findings: Vec<Finding>,
    pub undecided: Vec<Undecided>,
    /// Rules whose evaluation stopped at the work budget.
    pub issues: Vec<crate::source::Issue>,
}

pub fn evaluate(model: &Model, rules: &[Rule]) -> Outcome {
    evaluate_with(model, rules, &Baseline::none())
}

/// Evaluates with what the base commit of a `--base` run ran, for the
/// `releaseCrossed` step.
pub fn evaluate_with(model: &Model, rules: &[Rule], baseline: &Baseline) -> Outcome {
    let mut out = Outcome {
        findings: Vec::new(),
        undecided: Vec::new(),
        issues: Vec::new(),
    };
    let budget = super::MAX_RULE_WORK;
    // Rules are pure over the model: each runs on its own, on every core
    // the run uses, and their results are merged in rule order, as a
    // serial run would.
    let runs: Vec<_> = crate::cores::map(rules, |rule| {
        let mut matches = Vec::new();
        let mut undecided = Vec::new();
        let mut ctx = Ctx {
            model,
            rule,
            undecided: &mut undecided,
            baseline,
            work: 0,
            budget,
            max_matches: super::MAX_RULE_MATCHES,
        };
        ctx.run(&rule.steps, Vec::new(), &mut matches);
        let over_budget = if matches.len() >= ctx.max_matches {
            Some(format!(
                "rule match budget exceeded: evaluation stopped at {} matches; others may be missing",
                matches.len()
            ))
        } else if ctx.work > budget {
            Some(format!(
                "rule evaluation budget exceeded: more than {budget} candidates and objects examined (its steps multiply: each step is tried for every match of the steps before it); the {} matches found so far are reported, others may be missing",
                matches.len()
            ))
        } else {
            None
        };
        let findings = super::subsume::merge_same_place(
            matches.iter().map(|b| finding(model, rule, b)).collect(),
        );
        (findings, undecided, over_budget)
    });
    let mut fingerprints = std::collections::HashSet::new();
    let mut first_span = std::collections::HashMap::new();
    let mut given = std::collections::HashSet::new();
    let mut said = std::collections::HashSet::new();
    for (rule, (findings, undecided, over_budget)) in rules.iter().zip(runs) {
        // One app rendered into two clusters' trees may leave the same
        // question open in both, in the same words: one line says it.
        out.undecided
            .extend(undecided.into_iter().filter(|u| said.insert(u.clone())));
        if let Some(message) = over_budget {
            out.issues.push(crate::source::Issue::located(
                format!("rule {}", rule.id),
                0,
                0,
                message,
            ));
        }
        // The same facts reached twice (one base app rendered into two
        // clusters' trees) are one finding; a same-named object written
        // apart for a second cluster is its own, and gets a fingerprint of
        // its own too (else `--base` and code scanning would take the two
        // for one alert): the first keeps the plain one, so a repository
        // with one cluster sees no change.
        for mut f in findings {
            if !fingerprints.insert((f.fingerprint.clone(), f.primary.span)) {
                continue;
            }
            match first_span.get(&f.fingerprint) {
                Some(span) if *span != f.primary.span => {
                    let path = model.sources.path(f.primary.span.file);
                    f.fingerprint = rehash(&f.fingerprint, &path.to_string_lossy());
                }
                Some(_) => {}
                None => {
                    first_span.insert(f.fingerprint.clone(), f.primary.span);
                }
            }
            // A third place in the same file would get the second's: told
            // apart by its line as shown (Secret values masked, so no
            // hash of one), then by its turn among equal lines, which
            // keeps each one's print when lines above it move.
            if given.contains(&f.fingerprint) {
                f.fingerprint = rehash(&f.fingerprint, primary_line(model, f.primary.span));
                while given.contains(&f.fingerprint) {
                    f.fingerprint = rehash(&f.fingerprint, "\u{1f}");
                }
            }
            given.insert(f.fingerprint.clone());
            out.findings.push(f);
        }
    }
    out
}

pub(crate) struct Ctx<'a, 'm> {
    pub(crate) model: &'a Model<'m>,
    rule: &'a Rule,
    undecided: &'a mut Vec<Undecided>,
    pub(crate) baseline: &'a Baseline,
    /// Candidates, objects and JSONPath matches examined so far, against
    /// [`super::MAX_RULE_WORK`]: a rule of several `object` steps is a
    /// cartesian product of the repository's objects.
    pub(crate) work: usize,
    budget: usize,
    /// Complete matches (findings before deduplication) one rule may have.
    max_matches: usize,
}

impl Ctx<'_, '_> {
    /// Runs `steps` after `bindings`, collecting every complete match.
    pub(crate) fn run(&mut self, steps: &[Spec], bindings: Bindings, out: &mut Vec<Bindings>) {
        let Some((step, rest)) = steps.split_first() else {
            out.push(bindings);
            return;
        };
        if self.work > self.budget || out.len() >= self.max_matches {
            return;
        }
        let candidates = step.eval(self, &bindings);
        self.work += 1 + candidates.len();
        for next in candidates {
            if self.work > self.budget || out.len() >= self.max_matches {
                return;
            }
            let mut b = bindings.clone();
            b.extend(next);
            self.run(rest, b, out);
        }
    }

    pub(crate) fn note_unknown(&mut self, subject: String, Unknown(reason): Unknown) {
        self.undecided.push(Undecided {
            rule: self.rule.id.clone(),
            subject,
            reason,
        });
    }
}

/// The first 8 bytes of sha256(`prefix` `text`), in hex: a finding's
/// fingerprint, and a fingerprint told apart from a same-named twin's.
fn rehash(prefix: &str, text: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prefix);
    hasher.update(text);
    hasher
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The text of the line a span starts on, as reports show it, trimmed.
fn primary_line<'m>(model: &'m Model, span: crate::yaml::Span) -> &'m str {
    if span.file.0 as usize >= model.sources.len() {
        return "";
    }
    let text = model.sources.get(span.file).text_to_show();
    let Some((before, after)) = text.split_at_checked(span.start as usize) else {
        return "";
    };
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    let end = after.find('\n').map_or(text.len(), |i| before.len() + i);
    text.get(start..end).unwrap_or("").trim()
}

/// Builds the finding for one complete set of bindings.
fn finding(model: &Model, rule: &Rule, bindings: &Bindings) -> Finding {
    let mut labels: Vec<(String, Label)> = Vec::new();
    let mut evidence = Vec::new();
    let mut shape = Shape {
        severity: rule.severity,
        notes: Vec::new(),
        harmless: None,
        help: None,
    };
    let mut identity = vec![rule.id.clone()];
    let mut chain = Vec::new();
    for (name, fact) in bindings {
        let described = fact.describe(model);
        labels.extend(described.labels.into_iter().map(|mut l| {
            clip(&mut l.text);
            (name.clone(), l)
        }));
        chain.push(link(model, name, fact.as_ref(), described.evidence.clone()));
        evidence.extend(described.evidence.into_iter().map(|(k, v)| Evidence {
            key: format!("{name}.{k}"),
            value: v,
        }));
        identity.push(described.identity);
        fact.shape(&mut shape);
    }
    let Shape {
        severity,
        mut notes,
        harmless,
        help,
    } = shape;
    let primary_name = rule
        .primary
        .clone()
        .or_else(|| bindings.first().map(|(n, _)| n.clone()))
        .unwrap_or_default();
    // A setting left at its default in an object without a parameters
    // map has no label of its own: the database it would be added to is
    // where the fix edits then, and a place that stays put across bumps.
    let primary_index = labels
        .iter()
        .position(|(n, _)| *n == primary_name)
        .or_else(|| {
            (primary_name == "setting")
                .then(|| labels.iter().rposition(|(n, _)| n == "database"))
                .flatten()
        })
        .unwrap_or(0);
    let primary = if labels.is_empty() {
        Label {
            span: Default::default(),
            text: String::new(),
        }
    } else {
        labels.remove(primary_index).1
    };
    notes.extend(applied_as_written_note(model, primary.span.file));
    let mut fields: BTreeMap<String, String> = evidence
        .iter()
        .map(|e| (e.key.clone(), e.value.clone()))
        .collect();
    for (name, fact) in bindings {
        fact.message_fields(name, &mut fields);
    }
    let fingerprint = rehash("", &identity.join("\u{1f}"));
    // The fix is built from the whole values (it edits the file); what
    // every output format shows of them is clipped as messages are.
    let fix = rule
        .fix
        .as_ref()
        .map(|spec| super::fixes::build(model, spec, bindings, &fields));
    for e in &mut evidence {
        clip(&mut e.value);
    }
    for link in &mut chain {
        link.object.iter_mut().for_each(clip);
        link.facts.iter_mut().for_each(|(_, value)| clip(value));
    }
    notes.iter_mut().for_each(clip);
    Finding {
        rule: rule.id.clone(),
        severity,
        message: fill(&rule.message, &fields) + harmless.as_deref().unwrap_or(""),
        primary,
        related: labels.into_iter().map(|(_, l)| l).collect(),
        evidence,
        notes,
        help: help.unwrap_or_else(|| rule.remediation.trim().to_string()),
        unconfirmed_severity: (severity != rule.severity).then_some(rule.severity),
        fingerprint,
        fix,
        subjects: Subjects {
            app: first::<AppFact>(bindings).map(|a| a.app.object),
            database: first::<DatabaseFact>(bindings).map(|d| d.0.object),
        },
        chain,
        baseline: None,
    }
}

/// In a repository that Flux renders, a finding in a file no Flux
/// Kustomization applies (objects loaded as written: a bootstrap file, or
/// one nothing applies any more, as an old cluster's directory) says so:
/// whether it runs depends on something the repository does not show.
fn applied_as_written_note(model: &Model, file: crate::yaml::FileId) -> Option<String> {
    if model.flux.is_empty() {
        return None;
    }
    let mut objects = model.with_text_in(file).map(|r| model.object(r)).peekable();
    objects.peek()?;
    // A loose Flux Kustomization is linted only when a rendered one waits
    // for it (dependsOn), which says something applies it.
    if !objects.all(|o| {
        o.tree.is_none() && !o.is_live() && !o.is("kustomize.toolkit.fluxcd.io", "Kustomization")
    }) {
        return None;
    }
    Some(format!(
        "no Flux Kustomization applies {}: its objects were checked as written, as `kubectl \
         apply` would send them; if nothing applies this file by hand, none of this reaches \
         the cluster",
        model.sources.path(file).display()
    ))
}

/// Bytes of one word (a run without whitespace) of a repository text (a
/// variable or object name, a value) that a message or label shows: a
/// 100 KB variable name used once in a file that 200 Flux Kustomizations
/// render made 200 findings that printed it twice each (28 MB of report
/// from 100 KB of input). Prose (a release's breaking changes from the
/// release knowledge files) is words of ordinary length and stays whole.
const SHOWN_WORD: usize = 256;

/// Bytes of one filled field or label in all, for text of many words.
const SHOWN_TEXT: usize = 16 * 1024;

/// `text` with each word longer than [`SHOWN_WORD`] bytes cut on a
/// character boundary and the whole cut at [`SHOWN_TEXT`], each cut
/// marked `…`.
pub(crate) fn clipped(text: &str) -> std::borrow::Cow<'_, str> {
    let longest_word = text.split_whitespace().map(str::len).max().unwrap_or(0);
    if longest_word <= SHOWN_WORD && text.len() <= SHOWN_TEXT {
        return text.into();
    }
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() && out.len() < SHOWN_TEXT {
        let word_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word.len() > SHOWN_WORD {
            out.push_str(&word[..crate::yaml::floor_char(word, SHOWN_WORD)]);
            out.push('…');
        } else {
            out.push_str(word);
        }
        rest = &rest[word_end..];
        let space_end = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..space_end]);
        rest = &rest[space_end..];
    }
    if !rest.is_empty() {
        out.truncate(crate::yaml::floor_char(&out, SHOWN_TEXT));
        out.push('…');
    }
    out.into()
}

/// [`clipped`] in place: what a finding carries of repository text
/// (labels, evidence, the chain's facts, notes) reaches every output
/// format, machine ones included.
fn clip(text: &mut String) {
    if let std::borrow::Cow::Owned(shown) = clipped(text) {
        *text = shown;
    }
}

/// `text` with its line breaks written `\x0a` and `\x0d`, as reports
/// write them in a path: a field filled into a message is shown within
/// its line, and a break in a name (`"pg\nforged.yaml:1:1: error"`)
/// would start a line of the repository's making, which a CI log's
/// problem matcher reads as a finding.
fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['\n', '\r']) {
        return text.into();
    }
    text.replace('\n', "\\x0a").replace('\r', "\\x0d").into()
}

/// Fills `{binding.field}` placeholders; unknown ones stay visible.
pub(crate) fn fill(template: &str, fields: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        match rest[open..].find('}') {
            Some(close) => {
                let key = &rest[open + 1..open + close];
                match fields.get(key) {
                    Some(v) => out.push_str(&one_line(&clipped(v))),
                    None => out.push_str(&rest[open..open + close + 1]),
                }
                rest = &rest[open + close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_word_is_clipped_and_prose_stays_whole() {
        let prose = "2025.8: background tasks move from Redis to Postgres; ".repeat(20);
        assert_eq!(clipped(&prose), prose);
        let name = "A".repeat(100_000);
        let text = format!("uses ${{{name}}} here");
        assert_eq!(
            clipped(&text),
            format!("uses ${{{}… here", "A".repeat(SHOWN_WORD - 2))
        );
        let words = "word ".repeat(10_000);
        let shown = clipped(&words);
        assert!(
            shown.len() <= SHOWN_TEXT + '…'.len_utf8(),
            "{}",
            shown.len()
        );
        assert!(shown.ends_with('…') && words.starts_with(shown.trim_end_matches('…')));
        let wide = "é".repeat(SHOWN_WORD);
        assert_eq!(clipped(&wide), format!("{}…", "é".repeat(SHOWN_WORD / 2)));
    }

    #[test]
    fn placeholders_are_filled_and_unknown_ones_stay_visible() {
        let fields: BTreeMap<String, String> = [("app.name".to_string(), "authentik".to_string())]
            .into_iter()
            .collect();
        assert_eq!(
            fill("{app.name} uses {database.name} {", &fields),
            "authentik uses {database.name} {"
        );
    }

    #[test]
    fn a_fingerprint_is_eight_bytes_of_hex_and_told_apart_by_its_suffix() {
        let plain = rehash("", "r\u{1f}x");
        assert_eq!(plain.len(), 16);
        assert!(plain.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(rehash(&plain, "clusters/a/db.yaml"), plain);
    }
}
