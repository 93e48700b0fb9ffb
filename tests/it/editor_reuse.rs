//! The language server's lints ([`Session::analyse`]): each reuses what
//! the last one parsed, built and rendered, and takes the texts of the
//! files nothing reported changed from it when the disk is watched. After
//! edits that run many builds again (the CNPG component every app's
//! database is built from) and few (one app's HelmRelease), and after the
//! edits are taken back, the load, the findings and the problems must be
//! a fresh session's, spans included.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use homelab_lint::pipeline::editor::{Analysis, Session};
use homelab_lint::source::root;

use crate::base_reuse::{assert_same, commit_all};
use crate::common;

const REPO: &str = "joryirving__home-ops";
const COMPONENT: &str = "kubernetes/components/postgres/cluster.yaml";
const RELEASE: &str = "kubernetes/apps/base/downloads/radarr/helmrelease.yaml";
const KUSTOMIZATION: &str = "kubernetes/apps/base/downloads/radarr/kustomization.yaml";

fn session(repo: &Path, watched: bool) -> Session {
    let found = root::find(&[repo.to_path_buf()]).expect("the copy has a root");
    let mut session = Session::open(found).expect("the session opens");
    session.watched(watched);
    session
}

/// `text` with `from` replaced by `to` once; `from` must be there.
fn edited(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "no {from:?} to edit");
    text.replacen(from, to, 1)
}

fn assert_fresh(step: &str, repo: &Path, overlay: &HashMap<PathBuf, String>, reused: &Analysis) {
    let fresh = session(repo, false).analyse(overlay.clone()).unwrap();
    assert!(fresh.reused.is_none(), "a fresh session reuses nothing");
    assert_same(step, &reused.loaded.repo, &fresh.loaded.repo);
    assert_eq!(
        format!("{:?}", reused.findings),
        format!("{:?}", fresh.findings),
        "{step}: the findings differ from a fresh session's"
    );
    assert_eq!(
        format!("{:?}", reused.problems),
        format!("{:?}", fresh.problems),
        "{step}: the problems differ from a fresh session's"
    );
}

#[test]
fn an_editors_lints_after_edits_are_a_fresh_sessions() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    common::copy_dir(&corpus.join(REPO), &repo);
    commit_all(&repo);
    let repo = repo.canonicalize().unwrap();
    let component = std::fs::read_to_string(repo.join(COMPONENT)).unwrap();
    let release = std::fs::read_to_string(repo.join(RELEASE)).unwrap();
    let kustomization = std::fs::read_to_string(repo.join(KUSTOMIZATION)).unwrap();
    let steps = [
        (
            "the component edited",
            vec![(
                COMPONENT,
                edited(&component, "instances: 3", "instances: 1"),
            )],
        ),
        (
            "a HelmRelease edited too",
            vec![
                (
                    COMPONENT,
                    edited(&component, "instances: 3", "instances: 1"),
                ),
                (
                    RELEASE,
                    edited(&release, "TZ: America/Edmonton", "TZ: America/Toronto"),
                ),
            ],
        ),
        (
            // Read by the build, pointed into by none of what it keeps.
            "a resource dropped from the kustomization",
            vec![(
                KUSTOMIZATION,
                edited(&kustomization, "  - ./pvc.yaml\n", ""),
            )],
        ),
        (
            "all taken back",
            vec![
                (COMPONENT, component.clone()),
                (RELEASE, release.clone()),
                (KUSTOMIZATION, kustomization.clone()),
            ],
        ),
    ];
    for watched in [true, false] {
        let mut editor = session(&repo, watched);
        editor.analyse(HashMap::new()).unwrap();
        for (step, buffers) in &steps {
            let overlay: HashMap<PathBuf, String> = buffers
                .iter()
                .map(|(path, text)| (PathBuf::from(path), text.clone()))
                .collect();
            let analysis = editor.analyse(overlay.clone()).unwrap();
            let reused = analysis.reused.as_deref().unwrap_or("");
            assert!(
                !reused.starts_with("0 builds"),
                "{step}: no build was reused ({reused}): nothing incremental is compared"
            );
            let step = format!("{step} (watched: {watched})");
            assert_fresh(&step, &repo, &overlay, &analysis);
        }
    }
}
