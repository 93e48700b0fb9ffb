//! Flux's own `patches` (a Flux Kustomization's `spec.patches`, a
//! FluxInstance's `spec.kustomize.patches`), read as Flux reads them. Their
//! type is fluxcd/pkg apis/kustomize/kustomize_types.go `Patch`: an inline
//! `patch` (required) and a `target`, and nothing else; kustomize's own
//! `path:` (a patch file) is not one of its fields. The CRD's structural
//! schema lists only those two and `required: [patch]`
//! (kustomize-controller config/crd/bases/
//! kustomize.toolkit.fluxcd.io_kustomizations.yaml), so the API server
//! prunes any other key (or, under `kubectl apply`'s strict field
//! validation, refuses it as an unknown field) and refuses an entry
//! without `patch`; kustomize-controller copies only `patch` and `target`
//! into the kustomization it generates (fluxcd/pkg
//! kustomize/kustomize_generator.go `getPatches`). So a file named in
//! `path:` is never applied: each such key is reported where it is
//! written, and only `patch` and `target` reach the patching.

use std::path::Path;
use std::sync::Arc;

use crate::source::{Files, Issue, Object, kustomize};
use crate::yaml::{Node, Value};

/// The fields of Flux's `Patch`.
const FIELDS: [&str; 2] = ["patch", "target"];

/// Applies `patches` to `objects` as Flux does, into `issues` what Flux
/// would not read and why (`at`: where the list is, as a user reads the
/// field, e.g. `spec.patches`).
pub(super) fn apply(
    files: &mut Files,
    objects: &mut [Object],
    patches: &Node,
    at: &str,
    issues: &mut Vec<Issue>,
) {
    let Some(entries) = patches.as_seq() else {
        // Not a list: the patching says so at its line.
        if let Err(issue) = kustomize::apply_patches(objects, patches, files, Path::new("")) {
            issues.push(issue);
        }
        return;
    };
    let mut kept = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let Some(map) = entry.as_map() else {
            // Not a patch at all: the patching says so at its line.
            kept.push(entry.clone());
            continue;
        };
        let has_patch = entry.get("patch").is_some_and(|p| !p.is_null());
        let mut unknown = map
            .iter()
            .filter_map(|(k, _)| Some((k.as_str()?, k.span())))
            .filter(|(k, _)| !FIELDS.contains(k))
            .peekable();
        let mut refused = !has_patch;
        while let Some((key, span)) = unknown.next() {
            let mut message = format!(
                "{at}[{i}].{key} is not a field of a Flux patch (fluxcd/pkg apis/kustomize \
                 Patch: patch, target): the API server drops it, and kubectl apply refuses it \
                 as an unknown field"
            );
            if key == "path" {
                message.push_str("; the file it names is not applied (inline it in `patch`)");
            }
            if refused && unknown.peek().is_none() {
                message.push_str(&required(at, i));
                refused = false;
            }
            issues.push(Issue::at(&files.sources, span, message));
        }
        if refused {
            let message = format!("{at}[{i}] has no patch{}", required(at, i));
            issues.push(Issue::at(&files.sources, entry.span(), message));
        }
        if has_patch {
            let fields: Vec<(Node, Node)> = map
                .iter()
                .filter(|(k, _)| k.as_str().is_some_and(|k| FIELDS.contains(&k)))
                .cloned()
                .collect();
            kept.push(Node::new(Value::Map(fields.into()), entry.span()));
        }
    }
    if kept.is_empty() {
        return;
    }
    let list = Node::new(Value::Seq(Arc::new(kept)), patches.span());
    // No entry names a file: the folder is never read.
    if let Err(issue) = kustomize::apply_patches(objects, &list, files, Path::new("")) {
        issues.push(issue);
    }
}

/// Why an entry without `patch` is not applied.
fn required(at: &str, i: usize) -> String {
    format!(
        "; `patch` is required, so the API server refuses the object ({at}[{i}].patch: Required \
         value) and nothing of this entry is applied"
    )
}
