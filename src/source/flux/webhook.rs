//! xunholy's fluxcd-kustomize-mutating-webhook: an admission webhook that
//! adds every key of the ConfigMaps and Secrets it mounts to
//! `spec.postBuild.substitute` of each Flux Kustomization the API server
//! admits (`main.go`, `handleMutate`: a JSON patch that creates
//! `/spec/postBuild/substitute` and adds each key). So in a repository
//! that deploys it, every Flux Kustomization substitutes, and a variable
//! its own postBuild does not name may still be defined: its variables
//! are not all in the repository's text.

use crate::yaml::Node;

const NAME: &str = "kustomize-mutating-webhook";

/// Whether the document `doc` (of kind `kind`) deploys the webhook: a
/// HelmRelease of its chart (by chart name, or a chartRef to a source
/// named after it), or a workload running its image.
pub fn deploys(kind: &str, doc: &Node) -> bool {
    let has = |path: &[&str]| doc.str_at(path).is_some_and(|t| t.contains(NAME));
    match kind {
        "HelmRelease" => {
            has(&["spec", "chart", "spec", "chart"]) || has(&["spec", "chartRef", "name"])
        }
        "Deployment" | "StatefulSet" | "DaemonSet" => doc
            .path(&["spec", "template", "spec", "containers"])
            .and_then(Node::as_seq)
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.str_at(&["image"]).is_some_and(|i| i.contains(NAME)))
            }),
        _ => false,
    }
}
