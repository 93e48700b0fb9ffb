//! Loading `resources:` files, and the resource list Flux generates for a
//! directory without a kustomization.

use std::path::{Path, PathBuf};

use crate::source::Issue;
use crate::source::files::{Files, Parsed};
use crate::source::object::Object;
use crate::yaml::Value;

use super::{Res, kustomization};

/// Remote bases and files need the network: fetched with `--remote`
/// (`super::remote`), else a gap that says what they name.
pub(crate) fn is_remote(entry: &str) -> bool {
    entry.contains("://")
        || entry.starts_with("git@")
        || entry.starts_with("github.com/")
        || entry.starts_with("gitlab.com/")
        || entry.starts_with("bitbucket.org/")
}

/// The objects in one manifest file; a `List` is unpacked into its items
/// as kustomize does.
pub(crate) fn load_file(files: &mut Files, path: &Path) -> Result<Vec<Res>, Issue> {
    let parsed = files.take_documents(path)?;
    objects_of(files, parsed)
}

/// The objects in a file's documents.
pub(crate) fn objects_of(files: &Files, parsed: Parsed) -> Result<Vec<Res>, Issue> {
    let Parsed { file, docs, .. } = parsed;
    let mut out = Vec::new();
    for (i, doc) in docs.into_iter().enumerate() {
        if doc.is_null() {
            continue;
        }
        if !Object::looks_like_object(&doc) {
            return Err(Issue::at(
                &files.sources,
                doc.span(),
                "not a Kubernetes object: apiVersion and kind are required",
            ));
        }
        let is_list = doc.str_at(&["kind"]).is_some_and(|k| k.ends_with("List"))
            && doc
                .get("items")
                .is_some_and(|n| matches!(n.value, Value::Seq(_)));
        if is_list {
            for item in doc
                .get("items")
                .and_then(|n| n.as_seq())
                .into_iter()
                .flatten()
            {
                if !Object::looks_like_object(item) {
                    return Err(Issue::at(
                        &files.sources,
                        item.span(),
                        "list item is not a Kubernetes object",
                    ));
                }
                out.push(Res::new(Object::new(item.clone(), file, i)));
            }
            continue;
        }
        out.push(Res::new(Object::new(doc, file, i)));
    }
    Ok(out)
}

/// What Flux's generator (fluxcd/pkg kustomize_generator.go) lists for a
/// directory without a kustomization: every `.yaml`/`.yml` file below it in
/// walk order, except that a subdirectory holding a kustomization is listed
/// itself and not entered. A YAML file that is not Kubernetes objects fails
/// the build, as it does in Flux.
pub(crate) fn flux_generated_resources(
    files: &mut Files,
    dir: &Path,
) -> Result<Vec<PathBuf>, Issue> {
    let mut out = Vec::new();
    generated_below(files, dir, dir, &mut out)?;
    Ok(out)
}

/// The walk of [`flux_generated_resources`] below `here`, depth first in
/// name order (walkdir's `sort_by_file_name`, which Flux's `filepath.Walk`
/// matches).
fn generated_below(
    files: &mut Files,
    dir: &Path,
    here: &Path,
    out: &mut Vec<PathBuf>,
) -> Result<(), Issue> {
    let entries = files
        .list_dir(here)
        .map_err(|e| Issue::file(Path::new(&files.shown(dir)), e.to_string()))?;
    for (rel, is_dir) in entries {
        if is_dir {
            if kustomization::find(files, &rel)?.is_some() {
                out.push(rel);
            } else {
                generated_below(files, dir, &rel, out)?;
            }
            continue;
        }
        let ext = rel.extension().and_then(|e| e.to_str()).unwrap_or("");
        if ext != "yaml" && ext != "yml" {
            continue;
        }
        let parsed = files.documents(&rel)?;
        if let Some(bad) = parsed
            .docs
            .iter()
            .find(|d| !d.is_null() && !Object::looks_like_object(d))
        {
            return Err(Issue::at(
                &files.sources,
                bad.span(),
                format!("failed to decode Kubernetes YAML from {}", rel.display()),
            ));
        }
        out.push(rel);
    }
    Ok(())
}
