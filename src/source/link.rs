//! Joining live state to the repo: a live object that is the same object
//! as one the repo declares (same group, kind, namespace and name) is
//! represented by the declaration, so findings point at the repo file;
//! what only the cluster has (objects no file declares, such as bound
//! PVs, and the `status` of declared ones) is kept, and the live object
//! stays on its declaration so that drift (the `parameterDrift` rule
//! step) can be judged.

use std::sync::Arc;

use super::{Object, live};

/// What merging found.
#[derive(Debug, Default)]
pub struct Merged {
    /// Live objects represented by a repo declaration.
    pub linked: usize,
}

/// Adds to `repo` the live objects it does not declare; for the ones it
/// does, copies the live `status` onto the declaration and compares
/// Postgres parameters.
pub fn merge(repo: &mut Vec<Object>, live_objects: Vec<Object>) -> Merged {
    let mut merged = Merged::default();
    let declared = repo.len();
    for l in live_objects {
        let found = repo[..declared].iter().position(|o| same_object(o, &l));
        match found {
            Some(i) => {
                merged.linked += 1;
                if repo[i].root.get("status").is_none()
                    && let Some(status) = l.root.get("status")
                {
                    let status = status.clone();
                    repo[i].root_mut().insert("status", status);
                }
                repo[i].live = Some(Box::new(Arc::unwrap_or_clone(l.root)));
            }
            None => repo.push(l),
        }
    }
    merged
}

/// Same object: group, kind, name, and namespace (a declaration written
/// without one matches any: Flux or the kubeconfig supplies it). When the
/// live object carries Flux's ownership labels, the declaration must
/// have been rendered by a Flux Kustomization or be loose in the repo.
fn same_object(declared: &Object, l: &Object) -> bool {
    declared.is(l.group(), l.kind())
        && declared.name() == l.name()
        && declared
            .namespace()
            .is_none_or(|ns| Some(ns) == l.namespace())
        && !declared.is_live()
        && live::flux_owner(l).is_none_or(|(kind, _, _)| kind == "Kustomization")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::StepKind;
    use crate::yaml::{FileId, Limits, parse_documents};

    fn obj(text: &str, file: u32, live: bool) -> Object {
        let doc = parse_documents(text, FileId(file), &Limits::default())
            .unwrap()
            .remove(0);
        let mut o = Object::new(doc, FileId(file), 0);
        if live {
            o.push_step(StepKind::Live, "test", None);
        }
        o
    }

    const REPO_PG: &str = "apiVersion: acid.zalan.do/v1\nkind: postgresql\nmetadata:\n  name: db\n  namespace: security\nspec:\n  postgresql:\n    parameters:\n      synchronous_commit: \"off\"\n      max_connections: \"200\"\n";
    const LIVE_PG: &str = "apiVersion: acid.zalan.do/v1\nkind: postgresql\nmetadata:\n  name: db\n  namespace: security\n  labels:\n    kustomize.toolkit.fluxcd.io/name: apps\n    kustomize.toolkit.fluxcd.io/namespace: flux-system\nspec:\n  postgresql:\n    parameters:\n      max_connections: \"200\"\nstatus:\n  PostgresClusterStatus: Running\n";
    const LIVE_PV: &str = "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: pv-1\nspec:\n  csi:\n    driver: rook-ceph.rbd.csi.ceph.com\n";

    #[test]
    fn declared_objects_represent_live_ones_and_drift_is_reported() {
        let mut repo = vec![obj(REPO_PG, 0, false)];
        let merged = merge(
            &mut repo,
            vec![obj(LIVE_PG, 1, true), obj(LIVE_PV, 2, true)],
        );
        assert_eq!(merged.linked, 1);
        assert_eq!(repo.len(), 2, "the PV only the cluster has is added");
        assert_eq!(repo[1].kind(), "PersistentVolume");
        assert_eq!(
            repo[0].root.str_at(&["status", "PostgresClusterStatus"]),
            Some("Running"),
            "live status copied onto the declaration"
        );
        let live = repo[0].live.as_deref().expect("the live object is kept");
        assert_eq!(
            live.path(&["spec", "postgresql", "parameters", "synchronous_commit"]),
            None,
            "the live object is kept as the cluster has it"
        );
    }

    #[test]
    fn helm_rendered_live_objects_are_not_the_repo_declaration() {
        let declared = obj(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: a\n",
            0,
            false,
        );
        let rendered = obj(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n  namespace: a\n  labels:\n    helm.toolkit.fluxcd.io/name: r\n    helm.toolkit.fluxcd.io/namespace: a\n",
            1,
            true,
        );
        assert!(!same_object(&declared, &rendered));
    }
}
