//! The same answer wherever the linter runs: from any folder of a git
//! repository it renders the whole repository and reports exactly the
//! root run's findings that have a place under that folder, named from
//! the root; and it reads what git holds (the index, a commit) and
//! leaves out what git ignores, as Flux gets the repository from git.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use homelab_lint::report::json::Finding;

use crate::common::{self, BIN, rules};

fn run(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .current_dir(cwd)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("HOMELAB_LINT_CONFIG")
        .output()
        .unwrap()
}

fn findings(out: &Output) -> Vec<Finding> {
    common::report(out).findings
}

/// The paths of every place of a finding.
fn places(f: &Finding) -> Vec<PathBuf> {
    std::iter::once(&f.location)
        .chain(&f.related)
        .map(|l| PathBuf::from(&l.path))
        .collect()
}

fn under(f: &Finding, folder: &Path) -> bool {
    places(f).iter().any(|p| p.starts_with(folder))
}

/// A git copy of a corpus repository (the corpus itself is read-only).
fn git_copy(repo: &Path, into: &Path) -> PathBuf {
    let copy = into.join(repo.file_name().unwrap());
    common::copy_dir(repo, &copy);
    common::git(&copy, &["init", "-q"]);
    common::git(&copy, &["add", "-A"]);
    common::git(&copy, &["commit", "-q", "-m", "import"]);
    copy
}

/// The folders from the root down to an app folder (one with a `ks.yaml`
/// or an `app` folder), at each level the subfolder holding the most of
/// the root run's findings.
fn levels_down(root: &Path, all: &[Finding]) -> Vec<PathBuf> {
    let mut levels = Vec::new();
    let mut here = PathBuf::new();
    for _ in 0..8 {
        let dir = root.join(&here);
        if !here.as_os_str().is_empty()
            && (dir.join("ks.yaml").is_file() || dir.join("app").is_dir())
        {
            break;
        }
        let mut subs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().unwrap().is_dir())
            .map(|e| here.join(e.file_name()))
            .filter(|p| !p.to_string_lossy().starts_with('.') && !p.ends_with(".git"))
            .collect();
        subs.sort();
        let Some(next) = subs
            .iter()
            .max_by_key(|s| {
                (
                    all.iter().filter(|f| under(f, s)).count(),
                    std::cmp::Reverse(*s),
                )
            })
            .cloned()
        else {
            break;
        };
        levels.push(next.clone());
        here = next;
    }
    levels
}

#[test]
fn every_folder_down_to_an_app_reports_the_root_findings_under_it() {
    let repos: Vec<PathBuf> = common::corpus_repos()
        .into_iter()
        .filter(|r| {
            let name = r.file_name().unwrap().to_string_lossy();
            ["bjw-s-labs", "buroa", "joryirving", "onedr0p"]
                .iter()
                .any(|n| name.starts_with(n))
        })
        .collect();
    if repos.is_empty() {
        return;
    }
    assert!(repos.len() >= 3, "{repos:?}");
    let tmp = tempfile::tempdir().unwrap();
    for repo in repos {
        let copy = git_copy(&repo, tmp.path());
        let whole = findings(&run(&copy, &["-o", "json"]));
        let levels = levels_down(&copy, &whole);
        assert!(levels.len() >= 3, "{}: {levels:?}", repo.display());
        for (depth, folder) in levels.iter().enumerate() {
            let want: Vec<&Finding> = whole.iter().filter(|f| under(f, folder)).collect();
            // From inside the folder, and (every other level) naming it
            // from the root: the same report.
            let out = if depth % 2 == 0 {
                run(&copy.join(folder), &["-o", "json"])
            } else {
                run(&copy, &[folder.to_str().unwrap(), "-o", "json"])
            };
            let got = findings(&out);
            let got: Vec<&Finding> = got.iter().collect();
            assert_eq!(
                got,
                want,
                "{} from {}: {}",
                repo.display(),
                folder.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            // Every path on stderr is from the root too.
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !stderr.contains("no Kubernetes manifests found"),
                "{stderr}"
            );
        }
    }
}

/// The example repo as a git repository with one commit.
fn example_git(dir: &Path) -> PathBuf {
    let repo = dir.join("home-ops");
    common::copy_dir(&common::example_repo(), &repo);
    common::git(&repo, &["init", "-q"]);
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-q", "-m", "init"]);
    repo
}

/// A kustomization lists a file that is on disk but gitignored: Flux never
/// gets it, so its build fails, and the lint says so (and -v names it).
#[test]
fn a_gitignored_file_a_kustomization_lists_is_the_build_failure_flux_will_hit() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = example_git(tmp.path());
    let before = run(&repo, &["-o", "json"]);
    assert!(!rules(&before).contains(&"flux-kustomization-build-fails".to_string()));
    std::fs::write(
        repo.join("apps/authentik/local.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: local\n  namespace: security\n",
    )
    .unwrap();
    common::edit(
        &repo,
        "apps/authentik/kustomization.yaml",
        "  - ./helmrelease.yaml",
        "  - ./helmrelease.yaml\n  - ./local.yaml",
    );
    // Untracked but not ignored: a plain lint reads it.
    let untracked = run(&repo, &["-o", "json"]);
    assert!(!rules(&untracked).contains(&"flux-kustomization-build-fails".to_string()));
    std::fs::write(repo.join(".gitignore"), "local.yaml\n").unwrap();
    let ignored = run(&repo, &["-o", "json", "-v"]);
    assert!(
        rules(&ignored).contains(&"flux-kustomization-build-fails".to_string()),
        "{}",
        String::from_utf8_lossy(&ignored.stderr)
    );
    let stderr = String::from_utf8_lossy(&ignored.stderr);
    assert!(
        stderr.contains("ignored: apps/authentik/local.yaml: git ignores it"),
        "{stderr}"
    );
}

const KEEPALIVE: &str = "authentik-persistent-connections-without-keepalives";
const HELMRELEASE: &str = "apps/authentik/helmrelease.yaml";

/// `--staged` reads the index: what the working tree changes beside it
/// (an unstaged undo, an untracked file) does not count.
#[test]
fn staged_reads_the_index_not_a_dirty_working_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = example_git(tmp.path());
    // Committed with connections closed after each request: no keepalive finding.
    common::edit(&repo, HELMRELEASE, "value: \"600\"", "value: \"0\"");
    common::git(&repo, &["commit", "-q", "-am", "close connections"]);
    let committed = rules(&run(&repo, &["-o", "json"]));
    assert!(!committed.contains(&KEEPALIVE.to_string()), "{committed:?}");
    // The keepalive finding is added in the index, then undone on disk only.
    let text = std::fs::read_to_string(repo.join(HELMRELEASE)).unwrap();
    common::edit(&repo, HELMRELEASE, "value: \"0\"", "value: \"600\"");
    common::git(&repo, &["add", HELMRELEASE]);
    std::fs::write(repo.join(HELMRELEASE), &text).unwrap();
    std::fs::write(repo.join("apps/authentik/broken.yaml"), "a: [").unwrap();
    let disk = run(&repo, &["-o", "json"]);
    let staged = run(&repo, &["--staged", "-o", "json"]);
    assert_eq!(rules(&disk), committed);
    assert!(
        rules(&staged).contains(&KEEPALIVE.to_string()),
        "{}",
        String::from_utf8_lossy(&staged.stderr)
    );
    // The untracked broken file is not in the index: no warning about it.
    assert!(!String::from_utf8_lossy(&staged.stderr).contains("broken.yaml"));
    assert!(String::from_utf8_lossy(&disk.stderr).contains("broken.yaml"));
    // The index against HEAD: only what the index changes.
    let new = run(&repo, &["--staged", "--base", "HEAD", "-o", "json"]);
    assert_eq!(rules(&new), [KEEPALIVE]);
    // --ref reads a commit: the committed tree, whatever the index holds.
    assert_eq!(
        rules(&run(&repo, &["--ref", "HEAD", "-o", "json"])),
        committed
    );
}

/// `--base main` on a branch made before main fixed something compares
/// with their merge-base: main's fix is not the branch's new finding.
#[test]
fn base_compares_with_the_merge_base_not_the_tip() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = example_git(tmp.path());
    common::git(&repo, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(
        repo.join("apps/authentik/note.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: note\n",
    )
    .unwrap();
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-q", "-m", "unrelated"]);
    common::git(&repo, &["checkout", "-q", "main"]);
    // main fixes the keepalive finding after the branch was made.
    assert!(rules(&run(&repo, &["-o", "json"])).contains(&KEEPALIVE.to_string()));
    common::edit(&repo, HELMRELEASE, "value: \"600\"", "value: \"0\"");
    common::git(&repo, &["commit", "-q", "-am", "main closes connections"]);
    common::git(&repo, &["checkout", "-q", "feature"]);
    let out = run(&repo, &["--base", "main", "-o", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!rules(&out).contains(&KEEPALIVE.to_string()), "{stderr}");
    assert!(stderr.contains("merge-base"), "{stderr}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// A repository without a commit, or a base with no shared history:
/// every finding is new, and the exit status is the findings', not 2.
#[test]
fn without_a_shared_commit_every_finding_is_new() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("new");
    common::copy_dir(&common::example_repo(), &repo);
    common::git(&repo, &["init", "-q"]);
    common::git(&repo, &["add", "-A"]);
    let plain = rules(&run(&repo, &["-o", "json"]));
    for args in [
        &["--base", "HEAD", "-o", "json"][..],
        &["--staged", "--base", "HEAD", "-o", "json"][..],
    ] {
        let out = run(&repo, args);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        assert_eq!(rules(&out), plain);
        assert!(String::from_utf8_lossy(&out.stderr).contains("every finding is new"));
    }
    common::git(&repo, &["commit", "-q", "-m", "first"]);
    common::git(&repo, &["checkout", "-q", "--orphan", "other"]);
    common::git(&repo, &["commit", "-q", "-m", "unrelated history"]);
    let out = run(&repo, &["--base", "main", "-o", "json"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(rules(&out), plain);
    assert!(String::from_utf8_lossy(&out.stderr).contains("shares no history"));
}

/// `.homelab-lint.yaml` is looked for from the folder reported up to the
/// root; the closest one wins, and its globs may be from its own folder.
#[test]
fn the_closest_configuration_from_the_folder_up_applies() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("mono");
    common::copy_dir(&common::example_repo(), &repo.join("kubernetes"));
    common::git(&repo, &["init", "-q"]);
    let all = rules(&run(&repo, &["-o", "json"]));
    assert!(!all.is_empty());
    let first = all[0].clone();
    // At the root: disables the first rule.
    std::fs::write(
        repo.join(".homelab-lint.yaml"),
        format!("rules:\n  disable: [{first}]\n"),
    )
    .unwrap();
    let apps = repo.join("kubernetes/apps");
    assert!(!rules(&run(&apps, &["-o", "json"])).contains(&first));
    // Closer, in kubernetes/: ignores its own apps/** instead.
    std::fs::write(
        repo.join("kubernetes/.homelab-lint.yaml"),
        "ignorePaths: ['apps/**']\n",
    )
    .unwrap();
    let from_apps = run(&apps, &["-o", "json"]);
    assert!(
        findings(&from_apps)
            .iter()
            .all(|f| !f.location.path.starts_with("kubernetes/apps/")),
        "{}",
        String::from_utf8_lossy(&from_apps.stdout)
    );
    // From the root, the root's file applies.
    assert!(!rules(&run(&repo, &["-o", "json"])).contains(&first));
}

/// `(problems, files skipped)` of the load's summary line on stderr:
/// `loaded 9 objects from 12 files; 1 file skipped; 3 problems`.
fn load_counts(stderr: &str) -> (usize, usize) {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("loaded "))
        .unwrap_or_else(|| panic!("no summary line: {stderr}"));
    let parts: Vec<&str> = line.split("; ").collect();
    let first = |part: &str| -> usize { part.split(' ').next().unwrap().parse().unwrap() };
    (first(parts[2]), first(parts[1]))
}

/// Run from a folder, the summaries count what is shown for that folder:
/// the problems and skipped files of the rest of the repository are
/// neither listed nor counted, nor are its suppressed findings and its
/// files in the coverage line.
#[test]
fn the_summaries_of_a_folder_count_what_is_listed_for_it() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = example_git(tmp.path());
    // Outside infrastructure/storage/: a file that is no YAML (a
    // problem) and a suppressed finding; inside, a file its kustomization
    // does not list (skipped).
    std::fs::write(repo.join("infrastructure/broken.yaml"), "a: [\n").unwrap();
    std::fs::write(
        repo.join("infrastructure/storage/unlisted.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: unlisted, namespace: default}\n",
    )
    .unwrap();
    common::edit(
        &repo,
        HELMRELEASE,
        "value: \"600\"",
        &format!("value: \"600\" # homelab-lint: ignore {KEEPALIVE} -- measured elsewhere"),
    );
    common::git(&repo, &["add", "-A"]);
    common::git(&repo, &["commit", "-q", "-m", "elsewhere"]);
    let whole = run(&repo, &["-o", "concise", "-v"]);
    let (problems, _) = load_counts(&String::from_utf8_lossy(&whole.stderr));
    assert!(problems > 0, "the broken file is a problem");
    assert!(String::from_utf8_lossy(&whole.stdout).contains("1 suppressed"));

    let folder = run(
        &repo.join("infrastructure/storage"),
        &["-o", "concise", "-v", "."],
    );
    let stderr = String::from_utf8_lossy(&folder.stderr);
    let (problems, skipped) = load_counts(&stderr);
    let warnings = stderr
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .count();
    let listed = stderr
        .lines()
        .filter(|l| l.starts_with("skipped: "))
        .count();
    assert_eq!(problems, warnings, "{stderr}");
    assert_eq!((skipped, listed), (1, 1), "{stderr}");
    let stdout = String::from_utf8_lossy(&folder.stdout);
    assert!(!stdout.contains("suppressed"), "{stdout}");
    // The coverage line is of the folder alone.
    assert!(
        stdout.contains("1 of 1 manifest files rendered through Flux; other files: 1 not-listed"),
        "{stdout}"
    );
}
