use super::*;
use crate::yaml::Limits;

mod ids;

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// Builds `dir` and checks it gives the objects `kubectl kustomize`
/// printed (`expected`), in any order.
fn same_as_kubectl(files: &mut Files, dir: &str, expected: &str) {
    let ours: Vec<serde_json::Value> = build(files, Path::new(dir))
        .unwrap()
        .iter()
        .map(|o| o.root.to_json())
        .collect();
    let theirs: Vec<serde_json::Value> =
        crate::yaml::parse_documents(expected, crate::yaml::FileId(0), &Limits::default())
            .unwrap()
            .iter()
            .map(Node::to_json)
            .collect();
    assert_eq!(ours.len(), theirs.len());
    for t in &theirs {
        assert!(
            ours.contains(t),
            "missing or different: {t}\nours: {ours:#?}"
        );
    }
}

/// A `transformers:`
/// entry naming a kustomization directory is built, and its objects
/// configure transformers; here one shared NamespaceTransformer given
/// each namespace by a small overlay (`kubectl kustomize media`).
#[test]
fn transformer_directories_are_built_then_run() {
    let dir = repo(&[
        (
            "transformers/kustomization.yaml",
            "resources: [transformer.yaml]\n",
        ),
        (
            "transformers/transformer.yaml",
            "apiVersion: builtin\nkind: NamespaceTransformer\nmetadata: {name: apply-ns, namespace: .invalid}\nfieldSpecs:\n- {path: metadata/name, kind: Namespace, create: true}\n- {path: spec/targetNamespace, group: kustomize.toolkit.fluxcd.io, kind: Kustomization, create: true}\n",
        ),
        (
            "media/kustomization.yaml",
            "resources: [namespace.yaml, ks.yaml]\ntransformers: [./transformers]\n",
        ),
        (
            "media/namespace.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: .invalid}\n",
        ),
        (
            "media/ks.yaml",
            "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: app}\nspec: {path: ./media/app}\n",
        ),
        (
            "media/transformers/kustomization.yaml",
            "namespace: media\nresources: [../../transformers]\n",
        ),
        (
            "books/kustomization.yaml",
            "resources: [namespace.yaml]\ntransformers: [./transformers]\n",
        ),
        (
            "books/namespace.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: .invalid}\n",
        ),
        (
            "books/transformers/kustomization.yaml",
            "namespace: books\nresources: [../../transformers]\n",
        ),
        (
            "all/kustomization.yaml",
            "resources: [../media, ../books]\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let media = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: media\n---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: app\n  namespace: media\nspec:\n  path: ./media/app\n  targetNamespace: media\n";
    same_as_kubectl(&mut files, "media", media);
    // The shared transformer is built once per overlay, each with its
    // own namespace.
    let both = format!("{media}---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: books\n");
    same_as_kubectl(&mut files, "all", &both);
}

/// Two objects with one id in a kustomization Flux generates: the
/// error is at the second object, not at no line of no file.
#[test]
fn a_duplicate_in_a_generated_kustomization_is_reported_at_the_object() {
    let dir = repo(&[
        (
            "apps/a/ns.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
        ),
        (
            "apps/b/ns.yaml",
            "apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let err = build_flux_path(&mut files, Path::new("apps"), &FluxInputs::default()).unwrap_err();
    assert!(err.message.contains("already registered id"), "{err}");
    assert_eq!((err.path.as_str(), err.line), ("apps/b/ns.yaml", 1));
}

#[test]
fn cycle_is_an_error_not_a_hang() {
    let dir = repo(&[
        ("a/kustomization.yaml", "resources:\n- ../b\n"),
        ("b/kustomization.yaml", "resources:\n- ../a\n"),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let err = build(&mut files, Path::new("a")).unwrap_err();
    assert!(err.message.contains("cycle: a -> b -> a"), "{err}");
    assert_eq!((err.path.as_str(), err.line), ("b/kustomization.yaml", 2));
}

#[test]
fn generated_names_flow_into_references_with_provenance() {
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            "namespace: media\nresources:\n- deploy.yaml\nconfigMapGenerator:\n- name: cfg\n  literals:\n  - a=b\n",
        ),
        (
            "app/deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      volumes:\n      - name: c\n        configMap:\n          name: cfg\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let objs = build(&mut files, Path::new("app")).unwrap();
    let deploy = objs.iter().find(|o| o.kind() == "Deployment").unwrap();
    let cm = deploy
        .root
        .path(&["spec", "template", "spec", "volumes"])
        .and_then(|v| v.as_seq())
        .and_then(|v| v[0].path(&["configMap", "name"]))
        .unwrap();
    assert_eq!(cm.as_str(), Some("cfg-4h2mbtbbt6"));
    let ns = deploy.root.path(&["metadata", "namespace"]).unwrap();
    assert_eq!(ns.as_str(), Some("media"));
    assert_eq!(
        files.sources.location(ns.span()),
        "app/kustomization.yaml:1:12"
    );
    assert_eq!(deploy.chain[0].kind, StepKind::Kustomization);
}

/// Name references reach objects of every kind in a build of many kinds,
/// those told apart first and those after (here a Pod and the generated
/// ConfigMap, which come after ten other kinds).
#[test]
fn references_are_fixed_past_the_first_kinds_of_a_build() {
    let mut listed = String::from("apiVersion: example.com/v1\n");
    listed = (0..9).fold(listed, |text, i| {
        format!("{text}kind: K{i}\nmetadata:\n  name: k\n---\napiVersion: example.com/v1\n")
    });
    listed.push_str("kind: K9\nmetadata:\n  name: k\n---\n");
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            "resources:\n- early.yaml\n- kinds.yaml\n- late.yaml\nconfigMapGenerator:\n- name: cfg\n  literals:\n  - a=b\n",
        ),
        (
            "app/early.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: early\nspec:\n  template:\n    spec:\n      volumes:\n      - name: c\n        configMap:\n          name: cfg\n",
        ),
        ("app/kinds.yaml", &listed),
        (
            "app/late.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: late\nspec:\n  volumes:\n  - name: c\n    configMap:\n      name: cfg\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let objs = build(&mut files, Path::new("app")).unwrap();
    assert_eq!(objs.len(), 13);
    let at = [
        ("early", &["spec", "template", "spec", "volumes"][..]),
        ("late", &["spec", "volumes"]),
    ];
    for (name, path) in at {
        let d = objs.iter().find(|o| o.name() == name).unwrap();
        let volumes = d.root.path(path);
        let cm = volumes.and_then(|v| v.as_seq()).unwrap()[0].path(&["configMap", "name"]);
        assert_eq!(cm.and_then(Node::as_str), Some("cfg-4h2mbtbbt6"), "{name}");
    }
}

#[test]
fn flux_generates_a_kustomization_over_manifests() {
    let dir = repo(&[
        (
            "apps/a.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        ),
        ("apps/notes.txt", "not yaml"),
        (
            "apps/sub/b.yml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n",
        ),
        (
            "apps/kust/kustomization.yaml",
            "namePrefix: p-\nresources: [c.yaml]\n",
        ),
        (
            "apps/kust/c.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        ),
        (
            "apps/kust/ignored.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let objs = build_flux_path(&mut files, Path::new("apps"), &FluxInputs::default())
        .unwrap()
        .objects;
    let mut names: Vec<&str> = objs.iter().map(Object::name).collect();
    names.sort_unstable();
    assert_eq!(names, ["a", "b", "p-c"]);
}

/// A remote entry or a missing file takes only
/// itself out of a Flux build, each reported at its own line.
#[test]
fn remote_and_missing_entries_leave_their_siblings_rendered() {
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            "resources:\n- https://github.com/x/y/releases/download/v1/crd.yaml\n- github.com/fluxcd/flux2/manifests/install?ref=v2.0.0\n- cm.yaml\n- gone.yaml\ncomponents:\n- https://example.com/c\nconfigMapGenerator:\n- name: remote\n  files:\n  - https://raw.githubusercontent.com/x/y/main/a.conf\n- name: local\n  literals: [a=b]\npatches:\n- target: {kind: CustomResourceDefinition}\n  patch: |-\n    - op: add\n      path: /metadata/labels\n      value: {a: b}\n",
        ),
        (
            "app/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let built = build_flux_path(&mut files, Path::new("app"), &FluxInputs::default()).unwrap();
    let mut names: Vec<&str> = built.objects.iter().map(Object::name).collect();
    names.sort_unstable();
    assert_eq!(names, ["cm", "local-4h2mbtbbt6"]);
    let gaps: Vec<(u32, Option<Gap>)> = built.gaps.iter().map(|g| (g.line, g.gap)).collect();
    assert_eq!(
        gaps,
        [
            (2, Some(Gap::Remote)),
            (3, Some(Gap::Remote)),
            (5, Some(Gap::Missing)),
            (11, Some(Gap::Remote)),
            (7, Some(Gap::Remote)),
        ],
        "{:#?}",
        built.gaps
    );
    assert!(
        built.gaps[3].message.contains("remote file"),
        "{}",
        built.gaps[3]
    );
    // kubectl has no network either: the same directory fails there.
    assert!(build(&mut files, Path::new("app")).is_err());
}

/// Only a patch target that names one kind and one plain name, missing
/// once a remote resource was left out, gets a stand-in: not a target by
/// kind alone, not a name pattern, not a name an object already has.
#[test]
fn stand_ins_only_for_named_targets_missing_after_a_remote_resource() {
    let patch = |target: &str| {
        format!(
            "- target: {target}\n  patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata: {{name: x}}\n    spec: {{replicas: 2}}\n"
        )
    };
    let patches = [
        patch("{kind: Deployment, name: operator}"),
        patch("{kind: Deployment}"),
        patch("{kind: Deployment, name: \"op.*\"}"),
        patch("{kind: Deployment, name: local}"),
        patch("{kind: Widget, name: w}"),
    ]
    .concat();
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            &format!(
                "resources:\n- https://example.com/operator.yaml\n- local.yaml\npatches:\n{patches}"
            ),
        ),
        (
            "app/local.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: local}\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let built = build_flux_path(&mut files, Path::new("app"), &FluxInputs::default()).unwrap();
    let found: Vec<(&str, bool, Option<i64>)> = built
        .objects
        .iter()
        .map(|o| {
            let stand_in = o.chain.iter().any(|s| s.kind == StepKind::RemoteStandIn);
            let replicas = o
                .root
                .path(&["spec", "replicas"])
                .and_then(|n| match n.value {
                    crate::yaml::Value::Int(i) => Some(i),
                    _ => None,
                });
            (o.name(), stand_in, replicas)
        })
        .collect();
    assert_eq!(
        found,
        [("local", false, Some(2)), ("operator", true, Some(2))]
    );
    // With nothing remote, a missing named target stays missing.
    let dir = repo(&[(
        "app/kustomization.yaml",
        &format!(
            "resources: []\npatches:\n{}",
            patch("{kind: Deployment, name: operator}")
        ),
    )]);
    let mut files = Files::new(dir.path(), Default::default());
    let built = build_flux_path(&mut files, Path::new("app"), &FluxInputs::default()).unwrap();
    assert!(built.objects.is_empty());
}

#[test]
fn flux_path_rejects_non_kubernetes_yaml() {
    let dir = repo(&[("apps/values.yaml", "replicaCount: 1\n")]);
    let mut files = Files::new(dir.path(), Default::default());
    let err = build_flux_path(&mut files, Path::new("apps"), &FluxInputs::default()).unwrap_err();
    assert!(
        err.message.contains("failed to decode Kubernetes YAML"),
        "{err}"
    );
}

/// Prefix, suffix, namespace, labels with templates, annotations,
/// images, replicas, generator merge, JSON 6902 and strategic-merge
/// patches, label-selected targets and RoleBinding subjects, against
/// kubectl's output for the same files.
#[test]
fn overlay_features_match_kubectl() {
    let dir = repo(&[
        (
            "base/deploy.yaml",
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      serviceAccountName: sa
      containers:
      - name: app
        image: nginx:1.0
        envFrom:
        - configMapRef: {name: cfg}
        - secretRef: {name: sec}
        ports:
        - containerPort: 80
          name: http
      initContainers:
      - name: init
        image: busybox@sha256:abc
"#,
        ),
        (
            "base/kustomization.yaml",
            r#"namePrefix: b-
commonLabels:
  app: web
resources:
- deploy.yaml
- svc.yaml
- rbac.yaml
configMapGenerator:
- name: cfg
  literals: [A=1, "B='quoted'"]
  envs: [vars.env]
secretGenerator:
- name: sec
  literals: [pw=hunter2]
"#,
        ),
        (
            "base/rbac.yaml",
            r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: r}
subjects:
- kind: ServiceAccount
  name: sa
- kind: ServiceAccount
  name: default
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: r
rules: []
"#,
        ),
        (
            "base/svc.yaml",
            r#"apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 80
"#,
        ),
        (
            "base/vars.env",
            r#"# comment
X=1
  Y = 2
Z=a=b
"#,
        ),
        (
            "overlay/kustomization.yaml",
            r#"namespace: prod
nameSuffix: -x
resources: [../base]
commonAnnotations:
  team: a
labels:
- pairs: {tier: fe}
  includeTemplates: true
images:
- name: nginx
  newName: ghcr.io/nginx
  newTag: "2.0"
- name: busybox
  newTag: "1.36"
replicas:
- name: b-web
  count: 3
configMapGenerator:
- name: cfg
  behavior: merge
  literals: [C=3]
patchesJson6902:
- target: {group: apps, version: v1, kind: Deployment, name: b-web}
  patch: |-
    - op: add
      path: /spec/template/spec/containers/0/args
      value: ["--x"]
patches:
- patch: |-
    apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: web
    spec:
      template:
        spec:
          containers:
          - name: app
            ports:
            - containerPort: 8080
              name: alt
- target:
    kind: Service
    labelSelector: app=web
  patch: |-
    - op: replace
      path: /spec/ports/0/port
      value: 81
"#,
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    same_as_kubectl(
        &mut files,
        "overlay",
        include_str!("testdata/overlay.kubectl.yaml"),
    );

    // A value from an inline block-scalar patch points into the
    // kustomization file: `81` on line 48. (The JSON 6902 patch on
    // `b-web` matches nothing, in kubectl too: by then the name is
    // `b-web-x` and the original name is `web`.)
    let objs = build(&mut files, Path::new("overlay")).unwrap();
    let svc = objs.iter().find(|o| o.kind() == "Service").unwrap();
    let port = svc
        .root
        .path(&["spec", "ports"])
        .and_then(|p| p.as_seq())
        .and_then(|p| p[0].get("port"))
        .unwrap();
    assert_eq!(
        files.sources.location(port.span()),
        "overlay/kustomization.yaml:48:14"
    );
    let deploy = objs.iter().find(|o| o.kind() == "Deployment").unwrap();
    let kinds: Vec<StepKind> = deploy.chain.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds[..2],
        [StepKind::Kustomization, StepKind::Kustomization]
    );
    assert!(kinds.contains(&StepKind::Patch));
}

/// kustomize's builtin field specs where they are easy to get wrong
/// (api/internal/konfig/builtinpluginconsts, kustomize v5.5-v5.7),
/// against kubectl's output for the same files: RoleBinding and
/// ClusterRoleBinding subjects under `namespace:` (a subject named
/// `default` is moved whatever its kind or namespace; a ServiceAccount
/// of the build follows its object through the name reference), the
/// ValidatingAdmissionPolicyBinding's `policyName`, HTTPRoute
/// `backendRefs` left alone, annotations on any group's StatefulSet
/// template, and template labels on volume claim templates.
#[test]
fn builtin_field_specs_match_kubectl() {
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            r#"namespace: target
namePrefix: p-
commonAnnotations:
  note: x
labels:
- pairs:
    team: a
  includeTemplates: true
resources: [r.yaml, rb.yaml, sa.yaml, sts.yaml]
"#,
        ),
        (
            "app/r.yaml",
            r#"apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports: [{port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: route
spec:
  rules:
  - backendRefs:
    - name: web
      port: 80
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata:
  name: pol
spec:
  failurePolicy: Fail
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata:
  name: bind
spec:
  policyName: pol
---
apiVersion: apps.kruise.io/v1beta1
kind: StatefulSet
metadata:
  name: ks
spec:
  template:
    metadata:
      labels: {a: b}
"#,
        ),
        (
            "app/rb.yaml",
            r#"apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: rb
subjects:
- kind: ServiceAccount
  name: sa-empty
- kind: ServiceAccount
  name: sa-default
  namespace: default
- kind: ServiceAccount
  name: sa-other
  namespace: other
- kind: ServiceAccount
  name: default
  namespace: other
- kind: User
  name: u-empty
- kind: Group
  name: g-default
  namespace: default
- name: nokind
- kind: ServiceAccount
  name: default
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: r
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: crb
subjects:
- kind: ServiceAccount
  name: sa-empty
- kind: ServiceAccount
  name: sa-default
  namespace: default
- kind: ServiceAccount
  name: sa-other
  namespace: other
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: r
"#,
        ),
        (
            "app/sa.yaml",
            r#"apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa-empty
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sa-default
  namespace: default
"#,
        ),
        (
            "app/sts.yaml",
            r#"apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  serviceName: db
  template:
    spec:
      containers:
      - name: db
        image: postgres:16
  volumeClaimTemplates:
  - metadata:
      name: data
    spec:
      accessModes: [ReadWriteOnce]
"#,
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    same_as_kubectl(
        &mut files,
        "app",
        include_str!("testdata/fieldspecs.kubectl.yaml"),
    );
}

/// A file go-yaml refuses fails the Flux
/// Kustomization in Flux, but here loses only itself; one that only
/// the YAML spec refuses (a flow sequence closed at the key's column)
/// loads as in go-yaml.
#[test]
fn a_malformed_file_loses_only_itself() {
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            "resources: [good.yaml, bad.yaml, lenient.yaml]\n",
        ),
        (
            "app/good.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: good\n",
        ),
        (
            "app/bad.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\t name: bad\n",
        ),
        (
            "app/lenient.yaml",
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: lenient\nspec:\n  containers:\n  - name: c\n    args: [\n      \"--a\",\n    ]\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let built = build_flux_path(&mut files, Path::new("app"), &FluxInputs::default()).unwrap();
    let names: Vec<&str> = built.objects.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["good", "lenient"]);
    assert_eq!(built.gaps.len(), 1, "{:?}", built.gaps);
    assert_eq!(built.gaps[0].gap, Some(Gap::Malformed));
    assert_eq!(
        (built.gaps[0].path.as_str(), built.gaps[0].line),
        ("app/bad.yaml", 4)
    );
    // kubectl refuses the directory as a whole, and so does `build`.
    assert!(build(&mut files, Path::new("app")).is_err());
}

/// kustomize fetches a file a kustomization reads only at an http(s)
/// URL; a remote base's other forms are paths in its folder, read when
/// there and missing (with why) when not. A `files:` entry splits at its
/// one `=`; a second fails the build. A transformer entry is read like a
/// resource, so a remote one is a remote gap.
#[test]
fn files_in_forms_of_remote_bases_are_paths_of_the_folder() {
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            "configMapGenerator:\n- name: here\n  files:\n  - github.com/org/repo/a.conf\n- name: gone\n  files:\n  - git::https://example.com/org/repo.git//a.conf\n",
        ),
        ("app/github.com/org/repo/a.conf", "x=1\n"),
        (
            "split/kustomization.yaml",
            "configMapGenerator:\n- name: two\n  files:\n  - key=https://example.com/a?v=1\n",
        ),
        (
            "tr/kustomization.yaml",
            "transformers:\n- github.com/org/repo//transformers?ref=v1\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let built = build_flux_path(&mut files, Path::new("app"), &FluxInputs::default()).unwrap();
    let here = &built.objects[0];
    assert!(here.name().starts_with("here-"), "{}", here.name());
    assert_eq!(
        here.root.str_at(&["data", "a.conf"]),
        Some("x=1\n"),
        "read from the folder"
    );
    assert_eq!(built.gaps.len(), 1, "{:?}", built.gaps);
    let gap = &built.gaps[0];
    assert_eq!((gap.gap, gap.line), (Some(Gap::Missing), 7));
    assert!(
        gap.message.contains(
            "file 'app/git::https:/example.com/org/repo.git/a.conf' does not exist; kustomize \
             fetches only an http(s) URL here"
        ),
        "{gap}"
    );
    let err = build_flux_path(&mut files, Path::new("split"), &FluxInputs::default()).unwrap_err();
    assert!(
        err.message.contains(
            "source \"key=https://example.com/a?v=1\" key name or file path contains '='"
        ),
        "{err}"
    );
    // A remote transformer entry is kustomize's remote resource, not a
    // path: a gap that says it is not fetched.
    let built = build_flux_path(&mut files, Path::new("tr"), &FluxInputs::default()).unwrap();
    assert_eq!(built.gaps.len(), 1, "{:?}", built.gaps);
    assert_eq!(built.gaps[0].gap, Some(Gap::Remote));
    assert!(
        built.gaps[0].message.contains("remote transformer"),
        "{}",
        built.gaps[0]
    );
}

/// Flux writes `targetNamespace` into the kustomization before kustomize
/// builds it, so name references see it: a HelmRelease with no namespace
/// of its own gets the hashed name of a ConfigMap generated into that
/// namespace, as `kubectl kustomize` gives with `namespace: observability`
/// written in (and leaves the name as written without it).
#[test]
fn the_target_namespace_is_set_before_name_references_are_resolved() {
    let dir = repo(&[
        (
            "app/kustomization.yaml",
            "resources: [hr.yaml]\nconfigurations: [nameref.yaml]\nconfigMapGenerator:\n- name: values\n  namespace: observability\n  literals: [a=b]\n",
        ),
        (
            "app/nameref.yaml",
            "nameReference:\n- kind: ConfigMap\n  fieldSpecs:\n  - path: spec/valuesFrom/name\n    kind: HelmRelease\n",
        ),
        (
            "app/hr.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app}\nspec:\n  valuesFrom:\n  - kind: ConfigMap\n    name: values\n",
        ),
    ]);
    let mut files = Files::new(dir.path(), Default::default());
    let values_from = |built: &Built| {
        let hr = built
            .objects
            .iter()
            .find(|o| o.kind() == "HelmRelease")
            .unwrap();
        let entry = &hr
            .root
            .path(&["spec", "valuesFrom"])
            .and_then(Node::as_seq)
            .unwrap()[0];
        (
            hr.namespace().map(str::to_string),
            entry.str_at(&["name"]).map(str::to_string),
        )
    };
    let flux = FluxInputs {
        namespace: Some(("observability".into(), Span::default())),
        ..FluxInputs::default()
    };
    let built = build_flux_path(&mut files, Path::new("app"), &flux).unwrap();
    assert_eq!(
        values_from(&built),
        (
            Some("observability".into()),
            Some("values-4h2mbtbbt6".into())
        )
    );
    let built = build_flux_path(&mut files, Path::new("app"), &FluxInputs::default()).unwrap();
    assert_eq!(values_from(&built), (None, Some("values".into())));
}

/// Under the default limits a load takes the field specs parsed once per
/// process, still registering their file at the same point; under YAML
/// limits the built-in text does not fit, it parses them itself and
/// fails as it always did.
#[test]
fn the_built_in_field_specs_are_parsed_once_only_for_the_default_limits() {
    let dir = repo(&[]);
    let mut files = Files::new(dir.path(), Default::default());
    let config = default_config(&mut files).unwrap();
    assert!(std::sync::Arc::ptr_eq(&config, parsed_defaults().unwrap()));
    let name = Path::new("<kustomize built-in field specs>");
    assert!(files.sources.find(name).is_some());
    let tight = crate::source::Limits {
        yaml: Limits {
            max_bytes: 64,
            ..Limits::default()
        },
        ..Default::default()
    };
    let mut files = Files::new(dir.path(), tight);
    assert!(default_config(&mut files).is_err());
    assert!(files.sources.find(name).is_some());
}
