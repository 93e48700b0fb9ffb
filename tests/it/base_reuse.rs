//! `--base` loads the base commit reusing what the working tree's load
//! parsed and built (src/source/reuse.rs). The reused load must be the
//! load from scratch, exactly: on every corpus repository and on the
//! roots fixtures, with one HelmRelease edited (most builds reused), and
//! with files added, removed and edited at once (file ids shift, so
//! reuse must notice and build afresh), the objects with every span,
//! the problems, fates, renders, the source map and the findings of a
//! lint are compared. As `--base` does, the base load reads the working
//! tree's texts of the files git says are unchanged instead of their blobs.

use crate::common;

use std::path::{Path, PathBuf};

use homelab_lint::model::Model;
use homelab_lint::source::repo::{self, Repo};
use homelab_lint::source::reuse::{self, Lent};
use homelab_lint::source::{Files, Limits, commit_tree, git};
use homelab_lint::yaml::FileId;

/// Everything a load produced, spans included, in a comparable form.
pub(crate) fn everything(repo: &Repo, rules: &[homelab_lint::rules::Rule]) -> Vec<String> {
    let mut out = vec![
        format!("{:?}", repo.objects),
        format!("{:?}", repo.issues),
        format!("{:?}", repo.skipped),
        format!("{:?}", repo.fates),
        format!("{:?}", repo.flux),
        format!("{:?}", repo.coverage),
        format!("{:?}", repo.local_sources),
    ];
    let mut inputs: Vec<String> = repo.files.inputs.iter().map(|i| format!("{i:?}")).collect();
    inputs.sort();
    out.push(format!("{inputs:?}"));
    let mut built: Vec<_> = repo.files.built_dirs.iter().collect();
    built.sort();
    out.push(format!("{built:?}"));
    let sources = &repo.files.sources;
    out.extend((0..sources.len()).map(|i| {
        let f = sources.get(FileId(i as u32));
        format!("file {i}: {} {:?}", f.path.display(), f.text)
    }));
    let lint = homelab_lint::rules::lint(&Model::new(repo), rules);
    out.push(format!("{:?}", lint.findings));
    out.push(format!("{:?}", lint.issues));
    out
}

pub(crate) fn commit_all(dir: &Path) {
    common::git(dir, &["init", "-q"]);
    common::git(dir, &["add", "-A"]);
    common::git(dir, &["commit", "-q", "-m", "base"]);
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with('.') || e.file_type().unwrap().is_symlink() {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else if name.ends_with(".yaml") || name.ends_with(".yml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The base commit of `dir` loaded with what a recorded load of the
/// working tree lends, and loaded from scratch; with the number of
/// builds reused.
fn base_twice(dir: &Path) -> (Repo, Repo, Lent) {
    base_twice_with(dir, Limits::default())
}

/// [`base_twice`], with what was reused (its counts).
fn base_twice_with(dir: &Path, limits: Limits) -> (Repo, Repo, Lent) {
    let mut head = repo::load_files(reuse::recording(Files::new(dir, limits)));
    let lent = Lent::of(&mut head.files).expect("the load recorded");
    let mut reused = repo::load_files(borrowing(dir, limits, lent));
    let lent = reuse::take_lent(&mut reused.files).unwrap();
    let fresh = repo::load_files(Files::in_commit(dir, tree(dir), limits));
    (reused, fresh, lent)
}

fn tree(dir: &Path) -> homelab_lint::source::commit_tree::Tree {
    commit_tree::checkout(dir, "HEAD").unwrap().tree
}

/// The files of `dir`'s HEAD as the base load of `--base HEAD` reads them.
fn borrowing(dir: &Path, limits: Limits, lent: Lent) -> Files {
    let head = commit_tree::checkout(dir, "HEAD").unwrap().commit;
    let changed = git::changed_since(dir, &head).expect("git lists the changes");
    let files = reuse::borrowing(Files::in_commit(dir, tree(dir), limits), lent);
    reuse::sharing_unchanged(files, &changed)
}

pub(crate) fn assert_same(name: &str, reused: &Repo, fresh: &Repo) {
    let rules = homelab_lint::pipeline::load_rules(&[]).unwrap();
    let (a, b) = (everything(reused, &rules), everything(fresh, &rules));
    assert_eq!(a.len(), b.len(), "{name}: the source maps differ in length");
    for (a, b) in a.iter().zip(&b) {
        if a != b {
            let at = a.bytes().zip(b.bytes()).position(|(x, y)| x != y);
            let at = at.unwrap_or(a.len().min(b.len()));
            let near = |t: &str| {
                let bytes = &t.as_bytes()[at.saturating_sub(120)..(at + 120).min(t.len())];
                String::from_utf8_lossy(bytes).to_string()
            };
            panic!(
                "{name}: the reused base load differs from the fresh one:\n  reused: …{}…\n  fresh:  …{}…",
                near(a),
                near(b)
            );
        }
    }
}

fn cases() -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = common::corpus_repos()
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().to_string(), p))
        .collect();
    let roots = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots");
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(roots)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    fixtures.sort();
    out.extend(fixtures.into_iter().map(|p| {
        (
            format!("roots/{}", p.file_name().unwrap().to_string_lossy()),
            p,
        )
    }));
    out
}

#[test]
fn one_helmrelease_edited_reuses_the_other_builds_and_loads_as_from_scratch() {
    if !common::git_available() {
        return;
    }
    let (mut builds_reused, mut renders_reused) = (false, false);
    for (name, src) in cases() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        common::copy_dir(&src, &dir);
        commit_all(&dir);
        let files = yaml_files(&dir);
        let Some(edited) = files
            .iter()
            .find(|p| p.file_name().is_some_and(|n| n == "helmrelease.yaml"))
            .or(files.first())
        else {
            continue;
        };
        // A value changes: the objects of its build must differ.
        let text = std::fs::read_to_string(edited).unwrap();
        let changed = text.replacen("interval: ", "interval: 7", 1);
        std::fs::write(edited, format!("{changed}\n# edited\n")).unwrap();
        let (reused, fresh, lent) = base_twice(&dir);
        assert_same(&name, &reused, &fresh);
        builds_reused |= lent.reused_builds > 0;
        renders_reused |= lent.reused_renders > 0;
    }
    assert!(
        builds_reused && renders_reused,
        "no build or no render was reused anywhere: the test compares nothing incremental"
    );
}

#[test]
fn files_added_removed_and_edited_load_as_from_scratch() {
    if !common::git_available() {
        return;
    }
    // The fixtures and the smallest corpus repository: reuse is mostly
    // refused here, and a fresh build is what the first test already
    // compares on every repository.
    let all = cases();
    let smallest = all
        .iter()
        .filter(|(name, _)| !name.starts_with("roots/"))
        .min_by_key(|(_, p)| yaml_files(p).len())
        .cloned();
    let few = all
        .into_iter()
        .filter(|(name, _)| name.starts_with("roots/"));
    for (name, src) in few.chain(smallest) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        common::copy_dir(&src, &dir);
        commit_all(&dir);
        let files = yaml_files(&dir);
        if files.len() < 3 {
            continue;
        }
        // Removed in the working tree: a file the base commit still has.
        std::fs::remove_file(&files[files.len() - 1]).unwrap();
        // Edited: a kustomization or resource the base reads differently.
        let edited = &files[files.len() / 3];
        let mut text = b"# edited\n".to_vec();
        text.extend(std::fs::read(edited).unwrap());
        std::fs::write(edited, text).unwrap();
        // Added in a directory sorted first: every later file id shifts.
        let added = dir.join("aaa-added");
        std::fs::create_dir_all(&added).unwrap();
        std::fs::write(
            added.join("configmap.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: added\ndata:\n  a: b\n",
        )
        .unwrap();
        let (reused, fresh, _) = base_twice(&dir);
        assert_same(&name, &reused, &fresh);
    }
}

/// git names a change by the path it tracks: a file reached through a
/// symlinked directory is read from the commit when its target changed,
/// though no change names the path through the link; a blob over the
/// size limit is refused unread, as on disk, whether or not it changed.
#[test]
fn a_path_through_a_symlink_and_blobs_over_the_limit_load_as_from_scratch() {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    let write = |rel: &str, text: &str| {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    let cm = |value: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: {value}\n")
    };
    let padded = format!("{}{}", "# padding\n".repeat(500), cm("big"));
    write("apps/real/configmap.yaml", &cm("one"));
    write("apps/big/huge.yaml", &padded);
    write("apps/big/shrinks.yaml", &padded);
    std::os::unix::fs::symlink("real", dir.join("apps/link")).unwrap();
    commit_all(&dir);
    write("apps/real/configmap.yaml", &cm("two"));
    write("apps/big/shrinks.yaml", &cm("small"));
    let limits = Limits {
        yaml: homelab_lint::yaml::Limits {
            max_bytes: 4096,
            ..Default::default()
        },
        ..Limits::default()
    };
    let (reused, fresh, _) = base_twice_with(&dir, limits);
    assert_same("symlink and limits", &reused, &fresh);
    for name in ["huge.yaml", "shrinks.yaml"] {
        assert!(
            reused
                .issues
                .iter()
                .any(|i| i.path.ends_with(name) && i.message.contains("over the limit")),
            "{name} is over the limit in the commit: {:?}",
            reused.issues
        );
    }
    // The working tree's load has read the file through the link too, as
    // a kustomization naming it would: its text there is the changed one.
    let mut head = repo::load_files(reuse::recording(Files::new(&dir, limits)));
    let (_, text) = head
        .files
        .text(Path::new("apps/link/configmap.yaml"))
        .unwrap();
    assert!(text.contains("a: two"));
    let mut files = borrowing(&dir, limits, Lent::of(&mut head.files).unwrap());
    for path in ["apps/link/configmap.yaml", "apps/real/configmap.yaml"] {
        let (_, text) = files.text(Path::new(path)).unwrap();
        assert!(
            text.contains("a: one"),
            "{path} is read as committed: {text}"
        );
    }
}

/// A gotk-sync cluster of four Flux Kustomizations: `flux-system`
/// (./clusters/main, with the cluster-settings ConfigMap), `apps`
/// (./apps, substituteFrom cluster-settings and cluster-secrets) and the
/// two it applies:
/// `one` (targetNamespace, an inline patch, a patch file, substituteFrom
/// cluster-settings) and `two` (inline substitute, a variable nothing
/// defines). `edits` replace texts in the files as written.
fn renders_fixture(dir: &Path, edits: &[(&str, &str, &str)]) {
    let ks = |name: &str, path: &str, spec: &str| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  \
             name: {name}\n  namespace: flux-system\nspec:\n  interval: 10m\n  path: {path}\n  \
             prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n{spec}"
        )
    };
    let cm = |name: &str, data: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n{data}")
    };
    let settings = "  postBuild:\n    substituteFrom:\n      - kind: ConfigMap\n        \
                    name: cluster-settings\n";
    let files: Vec<(&str, String)> = vec![
        (
            "clusters/main/flux-system/gotk-sync.yaml",
            format!(
                "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  \
                 name: flux-system\n  namespace: flux-system\nspec:\n  interval: 1m\n  \
                 url: https://example.com/home-ops\n---\n{}",
                ks("flux-system", "./clusters/main", "")
            ),
        ),
        (
            "clusters/main/flux-system/kustomization.yaml",
            "resources:\n  - gotk-sync.yaml\n".into(),
        ),
        (
            "clusters/main/settings.yaml",
            cm("cluster-settings", "  DOMAIN: example.com\n").replace(
                "name: cluster-settings",
                "name: cluster-settings\n  namespace: flux-system",
            ),
        ),
        (
            "clusters/main/secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: cluster-secrets\n  \
             namespace: flux-system\nstringData:\n  TOKEN: plain\n"
                .into(),
        ),
        (
            "clusters/main/apps.yaml",
            ks(
                "apps",
                "./apps",
                &format!("{settings}      - kind: Secret\n        name: cluster-secrets\n"),
            ),
        ),
        (
            "apps/kustomization.yaml",
            "resources:\n  - one/ks.yaml\n  - two/ks.yaml\n".into(),
        ),
        (
            "apps/one/ks.yaml",
            ks(
                "one",
                "./apps/one/app",
                &format!(
                    "  targetNamespace: one\n  patches:\n    - patch: |-\n        \
                     - op: add\n          path: /data/inline\n          value: first\n      \
                     target:\n        kind: ConfigMap\n{settings}"
                ),
            ),
        ),
        (
            "apps/one/app/kustomization.yaml",
            "resources:\n  - cm.yaml\n".into(),
        ),
        ("apps/one/app/cm.yaml", cm("one", "  host: app.${DOMAIN}\n")),
        ("apps/one/app/patch.yaml", cm("one", "  from-file: first\n")),
        (
            "apps/one/near.yaml",
            cm("near", "  DOMAIN: near.example.com\n")
                .replace("name: near", "name: near\n  namespace: elsewhere"),
        ),
        (
            "apps/two/ks.yaml",
            ks(
                "two",
                "./apps/two/app",
                "  postBuild:\n    substitute:\n      NAME: two\n",
            ),
        ),
        (
            "apps/two/app/kustomization.yaml",
            "resources:\n  - cm.yaml\n".into(),
        ),
        (
            "apps/two/app/cm.yaml",
            cm("two", "  name: ${NAME}\n  unset: ${UNSET}\n"),
        ),
    ];
    for (path, mut text) in files {
        for (at, from, to) in edits.iter().filter(|(at, _, _)| *at == path) {
            assert!(text.contains(from), "{at}: no {from:?} in {text}");
            text = text.replace(from, to);
        }
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// The fixture committed with `base` edits and in the working tree with
/// `head` edits, its base loaded with and without reuse: the two loads
/// must be the same, and `renders` of the four renders reused.
fn renders_reused(
    name: &str,
    base: &[(&str, &str, &str)],
    head: &[(&str, &str, &str)],
    limits: Limits,
    renders: usize,
) {
    if !common::git_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    renders_fixture(&dir, base);
    commit_all(&dir);
    renders_fixture(&dir, head);
    let (reused, fresh, lent) = base_twice_with(&dir, limits);
    assert_eq!(fresh.flux.len(), 4, "{name}: {:?}", fresh.flux);
    assert!(
        fresh.flux.iter().all(|r| r.outcome.is_complete()),
        "{name}: {:?}",
        fresh.flux
    );
    assert_same(name, &reused, &fresh);
    assert_eq!(lent.reused_renders, renders, "{name}: renders reused");
}

#[test]
fn renders_are_reused_where_nothing_they_read_changed() {
    // `two`'s build changes; the other three render from what they did.
    renders_reused(
        "two's ConfigMap",
        &[],
        &[("apps/two/app/cm.yaml", "name: ${NAME}", "name: x${NAME}")],
        Limits::default(),
        3,
    );
}

#[test]
fn a_changed_flux_kustomization_is_rendered_afresh() {
    // `one` changed: `apps` (whose build holds it) and `one` render again.
    for (what, from, to) in [
        (
            "targetNamespace",
            "targetNamespace: one",
            "targetNamespace: uno",
        ),
        ("inline patch", "value: first", "value: second"),
    ] {
        renders_reused(
            what,
            &[],
            &[("apps/one/ks.yaml", from, to)],
            Limits::default(),
            2,
        );
    }
}

#[test]
fn a_changed_file_nothing_reads_reuses_every_render() {
    // patch.yaml is listed by no kustomization, and a Flux patch names
    // no file (fluxcd/pkg apis/kustomize Patch: patch, target).
    renders_reused(
        "unread file",
        &[],
        &[(
            "apps/one/app/patch.yaml",
            "from-file: first",
            "from-file: second",
        )],
        Limits::default(),
        4,
    );
}

#[test]
fn a_changed_substitution_source_is_looked_up_afresh() {
    // `apps` and `one` are given the same objects, but look up another
    // cluster-settings; `flux-system`'s build holds it.
    renders_reused(
        "substituteFrom",
        &[],
        &[("clusters/main/settings.yaml", "example.com", "example.org")],
        Limits::default(),
        1,
    );
}

#[test]
fn another_copy_of_a_substitution_source_is_looked_up_afresh() {
    // `apps` also applies a ConfigMap nearer to `one` than cluster-settings
    // is: in the working tree it is cluster-settings in `one`'s namespace,
    // so `one` reads it; in the base commit it is in another namespace, and
    // `one`, given the same objects, reads the other copy.
    let near = |ns: &'static str| {
        [
            (
                "apps/kustomization.yaml",
                "  - two/ks.yaml\n",
                "  - two/ks.yaml\n  - one/near.yaml\n",
            ),
            ("apps/one/near.yaml", "name: near", "name: cluster-settings"),
            ("apps/one/near.yaml", "namespace: elsewhere", ns),
        ]
    };
    renders_reused(
        "which copy",
        &near("namespace: elsewhere"),
        &near("namespace: flux-system"),
        Limits::default(),
        2,
    );
}

#[test]
fn a_source_named_by_an_encrypted_variable_is_compared() {
    // `two` names an optional substituteFrom source by a variable of
    // `apps`'s Secret. In the working tree that Secret is SOPS-encrypted:
    // the source `two` reads may be any, so `${UNSET}` in it is not known
    // to be undefined; in the base commit the Secret is plain and names a
    // source the cluster does not hold. `one` names nothing from it and
    // is reused.
    let names = (
        "apps/two/ks.yaml",
        "      NAME: two\n",
        "      NAME: two\n    substituteFrom:\n      - kind: ConfigMap\n        \
         name: ${TOKEN}\n        optional: true\n",
    );
    renders_reused(
        "inherited",
        &[names],
        &[
            names,
            (
                "clusters/main/secret.yaml",
                "  TOKEN: plain\n",
                "  TOKEN: plain\nsops:\n  version: 3.8.1\n",
            ),
        ],
        Limits::default(),
        1,
    );
}

#[test]
fn the_substitution_budget_left_is_compared() {
    // `two` renders before `one` and, in the working tree, spends most of
    // the run's growth budget: `one`'s substitution then exceeds it there
    // and not in the base commit.
    let domain = format!("{}.com", "a".repeat(40));
    let both = (
        "clusters/main/settings.yaml",
        "example.com",
        domain.as_str(),
    );
    let name = format!("NAME: {}", "x".repeat(190));
    let limits = Limits {
        flux: homelab_lint::source::flux::Limits {
            max_subst_growth_bytes: 200,
            ..Default::default()
        },
        ..Limits::default()
    };
    renders_reused(
        "budget",
        &[both],
        &[both, ("apps/two/ks.yaml", "NAME: two", &name)],
        limits,
        1,
    );
}

#[test]
fn a_bootstrap_input_substituted_from_a_changed_source_is_made_afresh() {
    if !common::git_available() {
        return;
    }
    // flux-instance's sync path is `clusters/${CLUSTER}`, CLUSTER read
    // from a ConfigMap: the base commit syncs another directory than the
    // working tree, though the HelmRelease and its Kustomization are alike.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots/substituted-sync");
    common::copy_dir(&src, &dir);
    let apps = dir.join("kubernetes/clusters/home/apps");
    let ks = apps.join("flux-instance.yaml");
    let text = std::fs::read_to_string(&ks).unwrap();
    let from = "    substitute:\n      CLUSTER: home\n";
    assert!(text.contains(from));
    let to = "    substituteFrom:\n      - kind: ConfigMap\n        name: cluster-vars\n";
    std::fs::write(&ks, text.replace(from, to)).unwrap();
    let vars = |cluster: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cluster-vars\n  \
             namespace: flux-system\ndata:\n  CLUSTER: {cluster}\n"
        )
    };
    std::fs::write(apps.join("vars.yaml"), vars("home")).unwrap();
    commit_all(&dir);
    std::fs::write(apps.join("vars.yaml"), vars("away")).unwrap();
    let (reused, fresh, lent) = base_twice(&dir);
    assert!(
        fresh
            .flux
            .iter()
            .any(|r| r.path == Some(PathBuf::from("kubernetes/clusters/home/bootstrap"))),
        "the base commit syncs clusters/home: {:?}",
        fresh.flux
    );
    assert_same("bootstrap input", &reused, &fresh);
    assert!(lent.reused_builds > 0, "the flux-instance build is reused");
}

/// A generator's input is read whole, not as a text of the source map:
/// when git says it is unchanged, a recorded build's read of it is taken
/// as the working tree's (its blob is not read); when it changed, the
/// build that reads it runs afresh and generates the commit's data.
#[test]
fn a_changed_generator_input_is_read_afresh() {
    if !common::git_available() {
        return;
    }
    let generator = [(
        "apps/two/app/kustomization.yaml",
        "resources:\n  - cm.yaml\n",
        "resources:\n  - cm.yaml\nconfigMapGenerator:\n  - name: gen\n    files:\n      - \
         config.txt\n",
    )];
    // patch.yaml changes in both, so that the base is loaded: nothing
    // reads it, every build is the same.
    let patch = (
        "apps/one/app/patch.yaml",
        "from-file: first",
        "from-file: second",
    );
    for (name, head_input, builds) in [("unchanged", "a: 1\n", 4), ("changed", "a: 2\n", 3)] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("repo");
        let input = dir.join("apps/two/app/config.txt");
        renders_fixture(&dir, &generator);
        std::fs::write(&input, "a: 1\n").unwrap();
        commit_all(&dir);
        renders_fixture(&dir, &[generator[0], patch]);
        std::fs::write(&input, head_input).unwrap();
        let (reused, fresh, lent) = base_twice(&dir);
        assert_same(name, &reused, &fresh);
        let generated = reused
            .objects
            .iter()
            .find(|o| o.kind() == "ConfigMap" && o.name().starts_with("gen-"))
            .expect("the generated ConfigMap");
        assert_eq!(
            generated.root.str_at(&["data", "config.txt"]),
            Some("a: 1\n"),
            "{name}: the commit's input"
        );
        assert_eq!(lent.reused_builds, builds, "{name}: builds reused");
    }
}
