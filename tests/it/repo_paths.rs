//! Paths from the repository root: a lint of the `kubernetes` directory of
//! a git repository names `kubernetes/apps/…` in every format, as GitHub
//! (annotations, code scanning) and editors resolve paths from the
//! repository's top level; the repository's configuration applies.

use crate::common;

use std::path::Path;
use std::process::Command;

use crate::common::BIN;

/// The example repo as the `kubernetes` directory of a git repository.
fn subfolder_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::example_repo(), &dir.path().join("kubernetes"));
    common::git(dir.path(), &["init", "-q"]);
    dir
}

fn lint(cwd: &Path, args: &[&str]) -> String {
    let out = Command::new(BIN)
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_format_names_files_from_the_repository_root() {
    let repo = subfolder_repo();
    for format in ["human", "json", "sarif", "github"] {
        let from_top = lint(repo.path(), &["kubernetes", "-o", format]);
        // The same from inside the subdirectory.
        let from_inside = lint(&repo.path().join("kubernetes"), &["-o", format]);
        assert_eq!(from_top, from_inside, "{format}");
        assert!(
            !from_top.contains("apps/") || from_top.contains("kubernetes/apps/"),
            "{format}: {from_top}"
        );
        insta::assert_snapshot!(format!("subfolder_{format}"), from_top);
    }
}

#[test]
fn the_repository_configuration_applies_to_a_subfolder_lint() {
    let repo = subfolder_repo();
    let paths = || -> Vec<String> {
        let out = Command::new(BIN)
            .current_dir(repo.path())
            .args(["kubernetes", "-o", "json"])
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["location"]["path"].as_str().unwrap().to_string())
            .collect()
    };
    let authentik = |ps: &[String]| {
        ps.iter()
            .filter(|p| p.starts_with("kubernetes/apps/authentik/"))
            .count()
    };
    let before = paths();
    assert!(authentik(&before) > 0, "{before:?}");
    std::fs::write(
        repo.path().join(".homelab-lint.yaml"),
        "ignorePaths: ['kubernetes/apps/authentik/**']\n",
    )
    .unwrap();
    let after = paths();
    assert_eq!(authentik(&after), 0, "{after:?}");
}
