//! Reading a kustomization file.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::source::Issue;
use crate::source::files::{Files, Input, Parsed};
use crate::yaml::{Node, Span, Value};

use super::input::InputFile;

pub(crate) const FILE_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The kustomization file in `dir`; more than one is an error, as in
/// kustomize.
pub(crate) fn find(files: &Files, dir: &Path) -> Result<Option<PathBuf>, Issue> {
    let found = files.files_in(dir, &FILE_NAMES);
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.into_iter().next()),
        _ => Err(Issue::file(
            Path::new(&files.shown(dir)),
            "found multiple kustomization files in this directory",
        )),
    }
}

pub(crate) struct Kustomization {
    pub root: Node,
    pub dir: PathBuf,
    pub file: PathBuf,
    /// The file as a user reads its name ([`Files::shown`]).
    pub shown: String,
    /// kubectl only reads files in or below the kustomization's directory;
    /// Flux lifts that restriction (but stays inside the repository).
    pub restrict: bool,
}

/// Fields this module cannot render; each fails the build, as a
/// kustomization that cannot be rendered faithfully should.
const UNSUPPORTED: [(&str, &str); 6] = [
    ("helmCharts", "helmCharts need the network to pull charts"),
    (
        "helmChartInflationGenerator",
        "helm chart inflation needs the network",
    ),
    ("generators", "generator plugins are not supported"),
    ("validators", "validator plugins are not supported"),
    ("vars", "vars are not supported"),
    ("crds", "crds are not supported"),
];

impl Kustomization {
    pub fn load(files: &mut Files, file: &Path, dir: &Path) -> Result<Kustomization, Issue> {
        let Parsed {
            file: id, mut docs, ..
        } = files.take_documents(file)?;
        if let Some(second) = docs.get(1) {
            return Err(Issue::at(
                &files.sources,
                second.span(),
                "a kustomization file must hold one document",
            ));
        }
        let root = docs.pop().map(Arc::unwrap_or_clone).unwrap_or_else(|| {
            Node::new(
                Value::Map(Default::default()),
                Span {
                    file: id,
                    line: 1,
                    col: 1,
                    ..Span::default()
                },
            )
        });
        if root.as_map().is_none() {
            return Err(Issue::at(
                &files.sources,
                root.span(),
                "a kustomization must be a mapping",
            ));
        }
        let kind = root.str_at(&["kind"]).unwrap_or("Kustomization");
        if kind != "Kustomization" && kind != "Component" {
            let span = root.get("kind").map_or(root.span(), |n| n.span());
            return Err(Issue::at(
                &files.sources,
                span,
                format!("kind '{kind}' is not a kustomize Kustomization or Component"),
            ));
        }
        for (key, why) in UNSUPPORTED {
            if let Some(v) = root.get(key) {
                let empty = match &v.value {
                    Value::Null => true,
                    Value::Seq(s) => s.is_empty(),
                    Value::Map(m) => m.is_empty(),
                    _ => false,
                };
                if !empty {
                    return Err(Issue::at(&files.sources, v.span(), format!("{key}: {why}")));
                }
            }
        }
        Ok(Kustomization {
            root,
            dir: dir.to_path_buf(),
            file: file.to_path_buf(),
            shown: files.shown(file),
            restrict: true,
        })
    }

    /// An issue at a span inside this kustomization file.
    pub fn err(&self, span: Span, message: impl Into<String>) -> Issue {
        Issue::located(self.shown.clone(), span.line, span.col, message)
    }

    pub fn is_component(&self) -> bool {
        self.root.str_at(&["kind"]) == Some("Component")
    }

    pub fn get(&self, key: &str) -> Option<&Node> {
        self.root.get(key).filter(|n| !n.is_null())
    }

    /// A list of strings (`resources`, `components`, ...) with spans.
    /// `bases` is the deprecated spelling of `resources` and is read with it.
    pub fn strings(&self, key: &str) -> Result<Vec<(String, Span)>, Issue> {
        let mut out = Vec::new();
        let keys: &[&str] = if key == "resources" {
            &["resources", "bases"]
        } else {
            &[key]
        };
        for k in keys {
            let Some(list) = self.get(k) else { continue };
            let Some(items) = list.as_seq() else {
                return Err(self.err(list.span(), format!("{k} must be a list")));
            };
            for item in items {
                match item.scalar_text() {
                    Some(s) => out.push((s, item.span())),
                    None => {
                        return Err(self.err(item.span(), format!("{k} entries must be strings")));
                    }
                }
            }
        }
        Ok(out)
    }

    /// A file named by the kustomization, read as `role`: a file of its
    /// folder, or one fetched from an http(s) URL ([`super::input`]).
    pub fn input(
        &self,
        files: &mut Files,
        entry: &str,
        span: Span,
        role: Input,
    ) -> Result<InputFile, Issue> {
        super::input::open(
            files,
            &self.dir,
            self.restrict,
            &self.file,
            entry,
            span,
            role,
        )
    }
}
