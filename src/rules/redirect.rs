//! Renamed rules. A rule keeps the ids it had before (`formerIds`), as
//! ruff keeps redirects from old rule codes to new ones
//! (astral-sh/ruff crates/ruff_linter/src/rule_redirects.rs): a former id
//! still works wherever an id is accepted (`--select`, `--ignore`,
//! `--extend-select`, `.homelab-lint.yaml`, suppressions, `explain`), with
//! a warning that names the rule's id now, and `rules list` marks it.

use super::Rule;

/// A former id, and the id of the rule that had it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renamed {
    pub former: String,
    pub successor: String,
}

impl std::fmt::Display for Renamed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "rule id {:?} is deprecated: the rule is now {:?}",
            self.former, self.successor
        )
    }
}

/// The rule that had `id` before it was renamed, when no rule has it now.
pub fn successor<'r>(rules: &'r [Rule], id: &str) -> Option<&'r Rule> {
    if rules.iter().any(|r| r.id == id) {
        return None;
    }
    rules
        .iter()
        .find(|r| r.former_ids.iter().any(|former| former == id))
}

/// `id` as it is written now: the successor of a former id, with the
/// renaming to warn about, or `id` itself.
pub fn resolve(rules: &[Rule], id: &str) -> (String, Option<Renamed>) {
    match successor(rules, id) {
        Some(rule) => (
            rule.id.clone(),
            Some(Renamed {
                former: id.to_string(),
                successor: rule.id.clone(),
            }),
        ),
        None => (id.to_string(), None),
    }
}

/// Every rule id a run knows (the rules loaded, running or not), and the
/// former ids of the renamed ones.
#[derive(Clone, Debug, Default)]
pub struct Known {
    ids: Vec<String>,
    renamed: Vec<Renamed>,
}

impl Known {
    pub fn of(rules: &[Rule]) -> Known {
        let mut known = Known::default();
        known.extend(rules);
        known
    }

    /// Adds the ids of `rules` not known yet.
    pub fn extend(&mut self, rules: &[Rule]) {
        for rule in rules {
            if !self.contains(&rule.id) {
                self.ids.push(rule.id.clone());
            }
        }
        for rule in rules {
            for former in &rule.former_ids {
                if !self.contains(former) && self.successor(former).is_none() {
                    self.renamed.push(Renamed {
                        former: former.clone(),
                        successor: rule.id.clone(),
                    });
                }
            }
        }
    }

    /// Whether a rule has `id` now.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.iter().any(|known| known == id)
    }

    /// The renaming of `id`, when it is a former id.
    pub fn successor(&self, id: &str) -> Option<&Renamed> {
        self.renamed.iter().find(|r| r.former == id)
    }

    /// The ids rules have now.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.ids.iter().map(String::as_str)
    }
}
