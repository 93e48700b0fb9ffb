//! Objects as a cluster returns them, from the API server or from a
//! `kubectl get -o yaml|json` snapshot: lists unwrapped, server
//! bookkeeping dropped, Secret values kept out of the model and out of
//! every text a report could quote.

use std::sync::Arc;

use super::{Concealed, Object, StepKind};
use crate::yaml::{FileId, Node, Value};

/// Annotation `kubectl apply` writes: the whole object as last applied,
/// Secret data included.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Flux's ownership labels: the Flux Kustomization and the HelmRelease
/// that applied an object.
pub const KUSTOMIZE_NAME: &str = "kustomize.toolkit.fluxcd.io/name";
pub const KUSTOMIZE_NAMESPACE: &str = "kustomize.toolkit.fluxcd.io/namespace";
pub const HELM_NAME: &str = "helm.toolkit.fluxcd.io/name";
pub const HELM_NAMESPACE: &str = "helm.toolkit.fluxcd.io/namespace";

/// What one document of cluster output held.
#[derive(Debug, Default)]
pub struct Unwrapped {
    pub objects: Vec<Object>,
    /// Byte ranges of the source text that hold Secret values: blank them
    /// before the text is registered for reports to quote.
    pub redact: Vec<(u32, u32)>,
}

/// Unwraps a document (an object, a `List` or a typed `*List`) into
/// live objects. `detail` says where they were read (shown in the
/// object's chain). Items without `apiVersion`/`kind` (raw API lists
/// omit them) take them from the list.
pub fn unwrap_document(doc: &Node, file: FileId, detail: &str, out: &mut Unwrapped) {
    if !Object::looks_like_object(doc) {
        return;
    }
    let kind = doc.str_at(&["kind"]).unwrap_or("");
    let items = doc.get("items").and_then(Node::as_seq);
    if let (Some(item_kind), Some(items)) = (kind.strip_suffix("List"), items) {
        let api_version = doc.get("apiVersion").cloned();
        for item in items {
            let mut item = item.clone();
            if item.as_map().is_none() {
                continue;
            }
            if item.get("kind").is_none() && !item_kind.is_empty() {
                item.insert("kind", Node::synthetic_str(item_kind, item.span()));
            }
            if item.get("apiVersion").is_none()
                && let Some(v) = &api_version
            {
                item.insert("apiVersion", v.clone());
            }
            if Object::looks_like_object(&item) {
                push(item, file, detail, out);
            }
        }
        return;
    }
    push(doc.clone(), file, detail, out);
}

fn push(mut root: Node, file: FileId, detail: &str, out: &mut Unwrapped) {
    let concealed = normalize(&mut root, &mut out.redact);
    let mut obj = Object::new(root, file, out.objects.len());
    obj.concealed = concealed.into();
    obj.push_step(StepKind::Live, detail, None);
    out.objects.push(obj);
}

/// Drops `managedFields` and the last-applied annotation, and empties
/// Secret values in the tree (their keys stay: names are facts). The
/// values are returned, decoded, as [`Concealed`]: a remedy written only
/// in the cluster (libpq options in a Secret) can then be seen without
/// any report printing it.
pub fn normalize(root: &mut Node, redact: &mut Vec<(u32, u32)>) -> Vec<(String, Concealed)> {
    let is_secret =
        root.str_at(&["apiVersion"]) == Some("v1") && root.str_at(&["kind"]) == Some("Secret");
    if let Some(meta) = root.get_mut("metadata") {
        meta.remove("managedFields");
        if let Some(annotations) = meta.get_mut("annotations")
            && let Some(applied) = annotations.remove(LAST_APPLIED)
            && is_secret
        {
            redact.push((applied.span().start, applied.span().end));
        }
    }
    let mut concealed: Vec<(String, Concealed)> = Vec::new();
    if !is_secret {
        return concealed;
    }
    for key in ["data", "stringData"] {
        let Some(data) = root.get_mut(key) else {
            continue;
        };
        redact.push((data.span().start, data.span().end));
        match &mut data.value {
            Value::Map(entries) => {
                for (k, v) in Arc::make_mut(entries).iter_mut() {
                    redact.push((v.span().start, v.span().end));
                    // `data` is base64 (a value that is not stays unread);
                    // `stringData` is plain and wins, as the API server
                    // merges it.
                    let text = v.scalar_text().and_then(|t| match key {
                        "data" => crate::source::data::decode_base64(&t)
                            .map(|b| String::from_utf8_lossy(&b).into_owned()),
                        _ => Some(t),
                    });
                    if let (Some(name), Some(text)) = (k.scalar_text(), text) {
                        concealed.retain(|(n, _)| *n != name);
                        concealed.push((name, Concealed::new(text)));
                    }
                    *v = Node::new(Value::Null, v.span());
                }
            }
            _ => *data = Node::new(Value::Null, data.span()),
        }
    }
    concealed
}

/// `text` with every byte of the given ranges but line breaks replaced
/// by `*`: offsets and lines stay valid for every other span.
pub fn redact_text(text: &str, ranges: &[(u32, u32)]) -> String {
    if ranges.is_empty() {
        return text.to_string();
    }
    let mut bytes = text.as_bytes().to_vec();
    for &(start, end) in ranges {
        let (start, end) = (start as usize, (end as usize).min(bytes.len()));
        for b in bytes.iter_mut().take(end).skip(start) {
            if *b != b'\n' && *b != b'\r' {
                *b = b'*';
            }
        }
    }
    // Only whole characters were replaced byte by byte with ASCII, except
    // where a range cut one: fall back to a lossy conversion then.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The namespace and name of the Flux object that applied a live object,
/// from its ownership labels: `(kind, namespace, name)` where kind is
/// `HelmRelease` or `Kustomization`.
pub fn flux_owner(obj: &Object) -> Option<(&'static str, &str, &str)> {
    let labels = obj.root.path(&["metadata", "labels"])?;
    let get = |k: &str| labels.get(k).and_then(Node::as_str);
    if let (Some(name), Some(ns)) = (get(HELM_NAME), get(HELM_NAMESPACE)) {
        return Some(("HelmRelease", ns, name));
    }
    if let (Some(name), Some(ns)) = (get(KUSTOMIZE_NAME), get(KUSTOMIZE_NAMESPACE)) {
        return Some(("Kustomization", ns, name));
    }
    None
}

/// Whether a controller made this object from another one the rules see
/// (a Pod of a ReplicaSet, a StatefulSet of an operator's CR): linting
/// both would report the same problem twice.
pub fn has_controller(obj: &Object) -> bool {
    obj.root
        .path(&["metadata", "ownerReferences"])
        .and_then(Node::as_seq)
        .is_some_and(|refs| {
            refs.iter()
                .any(|r| r.get("controller").and_then(|c| c.as_bool_lenient()) == Some(true))
        })
}

/// The live objects rules should see: those no controller made from
/// another live object (see [`has_controller`]).
pub fn lintable(objects: Vec<Object>) -> Vec<Object> {
    objects.into_iter().filter(|o| !has_controller(o)).collect()
}

/// Drops live workloads a HelmRelease in `objects` renders (by Flux's
/// `helm.toolkit.fluxcd.io/*` labels): rules read the release's chart
/// and values, and the workload would report the same app again.
/// Other rendered objects (StorageClasses of a chart's defaults, PVCs)
/// stay: they are facts only the cluster has.
pub fn drop_rendered_workloads(objects: &mut Vec<Object>) {
    let releases: std::collections::HashSet<(String, String)> = objects
        .iter()
        .filter(|o| o.is("helm.toolkit.fluxcd.io", "HelmRelease"))
        .map(|o| {
            (
                o.namespace().unwrap_or("default").to_string(),
                o.name().to_string(),
            )
        })
        .collect();
    objects.retain(|o| {
        let workload = super::object::workload_containers(o).is_some();
        let rendered = o.is_live()
            && matches!(flux_owner(o), Some(("HelmRelease", ns, name))
                if releases.contains(&(ns.to_string(), name.to_string())));
        !(workload && rendered)
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{Limits, parse_documents};

    fn unwrap(text: &str) -> Unwrapped {
        let docs = parse_documents(text, FileId(0), &Limits::default()).unwrap();
        let mut out = Unwrapped::default();
        for d in &docs {
            unwrap_document(d, FileId(0), "test", &mut out);
        }
        out
    }

    #[test]
    fn unwraps_typed_lists_and_fills_kind() {
        let out = unwrap(
            r#"{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a","managedFields":[{}]}},{"metadata":{"name":"b"}}]}"#,
        );
        assert_eq!(out.objects.len(), 2);
        assert_eq!(out.objects[0].kind(), "Pod");
        assert_eq!(out.objects[1].api_version(), "v1");
        assert!(
            out.objects[0]
                .root
                .path(&["metadata", "managedFields"])
                .is_none()
        );
        assert!(out.objects[0].is_live());
    }

    #[test]
    fn secret_values_are_emptied_and_their_text_redacted() {
        let text =
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: aHVudGVyMg==\n";
        let out = unwrap(text);
        let secret = &out.objects[0];
        assert!(secret.root.path(&["data", "password"]).unwrap().is_null());
        let red = redact_text(text, &out.redact);
        assert!(!red.contains("aHVudGVyMg"), "{red}");
        assert_eq!(red.lines().count(), text.lines().count());
        // Kept decoded, outside the tree, and hidden from Debug.
        assert_eq!(secret.concealed.len(), 1);
        assert_eq!(secret.concealed[0].0, "password");
        assert_eq!(secret.concealed[0].1.reveal(), "hunter2");
        assert!(!format!("{secret:?}").contains("hunter2"));
    }
}
