//! Which rules run, chosen as ruff chooses: `--select` (or the
//! configuration's `select`) replaces the default set of every rule,
//! `--extend-select` adds to it and `--ignore` takes away; each entry is a
//! rule id, an id prefix ending at a `-` (`authentik` selects every
//! `authentik-…` rule) or `ALL`. When a rule is both selected and
//! ignored, the more specific entry wins, and an ignore at equal
//! specificity (ruff's order). An entry that names no rule is an error
//! with the nearest id, as `explain` gives it: a typo would otherwise
//! quietly select nothing.

use super::Rule;
use super::redirect::{self, Renamed};

/// The entry that names every rule.
pub const ALL: &str = "ALL";

/// Rule selection from the command line or the configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// The rules that run instead of every rule; `None`: every rule.
    pub select: Option<Vec<String>>,
    /// Rules added to `select`.
    pub extend_select: Vec<String>,
    /// Rules that do not run.
    pub ignore: Vec<String>,
}

/// An entry of a selection that names no rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", unknown_message(.entry, .nearest.as_deref()))]
pub struct Unknown {
    /// The entry as written.
    pub entry: String,
    /// The closest rule id, when one is close.
    pub nearest: Option<String>,
}

/// Longest entry taken for a mistyped id. Rule ids are a few words; the
/// similarity of an entry to every id costs its length times theirs, and
/// a repository's suppression comments and `.homelab-lint.yaml` (an alias
/// repeats a long one at no cost in bytes) may hold megabytes of them:
/// 1,000 comments of 8 KB took 6 s and printed each whole.
const LONGEST_TYPO: usize = 256;

fn unknown_message(entry: &str, nearest: Option<&str>) -> String {
    let entry = super::engine::clipped(entry);
    match nearest {
        Some(near) => format!("unknown rule id {entry:?}; did you mean {near:?}?"),
        None => format!("unknown rule id {entry:?} (`rules list` shows them)"),
    }
}

impl Unknown {
    /// `entry` names none of `ids`: the error, with the nearest of them.
    pub fn of<'a>(entry: &str, ids: impl IntoIterator<Item = &'a str>) -> Unknown {
        Unknown {
            entry: entry.to_string(),
            nearest: nearest(entry, ids).map(str::to_string),
        }
    }
}

/// The id of `ids` closest to a mistyped `id`, when one is close enough
/// to be what was meant (Jaro-Winkler above 0.8, as cargo's and clap's
/// suggestions judge closeness); none for an entry longer than
/// [`LONGEST_TYPO`] bytes.
pub fn nearest<'a>(id: &str, ids: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if id.len() > LONGEST_TYPO {
        return None;
    }
    ids.into_iter()
        .map(|known| (strsim::jaro_winkler(known, id), known))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, known)| known)
}

/// Whether a selection entry (an id, a prefix, `ALL`) names rule `id`.
pub fn names(entry: &str, id: &str) -> bool {
    specificity(entry, id).is_some()
}

/// How specifically `entry` names `id`: `None` when it does not, else
/// the length of the entry (`ALL` least of all).
fn specificity(entry: &str, id: &str) -> Option<usize> {
    if entry == ALL {
        return Some(0);
    }
    let prefix = id.strip_prefix(entry)?;
    (prefix.is_empty() || prefix.starts_with('-') || entry.ends_with('-')).then_some(entry.len())
}

impl Selection {
    /// Whether nothing is chosen: every rule runs.
    pub fn is_empty(&self) -> bool {
        self == &Selection::default()
    }

    /// This selection, with `over`'s (the command line over the
    /// configuration file): its `select` replaces this one's, its
    /// `extendSelect` and `ignore` add to them.
    pub fn overridden_by(self, over: &Selection) -> Selection {
        Selection {
            select: over.select.clone().or(self.select),
            extend_select: self
                .extend_select
                .into_iter()
                .chain(over.extend_select.iter().cloned())
                .collect(),
            ignore: self
                .ignore
                .into_iter()
                .chain(over.ignore.iter().cloned())
                .collect(),
        }
    }

    /// Every entry, in the order written.
    fn entries(&self) -> impl Iterator<Item = &String> {
        self.select
            .iter()
            .flatten()
            .chain(&self.extend_select)
            .chain(&self.ignore)
    }

    /// The same selection with each renamed rule's former id replaced by
    /// its id now, and the renamings, to warn about. A prefix is taken as
    /// written: it names the rules whose ids it starts now.
    pub fn redirected(&self, rules: &[Rule]) -> (Selection, Vec<Renamed>) {
        let mut renamed = Vec::new();
        let mut map = |entries: &[String]| -> Vec<String> {
            entries
                .iter()
                .map(|e| {
                    let (id, was) = redirect::resolve(rules, e);
                    renamed.extend(was);
                    id
                })
                .collect()
        };
        let selection = Selection {
            select: self.select.as_deref().map(&mut map),
            extend_select: map(&self.extend_select),
            ignore: map(&self.ignore),
        };
        (selection, renamed)
    }

    /// The entries that name none of `rules`.
    pub fn check(&self, rules: &[Rule]) -> Vec<Unknown> {
        self.entries()
            .filter(|e| !rules.iter().any(|r| names(e, &r.id)))
            .map(|e| Unknown::of(e, rules.iter().map(|r| r.id.as_str())))
            .collect()
    }

    /// Whether `id` runs.
    pub fn runs(&self, id: &str) -> bool {
        let best = |entries: &mut dyn Iterator<Item = &String>| {
            entries.filter_map(|e| specificity(e, id)).max()
        };
        let selected = match &self.select {
            None => Some(0),
            Some(select) => best(&mut select.iter()),
        };
        let selected = selected.max(best(&mut self.extend_select.iter()));
        let ignored = best(&mut self.ignore.iter());
        match (selected, ignored) {
            (Some(s), Some(i)) => s > i,
            (selected, _) => selected.is_some(),
        }
    }

    /// The rules that run, or the first entry that names none.
    pub fn apply(&self, rules: Vec<Rule>) -> Result<Vec<Rule>, Unknown> {
        if let Some(unknown) = self.check(&rules).into_iter().next() {
            return Err(unknown);
        }
        Ok(rules.into_iter().filter(|r| self.runs(&r.id)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(select: Option<&[&str]>, extend: &[&str], ignore: &[&str]) -> Selection {
        let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Selection {
            select: select.map(own),
            extend_select: own(extend),
            ignore: own(ignore),
        }
    }

    #[test]
    fn prefixes_end_at_a_dash_and_the_more_specific_entry_wins() {
        let id = "authentik-cache-on-sync-replicated-postgres";
        assert!(sel(None, &[], &[]).runs(id));
        assert!(sel(Some(&["authentik"]), &[], &[]).runs(id));
        assert!(sel(Some(&["authentik-"]), &[], &[]).runs(id));
        assert!(!sel(Some(&["authent"]), &[], &[]).runs(id));
        assert!(!sel(None, &[], &["authentik"]).runs(id));
        assert!(sel(None, &[], &["authentik"]).runs("postgres-durability-off"));
        // A rule selected by id runs although its prefix is ignored.
        assert!(sel(None, &[id], &["authentik"]).runs(id));
        assert!(sel(Some(&[id]), &[], &["ALL"]).runs(id));
        // At equal specificity, the ignore wins.
        assert!(!sel(Some(&["authentik"]), &[], &["authentik"]).runs(id));
        assert!(!sel(Some(&["postgres"]), &[], &[]).runs(id));
        assert!(sel(Some(&["postgres"]), &["authentik"], &[]).runs(id));
        assert!(sel(Some(&["ALL"]), &[], &[]).runs(id));
    }

    #[test]
    fn the_nearest_id_of_a_typo() {
        let ids = ["postgres-durability-off", "unused-suppression"];
        assert_eq!(
            nearest("postgres-durabilty-off", ids),
            Some("postgres-durability-off")
        );
        assert_eq!(nearest("zzz", ids), None);
        assert_eq!(
            Unknown::of("unused-supression", ids).to_string(),
            "unknown rule id \"unused-supression\"; did you mean \"unused-suppression\"?"
        );
    }

    #[test]
    fn the_command_line_over_the_file() {
        let file = sel(Some(&["a"]), &["b"], &["c"]);
        let cli = sel(Some(&["d"]), &["e"], &["f"]);
        assert_eq!(
            file.overridden_by(&cli),
            sel(Some(&["d"]), &["b", "e"], &["c", "f"])
        );
        let cli = sel(None, &[], &["f"]);
        assert_eq!(
            sel(Some(&["a"]), &[], &[]).overridden_by(&cli),
            sel(Some(&["a"]), &[], &["f"])
        );
    }
}
