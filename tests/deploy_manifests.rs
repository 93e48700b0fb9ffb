//! `deploy/` renders with the real `kubectl kustomize`, and its RBAC is
//! least privilege: only get/list/watch, no wildcards, and Secrets only in
//! the `with-probes` variant.

mod common;

use std::path::Path;
use std::process::Command;

use homelab_lint::yaml::{FileId, Limits, Node, parse_documents};

fn render(dir: &str) -> Option<Vec<Node>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let out = match Command::new("kubectl").arg("kustomize").arg(&path).output() {
        Ok(out) => out,
        Err(_) => {
            common::skip_or_fail("kubectl is not on PATH");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "kubectl kustomize {dir}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    Some(parse_documents(&text, FileId(0), &Limits::default()).unwrap())
}

fn kinds(objects: &[Node]) -> Vec<String> {
    let mut k: Vec<String> = objects
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o.str_at(&["kind"]).unwrap(),
                o.str_at(&["metadata", "name"]).unwrap()
            )
        })
        .collect();
    k.sort();
    k
}

/// Every (apiGroup, resource) a rendering's cluster roles grant, checking
/// verbs and wildcards on the way.
/// The strings of the sequence at `key` (empty when there is none).
fn strings(node: &Node, key: &str) -> Vec<String> {
    node.get(key)
        .and_then(Node::as_seq)
        .map(|s| s.iter().filter_map(Node::scalar_text).collect())
        .unwrap_or_default()
}

fn grants(objects: &[Node]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for role in objects
        .iter()
        .filter(|o| matches!(o.str_at(&["kind"]), Some("ClusterRole" | "Role")))
    {
        let name = role.str_at(&["metadata", "name"]).unwrap();
        for rule in role.get("rules").and_then(Node::as_seq).unwrap() {
            let list = |key: &str| strings(rule, key);
            let verbs = list("verbs");
            assert!(!verbs.is_empty(), "{name}: a rule without verbs");
            // Reads only; the one exception is opening a port-forward,
            // which the probes need and which writes nothing.
            let port_forward_only = list("resources") == ["pods/portforward"];
            for verb in &verbs {
                assert!(
                    ["get", "list", "watch"].contains(&verb.as_str())
                        || (port_forward_only && verb == "create"),
                    "{name} grants {verb}"
                );
            }
            assert!(
                rule.get("nonResourceURLs").is_none(),
                "{name}: nonResourceURLs"
            );
            assert!(rule.get("resourceNames").is_none() || !verbs.is_empty());
            for group in list("apiGroups") {
                assert_ne!(group, "*", "{name}: wildcard apiGroup");
                for resource in list("resources") {
                    assert!(!resource.contains('*'), "{name}: wildcard resource");
                    out.push((group.clone(), resource));
                }
            }
        }
    }
    out
}

#[test]
fn default_deploy_renders_with_read_only_rbac_and_no_secrets() {
    let Some(objects) = render("deploy") else {
        return;
    };
    assert_eq!(
        kinds(&objects),
        [
            "ClusterRole/homelab-lint-read",
            "ClusterRoleBinding/homelab-lint-read",
            "CronJob/homelab-lint",
            "Namespace/homelab-lint",
            "ServiceAccount/homelab-lint",
        ]
    );
    let granted = grants(&objects);
    assert!(granted.contains(&("helm.toolkit.fluxcd.io".into(), "helmreleases".into())));
    assert!(
        !granted.iter().any(|(_, r)| r == "secrets"),
        "Secrets are granted without probes"
    );
    // The CronJob runs as the ServiceAccount the role is bound to.
    let cron = objects
        .iter()
        .find(|o| o.str_at(&["kind"]) == Some("CronJob"))
        .unwrap();
    let pod = cron
        .path(&["spec", "jobTemplate", "spec", "template", "spec"])
        .unwrap();
    assert_eq!(pod.str_at(&["serviceAccountName"]), Some("homelab-lint"));
    assert_eq!(
        cron.str_at(&["metadata", "namespace"]),
        Some("homelab-lint")
    );
    assert_eq!(
        pod.path(&["securityContext", "runAsNonRoot"])
            .and_then(Node::as_bool_lenient),
        Some(true)
    );
    for c in pod.get("containers").and_then(Node::as_seq).unwrap() {
        assert_eq!(
            c.path(&["securityContext", "readOnlyRootFilesystem"])
                .and_then(Node::as_bool_lenient),
            Some(true)
        );
        let args = strings(c, "args");
        assert!(
            args.windows(2).any(|w| w == ["--format", "json"]),
            "{args:?}"
        );
    }
    for binding in objects
        .iter()
        .filter(|o| o.str_at(&["kind"]) == Some("ClusterRoleBinding"))
    {
        let subject = &binding.get("subjects").and_then(Node::as_seq).unwrap()[0];
        assert_eq!(subject.str_at(&["name"]), Some("homelab-lint"));
        assert_eq!(subject.str_at(&["namespace"]), Some("homelab-lint"));
    }
}

#[test]
fn with_probes_adds_secret_reads_port_forward_and_live() {
    let (Some(plain), Some(probes)) = (render("deploy"), render("deploy/with-probes")) else {
        return;
    };
    let mut added = grants(&probes);
    for g in grants(&plain) {
        if let Some(i) = added.iter().position(|a| *a == g) {
            added.remove(i);
        }
    }
    assert_eq!(
        added,
        [
            (String::new(), "secrets".to_string()),
            (String::new(), "pods/portforward".to_string())
        ]
    );
    // Secrets are read by name, never listed.
    let secrets_role = probes
        .iter()
        .find(|o| o.str_at(&["metadata", "name"]) == Some("homelab-lint-probe"))
        .unwrap();
    let verbs = strings(
        &secrets_role.get("rules").and_then(Node::as_seq).unwrap()[0],
        "verbs",
    );
    assert_eq!(verbs, ["get"]);
    // Probes run only against the cluster the CronJob reads.
    let containers = probes
        .iter()
        .find(|o| o.str_at(&["kind"]) == Some("CronJob"))
        .and_then(|c| {
            c.path(&[
                "spec",
                "jobTemplate",
                "spec",
                "template",
                "spec",
                "containers",
            ])
        })
        .and_then(Node::as_seq)
        .unwrap();
    let args = strings(&containers[0], "args");
    assert!(args.contains(&"--live".to_string()), "{args:?}");
}
