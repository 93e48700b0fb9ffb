use super::*;
use std::path::PathBuf;

use crate::source::test_repo::TestRepo as Repo;

impl Repo {
    fn resolve(&self, name: &str) -> Release {
        let hr = self.find("HelmRelease", "apps", name).unwrap();
        resolve(&self.sources, hr, &|k, ns, n| self.find(k, ns, n))
    }

    fn text_at(&self, span: Span) -> &str {
        let text = &self.sources.get(span.file).text;
        &text[span.start as usize..span.end as usize]
    }
}

const HR: &str = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: authentik
  namespace: apps
spec:
  chart:
    spec:
      chart: authentik
      version: 2025.10.1
      sourceRef:
        kind: HelmRepository
        name: goauthentik
        namespace: flux-system
  valuesFrom:
    - kind: ConfigMap
      name: base-values
    - kind: Secret
      name: secret-values
      valuesKey: extra.yaml
    - kind: ConfigMap
      name: base-values
      valuesKey: replicas
      targetPath: server.replicas
    - kind: ConfigMap
      name: absent
      optional: true
  values:
    server:
      image:
        tag: inline
";

const REPO: &str = "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata:
  name: goauthentik
  namespace: flux-system
spec:
  url: https://charts.goauthentik.io
";

const VALUES: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: base-values
  namespace: apps
data:
  replicas: \"3\"
  values.yaml: |
    server:
      image:
        repository: ghcr.io/goauthentik/server
        tag: from-configmap

      env:
        - name: A
          value: one
    global:
      debug: false
";

const SECRET: &str = "\
apiVersion: v1
kind: Secret
metadata:
  name: secret-values
  namespace: apps
stringData:
  extra.yaml: \"global: {debug: true}\"
";

fn repo() -> Repo {
    Repo::new(&[
        ("hr.yaml", HR),
        ("repo.yaml", REPO),
        ("values.yaml", VALUES),
        ("secret.yaml", SECRET),
    ])
}

#[test]
fn chart_and_version_from_chart_spec() {
    let repo = repo();
    let r = repo.resolve("authentik");
    let chart = r.chart.unwrap();
    assert_eq!(chart.as_str(), Some("authentik"));
    assert_eq!((chart.span().line, chart.span().col), (9, 14));
    let version = r.version.unwrap();
    assert_eq!(version.as_str(), Some("2025.10.1"));
    assert_eq!((version.span().line, version.span().col), (10, 16));
    let source = r.source.unwrap();
    assert_eq!(
        (source.kind.as_str(), source.namespace.as_str()),
        ("HelmRepository", "flux-system")
    );
    assert_eq!(
        source.url.unwrap().as_str(),
        Some("https://charts.goauthentik.io")
    );
}

#[test]
fn values_merge_in_order_and_inline_wins() {
    let repo = repo();
    let r = repo.resolve("authentik");
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    // `absent` is optional: it may exist in the cluster only.
    assert!(r.values_incomplete);
    let v = r.values.to_json();
    assert_eq!(v["server"]["image"]["tag"], "inline");
    assert_eq!(
        v["server"]["image"]["repository"],
        "ghcr.io/goauthentik/server"
    );
    // The Secret (later, valuesKey extra.yaml) replaces global.debug.
    assert_eq!(v["global"]["debug"], true);
    // targetPath typed like `--set`.
    assert_eq!(v["server"]["replicas"], 3);
    assert_eq!(v["server"]["env"][0]["value"], "one");
}

#[test]
fn values_in_a_literal_block_keep_their_file_position() {
    let repo = repo();
    let r = repo.resolve("authentik");
    let repository = r.values.path(&["server", "image", "repository"]).unwrap();
    assert_eq!(
        repo.sources.path(repository.span().file),
        PathBuf::from("values.yaml")
    );
    assert_eq!((repository.span().line, repository.span().col), (11, 21));
    assert_eq!(
        repo.text_at(repository.span()),
        "ghcr.io/goauthentik/server"
    );
    // After a blank line inside the block.
    let env = r.values.path(&["server", "env"]).unwrap().as_seq().unwrap();
    let value = env[0].get("value").unwrap();
    assert_eq!((value.span().line, value.span().col), (16, 18));
    assert_eq!(repo.text_at(value.span()), "one");
    // Inline values point into the HelmRelease.
    let tag = r.values.path(&["server", "image", "tag"]).unwrap();
    assert_eq!(repo.sources.path(tag.span().file), PathBuf::from("hr.yaml"));
    assert_eq!((tag.span().line, tag.span().col), (31, 14));
    // A flow string in a Secret: every node gets the key's span.
    let debug = r.values.path(&["global", "debug"]).unwrap();
    assert_eq!(
        repo.sources.path(debug.span().file),
        PathBuf::from("secret.yaml")
    );
    assert_eq!((debug.span().line, debug.span().col), (7, 15));
    // targetPath: the value's own span.
    let replicas = r.values.path(&["server", "replicas"]).unwrap();
    assert_eq!((replicas.span().line, replicas.span().col), (7, 13));
}

#[test]
fn missing_sources_and_keys() {
    let hr = "\
apiVersion: helm.toolkit.fluxcd.io/v2beta2
kind: HelmRelease
metadata:
  name: x
  namespace: apps
spec:
  valuesFrom:
    - kind: ConfigMap
      name: nowhere
    - kind: ConfigMap
      name: base-values
      valuesKey: nope
    - kind: ConfigMap
      name: base-values
      valuesKey: nope
      optional: true
";
    let repo = Repo::new(&[("hr.yaml", hr), ("values.yaml", VALUES)]);
    let r = repo.resolve("x");
    assert_eq!(r.absent.len(), 1, "{:?}", r.absent);
    assert!(r.absent[0].message.contains("ConfigMap apps/nowhere"));
    assert_eq!((r.absent[0].line, r.absent[0].col), (8, 7));
    assert_eq!(r.issues.len(), 1, "{:?}", r.issues);
    assert!(r.issues[0].message.contains("\"nope\""));
    assert!(r.values_incomplete);
}

#[test]
fn target_path_from_an_unseen_secret_is_deferred_unless_overridden() {
    let hr = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: x
  namespace: apps
spec:
  valuesFrom:
    - kind: ConfigMap
      name: base-values
      valuesKey: host
      targetPath: db.host
    - kind: Secret
      name: operator-made
      valuesKey: HOST
      targetPath: db.host
    - kind: Secret
      name: operator-made
      valuesKey: PORT
      targetPath: db.port
  values:
    db:
      port: 5433
";
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: base-values\n  namespace: apps\ndata:\n  host: earlier\n";
    let repo = Repo::new(&[("hr.yaml", hr), ("cm.yaml", cm)]);
    let r = repo.resolve("x");
    // The later Secret overrides the ConfigMap's host; inline values
    // override the Secret's port.
    assert_eq!(r.deferred.len(), 1, "{:?}", r.deferred);
    let d = &r.deferred[0];
    assert_eq!(
        (d.path.as_str(), d.name.as_str(), d.key.as_str()),
        ("db.host", "operator-made", "HOST")
    );
    assert_eq!(d.keys(), Some(vec!["db".to_string(), "host".to_string()]));
    assert_eq!((d.at.line, d.at.col), (12, 7));
    assert!(d.why.contains("not in the repository"), "{}", d.why);
    assert!(r.values.path(&["db", "host"]).is_none());
    assert_eq!(
        r.values
            .path(&["db", "port"])
            .and_then(|n| n.scalar_text())
            .as_deref(),
        Some("5433")
    );
}

#[test]
fn chart_ref_to_oci_repository_tag_and_semver() {
    let hr = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: podinfo
  namespace: apps
spec:
  chartRef:
    kind: OCIRepository
    name: podinfo
";
    let oci = |r: &str| {
        format!(
            "apiVersion: source.toolkit.fluxcd.io/v1beta2\nkind: OCIRepository\nmetadata:\n  \
                 name: podinfo\n  namespace: apps\nspec:\n  url: oci://ghcr.io/stefanprodan/charts/podinfo\n  \
                 ref:\n{r}"
        )
    };
    let tag = oci("    tag: 6.5.0\n");
    let repo = Repo::new(&[("hr.yaml", hr), ("oci.yaml", &tag)]);
    let r = repo.resolve("podinfo");
    assert!(r.issues.is_empty(), "{:?}", r.issues);
    let chart = r.chart.unwrap();
    assert_eq!(chart.as_str(), Some("podinfo"));
    assert_eq!((chart.span().line, chart.span().col), (7, 8));
    let version = r.version.unwrap();
    assert_eq!(version.as_str(), Some("6.5.0"));
    assert_eq!((version.span().line, version.span().col), (9, 10));

    let semver = oci("    tag: latest\n    semver: \">=6.0.0\"\n");
    let repo = Repo::new(&[("hr.yaml", hr), ("oci.yaml", &semver)]);
    let r = repo.resolve("podinfo");
    assert_eq!(r.version.unwrap().as_str(), Some(">=6.0.0"));

    // Renovate's digest pinning: the tag beside the digest is the release.
    let pinned = oci("    tag: 6.5.0\n    digest: sha256:0123abcd\n");
    let repo = Repo::new(&[("hr.yaml", hr), ("oci.yaml", &pinned)]);
    assert_eq!(
        repo.resolve("podinfo").version.unwrap().as_str(),
        Some("6.5.0")
    );
    let digest = oci("    semver: \">=6.0.0\"\n    digest: sha256:0123abcd\n");
    let repo = Repo::new(&[("hr.yaml", hr), ("oci.yaml", &digest)]);
    assert_eq!(
        repo.resolve("podinfo").version.unwrap().as_str(),
        Some("sha256:0123abcd")
    );
}

#[test]
fn chart_ref_to_helm_chart_and_missing_ref() {
    let hr = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: app
  namespace: apps
spec:
  chartRef:
    kind: HelmChart
    name: app-chart
    namespace: flux-system
";
    let chart = "\
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata:
  name: app-chart
  namespace: flux-system
spec:
  chart: ./charts/app
  version: \"1.x\"
";
    let repo = Repo::new(&[("hr.yaml", hr), ("chart.yaml", chart)]);
    let r = repo.resolve("app");
    assert_eq!(r.chart.unwrap().as_str(), Some("./charts/app"));
    assert_eq!(r.version.unwrap().as_str(), Some("1.x"));
    assert_eq!(r.source.unwrap().namespace, "flux-system");

    let repo = Repo::new(&[("hr.yaml", hr)]);
    let r = repo.resolve("app");
    assert!(r.chart.is_none());
    assert_eq!(r.issues.len(), 1);
}

#[test]
fn target_path_forms() {
    let span = Span::default();
    let mut root = Values::map(span);
    let set = |root: &mut Values, path: &str, raw: &str| {
        target_value(raw, span)
            .and_then(|v| set_path(root, path, v, &std::cell::Cell::new(RELEASE_LIST_ITEMS)))
    };
    set(&mut root, "a.b", "true").unwrap();
    set(&mut root, "a.c", "'123'").unwrap();
    set(&mut root, "a.d", "0123").unwrap();
    set(&mut root, "list[1].name", "x").unwrap();
    set(&mut root, "dotted\\.key", "null").unwrap();
    set(&mut root, "l", "{1,two}").unwrap();
    assert!(set(&mut root, "a.b.c", "1").is_err());
    assert!(set(&mut root, "x", "1,y=2").is_err());
    assert!(set(&mut root, "x[", "1").is_err());
    assert!(set(&mut root, "", "1").is_err());
    assert_eq!(
        root.into_node(&Default::default()).to_json(),
        serde_json::json!({
            "a": {"b": true, "c": "123", "d": "0123"},
            "list": [null, {"name": "x"}],
            "dotted.key": null,
            "l": [1, "two"],
        })
    );
}

#[test]
fn target_paths_nest_as_deep_as_helm_and_the_linter_allow() {
    let keys = |n: usize| vec!["k"; n].join(".");
    // Thirty dots after keys pass Helm's strvals; the thirty-first fails.
    assert_eq!(parse_path(&keys(31)).map(|s| s.len()), Ok(31));
    let deeper = parse_path(&keys(32)).unwrap_err();
    assert!(
        deeper.contains("maximum supported nested level of 30"),
        "{deeper}"
    );
    // A dot after a list index is not counted by Helm; the steps are.
    let lists = format!("a{}", "[0]".repeat(255));
    assert_eq!(parse_path(&lists).map(|s| s.len()), Ok(256));
    let past = parse_path(&format!("{lists}[0]")).unwrap_err();
    assert!(
        past.contains("more than 256 keys and list indexes"),
        "{past}"
    );
    let mixed = format!("a{}", "[0].k".repeat(200));
    assert!(parse_path(&mixed).is_err_and(|e| e.contains("more than 256")));
}

#[test]
fn later_values_from_override_target_path_and_inline_overrides_both() {
    let hr = "\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata:
  name: x
  namespace: apps
spec:
  valuesFrom:
    - kind: ConfigMap
      name: base-values
      valuesKey: replicas
      targetPath: global.debug
    - kind: ConfigMap
      name: base-values
  values:
    global:
      debug: inline
";
    let repo = Repo::new(&[("hr.yaml", hr), ("values.yaml", VALUES)]);
    let r = repo.resolve("x");
    assert_eq!(r.values.to_json()["global"]["debug"], "inline");

    let without_inline = hr.split("  values:\n").next().unwrap_or_default();
    let repo = Repo::new(&[("hr.yaml", without_inline), ("values.yaml", VALUES)]);
    let r = repo.resolve("x");
    assert_eq!(r.values.to_json()["global"]["debug"], false);

    let target_last = without_inline.replace(
        "      targetPath: global.debug\n    - kind: ConfigMap\n      name: base-values\n",
        "      targetPath: global.debug\n",
    );
    let target_last = target_last.replace(
        "  valuesFrom:\n",
        "  valuesFrom:\n    - kind: ConfigMap\n      name: base-values\n",
    );
    let repo = Repo::new(&[("hr.yaml", &target_last), ("values.yaml", VALUES)]);
    let r = repo.resolve("x");
    assert_eq!(r.values.to_json()["global"]["debug"], 3);
}
