//! Every corpus repository lints the same on one core as on two: each is
//! under the size where a run uses every core (`homelab_lint::cores`), so
//! the default keeps it on one, and `RAYON_NUM_THREADS=2` asks for two
//! (the builds and Flux steps on forks, the parse, rules and report on
//! both workers).

use crate::common;

use std::process::{Command, Output};

fn lint(repo: &std::path::Path, threads: Option<&str>, args: &[&str]) -> Output {
    let mut cmd = Command::new(common::BIN);
    cmd.current_dir(repo)
        .args(["--no-probe", "-v"])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("KUBECONFIG")
        .env_remove("RAYON_NUM_THREADS");
    if let Some(threads) = threads {
        cmd.env("RAYON_NUM_THREADS", threads);
    }
    cmd.output().expect("run the linter binary")
}

#[test]
fn every_corpus_repo_lints_the_same_on_one_core_and_on_two() {
    let repos = common::corpus_repos();
    for repo in &repos {
        let name = repo.file_name().unwrap().to_string_lossy();
        for format in [&["-o", "json"][..], &[]] {
            let one = lint(repo, None, format);
            let two = lint(repo, Some("2"), format);
            assert_eq!(
                one.status.code(),
                two.status.code(),
                "{name} {format:?}: exit"
            );
            assert!(
                one.stdout == two.stdout,
                "{name} {format:?}: the output differs between one core and two"
            );
            assert!(
                one.stderr == two.stderr,
                "{name} {format:?}: stderr differs between one core and two:\n{}\n---\n{}",
                String::from_utf8_lossy(&one.stderr),
                String::from_utf8_lossy(&two.stderr)
            );
        }
    }
}
