//! Turns fixes into new file contents and writes them. Fixes are taken
//! whole or not at all: one whose edits overlap an accepted fix's is left
//! for the next run, as ruff does.

use std::collections::BTreeMap;

use super::{Edit, Fix};
use crate::yaml::edit;
use crate::yaml::{FileId, SourceMap};

/// One file's new text and the fixes that made it.
#[derive(Debug)]
pub struct FileChange {
    pub file: FileId,
    pub new_text: String,
}

/// What applying a set of fixes gives.
#[derive(Debug, Default)]
pub struct Plan {
    pub changes: Vec<FileChange>,
    /// Indices (into the fixes passed in) of the fixes taken.
    pub applied: Vec<usize>,
    /// Indices of fixes left out because they overlap one taken.
    pub conflicting: Vec<usize>,
}

fn overlaps(a: &Edit, b: &Edit) -> bool {
    if a.file != b.file {
        return false;
    }
    match (a.start == a.end, b.start == b.end) {
        // Two insertions at one place: their order would be arbitrary.
        (true, true) => a.start == b.start,
        (true, false) => b.start < a.start && a.start < b.end,
        (false, true) => a.start < b.start && b.start < a.end,
        (false, false) => a.start < b.end && b.start < a.end,
    }
}

/// Applies the fixes that fit together to the texts the run read.
pub fn plan(sources: &SourceMap, fixes: &[&Fix]) -> Plan {
    let mut accepted: Vec<&Edit> = Vec::new();
    let mut out = Plan::default();
    for (i, fix) in fixes.iter().enumerate() {
        // The same edit reached by two findings is made once.
        let new: Vec<&Edit> = fix.edits.iter().filter(|e| !accepted.contains(e)).collect();
        if new.iter().any(|e| accepted.iter().any(|a| overlaps(a, e))) {
            out.conflicting.push(i);
            continue;
        }
        accepted.extend(new);
        out.applied.push(i);
    }
    let mut by_file: BTreeMap<FileId, Vec<&Edit>> = BTreeMap::new();
    for e in accepted {
        by_file.entry(e.file).or_default().push(e);
    }
    for (file, edits) in by_file {
        if let Some(new_text) = edit::apply(&sources.get(file).text, &edits) {
            out.changes.push(FileChange { file, new_text });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(start: u32, end: u32) -> Edit {
        Edit {
            file: FileId(0),
            start,
            end,
            replacement: "x".into(),
        }
    }

    #[test]
    fn overlap_rules() {
        assert!(overlaps(&edit(2, 5), &edit(4, 6)));
        assert!(!overlaps(&edit(2, 5), &edit(5, 6)));
        assert!(overlaps(&edit(3, 3), &edit(3, 3)));
        assert!(!overlaps(&edit(3, 3), &edit(4, 4)));
        assert!(overlaps(&edit(4, 4), &edit(2, 6)));
        assert!(!overlaps(&edit(2, 2), &edit(2, 6)));
    }
}
