//! Object ids: read in one pass, made one by a namespace, cluster-scoped kinds.

use super::*;

/// The one-pass id reads what reading each field by path reads: the first
/// of repeated keys, nothing from values that are not strings, the group
/// before the last '/' of apiVersion.
#[test]
fn an_id_is_read_as_each_field_by_path() {
    let docs = [
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: media}\n",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\nkind: Secret\n",
        "apiVersion: a/b/c\nkind: [x]\nmetadata: {namespace: 3, name: n}\n",
        "kind: Namespace\nmetadata: plain\n",
        "metadata: {name: only}\nmetadata: {name: second, namespace: ns}\n",
        "[not, a, map]\n",
        "apiVersion: /v9\nkind: ''\n",
    ];
    for text in docs {
        let root = crate::yaml::parse_one(text);
        let by_path = |keys: &[&str]| root.str_at(keys).unwrap_or("").to_string();
        let api = by_path(&["apiVersion"]);
        let (group, version) = match api.rsplit_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api.clone()),
        };
        let id = ResId::of(&root);
        let got = (
            id.gvk.group.to_string(),
            id.gvk.version.to_string(),
            id.gvk.kind.to_string(),
            id.name.to_string(),
            id.namespace.to_string(),
        );
        let want = (
            group,
            version,
            by_path(&["kind"]),
            by_path(&["metadata", "name"]),
            by_path(&["metadata", "namespace"]),
        );
        assert_eq!(got, want, "{text}");
    }
}

/// Two objects the namespace makes one id are refused, named as they are
/// after it; objects of one kind and name in other groups are not.
#[test]
fn a_namespace_that_makes_two_ids_one_is_refused() {
    let cm = |api: &str, ns: &str| {
        format!("apiVersion: {api}\nkind: ConfigMap\nmetadata: {{name: c, namespace: {ns}}}\n")
    };
    let dir = repo(&[
        (
            "k/kustomization.yaml",
            "namespace: one\nresources: [a.yaml, b.yaml]\n",
        ),
        ("k/a.yaml", &cm("v1", "x")),
        ("k/b.yaml", &cm("v1", "y")),
        (
            "g/kustomization.yaml",
            "namespace: one\nresources: [a.yaml, b.yaml]\n",
        ),
        ("g/a.yaml", &cm("v1", "x")),
        ("g/b.yaml", &cm("example.com/v1", "y")),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let err = build(&mut files, Path::new("k")).unwrap_err();
    assert!(
        err.message
            .contains("namespace transformation produces ID conflict: ConfigMap/one/c"),
        "{err}"
    );
    assert_eq!(build(&mut files, Path::new("g")).unwrap().len(), 2);
    // Of two conflicts, the one of the first object listed is told (not
    // the first by name).
    let named = |name: &str, ns: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: {ns}}}\n---\n"
        )
    };
    let listed = [("z", "x"), ("b", "x"), ("z", "y"), ("b", "y")]
        .map(|(name, ns)| named(name, ns))
        .concat();
    let dir = repo(&[
        (
            "two/kustomization.yaml",
            "namespace: one\nresources: [all.yaml]\n",
        ),
        ("two/all.yaml", &listed),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let err = build(&mut files, Path::new("two")).unwrap_err();
    assert!(
        err.message.contains("ID conflict: ConfigMap/one/z"),
        "{err}"
    );
}

#[test]
fn cluster_scoped_kinds_are_known_by_group_and_kind() {
    let cases = [
        ("v1", "Namespace", true),
        ("rbac.authorization.k8s.io/v1", "ClusterRole", true),
        ("storage.k8s.io/v1", "CSIDriver", true),
        ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", true),
        ("authorization.k8s.io/v1", "SubjectAccessReview", true),
        ("v1", "ClusterRole", false),
        ("example.com/v1", "Namespace", false),
        ("v1", "ConfigMap", false),
    ];
    for (api, kind, want) in cases {
        assert_eq!(
            Gvk::from_parts(api, kind).is_cluster_scoped(),
            want,
            "{api} {kind}"
        );
    }
}
