//! Small repositories, one per case, rendered the way
//! Flux applies them (roots, sources, remote and missing entries), each
//! pinned with its objects, issues and the fate of its files.

use std::path::Path;

use homelab_lint::source::Limits;
use homelab_lint::source::coverage::Outcome;
use homelab_lint::source::repo::{self, Repo};
use homelab_lint::yaml::Origin;

fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let r = repo::load(dir.path(), Default::default());
    (dir, r)
}

fn names(r: &Repo, kind: &str) -> Vec<String> {
    let mut out: Vec<String> = r
        .objects
        .iter()
        .filter(|o| o.kind() == kind)
        .map(|o| o.name().to_string())
        .collect();
    out.sort();
    out
}

const GIT_ROOT: &str = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: ssh://git@github.com/example/home-ops, ref: {branch: main}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: flux-system, namespace: flux-system}\nspec:\n  path: ./clusters/home\n  sourceRef: {kind: GitRepository, name: flux-system}\n";

fn ks(name: &str, path: &str, source: &str) -> String {
    let (kind, src) = source.split_once('/').unwrap();
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: {path}\n  sourceRef: {{kind: {kind}, name: {src}}}\n"
    )
}

fn cm(name: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\n")
}

/// Flux's own manifests from an OCIRepository with `path: ./`
/// are not this repository, which therefore renders once.
#[test]
fn oci_repository_with_root_path_beside_the_git_repository_renders_the_repo_once() {
    let flux = ks("flux", "./", "OCIRepository/flux-manifests");
    let apps = ks("apps", "./apps", "GitRepository/flux-system");
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/flux.yaml", &flux),
        ("clusters/home/apps.yaml", &apps),
        ("apps/a.yaml", &cm("a")),
    ]);
    assert_eq!(names(&r, "ConfigMap"), ["a"]);
    // flux-system is the root, applied by `flux bootstrap`: loaded as written.
    assert_eq!(names(&r, "Kustomization"), ["apps", "flux", "flux-system"]);
    let flux = r.flux.iter().find(|f| f.name == "flux").unwrap();
    assert!(
        matches!(&flux.outcome, Outcome::OtherSource(why) if why.contains("OCIRepository/flux-manifests")),
        "{:?}",
        flux.outcome
    );
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    // The three files of clusters/home (the root builds itself) and apps/a.yaml.
    assert_eq!((r.coverage.rendered, r.coverage.lost), (4, 0));
}

const GENERATOR: &str = "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  sources:\n  - {alias: repo, kind: GitRepository, name: flux-system}\n  artifacts:\n  - name: web\n    copy:\n    - {from: \"@repo/apps/web/\", to: \"@artifact/apps/web/\"}\n  - name: globbed\n    copy:\n    - {from: \"@repo/apps/other/*.yaml\", to: \"@artifact/\"}\n";

/// A Flux Kustomization that builds from an ExternalArtifact
/// renders the repository directory the generator's copy rule names; one
/// whose artifact cannot be mapped is an issue naming it.
#[test]
fn external_artifacts_map_back_to_the_directories_their_generator_copies() {
    let web = ks("web", "./apps/web", "ExternalArtifact/web");
    let globbed = ks("globbed", "./", "ExternalArtifact/globbed");
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/generator.yaml", GENERATOR),
        ("clusters/home/web.yaml", &web),
        ("clusters/home/globbed.yaml", &globbed),
        ("apps/web/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("apps/web/cm.yaml", &cm("web")),
        ("apps/other/x.yaml", &cm("x")),
    ]);
    // x is in no kustomization: loaded as written, not through Flux.
    assert_eq!(names(&r, "ConfigMap"), ["web", "x"]);
    let x = r.objects.iter().find(|o| o.name() == "x").unwrap();
    assert!(x.chain.is_empty(), "{:?}", x.chain);
    let web = r
        .objects
        .iter()
        .find(|o| o.name() == "web" && o.kind() == "ConfigMap");
    assert_eq!(&*web.unwrap().chain[0].detail, "flux-system/web");
    assert_eq!(r.issues.len(), 1, "{:?}", r.issues);
    assert_eq!(r.issues[0].path, "clusters/home/globbed.yaml");
    assert!(
        r.issues[0].message.contains("apps/other/*.yaml"),
        "{}",
        r.issues[0]
    );
}

/// A remote CRD URL and a remote generator file are issues at
/// their lines naming the Flux Kustomization; the local objects render.
#[test]
fn remote_crd_and_remote_generator_file_beside_local_resources() {
    let apps = ks("apps", "./apps", "GitRepository/flux-system");
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/apps.yaml", &apps),
        (
            "apps/kustomization.yaml",
            "resources:\n- https://github.com/x/y/releases/download/v1/crds.yaml\n- cm.yaml\nconfigMapGenerator:\n- name: dashboards\n  files:\n  - https://raw.githubusercontent.com/x/y/main/d.json\n",
        ),
        ("apps/cm.yaml", &cm("local")),
    ]);
    assert_eq!(names(&r, "ConfigMap"), ["local"]);
    let lines: Vec<(u32, bool)> = r
        .issues
        .iter()
        .map(|i| {
            (
                i.line,
                i.message.contains("(Flux Kustomization flux-system/apps)"),
            )
        })
        .collect();
    assert_eq!(lines, [(2, true), (7, true)], "{:?}", r.issues);
    let apps = r.flux.iter().find(|f| f.name == "apps").unwrap();
    assert!(
        matches!(apps.outcome, Outcome::Partial(2)),
        "{:?}",
        apps.outcome
    );
    assert!(
        r.coverage.summary().contains("1 partly rendered"),
        "{}",
        r.coverage.summary()
    );
}

/// A child whose spec.path needs a variable only the cluster
/// holds is an issue naming the variable; the files under it are not
/// silently unreachable.
#[test]
fn unresolvable_path_names_the_variable() {
    let apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./clusters/${CLUSTER}/apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n";
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/apps.yaml", apps),
    ]);
    let issue = r
        .issues
        .iter()
        .find(|i| i.message.contains("${CLUSTER}"))
        .unwrap_or_else(|| panic!("{:?}", r.issues));
    assert_eq!(
        (issue.path.as_str(), issue.line),
        ("clusters/home/apps.yaml", 5)
    );
    assert!(
        r.flux
            .iter()
            .any(|f| f.name == "apps" && matches!(f.outcome, Outcome::NotBuilt(_)))
    );
}

/// A patch file applied as a patch is not "not applied".
#[test]
fn patch_files_have_their_own_fate() {
    let apps = ks("apps", "./apps", "GitRepository/flux-system");
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/apps.yaml", &apps),
        (
            "apps/kustomization.yaml",
            "resources: [cm.yaml]\npatches:\n- path: patch.yaml\n",
        ),
        ("apps/cm.yaml", &cm("a")),
        (
            "apps/patch.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {k: v}\n",
        ),
        ("apps/unused.yaml", &cm("unused")),
    ]);
    let fate = |p: &str| {
        r.fates
            .iter()
            .find(|f| f.path == Path::new(p))
            .map(|f| f.fate.reason())
            .unwrap()
    };
    assert_eq!(
        fate("apps/patch.yaml"),
        "applied as a patch by apps/kustomization.yaml"
    );
    assert_eq!(
        fate("apps/unused.yaml"),
        "not applied: apps/kustomization.yaml does not list it"
    );
    assert_eq!(
        fate("apps/cm.yaml"),
        "rendered through Flux Kustomization flux-system/apps"
    );
}

/// A file below the kustomization that leaves it out, under the path of a
/// Flux Kustomization that kustomization also leaves out: the reason names
/// that Flux Kustomization (listing the file would not apply it).
#[test]
fn file_under_an_unapplied_flux_kustomization_names_it() {
    let apps = ks("apps", "./apps", "GitRepository/flux-system");
    let policies = ks(
        "kyverno-policies",
        "./apps/kyverno/policies",
        "GitRepository/flux-system",
    );
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/apps.yaml", &apps),
        (
            "apps/kustomization.yaml",
            "resources:\n  - ./cm.yaml\n  # - ./kyverno/ks.yaml\n",
        ),
        ("apps/cm.yaml", &cm("a")),
        ("apps/kyverno/ks.yaml", &policies),
        ("apps/kyverno/policies/policy.yaml", &cm("policy")),
    ]);
    let fate = |p: &str| {
        r.fates
            .iter()
            .find(|f| f.path == Path::new(p))
            .map(|f| (f.fate.key(), f.fate.reason()))
            .unwrap()
    };
    let under = "not applied: under the path of Flux Kustomization flux-system/kyverno-policies \
                 (apps/kyverno/ks.yaml:1), which is not applied: apps/kustomization.yaml does \
                 not list it";
    assert_eq!(
        fate("apps/kyverno/policies/policy.yaml"),
        ("unreachable", under.to_string())
    );
    let skipped = r
        .skipped
        .iter()
        .find(|s| s.path == Path::new("apps/kyverno/policies/policy.yaml"))
        .map(|s| s.reason.as_str());
    assert_eq!(skipped, Some(under));
    assert_eq!(
        fate("apps/kyverno/ks.yaml"),
        (
            "not-listed",
            "not applied: apps/kustomization.yaml does not list it".to_string()
        )
    );
}

/// The ConfigMap a postBuild data item reads, after substitution.
fn substituted(r: &Repo, name: &str, key: &str) -> Option<String> {
    r.objects
        .iter()
        .find(|o| o.kind() == "ConfigMap" && o.name() == name)?
        .root
        .path(&["data", key])?
        .scalar_text()
}

/// A substituteFrom ConfigMap written without a namespace
/// is in the namespace its Flux Kustomization's `targetNamespace` places
/// it in (rwlove's cluster-config), so Flux finds it there.
#[test]
fn substitute_from_sees_the_namespace_target_namespace_gives() {
    let settings = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: settings, namespace: flux-system}\nspec:\n  path: ./settings\n  targetNamespace: flux-system\n  sourceRef: {kind: GitRepository, name: flux-system}\n";
    let apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: ConfigMap, name: cluster-config}\n";
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/settings.yaml", settings),
        ("clusters/home/apps.yaml", apps),
        (
            "settings/cluster-config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-config}\ndata:\n  DOMAIN: home.example.org\n",
        ),
        (
            "apps/app.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata:\n  host: app.${DOMAIN}\n",
        ),
    ]);
    assert!(
        !r.issues
            .iter()
            .any(|i| i.message.contains("cluster-config")),
        "{:?}",
        r.issues
    );
    assert_eq!(
        substituted(&r, "app", "host").as_deref(),
        Some("app.home.example.org")
    );
}

/// As in rcdailey's repository, a ClusterExternalSecret selecting every
/// namespace (`namespaceSelectors: [{}]`) makes the substituteFrom Secret
/// in the Kustomization's namespace; one selecting by labels leaves that
/// unknown, and the warning says so.
#[test]
fn substitute_from_a_cluster_external_secret() {
    let ces = |selector: &str| {
        format!(
            "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata: {{name: cluster-secrets}}\nspec:\n  namespaceSelectors:\n    - {selector}\n  externalSecretSpec:\n    target: {{name: cluster-secrets}}\n    data:\n      - secretKey: SECRET_DOMAIN\n        remoteRef: {{key: secret-domain}}\n"
        )
    };
    let apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: Secret, name: cluster-secrets}\n";
    let secrets = ks("secrets", "./secrets", "GitRepository/flux-system");
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata:\n  host: app.${SECRET_DOMAIN}\n";
    for (selector, warning) in [
        ("{}", None),
        (
            "{matchLabels: {secrets: cluster}}",
            Some(
                "may not exist in namespace flux-system: ClusterExternalSecret cluster-secrets makes it only in the namespaces its namespace selectors pick by labels",
            ),
        ),
    ] {
        let ces = ces(selector);
        let (_d, r) = repo(&[
            ("clusters/home/flux-system.yaml", GIT_ROOT),
            ("clusters/home/secrets.yaml", &secrets),
            ("clusters/home/apps.yaml", apps),
            ("secrets/ces.yaml", &ces),
            ("apps/app.yaml", app),
        ]);
        let said: Vec<&str> = r
            .issues
            .iter()
            .filter(|i| i.message.contains("cluster-secrets"))
            .map(|i| i.message.as_str())
            .collect();
        match warning {
            None => assert!(said.is_empty(), "{said:?}"),
            Some(w) => assert!(said.len() == 1 && said[0].contains(w), "{said:?}"),
        }
        // The value is fetched in the cluster: the variable stays unknown.
        assert_eq!(
            substituted(&r, "app", "host").as_deref(),
            Some("app.${SECRET_DOMAIN}")
        );
    }
}

/// As in sulibot's repository, a child whose path holds `${VAR:=default}` is
/// rendered with the default where its parent substitutes; applied by a
/// parent without postBuild, the path reaches Flux as written, and the
/// reason says that rather than that a value is missing.
#[test]
fn a_path_variable_is_unrendered_only_where_no_substitution_reaches_it() {
    let parent = |name: &str, post: &str| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: {name}, namespace: flux-system}}\nspec:\n  path: ./apps\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n{post}"
        )
    };
    let child = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: db, namespace: flux-system}\nspec:\n  path: ./db/app-${MODE:=false}\n  sourceRef: {kind: GitRepository, name: flux-system}\n";
    for (post, rendered) in [
        (
            "  postBuild:\n    substitute: {DOMAIN: example.org}\n",
            true,
        ),
        ("", false),
    ] {
        let apps = parent("apps", post);
        let (_d, r) = repo(&[
            ("clusters/home/flux-system.yaml", GIT_ROOT),
            ("clusters/home/apps.yaml", &apps),
            ("apps/db.yaml", child),
            ("db/app-false/cm.yaml", &cm("db-false")),
        ]);
        let said: Vec<&str> = r
            .issues
            .iter()
            .filter(|i| i.message.contains("${MODE}"))
            .map(|i| i.message.as_str())
            .collect();
        if rendered {
            assert!(said.is_empty(), "{said:?}");
            assert_eq!(names(&r, "ConfigMap"), ["db-false"]);
        } else {
            assert!(
                said.len() == 1
                    && said[0].contains(
                        "reaches Flux as written: Flux Kustomization flux-system/apps \
                         (clusters/home/apps.yaml) applies it without postBuild substitution"
                    ),
                "{said:?}"
            );
        }
        let db = r.flux.iter().find(|f| f.name == "db").unwrap();
        assert_eq!(
            matches!(db.outcome, Outcome::NotBuilt(_)),
            !rendered,
            "{:?}",
            db.outcome
        );
    }
}

/// As in monosense-io's repository, two clusters apply one shared directory
/// of Flux Kustomizations, whose substituteFrom names `cluster-settings`;
/// each cluster's tree holds its own copy of it, and each cluster's render
/// of the one shared ks.yaml reads its own.
#[test]
fn clusters_sharing_a_kustomization_each_read_their_own_settings() {
    let root = |cluster: &str| {
        GIT_ROOT
            .replace(
                "name: flux-system, namespace",
                &format!("name: {cluster}, namespace"),
            )
            .replace("./clusters/home", &format!("./clusters/{cluster}"))
    };
    let settings = |cluster: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cluster-settings, namespace: flux-system}}\ndata:\n  CLUSTER: {cluster}\n"
        )
    };
    let kustomization = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [flux-system.yaml, cluster-settings.yaml, infrastructure.yaml]\n";
    let shared = ks(
        "infrastructure",
        "./infrastructure",
        "GitRepository/flux-system",
    );
    let child = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: external-dns, namespace: flux-system}\nspec:\n  path: ./infrastructure/external-dns/app\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: ConfigMap, name: cluster-settings}\n";
    let (apps_root, infra_root) = (root("apps"), root("infra"));
    let (apps_settings, infra_settings) = (settings("apps"), settings("infra"));
    let (_d, r) = repo(&[
        ("clusters/apps/flux-system.yaml", &apps_root),
        ("clusters/apps/cluster-settings.yaml", &apps_settings),
        ("clusters/apps/infrastructure.yaml", &shared),
        ("clusters/apps/kustomization.yaml", kustomization),
        ("clusters/infra/flux-system.yaml", &infra_root),
        ("clusters/infra/cluster-settings.yaml", &infra_settings),
        ("clusters/infra/infrastructure.yaml", &shared),
        ("clusters/infra/kustomization.yaml", kustomization),
        (
            "infrastructure/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [external-dns/ks.yaml]\n",
        ),
        ("infrastructure/external-dns/ks.yaml", child),
        (
            "infrastructure/external-dns/app/config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: external-dns, namespace: network}\ndata:\n  owner: k8s-${CLUSTER}\n",
        ),
    ]);
    let mut owners: Vec<(Option<u32>, String)> = r
        .objects
        .iter()
        .filter(|o| o.kind() == "ConfigMap" && o.name() == "external-dns")
        .map(|o| {
            (
                o.tree,
                o.root
                    .path(&["data", "owner"])
                    .unwrap()
                    .scalar_text()
                    .unwrap(),
            )
        })
        .collect();
    owners.sort();
    assert_eq!(owners.len(), 2, "{owners:?}");
    assert_ne!(owners[0].0, owners[1].0, "{owners:?}");
    let mut values: Vec<&str> = owners.iter().map(|(_, v)| v.as_str()).collect();
    values.sort();
    assert_eq!(values, ["k8s-apps", "k8s-infra"], "{owners:?}");
}

/// The cluster-template layout (alex-matthews) keeps a
/// substituteFrom Secret in `bootstrap/kustomize/apps/*/secret.yaml`,
/// which no Flux Kustomization applies but a just recipe pipes through
/// `op inject` and `kubectl apply`. The warning names that file instead of
/// calling the Secret absent, its keys are the variables, and a 1Password
/// reference among them is a value the cluster holds, not the text.
#[test]
fn substitute_from_a_secret_only_a_bootstrap_step_applies() {
    let apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: network}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: Secret, name: tunnel-id}\n";
    let secret = "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: tunnel-id\nstringData:\n  TUNNEL_ID: |-\n    op://kubernetes/cloudflare/TUNNEL_ID\n  ZONE: example.org\n";
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/apps.yaml", apps),
        (
            "bootstrap/apps/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: network\nresources: [secret.yaml]\n",
        ),
        ("bootstrap/apps/secret.yaml", secret),
        (
            "apps/app.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: network}\ndata:\n  host: ${TUNNEL_ID}.${ZONE}\n",
        ),
    ]);
    let said: Vec<&str> = r
        .issues
        .iter()
        .filter(|i| i.message.contains("tunnel-id"))
        .map(|i| i.message.as_str())
        .collect();
    assert!(
        said.len() == 1
            && said[0].contains("is only in bootstrap/apps/secret.yaml:2")
            && said[0].contains("no Flux Kustomization applies")
            && !said[0].contains("not in the repository"),
        "{said:?}"
    );
    assert_eq!(
        substituted(&r, "app", "host").as_deref(),
        Some("${TUNNEL_ID}.example.org")
    );
}

/// As in gavinmcfall's repository, a self-applying root `cluster` applies
/// `cluster-apps`, whose apps hold a FluxInstance that syncs the same
/// `flux/cluster` directory again. That is one cluster: every object is
/// rendered once, and the double applier of `cluster-apps` is reported.
#[test]
fn a_flux_instance_a_root_applies_joins_that_roots_cluster() {
    let cluster = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: flux-system, namespace: flux-system}\nspec: {url: https://github.com/example/home-ops, ref: {branch: main}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: cluster, namespace: flux-system}\nspec:\n  path: ./flux\n  sourceRef: {kind: GitRepository, name: flux-system}\n";
    let apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: cluster-apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n";
    let instance = "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux, namespace: flux-system}\nspec:\n  distribution: {version: 2.x}\n  sync:\n    kind: GitRepository\n    url: https://github.com/example/home-ops\n    ref: refs/heads/main\n    path: flux/cluster\n";
    let (_d, r) = repo(&[
        ("flux/config/cluster.yaml", cluster),
        ("flux/cluster/ks.yaml", apps),
        ("apps/flux-instance.yaml", instance),
        ("apps/app.yaml", &cm("app")),
    ]);
    assert_eq!(names(&r, "ConfigMap"), ["app"]);
    let twice: Vec<&str> = r
        .issues
        .iter()
        .filter(|i| i.message.contains("again by"))
        .map(|i| i.message.as_str())
        .collect();
    assert!(
        twice.len() == 1
            && twice[0].contains("Kustomization/flux-system/cluster-apps is applied by Flux Kustomization flux-system/cluster and again by flux-system/flux"),
        "{twice:?}"
    );
}

/// As in soulwhisper's repository, a configMapGenerator's file that is not
/// valid YAML (a tag on an alias, in an Authentik blueprint) fails no
/// build, as kustomize copies it as text; the warning says it is data.
#[test]
fn a_generator_input_that_does_not_parse_is_said_to_be_data() {
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        (
            "clusters/home/apps.yaml",
            &ks("apps", "./apps", "GitRepository/flux-system"),
        ),
        (
            "apps/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: security\nconfigMapGenerator:\n  - name: blueprints\n    files: [blueprint.yaml]\n",
        ),
        (
            "apps/blueprint.yaml",
            "entries:\n  - model: authentik_core.application\n    attrs:\n      provider: !KeyOf *provider\n      name: x\n",
        ),
    ]);
    let said: Vec<&str> = r
        .issues
        .iter()
        .filter(|i| i.path == "apps/blueprint.yaml")
        .map(|i| i.message.as_str())
        .collect();
    assert!(
        said.len() == 1
            && said[0].contains(
                "only data that apps/kustomization.yaml generates a ConfigMap or Secret from"
            ),
        "{said:?}"
    );
    assert_eq!(names(&r, "ConfigMap").len(), 1);
}

/// As in angelnu/k8s-gitops, a Flux
/// Kustomization whose `spec.path` has no kustomization.yaml gets a
/// generated one, and its `spec.components` are relative to that path
/// (fluxcd/pkg kustomize_generator.go `GenerateManifest`). They belong to
/// the generated kustomization only: not again inside the component (where
/// `../../../components/c` would leave the repository), and not inside a
/// kustomization directory found below the path.
#[test]
fn flux_components_of_a_generated_kustomization_are_added_once_at_the_path() {
    let mut child = ks("x", "./apps/x/app", "GitRepository/flux-system");
    child.push_str("  components:\n    - ../../../components/c\n");
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        (
            "clusters/home/apps.yaml",
            &ks("apps", "./apps", "GitRepository/flux-system"),
        ),
        ("apps/kustomization.yaml", "resources: [x/ks.yaml]\n"),
        ("apps/x/ks.yaml", &child),
        ("apps/x/app/cm.yaml", &cm("x")),
        (
            "apps/x/app/sub/kustomization.yaml",
            "resources: [cm.yaml]\n",
        ),
        ("apps/x/app/sub/cm.yaml", &cm("sub")),
        (
            "components/c/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [cm.yaml]\n",
        ),
        ("components/c/cm.yaml", &cm("from-component")),
    ]);
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    assert_eq!(names(&r, "ConfigMap"), ["from-component", "sub", "x"]);
}

/// As in d4rkfella/home-ops, a Flux Kustomization builds `./kubernetes`
/// of a GitRepository whose URL is another repository's; this one has a
/// `kubernetes` directory too, which is not what it applies.
#[test]
fn a_git_repository_of_another_url_is_not_this_repository() {
    let other = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {{name: vendor, namespace: flux-system}}\nspec: {{url: 'https://github.com/vendor/operator', ref: {{tag: v1}}}}\n---\n{}",
        ks("operator", "./kubernetes", "GitRepository/vendor")
    );
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        (
            "clusters/home/apps.yaml",
            &ks("apps", "./kubernetes", "GitRepository/flux-system"),
        ),
        (
            "kubernetes/kustomization.yaml",
            "resources: [cm.yaml, operator.yaml]\n",
        ),
        ("kubernetes/cm.yaml", &cm("a")),
        ("kubernetes/operator.yaml", &other),
    ]);
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    assert_eq!(names(&r, "ConfigMap"), ["a"]);
}

/// A Flux Kustomization with no `spec.path` builds the root of its source
/// (Flux: "Defaults to 'None', which translates to the root path of the
/// SourceRef"), here the CRDs of another repository: the reason given is
/// that source, not a path the object does not have.
#[test]
fn a_kustomization_without_path_builds_the_root_of_its_source() {
    let crds = "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: gateway-api-crd, namespace: flux-system}\nspec: {url: 'https://github.com/kubernetes-sigs/gateway-api', ref: {tag: v1.2.1}}\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: gateway-api, namespace: flux-system}\nspec:\n  prune: true\n  sourceRef: {kind: GitRepository, name: gateway-api-crd}\n";
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        (
            "clusters/home/apps.yaml",
            &ks("apps", "./apps", "GitRepository/flux-system"),
        ),
        ("apps/crds.yaml", crds),
        ("apps/cm.yaml", &cm("a")),
    ]);
    let crds = r.flux.iter().find(|f| f.name == "gateway-api").unwrap();
    assert!(
        matches!(&crds.outcome, Outcome::OtherSource(why)
            if why == "it builds from GitRepository/gateway-api-crd, which is not this repository"),
        "{:?}",
        crds.outcome
    );
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    assert_eq!(names(&r, "ConfigMap"), ["a"]);
}

/// A HelmRelease's `valuesFrom` Secret made by a ClusterExternalSecret
/// that selects its namespace is in the repository;
/// one it does not select is not.
#[test]
fn values_from_a_cluster_external_secret_of_the_namespace() {
    let ces = |name: &str, ns: &str| {
        format!(
            "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata: {{name: {name}}}\nspec:\n  namespaceSelectors:\n    - matchLabels: {{kubernetes.io/metadata.name: {ns}}}\n  externalSecretSpec:\n    target: {{name: {name}}}\n    dataFrom:\n      - extract: {{key: {name}}}\n"
        )
    };
    let hr = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app, namespace: media}\nspec:\n  chart: {spec: {chart: app, sourceRef: {kind: HelmRepository, name: r}}}\n  valuesFrom:\n    - {kind: Secret, name: here}\n    - {kind: Secret, name: elsewhere}\n";
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        (
            "clusters/home/ces.yaml",
            &format!("{}---\n{}", ces("here", "media"), ces("elsewhere", "apps")),
        ),
        ("clusters/home/hr.yaml", hr),
    ]);
    let model = homelab_lint::model::Model::new(&r);
    let at = r
        .objects
        .iter()
        .position(|o| o.kind() == "HelmRelease")
        .unwrap();
    let release = model.release(at).unwrap();
    assert!(release.issues.is_empty(), "{:?}", release.issues);
    let missing: Vec<&str> = release.absent.iter().map(|i| i.message.as_str()).collect();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert!(
        missing[0].contains("Secret media/elsewhere is not in the repository"),
        "{missing:?}"
    );
}

/// The renders look up only the substituteFrom names Kustomizations give
/// (the lookup pool keeps no other ConfigMap): a name a parent's
/// substitution fills in (`${CLUSTER}-settings`) and one a parent's
/// `spec.patches` sets on its child are found all the same.
#[test]
fn substitute_from_names_a_parent_substitutes_or_patches_are_looked_up() {
    let settings = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: settings, namespace: flux-system}\nspec:\n  path: ./settings\n  targetNamespace: flux-system\n  sourceRef: {kind: GitRepository, name: flux-system}\n";
    let settings_cm = |name: &str, domain: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata:\n  DOMAIN: {domain}\n"
        )
    };
    let app_cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata:\n  host: app.${DOMAIN}\n";
    let child = |from: &str| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: app, namespace: flux-system}}\nspec:\n  path: ./app\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n  postBuild:\n    substituteFrom:\n      - {{kind: ConfigMap, name: \"{from}\"}}\n"
        )
    };
    let parent = |extra: &str| {
        format!(
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: apps, namespace: flux-system}}\nspec:\n  path: ./apps\n  sourceRef: {{kind: GitRepository, name: flux-system}}\n{extra}"
        )
    };
    let substituted_parent = parent("  postBuild:\n    substitute: {CLUSTER: home}\n");
    let patched_parent = parent(
        "  patches:\n    - patch: |\n        - op: replace\n          path: /spec/postBuild/substituteFrom/0/name\n          value: patched-settings\n      target: {kind: Kustomization, name: app}\n",
    );
    let by_variable = child("${CLUSTER}-settings");
    let by_patch = child("written-settings");
    let home = settings_cm("home-settings", "home.example.org");
    let patched = settings_cm("patched-settings", "patched.example.org");
    for (parent, child, want) in [
        (&substituted_parent, &by_variable, "app.home.example.org"),
        (&patched_parent, &by_patch, "app.patched.example.org"),
    ] {
        let (_d, r) = repo(&[
            ("clusters/home/flux-system.yaml", GIT_ROOT),
            ("clusters/home/settings.yaml", settings),
            ("clusters/home/apps.yaml", parent),
            ("settings/home.yaml", &home),
            ("settings/patched.yaml", &patched),
            ("apps/app.yaml", child),
            ("app/app.yaml", app_cm),
        ]);
        assert_eq!(
            substituted(&r, "app", "host").as_deref(),
            Some(want),
            "{:?}",
            r.issues
        );
    }
}

/// `files` loaded with `limits` on one thread and on four, whatever
/// their size (the steps of Flux Kustomizations that apply no other one
/// run on forks there): the same objects, issues and renders. Returns the
/// load on four.
pub(crate) fn same_on_one_core_and_on_four(files: &[(&str, &str)], limits: Limits) -> Repo {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let load = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| homelab_lint::cores::on_every_core(|| repo::load(dir.path(), limits)))
    };
    let (one, four) = (load(1), load(4));
    let same = |what: &str, a: String, b: String| {
        assert!(a == b, "the {what} differ between one thread and four");
    };
    same(
        "objects",
        format!("{:?}", one.objects),
        format!("{:?}", four.objects),
    );
    same(
        "issues",
        format!("{:?}", one.issues),
        format!("{:?}", four.issues),
    );
    same(
        "renders",
        format!("{:?}", one.flux),
        format!("{:?}", four.flux),
    );
    four
}

/// The run's substitution budget runs out at the same Flux Kustomization
/// whether their steps ran one after another or on forks at once: each
/// of ten apps adds 36 bytes of a 200-byte budget, so five are
/// substituted and the other five stop at the cap.
#[test]
fn the_substitution_budget_stops_the_same_apps_on_every_core() {
    let mut files = vec![
        ("clusters/home/flux-system.yaml", GIT_ROOT.to_string()),
        (
            "clusters/home/apps.yaml",
            ks("apps", "./apps", "GitRepository/flux-system"),
        ),
    ];
    let names: Vec<String> = (0..10).map(|i| format!("app-{i}")).collect();
    for name in &names {
        let value = "v".repeat(40);
        files.push((
            Box::leak(format!("apps/{name}.yaml").into_boxed_str()),
            format!(
                "{}  postBuild:\n    substitute: {{V: {value}}}\n",
                ks(name, &format!("./src/{name}"), "GitRepository/flux-system")
            ),
        ));
        files.push((
            Box::leak(format!("src/{name}/cm.yaml").into_boxed_str()),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\ndata:\n  v: ${{V}}\n"
            ),
        ));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let limits = Limits {
        flux: homelab_lint::source::flux::Limits {
            max_subst_growth_bytes: 200,
            ..Default::default()
        },
        ..Limits::default()
    };
    let r = same_on_one_core_and_on_four(&files, limits);
    let done = names
        .iter()
        .filter(|n| substituted(&r, n, "v").is_some_and(|v| !v.contains('$')))
        .count();
    let capped = r
        .issues
        .iter()
        .filter(|i| i.message.starts_with("substitution budget exceeded"))
        .count();
    assert_eq!((done, capped), (5, 5), "{:#?}", r.issues);
}

/// Which substituteFrom ConfigMap a Flux Kustomization reads depends on
/// the files its tree holds by then: `settings` renders before `app` and
/// adds its cluster-settings, which `app` then prefers to another of the
/// name, on every core.
#[test]
fn a_sibling_rendered_before_adds_the_settings_the_next_one_reads() {
    let settings = |data: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cluster-settings, namespace: flux-system}}\ndata:\n  X: {data}\n"
        )
    };
    let app = format!(
        "{}  postBuild:\n    substituteFrom: [{{kind: ConfigMap, name: cluster-settings}}]\n",
        ks("app", "./app", "GitRepository/flux-system")
    );
    let r = same_on_one_core_and_on_four(
        &[
            ("clusters/home/flux-system.yaml", GIT_ROOT),
            ("clusters/home/a-app.yaml", &app),
            (
                "clusters/home/b-settings.yaml",
                &ks("settings", "./settings", "GitRepository/flux-system"),
            ),
            ("settings/cm.yaml", &settings("from-the-tree")),
            ("zz-elsewhere/cm.yaml", &settings("from-elsewhere")),
            (
                "app/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata:\n  x: ${X}\n",
            ),
        ],
        Limits::default(),
    );
    assert_eq!(
        substituted(&r, "app", "x").as_deref(),
        Some("from-the-tree")
    );
}

/// `maker`'s build holds a ConfigMap `made`, which its own steps (given in
/// `maker_spec`) turn into a Flux Kustomization that builds `./made-src`;
/// `late`, a sibling rendered after it, is a Flux Kustomization of the same
/// name. `made` renders first (depth first), so `late` has a name the
/// tree has rendered and is rendered only at the end, with what nothing
/// else reached; on four threads both are taken into one batch, and
/// `late` must go back on the queue under `made` for the render to be the
/// same (else `late` takes the name and `made` is never rendered).
/// Returns the ConfigMaps applied, in the order they render.
fn made_by_its_steps_renders_before_the_later_siblings(
    maker_spec: &str,
    made: &str,
) -> Vec<String> {
    let ks_in = |name: &str, path: &str| ks(name, path, "GitRepository/flux-system");
    let maker = format!("{}{maker_spec}", ks_in("maker", "./maker"));
    let mut files = vec![
        ("clusters/home/flux-system.yaml", GIT_ROOT.to_string()),
        ("clusters/home/apps.yaml", ks_in("apps", "./apps")),
        ("apps/a-late.yaml", ks_in("made", "./late")),
        ("apps/z-maker.yaml", maker),
        ("maker/cm.yaml", made.to_string()),
        ("made-src/cm.yaml", cm("from-made")),
        ("late/cm.yaml", cm("from-late")),
    ];
    for i in 0..4 {
        let name: &str = Box::leak(format!("app-{i}").into_boxed_str());
        let path = Box::leak(format!("apps/m-{name}.yaml").into_boxed_str());
        files.push((path, ks_in(name, &format!("./src/{name}"))));
        let path = Box::leak(format!("src/{name}/cm.yaml").into_boxed_str());
        files.push((path, cm(name)));
    }
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let r = same_on_one_core_and_on_four(&files, Limits::default());
    let applied: Vec<String> = r
        .objects
        .iter()
        .filter(|o| o.kind() == "ConfigMap" && o.tree.is_some())
        .map(|o| o.name().to_string())
        .collect();
    applied
}

/// `maker` (`apps/z-maker.yaml`) is the first of the apps to render, the
/// siblings in turn, and `late` at the end.
const APPLIED: [&str; 6] = ["from-made", "app-3", "app-2", "app-1", "app-0", "from-late"];

const MADE_SPEC: &str =
    "spec: {path: ./made-src, sourceRef: {kind: GitRepository, name: flux-system}}\n";

/// A JSON6902 patch of `spec.patches` that sets `apiVersion` and `kind`
/// makes a Flux Kustomization of a ConfigMap the build holds.
#[test]
fn a_patch_that_makes_a_flux_kustomization_renders_it_before_the_later_siblings() {
    let patch = "  patches:\n    - target: {kind: ConfigMap, name: made}\n      patch: |\n        - {op: replace, path: /apiVersion, value: kustomize.toolkit.fluxcd.io/v1}\n        - {op: replace, path: /kind, value: Kustomization}\n";
    let made = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: made, namespace: flux-system}}\n{MADE_SPEC}"
    );
    let applied = made_by_its_steps_renders_before_the_later_siblings(patch, &made);
    assert_eq!(applied, APPLIED);
}

/// postBuild substitution that fills in `apiVersion` and `kind` makes a
/// Flux Kustomization of an object the build holds.
#[test]
fn a_substitution_that_makes_a_flux_kustomization_renders_it_before_the_later_siblings() {
    let substitute = "  postBuild:\n    substitute: {API: kustomize.toolkit.fluxcd.io/v1, KIND: Kustomization}\n";
    let made = format!(
        "apiVersion: ${{API}}\nkind: ${{KIND}}\nmetadata: {{name: made, namespace: flux-system}}\n{MADE_SPEC}"
    );
    let applied = made_by_its_steps_renders_before_the_later_siblings(substitute, &made);
    assert_eq!(applied, APPLIED);
}

/// A Flux patch is `patch` and `target` only (fluxcd/pkg apis/kustomize
/// `Patch`): a kustomize-style `path:` names a file Flux never reads.
/// The file's change is not made, each `path:` is reported where it is
/// written, and an inline patch beside one still applies.
#[test]
fn a_flux_patch_reads_no_path_and_says_so_where_it_is_written() {
    let apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system}
  patches:
    - path: patch.yaml
      target: {kind: ConfigMap, name: a}
    - patch: |
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: a}
        data: {inline: set}
      path: ignored.yaml
      target: {kind: ConfigMap}
";
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/apps.yaml", apps),
        ("apps/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("apps/cm.yaml", &cm("a")),
        (
            "apps/patch.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: default}\ndata: {k: v}\n",
        ),
    ]);
    let a = r.objects.iter().find(|o| o.kind() == "ConfigMap").unwrap();
    assert_eq!(a.root.str_at(&["data", "inline"]), Some("set"));
    assert_eq!(a.root.str_at(&["data", "k"]), None, "the file was applied");
    let issues: Vec<String> = r.issues.iter().map(|i| i.to_string()).collect();
    let unknown = "is not a field of a Flux patch (fluxcd/pkg apis/kustomize Patch: patch, \
                   target): the API server drops it, and kubectl apply refuses it as an unknown \
                   field; the file it names is not applied (inline it in `patch`)";
    assert_eq!(
        issues,
        [
            format!(
                "clusters/home/apps.yaml:8:7: spec.patches[0].path {unknown}; `patch` is \
                 required, so the API server refuses the object (spec.patches[0].patch: \
                 Required value) and nothing of this entry is applied"
            ),
            format!("clusters/home/apps.yaml:15:7: spec.patches[1].path {unknown}"),
        ]
    );
    let fate = r
        .fates
        .iter()
        .find(|f| f.path == Path::new("apps/patch.yaml"))
        .map(|f| f.fate.reason())
        .unwrap();
    assert_eq!(
        fate,
        "not applied: apps/kustomization.yaml does not list it"
    );
}

/// As in haraldkoch's repository: a parent substitutes from encrypted
/// cluster-secrets. A child whose text took none of those values reads
/// its own variables in full, so `${STORAGE:=ceph-block}` is the default;
/// a child variable made from an encrypted one stays unknown.
#[test]
fn a_parent_with_encrypted_variables_leaves_a_child_unknown_only_where_it_used_them() {
    let apps = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  path: ./apps\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: ConfigMap, name: cluster-settings}\n      - {kind: Secret, name: cluster-secrets}\n";
    let settings = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings, namespace: flux-system}\ndata: {TIMEZONE: Europe/Oslo}\n";
    let secrets = "apiVersion: v1\nkind: Secret\nmetadata: {name: cluster-secrets, namespace: flux-system}\nstringData:\n  SECRET_DOMAIN: ENC[AES256_GCM,data:q83v,iv:AAAA,tag:BBBB,type:str]\nsops:\n  version: 3.8.1\n  mac: ENC[AES256_GCM,data:q83v,iv:AAAA,tag:BBBB,type:str]\n";
    let child = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: jelly, namespace: flux-system}\nspec:\n  path: ./jelly\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substitute: {APP: jelly, HOST: \"media.${SECRET_DOMAIN}\"}\n    substituteFrom:\n      - {kind: ConfigMap, name: cluster-settings}\n  patches:\n    - patch: |\n        - op: add\n          path: /data/domain\n          value: ${SECRET_DOMAIN}\n      target: {kind: ConfigMap}\n";
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: jelly-cm, namespace: default}\ndata:\n  class: \"${STORAGE:=ceph-block}\"\n  app: \"${APP}\"\n  host: \"${HOST}\"\n  tz: \"${TIMEZONE}\"\n";
    // A source named by an encrypted variable is the cluster's: any
    // variable may be defined there, and nothing says it is missing.
    let cams = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: cams, namespace: flux-system}\nspec:\n  path: ./cams\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substituteFrom:\n      - {kind: ConfigMap, name: \"${SECRET_DOMAIN}-settings\"}\n";
    let cams_cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cams-cm, namespace: default}\ndata: {x: \"${UNSET}\"}\n";
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/apps.yaml", apps),
        ("clusters/home/settings.yaml", settings),
        ("clusters/home/secrets.sops.yaml", secrets),
        ("apps/jelly.yaml", child),
        ("apps/cams.yaml", cams),
        ("jelly/cm.yaml", app),
        ("cams/cm.yaml", cams_cm),
    ]);
    assert_eq!(substituted(&r, "cams-cm", "x").as_deref(), Some("${UNSET}"));
    let said: Vec<&str> = r
        .issues
        .iter()
        .map(|i| i.message.as_str())
        .filter(|m| m.contains("-settings"))
        .collect();
    assert!(said.is_empty(), "{said:?}");
    assert_eq!(
        substituted(&r, "jelly-cm", "class").as_deref(),
        Some("ceph-block")
    );
    assert_eq!(substituted(&r, "jelly-cm", "app").as_deref(), Some("jelly"));
    assert_eq!(
        substituted(&r, "jelly-cm", "tz").as_deref(),
        Some("Europe/Oslo")
    );
    // HOST is made from the encrypted SECRET_DOMAIN: its value is the
    // cluster's, so the text waits for it.
    assert_eq!(
        substituted(&r, "jelly-cm", "host").as_deref(),
        Some("${HOST}")
    );
    // The patch the parent substituted holds the encrypted value: the
    // child's substitution does not take it for an undefined variable.
    let domain = r
        .objects
        .iter()
        .find(|o| o.name() == "jelly-cm")
        .and_then(|o| o.root.path(&["data", "domain"]))
        .unwrap();
    match domain.origin() {
        Some(Origin::Substituted {
            variable,
            unknown: true,
            undefined,
            ..
        }) => assert!(variable == "SECRET_DOMAIN" && undefined.is_empty()),
        other => panic!("{other:?}"),
    }
}

/// As in rwlove's and xunholy's repositories: kustomize-mutating-webhook
/// adds the keys of the ConfigMaps and Secrets it mounts to
/// `postBuild.substitute` of every Flux Kustomization the API server
/// admits. So a Kustomization without postBuild substitutes too, and a
/// variable its text does not define may be defined by the webhook.
#[test]
fn a_deployed_mutating_webhook_makes_every_kustomization_substitute() {
    let webhook = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: kustomize-mutating-webhook, namespace: flux-system}\nspec:\n  chartRef: {kind: OCIRepository, name: kustomize-mutating-webhook}\n  values:\n    configMaps: [{create: false, name: cluster-config}]\n";
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app, namespace: default}\ndata:\n  host: \"app.${SECRET_DOMAIN}\"\n  script: \"echo $${HOME}\"\n";
    for deployed in [true, false] {
        let mut files = vec![
            ("clusters/home/flux-system.yaml", GIT_ROOT.to_string()),
            (
                "clusters/home/apps.yaml",
                ks("apps", "./apps", "GitRepository/flux-system"),
            ),
            ("apps/cm.yaml", app.to_string()),
        ];
        if deployed {
            files.push(("clusters/home/webhook.yaml", webhook.to_string()));
        }
        let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
        let (_d, r) = repo(&files);
        let node = |key: &str| {
            r.objects
                .iter()
                .find(|o| o.kind() == "ConfigMap" && o.name() == "app")
                .and_then(|o| o.root.path(&["data", key]))
                .cloned()
                .unwrap()
        };
        let host = node("host");
        assert_eq!(host.as_str(), Some("app.${SECRET_DOMAIN}"));
        if deployed {
            // Substituted, with a value the repository does not show.
            assert!(
                matches!(
                    host.origin(),
                    Some(Origin::Substituted { unknown: true, undefined, .. }) if undefined.is_empty()
                ),
                "{:?}",
                host.origin()
            );
            assert_eq!(node("script").as_str(), Some("echo ${HOME}"));
        } else {
            // No postBuild, no webhook: Flux applies the text as written.
            assert!(host.origin().is_none(), "{:?}", host.origin());
            assert_eq!(node("script").as_str(), Some("echo $${HOME}"));
        }
    }
}

/// A Flux Kustomization's `spec.images` is written into the
/// kustomization it builds (fluxcd/pkg kustomize `Generator.WriteFile`):
/// it replaces the kustomization's own entry of the same name (so that
/// entry's newName is gone too) and applies where Flux generates the
/// kustomization. Without it, an app's version is the tag in the manifest.
#[test]
fn flux_images_replace_the_kustomizations_entry_of_their_name() {
    let deploy = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: default}}\nspec:\n  template:\n    spec:\n      containers:\n        - name: server\n          image: ghcr.io/goauthentik/server:2025.8.1\n"
        )
    };
    let with_images = |name: &str, path: &str| {
        format!(
            "{}  images:\n    - name: ghcr.io/goauthentik/server\n      newTag: 2025.10.1\n",
            ks(name, path, "GitRepository/flux-system")
        )
    };
    let (_d, r) = repo(&[
        ("clusters/home/flux-system.yaml", GIT_ROOT),
        ("clusters/home/own.yaml", &with_images("own", "./own")),
        (
            "clusters/home/generated.yaml",
            &with_images("generated", "./generated"),
        ),
        (
            "own/kustomization.yaml",
            "resources: [deploy.yaml]\nimages:\n  - name: ghcr.io/goauthentik/server\n    newName: example.com/mirror/server\n    newTag: 2025.8.2\n",
        ),
        ("own/deploy.yaml", &deploy("own")),
        ("generated/deploy.yaml", &deploy("generated")),
    ]);
    let image = |name: &str| {
        let o = r
            .objects
            .iter()
            .find(|o| o.kind() == "Deployment" && o.name() == name)
            .unwrap_or_else(|| panic!("{name} not rendered: {:?}", r.issues));
        o.root
            .path(&["spec", "template", "spec", "containers"])
            .and_then(|c| c.as_seq()?.first()?.str_at(&["image"]).map(String::from))
            .unwrap()
    };
    assert_eq!(image("own"), "ghcr.io/goauthentik/server:2025.10.1");
    assert_eq!(image("generated"), "ghcr.io/goauthentik/server:2025.10.1");
}
