//! `deploy/` rendered with the real `kubectl kustomize`, one variant at a
//! time, and its RBAC checked against the linter's own arguments in the
//! CronJob: an offline lint gets no cluster-wide grant at all (only `get`
//! on the one GitRepository whose artifact it downloads, or nothing when
//! it clones with git); `--live` adds read-only access; probes (`--live`
//! without `--no-probe`) add Secret `get` and `pods/portforward`
//! `create`, granted by RoleBindings in named namespaces only.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use homelab_lint::yaml::{FileId, Limits, parse_documents};
use serde_json::Value as J;

const SA: (&str, &str) = ("homelab-lint", "homelab-lint");

fn render(dir: &str) -> Option<Vec<J>> {
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
    let docs = parse_documents(&text, FileId(0), &Limits::default()).unwrap();
    Some(docs.iter().map(|d| d.to_json()).collect())
}

fn of_kind<'a>(objects: &'a [J], kind: &'a str) -> impl Iterator<Item = &'a J> {
    objects.iter().filter(move |o| o["kind"] == kind)
}

fn strings(v: &J) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// One permission the ServiceAccount holds: where ("*" = every
/// namespace), API group, resource, verb, and the resource names it is
/// limited to (empty = any).
type Grant = (String, String, String, String, Vec<String>);

/// What the CronJob's ServiceAccount may do, resolved from every binding
/// that names it through the role it refers to.
fn grants(objects: &[J]) -> BTreeSet<Grant> {
    let mut out = BTreeSet::new();
    for binding in objects.iter().filter(|o| {
        matches!(
            o["kind"].as_str(),
            Some("RoleBinding" | "ClusterRoleBinding")
        )
    }) {
        let names_sa =
            binding["subjects"].as_array().unwrap().iter().any(|s| {
                s["kind"] == "ServiceAccount" && s["name"] == SA.1 && s["namespace"] == SA.0
            });
        if !names_sa {
            continue;
        }
        let scope = if binding["kind"] == "ClusterRoleBinding" {
            "*".to_string()
        } else {
            binding["metadata"]["namespace"]
                .as_str()
                .expect("a RoleBinding names its namespace")
                .to_string()
        };
        let role_ref = &binding["roleRef"];
        let role = objects
            .iter()
            .find(|o| {
                o["kind"] == role_ref["kind"]
                    && o["metadata"]["name"] == role_ref["name"]
                    && (o["kind"] == "ClusterRole" || o["metadata"]["namespace"] == scope.as_str())
            })
            .unwrap_or_else(|| panic!("{role_ref} is not in the rendering"));
        for rule in role["rules"].as_array().unwrap() {
            assert!(rule.get("nonResourceURLs").is_none(), "{rule}");
            let names = strings(&rule["resourceNames"]);
            for group in strings(&rule["apiGroups"]) {
                for resource in strings(&rule["resources"]) {
                    for verb in strings(&rule["verbs"]) {
                        for part in [&group, &resource, &verb] {
                            assert!(!part.contains('*'), "wildcard in {rule}");
                        }
                        out.insert((
                            scope.clone(),
                            group.clone(),
                            resource.clone(),
                            verb,
                            names.clone(),
                        ));
                    }
                }
            }
        }
    }
    out
}

fn pod_spec(objects: &[J]) -> &J {
    let cron = of_kind(objects, "CronJob").next().expect("a CronJob");
    assert_eq!(cron["metadata"]["namespace"], SA.0);
    &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
}

fn lint_args(objects: &[J]) -> Vec<String> {
    let lint = pod_spec(objects)["containers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lint")
        .expect("the lint container");
    strings(&lint["args"])
}

/// Checks shared by every variant: the namespace enforces the
/// "restricted" Pod Security Standard and the pod meets it; metrics go
/// to the Pushgateway.
fn check_common(objects: &[J]) {
    let ns = of_kind(objects, "Namespace").next().expect("a Namespace");
    assert_eq!(ns["metadata"]["name"], SA.0);
    assert_eq!(
        ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
        "restricted"
    );
    let pod = pod_spec(objects);
    assert_eq!(pod["serviceAccountName"], SA.1);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(
        pod["securityContext"]["seccompProfile"]["type"],
        "RuntimeDefault"
    );
    for list in ["initContainers", "containers"] {
        for c in pod[list].as_array().unwrap() {
            let sc = &c["securityContext"];
            assert_eq!(sc["allowPrivilegeEscalation"], false, "{}", c["name"]);
            assert_eq!(sc["readOnlyRootFilesystem"], true, "{}", c["name"]);
            assert_eq!(
                strings(&sc["capabilities"]["drop"]),
                ["ALL"],
                "{}",
                c["name"]
            );
        }
    }
    let args = lint_args(objects);
    assert!(
        args.windows(2)
            .any(|w| w == ["--pushgateway", "$(PUSHGATEWAY_URL)"]),
        "{args:?}"
    );
    let config = of_kind(objects, "ConfigMap").next().expect("the settings");
    assert!(
        config["data"]["PUSHGATEWAY_URL"]
            .as_str()
            .is_some_and(|u| u.starts_with("http")),
        "{config}"
    );
}

/// The grant of the Flux-artifact variants: `get` on the one configured
/// GitRepository, in its namespace, and a NetworkPolicy that lets the
/// linter's pods (and only them) reach source-controller.
fn flux_source_grant(objects: &[J]) -> Grant {
    let config = &of_kind(objects, "ConfigMap").next().unwrap()["data"];
    let ns = config["FLUX_NAMESPACE"].as_str().unwrap();
    let name = config["FLUX_GITREPOSITORY"].as_str().unwrap();
    let policy = of_kind(objects, "NetworkPolicy")
        .next()
        .expect("a NetworkPolicy");
    assert_eq!(policy["metadata"]["namespace"], ns);
    assert_eq!(
        policy["spec"]["podSelector"]["matchLabels"]["app"],
        "source-controller"
    );
    let from = &policy["spec"]["ingress"][0]["from"][0];
    assert_eq!(
        from["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
        SA.0
    );
    // The pods the policy admits are the CronJob's.
    let selector = from["podSelector"]["matchLabels"].as_object().unwrap();
    let template = &of_kind(objects, "CronJob").next().unwrap()["spec"]["jobTemplate"]["spec"]["template"]
        ["metadata"]["labels"];
    for (k, v) in selector {
        assert_eq!(&template[k], v, "pod label {k}");
    }
    (
        ns.into(),
        "source.toolkit.fluxcd.io".into(),
        "gitrepositories".into(),
        "get".into(),
        vec![name.into()],
    )
}

fn cluster_wide(granted: &BTreeSet<Grant>) -> Vec<&Grant> {
    granted.iter().filter(|g| g.0 == "*").collect()
}

#[test]
fn offline_default_reads_flux_artifact_with_one_get_and_no_cluster_role() {
    let Some(objects) = render("deploy") else {
        return;
    };
    check_common(&objects);
    let args = lint_args(&objects);
    assert!(!args.iter().any(|a| a == "--live"), "{args:?}");
    assert_eq!(of_kind(&objects, "ClusterRole").count(), 0);
    assert_eq!(of_kind(&objects, "ClusterRoleBinding").count(), 0);
    assert_eq!(
        grants(&objects),
        BTreeSet::from([flux_source_grant(&objects)])
    );
    // The init container asks the API for the artifact and checks its digest.
    let fetch = &pod_spec(&objects)["initContainers"][0];
    let script = strings(&fetch["args"]).join("\n");
    for wanted in [
        "/apis/source.toolkit.fluxcd.io/v1/namespaces/$FLUX_NAMESPACE/gitrepositories/$FLUX_GITREPOSITORY",
        "sha256sum -c",
        "/repo/tree",
    ] {
        assert!(script.contains(wanted), "{wanted} in {script}");
    }
}

#[test]
fn git_variant_clones_with_an_optional_deploy_key_and_has_no_grant_at_all() {
    let Some(objects) = render("deploy/variants/git") else {
        return;
    };
    check_common(&objects);
    assert_eq!(grants(&objects), BTreeSet::new());
    for kind in ["Role", "RoleBinding", "ClusterRole", "NetworkPolicy"] {
        assert_eq!(of_kind(&objects, kind).count(), 0, "{kind}");
    }
    let pod = pod_spec(&objects);
    assert_eq!(pod["automountServiceAccountToken"], false);
    let key = pod["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "deploy-key")
        .expect("the deploy-key volume");
    assert_eq!(key["secret"]["optional"], true);
    let fetch = &pod["initContainers"][0];
    assert!(fetch["image"].as_str().unwrap().starts_with("alpine/git:"));
    assert!(strings(&fetch["args"]).join("\n").contains("git clone"));
}

#[test]
fn live_variant_adds_cluster_wide_reads_only() {
    let Some(objects) = render("deploy/variants/live") else {
        return;
    };
    check_common(&objects);
    let args = lint_args(&objects);
    assert!(args.iter().any(|a| a == "--live"), "{args:?}");
    assert!(args.iter().any(|a| a == "--no-probe"), "{args:?}");
    let granted = grants(&objects);
    assert!(granted.contains(&flux_source_grant(&objects)));
    let wide = cluster_wide(&granted);
    assert!(
        wide.iter()
            .any(|g| g.1 == "helm.toolkit.fluxcd.io" && g.2 == "helmreleases" && g.3 == "list")
    );
    for g in &wide {
        assert!(["get", "list", "watch"].contains(&g.3.as_str()), "{g:?}");
        assert_ne!(g.2, "secrets", "{g:?}");
    }
    assert!(
        !granted
            .iter()
            .any(|g| g.2 == "secrets" || g.2 == "pods/portforward")
    );
}

#[test]
fn probes_variant_adds_secret_get_and_port_forward_in_named_namespaces_only() {
    let (Some(live), Some(objects)) = (
        render("deploy/variants/live"),
        render("deploy/variants/probes"),
    ) else {
        return;
    };
    check_common(&objects);
    let args = lint_args(&objects);
    assert!(args.iter().any(|a| a == "--live"), "{args:?}");
    assert!(
        !args.iter().any(|a| a == "--no-probe"),
        "probes run unless --no-probe: {args:?}"
    );
    let added: Vec<Grant> = grants(&objects)
        .difference(&grants(&live))
        .cloned()
        .collect();
    let namespaces: BTreeSet<&str> = added.iter().map(|g| g.0.as_str()).collect();
    assert!(
        !namespaces.is_empty() && !namespaces.contains("*"),
        "{added:?}"
    );
    for ns in namespaces {
        let mut here: Vec<(&str, &str, &str)> = added
            .iter()
            .filter(|g| g.0 == ns)
            .map(|g| (g.1.as_str(), g.2.as_str(), g.3.as_str()))
            .collect();
        here.sort();
        assert_eq!(
            here,
            [("", "pods/portforward", "create"), ("", "secrets", "get")],
            "in {ns}"
        );
    }
}

/// The checks can fail: a cluster-wide Secret read slipped into the live
/// variant is caught.
#[test]
fn a_cluster_wide_secret_grant_is_caught() {
    let Some(mut objects) = render("deploy/variants/live") else {
        return;
    };
    let role = objects
        .iter_mut()
        .find(|o| o["kind"] == "ClusterRole")
        .unwrap();
    role["rules"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}));
    let granted = grants(&objects);
    assert!(
        cluster_wide(&granted).iter().any(|g| g.2 == "secrets"),
        "{granted:?}"
    );
}
