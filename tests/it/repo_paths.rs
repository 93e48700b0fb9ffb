//! Paths from the repository root: a lint of the `kubernetes` directory of
//! a git repository names `kubernetes/apps/…` in every format, as GitHub
//! (annotations, code scanning) and editors resolve paths from the
//! repository's top level; the repository's configuration applies.

use crate::common;

use std::path::Path;

/// The example repo as the `kubernetes` directory of a git repository.
fn subfolder_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(&common::example_repo(), &dir.path().join("kubernetes"));
    common::git(dir.path(), &["init", "-q"]);
    dir
}

/// The report of a run from `cwd` that finds something.
fn report_text(cwd: &Path, args: &[&str]) -> String {
    let out = common::lint(cwd, args);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn every_format_names_files_from_the_repository_root() {
    let repo = subfolder_repo();
    for format in ["human", "json", "sarif", "github"] {
        let from_top = report_text(repo.path(), &["kubernetes", "-o", format]);
        // The same from inside the subdirectory.
        let from_inside = report_text(&repo.path().join("kubernetes"), &["-o", format]);
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
        let out = common::lint(repo.path(), &["kubernetes", "-o", "json"]);
        common::report(&out)
            .findings
            .into_iter()
            .map(|f| f.location.path)
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
