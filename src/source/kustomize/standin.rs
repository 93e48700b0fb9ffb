//! Stand-ins for the objects of remote entries that were not read: a
//! patch whose `target` names a kind and a name no object of the
//! kustomization has, when a remote resource of it was left out, is
//! almost always for an object of that resource (the operator's
//! Deployment of `https://…/operator.yaml`, given its `POSTGRES_HOST` by a
//! local patch). The stand-in is that object with only its identity;
//! applying the patch then gives it what the patch sets, at the lines
//! the patch writes it, and nothing else: no image, no other field.

use super::*;

/// The workload kinds whose API group a target may leave out.
const APPS_KINDS: [&str; 3] = ["Deployment", "StatefulSet", "DaemonSet"];

/// Adds a stand-in to `acc` for each patch of `k` whose target is named
/// and missing; `remote` are the remote entries left out, for the step
/// that says what the stand-in is.
pub(super) fn add(k: &kustomization::Kustomization, acc: &mut Acc, remote: &[String]) {
    let entries = k.get("patches").and_then(Node::as_seq);
    for target in entries
        .into_iter()
        .flatten()
        .filter_map(|e| e.get("target"))
    {
        let text = |key: &str| {
            target
                .get(key)
                .and_then(Node::scalar_text)
                .unwrap_or_default()
        };
        let (kind, name) = (text("kind"), text("name"));
        // A target name is an anchored regular expression in kustomize;
        // only a plain name names one object.
        let plain = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-.".contains(c))
        };
        if !plain(&kind) || !plain(&name) {
            continue;
        }
        let api = match (text("group"), text("version")) {
            (g, v) if !g.is_empty() && !v.is_empty() => format!("{g}/{v}"),
            (g, v) if g.is_empty() && !v.is_empty() => v,
            (g, _) if g.is_empty() && APPS_KINDS.contains(&kind.as_str()) => "apps/v1".into(),
            _ => continue,
        };
        let namespace = text("namespace");
        let id = ResId {
            gvk: Gvk::from_parts(&api, &kind),
            name: name.as_str().into(),
            namespace: namespace.as_str().into(),
        };
        if acc.res().iter().any(|r| r.any_id_matches(&id)) {
            continue;
        }
        let span = target.span();
        let mut meta = vec![("name".to_string(), Node::synthetic_str(name.as_str(), span))];
        if !namespace.is_empty() {
            meta.push((
                "namespace".into(),
                Node::synthetic_str(namespace.as_str(), span),
            ));
        }
        let root = Node::synthetic_map(
            vec![
                ("apiVersion".into(), Node::synthetic_str(api.as_str(), span)),
                ("kind".into(), Node::synthetic_str(kind.as_str(), span)),
                ("metadata".into(), Node::synthetic_map(meta, span)),
            ],
            span,
        );
        let mut obj = Object::new(root, span.file, 0);
        let named = crate::yaml::without_credentials(&remote.join(", ")).into_owned();
        obj.push_step(StepKind::RemoteStandIn, named, Some(span));
        acc.push(Res::new(obj));
    }
}
