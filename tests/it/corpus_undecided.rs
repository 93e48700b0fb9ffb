//! What the rules could not decide on the corpus, line by line: every
//! undecided line names an object the repository holds, and every
//! `key K of Kind/ns/name` it cites is a key that object holds, so the
//! user is sent to the place where the missing fact lives. The corpus as
//! it stands runs Authentik releases the rules do not ask about, so the
//! repositories are also read with Authentik bumped to 2025.10.1, and the
//! rule fixtures (small repositories made to be undecided) are read too.

use crate::common;

use homelab_lint::model::Model;
use homelab_lint::rules::{self, engine};
use homelab_lint::source::flux::substitute;
use homelab_lint::source::repo;

/// The corpus repositories, and copies (under `tmp`) of the two that run
/// Authentik releases the rules do not ask about, bumped to 2025.10.1.
fn corpus_and_bumped(tmp: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut dirs = common::corpus_repos();
    for (repo, file, from) in [
        (
            "bjw-s-labs__home-ops",
            "kubernetes/main/apps/security/authentik/app/helmrelease.yaml",
            "version: 2024.2.0",
        ),
        (
            "buroa__k8s-gitops",
            "kubernetes/apps/home/authentik/app/helmrelease.yaml",
            "version: 2023.3.1",
        ),
    ] {
        let Some(corpus) = common::corpus() else {
            break;
        };
        let copy = tmp.join(format!("{repo}-bumped"));
        common::copy_dir(&corpus.join(repo), &copy);
        common::edit(&copy, file, from, "version: 2025.10.1");
        dirs.push(copy);
    }
    dirs
}

#[test]
fn undecided_lines_name_real_objects_and_keys() {
    let object_ref =
        regex::Regex::new(r"\b([A-Z][A-Za-z]+/[a-z0-9][a-z0-9.-]*(?:/[a-z0-9][a-z0-9.-]*)?)")
            .unwrap();
    let key_ref = regex::Regex::new(r"key (\S+) of ([A-Z][A-Za-z]+/\S+?)[,:)]?(?:\s|$)").unwrap();
    let absent_claim = regex::Regex::new(r"claim (\S+) is not in the repository").unwrap();
    let absent_class =
        regex::Regex::new(r"storage class (\S+) is not declared in the repository").unwrap();
    let flux_ks = regex::Regex::new(r"Flux Kustomization ([a-z0-9.-]+/[a-z0-9.-]+)").unwrap();
    let hidden_vars = regex::Regex::new(
        r"the variables of Flux Kustomization ([a-z0-9.-]+)/([a-z0-9.-]+) may (?:set|do) where the repository does not show",
    )
    .unwrap();
    let claim_unless =
        regex::Regex::new(r"claim (\S+) is the name of the PersistentVolumeClaim at (\S+):(\d+):(\d+) unless Flux variable (\w+) is set")
            .unwrap();
    let mut listed = Vec::new();
    let mut problems = Vec::new();
    let bumped = tempfile::tempdir().unwrap();
    let mut dirs = corpus_and_bumped(bumped.path());
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules");
    for rule in std::fs::read_dir(&fixtures).unwrap() {
        let cases = rule.unwrap().path().join("does_not_fire");
        for case in std::fs::read_dir(cases).into_iter().flatten() {
            let case = case.unwrap().path();
            if case.is_dir() && !case.join("head").is_dir() && !case.join("repo").is_dir() {
                dirs.push(case);
            }
        }
    }
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let loaded = repo::load(&dir, Default::default());
        let model = Model::new(&loaded);
        let ids: Vec<String> = loaded.objects.iter().map(|o| o.id()).collect();
        let outcome = engine::evaluate(&model, &rules::builtin());
        for u in &outcome.undecided {
            let line = format!("{name}: {}: {}: {}", u.rule, u.subject, u.reason);
            if !ids.contains(&u.subject) {
                problems.push(format!("{line}\n  subject is no object of the repository"));
            }
            for m in object_ref.captures_iter(&u.reason) {
                let id = &m[1];
                // `Secret/x` of an envFrom names a Secret that may be
                // made by a SealedSecret or ExternalSecret target.
                if id.matches('/').count() == 2 && !ids.iter().any(|i| i == id) {
                    problems.push(format!("{line}\n  {id} is no object of the repository"));
                }
            }
            for m in key_ref.captures_iter(&u.reason) {
                let (key, id) = (&m[1], m[2].trim_end_matches([',', ':', ')']));
                let holds = (0..loaded.objects.len())
                    .filter(|&r| model.object(r).id() == id)
                    .any(|r| model.data_entries(r).iter().any(|(k, _)| k == key));
                if !holds {
                    problems.push(format!("{line}\n  {id} holds no key {key}"));
                }
            }
            // A fact said to be missing from the repository must be: a
            // claim or class the tool only failed to reach (another Flux
            // tree, an unresolved variable) needs its own reason.
            for m in absent_claim.captures_iter(&u.reason) {
                if loaded
                    .objects
                    .iter()
                    .any(|o| o.kind() == "PersistentVolumeClaim" && o.name() == &m[1])
                {
                    problems.push(format!(
                        "{line}
  claim {} is in the repository",
                        &m[1]
                    ));
                }
            }
            for m in absent_class.captures_iter(&u.reason) {
                if m[1].contains("${")
                    || loaded
                        .objects
                        .iter()
                        .any(|o| o.kind() == "StorageClass" && o.name() == &m[1])
                {
                    problems.push(format!(
                        "{line}
  class {} is not simply undeclared",
                        &m[1]
                    ));
                }
            }
            if u.reason.contains("no default class is declared")
                && loaded.objects.iter().any(|o| {
                    o.kind() == "StorageClass"
                        && o.root
                            .path(&[
                                "metadata",
                                "annotations",
                                "storageclass.kubernetes.io/is-default-class",
                            ])
                            .and_then(|n| n.as_str())
                            == Some("true")
                })
            {
                problems.push(format!(
                    "{line}
  a default class is declared"
                ));
            }
            // A claim named by its place must be a claim written there
            // whose name is still the variable's text.
            for m in claim_unless.captures_iter(&u.reason) {
                let line_no: u32 = m[3].parse().unwrap();
                let there = loaded.objects.iter().any(|o| {
                    let name = o.root.path(&["metadata", "name"]);
                    o.kind() == "PersistentVolumeClaim"
                        && name.is_some_and(|n| {
                            n.span().line == line_no
                                && loaded.files.sources.location(n.span()).starts_with(&m[2])
                                && n.as_str()
                                    .is_some_and(|t| t.contains(&format!("${{{}", &m[5])))
                        })
                });
                if !there {
                    problems.push(format!(
                        "{line}\n  no claim named by {} at {}:{}",
                        &m[5], &m[2], &m[3]
                    ));
                }
            }
            for m in flux_ks.captures_iter(&u.reason) {
                if !ids.iter().any(|i| *i == format!("Kustomization/{}", &m[1])) {
                    problems.push(format!(
                        "{line}
  no Flux Kustomization {}",
                        &m[1]
                    ));
                }
            }
            // Variables said to be possibly defined out of sight must be
            // so for that Kustomization's own postBuild (a source the
            // repository does not hold, or one whose keys it does not list),
            // or a deployed webhook must add variables.
            for m in hidden_vars.captures_iter(&u.reason) {
                let lookup = |kind: &str, namespace: &str, name: &str| {
                    loaded.objects.iter().find(|o| {
                        o.namespace() == Some(namespace)
                            && homelab_lint::source::data::provides(o) == Some((kind, name))
                    })
                };
                let mutated = loaded
                    .objects
                    .iter()
                    .any(|o| homelab_lint::source::flux::webhook::deploys(o.kind(), &o.root));
                let open = mutated
                    || loaded
                        .objects
                        .iter()
                        .filter(|o| {
                            o.kind() == "Kustomization"
                                && o.namespace() == Some(&m[1])
                                && o.name() == &m[2]
                        })
                        .any(|ks| {
                            substitute::collect_vars(&loaded.files.sources, ks, &lookup)
                                .0
                                .incomplete
                        });
                if !open {
                    problems.push(format!(
                        "{line}\n  the variables of {}/{} are all in the repository",
                        &m[1], &m[2]
                    ));
                }
            }
            listed.push(line);
        }
    }
    // The list, for a reader of the test log (cargo test -- --nocapture).
    println!("{} undecided line(s):\n{}", listed.len(), listed.join("\n"));
    assert!(
        !listed.is_empty(),
        "nothing undecided anywhere: the check checked nothing"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every ExternalSecret on the corpus that renders keys from
/// `templateFrom` has them read: the corpus holds two. kopia's ConfigMap
/// comes from a configMapGenerator; cross-seed's generator names a file
/// the repository does not hold (its Flux Kustomization fails), so its
/// ConfigMap is not there and the reason says so.
#[test]
fn template_from_on_the_corpus_is_read() {
    let mut read = Vec::new();
    for dir in common::corpus_repos() {
        let loaded = repo::load(&dir, Default::default());
        let model = Model::new(&loaded);
        for r in model.of_kind("external-secrets.io", "ExternalSecret") {
            let es = model.object(r);
            if es
                .root
                .path(&["spec", "target", "template", "templateFrom"])
                .is_none()
            {
                continue;
            }
            let keys: Vec<String> = model.data_entries(r).into_iter().map(|(k, _)| k).collect();
            read.push(format!(
                "{}: {}: keys [{}], {}",
                dir.file_name().unwrap().to_string_lossy(),
                es.id(),
                keys.join(", "),
                model
                    .keys_complete(r)
                    .err()
                    .unwrap_or_else(|| "complete".into())
            ));
        }
    }
    if common::corpus().is_none() {
        return;
    }
    assert_eq!(
        read,
        [
            "bjw-s-labs__home-ops: ExternalSecret/downloads/cross-seed: keys [], it renders key config.js from templateFrom ConfigMap downloads/cross-seed-config-tpl, which is not in the repository (it may exist only in the cluster)",
            "bjw-s-labs__home-ops: ExternalSecret/storage/kopia-b2-repo: keys [repository.config], complete",
        ]
    );
}

/// Every line of `-v` output on the corpus that says an object "is not
/// in the repository" names it with its namespace, and the object is
/// truly missing: looked up by kind, namespace and name among the
/// objects the repository renders (after Flux's substitution), a Secret
/// also where a SealedSecret or ExternalSecret makes it.
#[test]
fn not_in_the_repository_lines_on_the_corpus_are_true() {
    use homelab_lint::source::data;
    let qualified = regex::Regex::new(
        r"\b([A-Z][A-Za-z]+) ([a-z0-9][a-z0-9.-]*)/([a-z0-9][a-z0-9.-]*)\b[^;]*?,? (?:which )?is not in the repository",
    )
    .unwrap();
    let claim =
        regex::Regex::new(r"claim (\S+) is not in the repository in namespace ([a-z0-9.-]+)")
            .unwrap();
    // The forms that named no namespace: `Secret/x is not…`, `Secret x,
    // which is not…`.
    let unqualified = regex::Regex::new(
        r"\b(?:Secret|ConfigMap|OCIRepository|HelmChart|GitRepository)(?:/| )[a-z0-9][a-z0-9.-]*,? (?:which )?is not in the repository",
    )
    .unwrap();
    let mut checked = 0;
    let mut problems = Vec::new();
    let bumped = tempfile::tempdir().unwrap();
    for dir in corpus_and_bumped(bumped.path()) {
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        let out = common::lint(&dir, &[".", "-v"]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let loaded = repo::load(&dir, Default::default());
        let exists = |kind: &str, ns: &str, obj: &str| {
            loaded.objects.iter().any(|o| match kind {
                "Secret" | "ConfigMap" => {
                    data::provides(o)
                        == Some((
                            if kind == "Secret" {
                                "Secret"
                            } else {
                                "ConfigMap"
                            },
                            obj,
                        ))
                        && data::provided_in(o, ns)
                }
                _ => o.kind() == kind && o.name() == obj && o.namespace() == Some(ns),
            })
        };
        for line in text.lines().filter(|l| l.contains("not in the repository")) {
            let line = format!("{name}: {line}");
            if unqualified.is_match(&line) {
                problems.push(format!("{line}\n  names an object without its namespace"));
            }
            for m in qualified.captures_iter(&line) {
                checked += 1;
                if exists(&m[1], &m[2], &m[3]) {
                    problems.push(format!(
                        "{line}\n  {} {}/{} is in the repository",
                        &m[1], &m[2], &m[3]
                    ));
                }
            }
            for m in claim.captures_iter(&line) {
                checked += 1;
                if exists("PersistentVolumeClaim", &m[2], &m[1]) {
                    problems.push(format!(
                        "{line}\n  claim {}/{} is in the repository",
                        &m[2], &m[1]
                    ));
                }
            }
        }
    }
    if common::corpus().is_none() {
        return;
    }
    println!("{checked} object(s) said to be missing, each checked");
    assert!(
        checked > 0,
        "no line named a missing object: the check checked nothing"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
