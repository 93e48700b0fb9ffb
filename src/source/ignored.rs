//! The paths of a work tree that git ignores and does not track: Flux
//! gets the repository from git (a GitRepository clones it, an OCI
//! artifact is pushed from a checkout), so a plain lint leaves them out
//! as if they were not there, and a kustomization that lists one fails
//! as Flux's build will.

use std::path::{Path, PathBuf};

use super::PathSet;

/// Ignored files and folders, relative to the repository root.
#[derive(Debug, Default, Clone)]
pub struct Ignored {
    /// As git lists them, sorted: a wholly ignored folder is one entry.
    listed: Vec<PathBuf>,
    /// Looked up for every ancestor of every path a build asks about.
    set: PathSet<PathBuf>,
}

impl Ignored {
    pub fn new(mut listed: Vec<PathBuf>) -> Ignored {
        listed.sort();
        let set = listed.iter().cloned().collect();
        Ignored { listed, set }
    }

    /// Whether nothing is ignored: then no path need be made to ask.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Whether `rel` is ignored, or inside an ignored folder.
    pub fn covers(&self, rel: &Path) -> bool {
        !self.is_empty() && rel.ancestors().any(|a| self.set.contains(a))
    }

    /// The entries as git lists them.
    pub fn listed(&self) -> &[PathBuf] {
        &self.listed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_covers_what_it_holds() {
        let ignored = Ignored::new(vec!["secret.yaml".into(), "local".into()]);
        assert!(ignored.covers(Path::new("secret.yaml")));
        assert!(ignored.covers(Path::new("local/apps/x.yaml")));
        assert!(!ignored.covers(Path::new("localx/x.yaml")));
        assert!(!ignored.covers(Path::new("apps/secret.yaml")));
        assert!(!Ignored::default().covers(Path::new("x")));
    }
}
