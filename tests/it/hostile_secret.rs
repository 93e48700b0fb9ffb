//! No secret is ever printed: values that reach other objects from a
//! Secret (Flux postBuild `substituteFrom` a Secret, HelmRelease
//! `valuesFrom` a Secret, `secretKeyRef`, a Secret's own fields read by a
//! rule) appear in no output format, subcommand or verbosity: not in
//! labels, messages, evidence, snippets, `--diff`, SARIF, annotations,
//! the inventory or the problems substitution reports. ConfigMap values
//! are still shown.

use crate::common;
use crate::support;

use std::path::Path;

use support::limited;

/// Each planted secret starts with this; nothing printed may hold it.
pub(crate) const PLANTED: &str = "Zq9";

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The example repository with its cluster settings in a Secret, and
/// secrets routed every way the repository can route them.
fn leaky_example() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    common::copy_dir(&common::example_repo(), dir);
    let edit = |file: &str, from: &str, to: &str| common::edit(dir, file, from, to);
    edit(
        "clusters/home/cluster-settings.yaml",
        "kind: ConfigMap\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\ndata:\n",
        &format!(
            "kind: Secret\nmetadata:\n  name: cluster-settings\n  namespace: flux-system\nstringData:\n  PLANTED: {PLANTED}-planted-Xv\n  BROKEN: \"{PLANTED}: broken: Xv\"\n  MAX_AGE: \"600\"\n"
        ),
    );
    edit(
        "clusters/home/cluster-settings.yaml",
        "CLUSTER_DOMAIN: home.example.org",
        &format!("CLUSTER_DOMAIN: {PLANTED}-domain-Xv.org"),
    );
    edit(
        "clusters/home/apps.yaml",
        "      - kind: ConfigMap\n        name: cluster-settings",
        "      - kind: Secret\n        name: cluster-settings",
    );
    edit(
        "apps/authentik/helmrelease.yaml",
        "          value: \"600\"",
        "          value: \"${MAX_AGE}\"\n        - name: FROM_SECRET\n          valueFrom:\n            secretKeyRef: {name: authentik-values, key: env}",
    );
    edit(
        "apps/authentik/helmrelease.yaml",
        "  values:\n",
        "  valuesFrom:\n    - kind: Secret\n      name: authentik-values\n  values:\n",
    );
    edit(
        "apps/authentik/kustomization.yaml",
        "  - ./helmrelease.yaml",
        "  - ./helmrelease.yaml\n  - ./values.yaml\n  - ./leaky.yaml",
    );
    write(
        dir,
        "apps/authentik/values.yaml",
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: authentik-values\nstringData:\n  env: {PLANTED}-env-Xv\n  values.yaml: |\n    leak: {PLANTED}-helm-Xv\n    nested:\n      deep: {PLANTED}-deep-Xv\n"
        ),
    );
    write(
        dir,
        "apps/authentik/leaky.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: leaky\ndata:\n  a: ${PLANTED}\n  b: x-${APP}-${PLANTED}\n  shown: ${APP}-visible\n",
    );
    // A Secret right after the lines the flagship finding's fix edits:
    // the diff's context lines.
    let database = dir.join("apps/authentik/database.yaml");
    let mut text = std::fs::read_to_string(&database).unwrap();
    text.push_str(&format!(
        "---\nkind: Secret\nstringData: {{pw: {PLANTED}-near-Xv}}\napiVersion: v1\nmetadata: {{name: near}}\n"
    ));
    std::fs::write(&database, text).unwrap();
    // A Secret's value that breaks the object it is substituted into: its
    // own Flux Kustomization, whose render then fails.
    edit(
        "clusters/home/kustomization.yaml",
        "  - ./apps.yaml",
        "  - ./apps.yaml\n  - ./broken.yaml",
    );
    write(
        dir,
        "clusters/home/broken.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: broken\n  namespace: flux-system\nspec:\n  interval: 1h\n  path: ./apps/broken\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n  postBuild:\n    substituteFrom:\n      - kind: Secret\n        name: cluster-settings\n",
    );
    write(
        dir,
        "apps/broken/kustomization.yaml",
        "resources: [cm.yaml]\n",
    );
    write(
        dir,
        "apps/broken/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n  c: ${BROKEN}\n",
    );
    tmp
}

fn rule(dir: &Path, id: &str, steps: &str) {
    write(
        dir,
        &format!("{id}.yaml"),
        &format!(
            "id: {id}\ntitle: A rule that shows a value\nseverity: warning\ncategory: correctness\nmessage: >-\n  value shown\nwhat: >-\n  Shows a value.\nwhy: >-\n  To test masking.\nexample: |\n  data: {{}}\nuseInstead: |\n  data: {{}}\nremediation: >-\n  None.\nreferences:\n  - https://kubernetes.io/docs/concepts/configuration/secret/\nmatch:\n{steps}"
        ),
    );
}

/// Rules whose labels show the values a secret reaches.
fn rules() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let object = |kind: &str, path: &str| {
        format!(
            "  - object:\n      group: \"\"\n      kind: {kind}\n      where: [{{path: \"{path}\", is: set}}]\n"
        )
    };
    rule(dir, "shows-a", &object("ConfigMap", "$.data.a"));
    rule(dir, "shows-b", &object("ConfigMap", "$.data.b"));
    rule(dir, "shows-shown", &object("ConfigMap", "$.data.shown"));
    rule(
        dir,
        "shows-secret",
        &object("Secret", "$.stringData.PLANTED"),
    );
    let app = "  - app:\n      charts: [authentik]\n";
    rule(
        dir,
        "shows-env",
        &format!("{app}  - env: {{name: FROM_SECRET, is: set}}\n"),
    );
    rule(
        dir,
        "shows-max-age",
        &format!("{app}  - env: {{name: AUTHENTIK_POSTGRESQL__CONN_MAX_AGE, is: set}}\n"),
    );
    rule(
        dir,
        "shows-values",
        &format!("{app}  - values: {{path: \"$.leak\", is: set}}\n"),
    );
    rule(
        dir,
        "shows-host",
        &format!("{app}  - values: {{path: \"$.server.ingress.hosts[0]\", is: set}}\n"),
    );
    tmp
}

fn assert_hidden(what: &str, run: &limited::Run) -> String {
    let out = format!("{}{}", run.stdout_text(), run.stderr);
    assert!(!out.contains(PLANTED), "{what} shows a secret:\n{out}");
    out
}

#[test]
fn values_from_secrets_appear_in_no_output() {
    let repo = leaky_example();
    let rules = rules();
    let (repo, rules) = (
        repo.path().to_str().unwrap(),
        rules.path().to_str().unwrap(),
    );
    for format in [
        "human", "json", "yaml", "concise", "sarif", "github", "markdown",
    ] {
        let run = limited::run_linter(&[repo, "--no-probe", "--rules", rules, "-o", format, "-vv"]);
        let out = assert_hidden(format, &run);
        for id in [
            "shows-a",
            "shows-b",
            "shows-secret",
            "shows-env",
            "shows-values",
        ] {
            assert!(out.contains(id), "{format}: no finding {id}:\n{out}");
        }
        if format == "human" {
            for label in [
                "$.data.a: <redacted: 14 bytes>",
                "$.data.b: <redacted: 26 bytes>",
                "$.stringData.PLANTED: <redacted: 14 bytes>",
                "FROM_SECRET=<redacted: 10 bytes>",
                "AUTHENTIK_POSTGRESQL__CONN_MAX_AGE=<redacted: 3 bytes>",
                "$.leak: <redacted: 11 bytes>",
                "storage class <redacted: 10 bytes>",
                // A ConfigMap's value is still shown.
                "$.data.shown: authentik-visible",
            ] {
                assert!(out.contains(label), "no label {label:?}:\n{out}");
            }
            // The substitution that breaks the object says so, without
            // the text.
            assert!(
                out.contains("with a value from a Secret (not shown)"),
                "{out}"
            );
        }
    }
    // The fix's diff: its context may be a Secret's lines.
    let run = limited::run_linter(&[
        repo,
        "--no-probe",
        "--rules",
        rules,
        "--diff",
        "--unsafe-fixes",
    ]);
    let out = assert_hidden("--diff", &run);
    assert!(
        out.contains("+++ b/apps/authentik/database.yaml") && out.contains(" stringData: {pw: *"),
        "no diff, or not its context:\n{out}"
    );

    for extra in [&[][..], &["--provenance"][..]] {
        let mut args = vec!["inventory", repo, "-o", "json"];
        args.extend(extra);
        let out = assert_hidden("inventory", &limited::run_linter(&args));
        for shown in [
            // Helm values from a Secret, substituted values, keys kept.
            "\"leak\": \"<redacted: 11 bytes>\"",
            "\"deep\": \"<redacted: 11 bytes>\"",
            "\"a\": \"<redacted: 14 bytes>\"",
            "\"b\": \"<redacted: 26 bytes>\"",
            "\"shown\": \"authentik-visible\"",
        ] {
            assert!(out.contains(shown), "inventory lacks {shown}:\n{out}");
        }
    }
}

/// A Secret that kustomize's secretGenerator makes from a literal and an
/// env file, substituted by Flux and read by Helm: its values are
/// written in plain files, which no mask of a Secret's text finds.
#[test]
fn values_from_generated_secrets_appear_in_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    write(
        dir,
        "ks.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: vars, namespace: flux-system}\nspec:\n  path: ./vars\n  sourceRef: {kind: GitRepository, name: flux-system}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app, namespace: flux-system}\nspec:\n  path: ./app\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: Secret, name: vars}\n",
    );
    write(
        dir,
        "vars/kustomization.yaml",
        &format!(
            "namespace: flux-system\ngeneratorOptions: {{disableNameSuffixHash: true}}\nsecretGenerator:\n  - name: vars\n    envs: [vars.env]\n    literals: [LIT={PLANTED}-literal-Xv]\n"
        ),
    );
    write(
        dir,
        "vars/vars.env",
        &format!("# comment\nPW={PLANTED}-env-Xv\n"),
    );
    write(
        dir,
        "app/kustomization.yaml",
        "resources: [cm.yaml]\nnamespace: default\ngeneratorOptions: {disableNameSuffixHash: true}\nsecretGenerator:\n  - name: values\n    files: [values.yaml]\n",
    );
    write(
        dir,
        "app/values.yaml",
        &format!("leak: {PLANTED}-values-Xv\n"),
    );
    write(
        dir,
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: ${PW}\n  b: ${LIT}\n---\napiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app}\nspec:\n  chart: {spec: {chart: app, sourceRef: {kind: HelmRepository, name: r}}}\n  valuesFrom:\n    - {kind: Secret, name: values, valuesKey: values.yaml}\n",
    );
    let rules = tempfile::tempdir().unwrap();
    for key in ["a", "b"] {
        rule(
            rules.path(),
            &format!("shows-{key}"),
            &format!(
                "  - object:\n      group: \"\"\n      kind: ConfigMap\n      where: [{{path: \"$.data.{key}\", is: set}}]\n"
            ),
        );
    }
    rule(
        rules.path(),
        "shows-generated",
        "  - object:\n      group: \"\"\n      kind: Secret\n      where: [{path: \"$.data.*\", is: set}]\n",
    );
    let (repo, rules) = (dir.to_str().unwrap(), rules.path().to_str().unwrap());
    for format in ["human", "json", "sarif"] {
        let run = limited::run_linter(&[repo, "--no-probe", "--rules", rules, "-o", format]);
        let out = assert_hidden(format, &run);
        for id in ["shows-a", "shows-b", "shows-generated"] {
            assert!(out.contains(id), "{format}: no finding {id}:\n{out}");
        }
    }
    let run = limited::run_linter(&["inventory", repo, "-o", "json"]);
    let out = assert_hidden("inventory", &run);
    assert!(out.contains("\"leak\": \"<redacted: 13 bytes>\""), "{out}");
}

/// Secret `flux-system/vars` in `sec/`, each key of `vars` holding
/// `{PLANTED}-{word}-value`, applied by Flux Kustomization `sec`; and
/// Flux Kustomization `apps`, which renders `apps/` with it as
/// `substituteFrom`.
fn secret_vars(root: &Path, vars: &[(&str, &str)]) {
    let data: String = vars
        .iter()
        .map(|(key, word)| format!("  {key}: {PLANTED}-{word}-value\n"))
        .collect();
    write(
        root,
        "sec/secret.yaml",
        &format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: vars, namespace: flux-system}}\nstringData:\n{data}"
        ),
    );
    for (name, path, post) in [
        ("sec", "./sec", ""),
        (
            "apps",
            "./apps",
            "  postBuild:\n    substituteFrom:\n      - {kind: Secret, name: vars}\n",
        ),
    ] {
        write(
            root,
            &format!("flux/{name}.yaml"),
            &format!(
                "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n{post}"
            ),
        );
    }
}

/// A Flux Kustomization whose `spec.path` its parent substitutes from a
/// Secret's variable, a path that is no directory: the finding showed
/// the path as its length, but the coverage's reason why it was not
/// rendered (JSON, SARIF, `inventory`) printed it whole.
#[test]
fn a_path_substituted_from_a_secret_is_hidden_in_why_it_is_not_rendered() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    secret_vars(root, &[("DIR", "dir")]);
    write(
        root,
        "apps/ks.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: child, namespace: flux-system}\nspec:\n  path: ./apps/${DIR}\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
    let dir = root.to_str().unwrap();
    for format in ["human", "json", "sarif"] {
        let run = limited::run_linter(&["-o", format, dir]);
        let out = assert_hidden(format, &run);
        assert!(out.contains("child"), "{format}: {out}");
    }
    let inv = limited::run_linter(&["inventory", dir]);
    let out = assert_hidden("inventory", &inv);
    assert!(
        out.contains("its path <redacted: 18 bytes> is not a directory of the repository"),
        "{out}"
    );
}

/// A ConfigMap and a Flux Kustomization whose names and namespaces Flux
/// substitutes from Secret `flux-system/vars` (values starting with
/// [`PLANTED`]), in a repository at `root`; the ConfigMap also reads an
/// undefined variable, a finding that names it.
pub(crate) fn secret_named_objects(root: &Path) {
    secret_vars(root, &[("NAME", "name"), ("NS", "ns")]);
    write(
        root,
        "apps/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${NAME}\n  namespace: ${NS}\ndata:\n  a: ${UNDEFINED_HERE}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: \"${NAME}\", namespace: flux-system}\nspec:\n  path: ./nowhere\n  targetNamespace: ${NS}\n  sourceRef: {kind: GitRepository, name: flux-system}\n",
    );
}

/// Objects whose name and namespace Flux substitutes from a Secret: the
/// name is copied into identities, messages, step details and coverage
/// reasons, where no mark of where it came from follows. Each print shows
/// the variable and its Secret instead of the value.
#[test]
fn a_name_substituted_from_a_secret_appears_in_no_output() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    secret_named_objects(root);
    let dir = root.to_str().unwrap();
    for format in [
        "human", "concise", "json", "yaml", "sarif", "github", "markdown",
    ] {
        let run = limited::run_linter(&["--no-probe", "-o", format, "-vv", dir]);
        let out = assert_hidden(format, &run);
        for id in ["flux-variable-undefined", "flux-kustomization-path-missing"] {
            assert!(out.contains(id), "{format}: no finding {id}:\n{out}");
        }
    }
    let run = limited::run_linter(&["--no-probe", "-o", "concise", dir]);
    let out = assert_hidden("concise", &run);
    assert!(
        out.contains(
            "ConfigMap/<NS from Secret flux-system/vars>/app-<NAME from Secret flux-system/vars>"
        ),
        "the name is not shown by its variable:\n{out}"
    );
    for args in [
        &["inventory", dir][..],
        &["inventory", "-o", "yaml", dir][..],
        &["inventory", "--provenance", dir][..],
    ] {
        let out = assert_hidden("inventory", &limited::run_linter(args));
        assert!(
            out.contains("app-<NAME from Secret flux-system/vars>"),
            "{args:?}: no row for the object:\n{out}"
        );
    }
}
