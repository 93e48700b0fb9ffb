//! Facts about the Flux tree itself: Kustomization paths and postBuild
//! variables, as rendered.

use super::{Model, ObjRef};
use crate::source::join_within;
use crate::yaml::{Node, Origin};

/// Flux Kustomizations whose `spec.path` names no directory of the repo,
/// with the path node. Only those whose source is a Git or OCI
/// repository: a Bucket's layout is not this repo's.
pub fn missing_paths(model: &Model) -> Vec<(ObjRef, Node)> {
    let Some(root) = model.root else {
        return Vec::new();
    };
    model
        .of_kind("kustomize.toolkit.fluxcd.io", "Kustomization")
        .filter_map(|r| {
            let obj = model.object(r);
            let kind = obj
                .root
                .str_at(&["spec", "sourceRef", "kind"])
                .unwrap_or("");
            if !matches!(kind, "GitRepository" | "OCIRepository") {
                return None;
            }
            let node = obj.root.path(&["spec", "path"])?;
            let text = node.as_str()?;
            let exists = join_within(std::path::Path::new(""), text.trim_start_matches('/'))
                .is_some_and(|p| root.join(p).is_dir());
            (!exists).then(|| (r, node.clone()))
        })
        .collect()
}

/// Values that used a Flux variable which is defined nowhere and has no
/// default: Flux renders it as an empty string. Variables whose source
/// could not be read (SOPS, a ConfigMap only in the cluster) are not
/// counted: they may well be defined.
pub fn undefined_variables(model: &Model) -> Vec<(ObjRef, String, Node)> {
    let mut out = Vec::new();
    for (i, obj) in model.objects.iter().enumerate() {
        obj.root.walk(&mut |_, node| {
            if let Some(Origin::Substituted { undefined, .. }) = node.origin.as_deref() {
                out.extend(undefined.iter().map(|v| (i, v.clone(), node.clone())));
            }
        });
    }
    out
}
