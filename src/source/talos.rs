//! YAML of Talos Linux that sits beside the Kubernetes manifests of many
//! home-lab repositories: machine configuration and its patches, the
//! secrets bundle, talhelper's cluster file. None of it is a Kubernetes
//! object (Talos reads it, not the API server), so a load skips it with
//! what it is rather than loading it or calling it malformed.

use crate::yaml::Node;

/// Fields of Talos' `ClusterConfig` that no chart's `cluster:` values
/// are known to have: the control plane's components and manifests.
const TALOS_CLUSTER_FIELDS: [&str; 11] = [
    "apiServer",
    "controllerManager",
    "scheduler",
    "etcd",
    "coreDNS",
    "externalCloudProvider",
    "extraManifests",
    "inlineManifests",
    "adminKubeconfig",
    "allowSchedulingOnControlPlanes",
    "allowSchedulingOnMasters",
];

/// What Talos file `doc` is, when it is one.
///
/// Talos' decoder (siderolabs/talos
/// pkg/machinery/config/configloader/internal/decoder/decoder.go) reads a
/// document with `apiVersion` and `kind` as one of its own documents
/// (`apiVersion: v1alpha1`, `kind: HostnameConfig`, …), and one without
/// `kind` holding `machine`, `cluster`, `debug` or `persist` as the
/// v1alpha1 `Config`. Kubernetes' only API version without a group is
/// `v1`, so a group-less `v1alpha1` is never a Kubernetes object. A bare
/// `cluster:` is also a chart's values (Cilium's `name` and `id`), so a
/// `Config` is known by `machine`, by `version: v1alpha1`, or by a
/// `cluster:` holding a field only Talos' `ClusterConfig` has
/// (pkg/machinery/config/types/v1alpha1/v1alpha1_types.go: a patch of the
/// control plane's `apiServer`, `etcd`, …, seen alone in real repositories).
pub fn what(doc: &Node) -> Option<String> {
    let has = |key: &str| doc.get(key).is_some();
    let api = doc.str_at(&["apiVersion"]);
    if api == Some("v1alpha1") {
        let kind = doc.str_at(&["kind"]).unwrap_or("");
        return Some(match kind {
            "" => {
                "a Talos machine configuration document (apiVersion v1alpha1, no API group)".into()
            }
            k => format!("a Talos machine configuration document (apiVersion v1alpha1, kind {k})"),
        });
    }
    if api.is_some() || doc.str_at(&["kind"]).is_some() {
        return None;
    }
    let config_keys = ["cluster", "debug", "persist"].iter().any(|k| has(k));
    let talos_cluster = TALOS_CLUSTER_FIELDS
        .iter()
        .any(|k| doc.path(&["cluster", k]).is_some());
    if has("machine")
        || talos_cluster
        || (doc.str_at(&["version"]) == Some("v1alpha1") && config_keys)
    {
        return Some(
            "a Talos machine configuration or patch (machine and cluster settings)".into(),
        );
    }
    // `talosctl gen secrets` (and talhelper's talsecret.yaml).
    if ["cluster", "secrets", "trustdinfo", "certs"]
        .iter()
        .all(|k| has(k))
    {
        return Some("a Talos secrets bundle (talosctl gen secrets)".into());
    }
    // budimanjojo/talhelper's talconfig.yaml (docs/reference/configuration.md).
    if has("clusterName") && has("talosVersion") && has("nodes") {
        return Some("a talhelper cluster configuration (talconfig.yaml)".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> Node {
        let file = crate::yaml::FileId(0);
        crate::yaml::parse_documents(text, file, &Default::default())
            .unwrap()
            .remove(0)
    }

    #[test]
    fn talos_documents_are_told_apart_from_chart_values() {
        let cases = [
            (
                "apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: a\n",
                Some("kind HostnameConfig"),
            ),
            (
                "version: v1alpha1\nmachine: {type: worker}\ncluster: {}\n",
                Some("machine configuration"),
            ),
            ("machine:\n  network: {}\n", Some("patch")),
            (
                "cluster: {id: x}\nsecrets: {}\ntrustdinfo: {}\ncerts: {}\n",
                Some("secrets bundle"),
            ),
            (
                "clusterName: c\ntalosVersion: v1.6.4\nnodes: []\n",
                Some("talhelper"),
            ),
            // A patch of the control plane alone.
            (
                "cluster:\n  apiServer:\n    admissionControl: []\n",
                Some("patch"),
            ),
            ("cluster:\n  etcd:\n    extraArgs: {}\n", Some("patch")),
            // Cilium's values: a bare `cluster:` is no Talos file.
            ("cluster:\n  name: main\n  id: 1\n", None),
            (
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
                None,
            ),
        ];
        for (text, want) in cases {
            let got = what(&doc(text));
            match want {
                Some(part) => assert!(
                    got.as_deref().is_some_and(|g| g.contains(part)),
                    "{text}: {got:?}"
                ),
                None => assert_eq!(got, None, "{text}"),
            }
        }
    }
}
