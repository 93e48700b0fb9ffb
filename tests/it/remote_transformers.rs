//! `transformers:` entries at a URL (`--remote`): kustomize accumulates
//! an entry that is no inline YAML like a resource, so a manifest at an
//! http(s) URL or a folder of a git repository is fetched, and each
//! object it yields configures a transformer (api/internal/target/
//! kusttarget.go `configureExternalTransformers`). Served by a real HTTP
//! server on 127.0.0.1 and a bare git repository the test makes, allowed
//! by the tests' `HOMELAB_LINT_REMOTE_LOCAL=1`.

use std::path::Path;

use crate::common;
use crate::remote::{
    OPERATOR, assert_home_untouched, dirs, inventory, object, repo_listing, serve_files, stderr,
    tagged_bare_repo,
};

const LABELS: &str = "apiVersion: builtin
kind: LabelTransformer
metadata:
  name: tier
labels:
  tier: backend
fieldSpecs:
  - path: metadata/labels
    create: true
";

/// A repository whose app kustomization holds the operator's Deployment
/// and lists `entry` under `transformers:`, the entry at line 24, column 5.
fn repo_transforming(root: &Path, entry: &str) -> std::path::PathBuf {
    let repo = repo_listing(root, &["operator.yaml"]);
    std::fs::write(repo.join("apps/operator/operator.yaml"), OPERATOR).unwrap();
    let path = repo.join("apps/operator/kustomization.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!("transformers:\n  - {entry}\n"));
    assert_eq!(text.lines().count(), 24, "the entry's line moved:\n{text}");
    std::fs::write(path, text).unwrap();
    repo
}

/// The label the transformer sets, and where the inventory says it is
/// written.
fn tier(out: &std::process::Output) -> (serde_json::Value, serde_json::Value) {
    let op = object(out, "Deployment", "ext-postgres-operator")
        .unwrap_or_else(|| panic!("the Deployment: {}", stderr(out)));
    (
        op["object"]["metadata"]["labels"]["tier"].clone(),
        op["provenance"]["metadata.labels.tier"]["at"].clone(),
    )
}

#[test]
fn a_transformer_at_an_http_url_is_fetched_and_run_with_remote() {
    let (base, hits) = serve_files(&[("/labels.yaml", LABELS)]);
    let d = dirs();
    let url = format!("{base}/labels.yaml");
    let repo = repo_transforming(&d.root, &url);

    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains(&format!("remote: {url}: fetched")), "{err}");
    assert!(!err.contains("not fetched"), "{err}");
    assert_eq!(
        tier(&out),
        ("backend".into(), format!("{url}:6:9").into()),
        "{err}"
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert!(
        object(&out, "LabelTransformer", "tier").is_none(),
        "a transformer's configuration is no object of the build"
    );

    // Offline, the entry is a gap at its line that says what it names;
    // nothing is made up.
    let offline = inventory(&repo, &d.home, &d.root.join("cache2"), true, &[]);
    let err = stderr(&offline);
    assert!(
        err.contains(&format!(
            "apps/operator/kustomization.yaml:24:5: remote transformer '{url}' is not fetched: it \
             is a manifest file; remote entries are fetched only with --remote"
        )),
        "{err}"
    );
    assert_eq!(tier(&offline).0, serde_json::Value::Null);
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_home_untouched(&d);
}

/// A bare repository `transformers.git` under `root` whose folder
/// `shared` is a kustomization listing the label transformer, at tag
/// v1.0.0 (and another label on its default branch).
fn upstream_transformers(root: &Path) -> std::path::PathBuf {
    tagged_bare_repo(
        root,
        "transformers",
        &[
            ("shared/kustomization.yaml", "resources:\n  - labels.yaml\n"),
            ("shared/labels.yaml", LABELS),
        ],
        ("shared/labels.yaml", "backend", "frontend"),
    )
}

#[test]
fn a_transformer_folder_of_a_git_repository_is_built_and_run_with_remote() {
    if !common::git_available() {
        return;
    }
    let d = dirs();
    let bare = upstream_transformers(&d.root);
    let repo_url = format!("file://{}", bare.display());
    let entry = format!("{repo_url}//shared?ref=v1.0.0");
    let repo = repo_transforming(&d.root, &entry);

    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(&format!("remote: {repo_url} at v1.0.0: fetched")),
        "{err}"
    );
    let file = format!("{repo_url}//shared/labels.yaml?ref=v1.0.0");
    assert_eq!(
        tier(&out),
        ("backend".into(), format!("{file}:6:9").into()),
        "the tag's transformer, where it is written: {err}"
    );

    // Offline, a gap that names the repository, its folder and ref.
    let offline = inventory(&repo, &d.home, &d.root.join("cache2"), true, &[]);
    let err = stderr(&offline);
    assert!(
        err.contains(&format!(
            "apps/operator/kustomization.yaml:24:5: remote transformer '{entry}' is not fetched: \
             it is git repository {repo_url}, folder shared, at ref v1.0.0; remote entries are \
             fetched only with --remote"
        )),
        "{err}"
    );
    assert_eq!(tier(&offline).0, serde_json::Value::Null);
    assert_home_untouched(&d);
}
