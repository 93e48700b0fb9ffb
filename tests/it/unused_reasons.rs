//! What the linter cannot use says why, through the real binary and the
//! language server: a HelmRelease's `valuesFrom` source that is not in
//! the repository or one an ObjectBucketClaim makes, a folder only an
//! unapplied Flux Kustomization builds or its parent's kustomization leaves out,
//! a Component listed under `resources:`, and Talos files beside the
//! manifests.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::common;

use crate::common::FLUX_ROOT as ROOT;

fn ks(name: &str, path: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {{name: {name}, namespace: flux-system}}
spec: {{interval: 1h, path: {path}, prune: true, sourceRef: {{kind: GitRepository, name: flux-system}}}}
"
    )
}

const HELM_RELEASE: &str = "apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app, namespace: apps}
spec:
  interval: 1h
  chart:
    spec: {chart: app, version: 1.0.0, sourceRef: {kind: HelmRepository, name: charts}}
  valuesFrom:
    - kind: ConfigMap
      name: bucket-settings
  values:
    replicas: 1
";

/// A repository of `files` under a temporary folder, committed to git
/// when git is here (the language server finds it by its top level).
fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    for (rel, text) in files {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    if common::git_available() {
        common::git(&root, &["init", "-q"]);
        common::git(&root, &["add", "-A"]);
        common::git(&root, &["commit", "-q", "-m", "repo"]);
    }
    (tmp, root)
}

/// `args` on the binary, from `dir`; stderr as text.
fn run(dir: &Path, args: &[&str]) -> (Output, String) {
    let out = common::lint(dir, args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (out, err)
}

#[test]
fn an_absent_values_from_source_is_named_under_verbose() {
    let (_tmp, root) = repo(&[
        (
            "clusters/home/flux.yaml",
            &format!("{ROOT}---\n{}", ks("app", "./apps/app")),
        ),
        (
            "apps/app/kustomization.yaml",
            "resources:\n  - helmrelease.yaml\n",
        ),
        ("apps/app/helmrelease.yaml", HELM_RELEASE),
    ]);
    let (_, err) = run(&root, &[".", "-v", "--fail-on", "never"]);
    assert!(
        err.contains(
            "absent: apps/app/helmrelease.yaml:9:7: valuesFrom ConfigMap apps/bucket-settings is \
             not in the repository and not optional: helm-controller fails unless it exists in \
             the cluster"
        ),
        "{err}"
    );
    let (_, quiet) = run(&root, &[".", "--fail-on", "never"]);
    assert!(!quiet.contains("absent:"), "not a problem: {quiet}");
}

/// A `valuesFrom` ConfigMap or Secret that an ObjectBucketClaim of the
/// same name makes (testdata/reasons/values-from-bucket-claim) is said to
/// be the claim's, not missing; one nothing makes is still missing.
#[test]
fn a_values_from_source_a_bucket_claim_makes_is_named_as_the_claims() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/reasons/values-from-bucket-claim");
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture, tmp.path());
    let (_, err) = run(tmp.path(), &[".", "-v", "--fail-on", "never"]);
    let absent: Vec<&str> = err.lines().filter(|l| l.starts_with("absent: ")).collect();
    let claims = |line: &str, kind: &str| {
        format!(
            "absent: apps/logs/helmrelease.yaml:{line}: valuesFrom {kind} logs/chunks is made in \
             the cluster by ObjectBucketClaim/logs/chunks, whose bucket provisioner names its \
             ConfigMap and Secret after the claim: its values are not in the repository"
        )
    };
    assert_eq!(
        absent,
        [
            claims("10:7", "ConfigMap").as_str(),
            claims("14:7", "Secret").as_str(),
            "absent: apps/logs/helmrelease.yaml:18:7: valuesFrom ConfigMap logs/settings is not \
             in the repository and not optional: helm-controller fails unless it exists in the \
             cluster",
        ],
        "{err}"
    );
}

/// A folder its parent's kustomization leaves out (testdata/reasons/
/// folder-left-out): a built kustomization not listing a folder beside it
/// is named as the cause; a folder an unapplied Flux Kustomization's path
/// lists is blamed on that one; a folder deeper down that nothing builds,
/// and a Component beside the one a Flux Kustomization takes in, keep the
/// general reason.
#[test]
fn a_folder_left_out_names_the_kustomization_or_flux_kustomization_that_would_apply_it() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/reasons/folder-left-out");
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture, tmp.path());
    let (_, err) = run(tmp.path(), &[".", "-v", "--fail-on", "never"]);
    let skipped: Vec<&str> = err.lines().filter(|l| l.starts_with("skipped: ")).collect();
    assert_eq!(
        skipped,
        [
            "skipped: apps/media/logs/app/agent/cm.yaml: not applied: under the path of Flux \
             Kustomization flux-system/logs (apps/media/logs/ks.yaml:1), which is not applied: \
             apps/media/kustomization.yaml does not list it",
            "skipped: apps/media/logs/ks.yaml: not applied: apps/media/kustomization.yaml does \
             not list it",
            "skipped: apps/media/old/app/cm.yaml: not applied: not reachable from any root (no \
             Flux Kustomization builds apps/media/old/app/kustomization.yaml)",
            "skipped: apps/tools/cm.yaml: not applied: apps/kustomization.yaml does not list it",
            "skipped: components/auth/alt/cm.yaml: not applied: not reachable from any root (no \
             Flux Kustomization builds components/auth/alt/kustomization.yaml)",
        ],
        "{err}"
    );
}

/// A claim held only in a file the folder's kustomization does not list
/// (testdata/reasons/claim-in-unlisted-file) is named with that file and
/// why Flux does not apply it, not said to be missing from the
/// repository; one written without a namespace is told apart, since it
/// may not be the claim asked for.
#[test]
fn a_claim_in_a_file_flux_does_not_apply_is_named_where_it_is() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/reasons/claim-in-unlisted-file");
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture, tmp.path());
    let (_, err) = run(tmp.path(), &[".", "-v", "--fail-on", "never"]);
    let mut undecided: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("undecided: "))
        .collect();
    undecided.sort_unstable();
    assert_eq!(
        undecided,
        [
            "undecided: postgres-data-on-soft-mounted-nfs: Deployment/db/archive: claim \
             archive-data is not in the repository in namespace db; one of that name, with no \
             namespace written, is only where Flux does not apply it: apps/db/archive-pvc.yaml \
             (apps/db/kustomization.yaml does not list it)",
            "undecided: postgres-data-on-soft-mounted-nfs: Deployment/db/postgres: claim \
             postgres-data is in the repository only where Flux does not apply it: \
             apps/db/manual-pvc.yaml (apps/db/kustomization.yaml does not list it)",
        ],
        "{err}"
    );
}

/// A repository of two clusters that both run Authentik, only one of
/// them its database (testdata/reasons/database-in-other-root): the
/// other's Authentik is told the cluster its host names is another
/// root's, and why its own root's Kustomization of the same name did not
/// render it, not that the repository holds no such cluster.
#[test]
fn a_database_only_another_root_applies_is_named_as_that_roots() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/reasons/database-in-other-root");
    let tmp = tempfile::tempdir().unwrap();
    common::copy_dir(&fixture, tmp.path());
    let (_, err) = run(tmp.path(), &[".", "-v", "--fail-on", "never"]);
    let host: Vec<&str> = err
        .lines()
        .filter(|l| {
            l.starts_with("undecided: authentik-cache-on-sync-replicated-postgres: HelmRelease")
        })
        .collect();
    assert_eq!(
        host,
        [
            "undecided: authentik-cache-on-sync-replicated-postgres: HelmRelease/auth/authentik: \
             host pg-rw.database.svc.cluster.local names CloudNativePG cluster \
             Cluster/database/pg, which is in the repository only under Flux Kustomization \
             flux-system/database, which another Flux root applies, so it is taken for another \
             cluster than HelmRelease/auth/authentik's; under this one's root it is not built: \
             its path './apps/database-${MODE:=restore}' reaches Flux as written: Flux \
             Kustomization flux-system/flux-system (clusters/b/flux.yaml) applies it without \
             postBuild substitution, so ${MODE} is not replaced and the path is no directory"
        ],
        "{err}"
    );
}

/// Messages framed as LSP frames them.
fn send(to: &mut impl Write, message: &serde_json::Value) {
    let body = message.to_string();
    write!(to, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    to.flush().unwrap();
}

fn receive(from: &mut impl BufRead) -> Option<serde_json::Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if from.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            length = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    from.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

/// The server's answer to a hover at `line`, `character` (0-based) of
/// `rel` in `root`.
fn hover(root: &Path, rel: &str, line: u32, character: u32) -> serde_json::Value {
    let mut server = Command::new(common::BIN)
        .arg("server")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut to = server.stdin.take().unwrap();
    let mut from = BufReader::new(server.stdout.take().unwrap());
    let uri = format!("file://{}", root.join(rel).display());
    let text = std::fs::read_to_string(root.join(rel)).unwrap();
    send(
        &mut to,
        &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"capabilities": {}, "rootUri": format!("file://{}", root.display())}}),
    );
    let mut answer = serde_json::Value::Null;
    while let Some(m) = receive(&mut from) {
        if m["id"] == 1 {
            break;
        }
    }
    send(
        &mut to,
        &serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
    );
    send(
        &mut to,
        &serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}),
    );
    send(
        &mut to,
        &serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}}),
    );
    while let Some(m) = receive(&mut from) {
        if m["id"] == 2 {
            answer = m["result"].clone();
            break;
        }
    }
    send(
        &mut to,
        &serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
    );
    while let Some(m) = receive(&mut from) {
        if m["id"] == 3 {
            break;
        }
    }
    send(
        &mut to,
        &serde_json::json!({"jsonrpc": "2.0", "method": "exit"}),
    );
    drop(to);
    server.wait().unwrap();
    answer
}

#[test]
fn hover_on_a_helm_release_names_its_absent_values_from_source() {
    if !common::git_available() {
        return;
    }
    let (_tmp, root) = repo(&[
        (
            "clusters/home/flux.yaml",
            &format!("{ROOT}---\n{}", ks("app", "./apps/app")),
        ),
        (
            "apps/app/kustomization.yaml",
            "resources:\n  - helmrelease.yaml\n",
        ),
        ("apps/app/helmrelease.yaml", HELM_RELEASE),
    ]);
    // On `kind: HelmRelease` (line 2).
    let answer = hover(&root, "apps/app/helmrelease.yaml", 1, 7);
    let text = answer["contents"]["value"].as_str().unwrap_or_default();
    assert!(text.contains("Helm values"), "{answer}");
    assert!(
        text.contains(
            "- line 9: valuesFrom ConfigMap apps/bucket-settings is not in the repository and \
             not optional: helm-controller fails unless it exists in the cluster"
        ),
        "{text}"
    );
}

#[test]
fn a_folder_only_an_unapplied_flux_kustomization_builds_names_it() {
    let (_tmp, root) = repo(&[
        (
            "clusters/home/flux.yaml",
            &format!("{ROOT}---\n{}", ks("apps", "./apps")),
        ),
        (
            "apps/kustomization.yaml",
            "resources:\n  - ./other/ks.yaml\n",
        ),
        ("apps/other/ks.yaml", &ks("other", "./apps/other/app")),
        (
            "apps/other/app/kustomization.yaml",
            "resources:\n  - cm.yaml\n",
        ),
        (
            "apps/other/app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: default}\n",
        ),
        ("apps/media/ks.yaml", &ks("media", "./apps/media/app")),
        (
            "apps/media/app/kustomization.yaml",
            "resources:\n  - helmrelease.yaml\n",
        ),
        ("apps/media/app/helmrelease.yaml", HELM_RELEASE),
    ]);
    let (_, err) = run(&root, &["inventory", ".", "-v"]);
    assert!(
        err.contains(
            "skipped: apps/media/app/helmrelease.yaml: not applied: under the path of Flux \
             Kustomization flux-system/media (apps/media/ks.yaml:1), which is not applied: \
             apps/kustomization.yaml does not list it"
        ),
        "{err}"
    );
    assert!(!err.contains("no Flux Kustomization builds"), "{err}");
}

#[test]
fn a_component_under_resources_gets_the_help_kustomizes_error_implies() {
    let (_tmp, root) = repo(&[
        (
            "clusters/home/flux.yaml",
            &format!("{ROOT}---\n{}", ks("app", "./apps/app")),
        ),
        (
            "apps/app/kustomization.yaml",
            "resources:\n  - cm.yaml\n  - ../../components/volsync\n",
        ),
        (
            "apps/app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\n",
        ),
        (
            "components/volsync/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources:\n  - pvc.yaml\n",
        ),
        (
            "components/volsync/pvc.yaml",
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data}\nspec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
        ),
        ("apps/other/kustomization.yaml", "components:\n  - ../app\n"),
        ("clusters/home/other.yaml", &ks("other", "./apps/other")),
    ]);
    let (out, _) = run(&root, &[".", "-o", "json", "--fail-on", "never"]);
    let report = common::report(&out);
    let failed: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule == "flux-kustomization-build-fails")
        .collect();
    let component = failed
        .iter()
        .find(|f| f.message.contains("expected kind != 'Component'"))
        .unwrap_or_else(|| panic!("{failed:?}"));
    assert_eq!(component.location.path, "apps/app/kustomization.yaml");
    assert!(
        component
            .help
            .contains("move the entry from `resources:` to `components:`"),
        "{}",
        component.help
    );
    assert!(
        !component.help.contains("Commit the file"),
        "{}",
        component.help
    );
    let kustomization = failed
        .iter()
        .find(|f| {
            f.message
                .contains("expected kind 'Component' for path 'apps/app' but got 'Kustomization'")
        })
        .unwrap_or_else(|| panic!("{failed:?}"));
    assert!(
        kustomization
            .help
            .contains("move the entry from `components:` to `resources:`"),
        "{}",
        kustomization.help
    );
}

#[test]
fn talos_files_beside_the_manifests_are_skipped_as_what_they_are() {
    let (_tmp, root) = repo(&[
        ("clusters/home/flux.yaml", ROOT),
        (
            "talos/controlplane.yaml",
            "version: v1alpha1\ndebug: false\npersist: true\nmachine:\n  type: controlplane\ncluster:\n  clusterName: home\n",
        ),
        (
            "talos/hostname.yaml",
            "apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: node-1\n---\napiVersion: v1alpha1\nkind: UserVolumeConfig\nname: data\n",
        ),
        (
            "talos/patches/network.yaml",
            "machine:\n  network:\n    nameservers: [1.1.1.1]\n",
        ),
        // Cilium's values: `cluster:` alone is no Talos file.
        ("values/cilium.yaml", "cluster:\n  name: home\n  id: 1\n"),
    ]);
    let (out, err) = run(&root, &["inventory", ".", "-v"]);
    assert!(out.status.success(), "{err}");
    let inventory: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kinds: Vec<&str> = inventory["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["kind"].as_str())
        .collect();
    assert!(
        !kinds.iter().any(|k| k.ends_with("Config")),
        "a Talos document was loaded: {kinds:?}"
    );
    for (file, what) in [
        (
            "talos/controlplane.yaml",
            "a Talos machine configuration or patch",
        ),
        (
            "talos/patches/network.yaml",
            "a Talos machine configuration or patch",
        ),
        (
            "talos/hostname.yaml",
            "a Talos machine configuration document (apiVersion v1alpha1, kind HostnameConfig)",
        ),
    ] {
        assert!(
            err.contains(&format!(
                "skipped: {file}: no Kubernetes object in it: {what}"
            )),
            "{file}: {err}"
        );
    }
    assert!(
        err.contains(
            "skipped: values/cilium.yaml: no Kubernetes object in it (no apiVersion and kind)"
        ),
        "{err}"
    );
    assert!(!err.contains("warning"), "{err}");
}
