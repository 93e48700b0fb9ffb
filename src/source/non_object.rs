//! What a YAML document that is not a Kubernetes object is, so that a
//! skipped file's reason names it truly: Talos configuration
//! ([`super::talos`]), a Helm chart's `Chart.yaml`, or a document with
//! one of `apiVersion` and `kind` but not both. A document with neither
//! (chart values, app configuration) is described by the caller.

use std::path::Path;

use crate::yaml::Node;

/// What `doc`, read from `path`, is, when it is a known kind of file or
/// has half of an object's type.
pub fn what(path: &Path, doc: &Node) -> Option<String> {
    if let Some(what) = super::talos::what(doc) {
        return Some(what);
    }
    let api = doc.str_at(&["apiVersion"]);
    let kind = doc.str_at(&["kind"]);
    match (api, kind) {
        (Some(api), None) if is_chart_metadata(path, api, doc) => Some(format!(
            "a Helm chart's metadata (Chart.yaml, chart API version {api})"
        )),
        (Some(api), None) => Some(format!("a document with apiVersion {api} and no kind")),
        (None, Some(kind)) => Some(format!("a document with kind {kind} and no apiVersion")),
        _ => None,
    }
}

/// Helm's chart file (helm.sh/docs/topics/charts, "The Chart.yaml File"):
/// named `Chart.yaml`, `apiVersion` v2 (Helm 3) or v1 (Helm 2), and the
/// required `name` and `version`.
fn is_chart_metadata(path: &Path, api: &str, doc: &Node) -> bool {
    path.file_name().is_some_and(|n| n == "Chart.yaml")
        && matches!(api, "v1" | "v2")
        && doc.get("name").is_some()
        && doc.get("version").is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{FileId, Limits, parse_documents};

    fn first(text: &str) -> Node {
        parse_documents(text, FileId(0), &Limits::default())
            .unwrap()
            .into_iter()
            .next()
            .unwrap()
    }

    #[test]
    fn a_helm_chart_file_is_named_as_such_not_as_lacking_an_api_version() {
        let doc = first("apiVersion: v2\nname: blog\nversion: 0.1.0\ndependencies: []\n");
        let what = what(Path::new("apps/blog/Chart.yaml"), &doc).unwrap();
        assert!(what.contains("Helm chart's metadata"), "{what}");
        assert!(what.contains("chart API version v2"), "{what}");
        // Under another name it is only a document without a kind.
        let other = super::what(Path::new("apps/blog/other.yaml"), &doc).unwrap();
        assert_eq!(other, "a document with apiVersion v2 and no kind");
    }

    #[test]
    fn values_without_either_field_are_left_to_the_caller() {
        let doc = first("replicaCount: 2\nimage: {tag: v1}\n");
        assert_eq!(what(Path::new("values.yaml"), &doc), None);
    }
}
