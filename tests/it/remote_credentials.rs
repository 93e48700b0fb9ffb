//! Remote entries written with credentials in their URL
//! (`https://user:password@host/…`, a token as the user): never fetched,
//! since the tool fetches without credentials, and the credentials are in
//! no output: not the `-v` list of fetches, not a warning's message,
//! not the inventory's chain, in no format (a snippet's source lines are
//! masked as a Secret's values are: `yaml::mask`'s tests).

use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::Ordering;

use crate::common;
use crate::remote::{OPERATOR, dirs, inventory, repo_listing, serve_files, stderr};

const PASSWORD: &str = "hunter2";
const TOKEN: &str = "ghp_s3cr3tT0ken";

/// A repository whose app kustomization lists, each with credentials, a
/// remote resource on the test's server, a remote git folder, a
/// generator file and a transformer; its patch of the operator's
/// Deployment gets a stand-in that names the remote entries. A
/// HelmRepository's URL holds a password too.
fn repo_with_credentials(root: &Path, base: &str) -> std::path::PathBuf {
    let served = base.replace("http://", &format!("http://lint:{PASSWORD}@"));
    let resource = format!("{served}/operator.yaml");
    let git = format!("git::https://{TOKEN}@github.com/org/repo//deploy?ref=v1");
    // A placeholder is no secret to hide, but would be sent all the same.
    let placeholder = base.replace("http://", "http://${TOKEN}@") + "/operator.yaml";
    let repo = repo_listing(root, &[&resource, &git, &placeholder]);
    let path = repo.join("apps/operator/kustomization.yaml");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!(
        "configMapGenerator:\n  - name: settings\n    files:\n      - https://u:{PASSWORD}@example.com/a.conf\ntransformers:\n  - https://{TOKEN}@example.com/labels.yaml\n"
    ));
    std::fs::write(path, text).unwrap();
    std::fs::write(
        repo.join("clusters/home/charts.yaml"),
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {{name: charts, namespace: flux-system}}\nspec: {{url: \"https://u:{PASSWORD}@charts.example.com\"}}\n"
        ),
    )
    .unwrap();
    repo
}

fn lint(repo: &Path, home: &Path, format: &str, remote: bool) -> Output {
    let mut cmd = Command::new(common::BIN);
    cmd.arg(repo)
        .args(["-v", "-o", format, "--fail-on", "never"])
        .env("HOME", home)
        .env("HOMELAB_LINT_REMOTE_LOCAL", "1")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOMELAB_LINT_REMOTE")
        .env_remove("HOMELAB_LINT_REMOTE_CACHE")
        .env_remove("HOMELAB_LINT_CONFIG");
    if remote {
        cmd.arg("--remote");
    }
    cmd.output().unwrap()
}

fn assert_no_credentials(out: &Output, what: &str) {
    for text in [
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    ] {
        assert!(
            !text.contains(PASSWORD) && !text.contains(TOKEN),
            "{what} shows a credential:\n{text}"
        );
    }
}

#[test]
fn urls_with_credentials_are_not_fetched_and_no_output_shows_them() {
    let (base, hits) = serve_files(&[("/operator.yaml", OPERATOR)]);
    let d = dirs();
    let repo = repo_with_credentials(&d.root, &base);

    let out = inventory(&repo, &d.home, &d.cache, true, &["--remote"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert_no_credentials(&out, "inventory --remote -v");
    let host = base.trim_start_matches("http://");
    for line in [
        format!(
            "apps/operator/kustomization.yaml:5:5: remote resource 'http://***@{host}/operator.yaml' \
             is not fetched: its URL holds credentials (before '@'), and remote entries are \
             fetched without credentials"
        ),
        format!("remote: http://***@{host}/operator.yaml: not fetched: its URL holds credentials"),
        "remote: https://***@github.com/org/repo at v1: not fetched: its URL holds credentials"
            .to_string(),
        "remote file 'https://***@example.com/a.conf' (generator input) is not fetched: its URL \
         holds credentials"
            .to_string(),
        format!(
            "remote resource 'http://${{TOKEN}}@{host}/operator.yaml' is not fetched: its URL \
             holds credentials"
        ),
        "remote transformer 'https://***@example.com/labels.yaml' is not fetched: its URL holds \
         credentials"
            .to_string(),
    ] {
        assert!(err.contains(&line), "{line}\n{err}");
    }
    assert_eq!(
        hits.load(Ordering::SeqCst),
        0,
        "a URL with credentials was asked for"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("git::https://***@github.com/org/repo//deploy?ref=v1"),
        "the stand-in's step names the entries, hidden: {stdout}"
    );

    // A value that holds such a URL shows it hidden, not as a Secret.
    assert!(
        stdout.contains("\"url\": \"https://***@charts.example.com\""),
        "{stdout}"
    );

    let offline = inventory(&repo, &d.home, &d.cache, true, &[]);
    assert_no_credentials(&offline, "inventory -v");
    for format in [
        "human", "json", "yaml", "concise", "sarif", "github", "markdown",
    ] {
        for remote in [false, true] {
            let out = lint(&repo, &d.home, format, remote);
            assert_no_credentials(&out, &format!("-o {format} (--remote: {remote})"));
        }
    }
    assert_eq!(hits.load(Ordering::SeqCst), 0);
}
