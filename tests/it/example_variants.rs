//! The bundled example repo (the founding incident) and one-edit variants
//! of it: each variant copies `testdata/example-repo` into a temporary
//! directory, changes one thing, and checks which findings remain and
//! exactly where they point.

use std::path::Path;

use homelab_lint::{Options, lint_repo};

const CACHE: &str = "authentik-cache-on-sync-replicated-postgres";
const KEEPALIVES: &str = "authentik-persistent-connections-without-keepalives";

/// A finding reduced to what these tests compare: locations as
/// `path:line:column` and the label text at each.
#[derive(Debug)]
struct Found {
    rule: String,
    at: String,
    label: String,
    related: Vec<(String, String)>,
}

impl Found {
    /// Location and label of the app's version (a related location of a
    /// combination finding, whose primary is the Postgres setting).
    fn version(&self) -> (&str, &str) {
        self.related
            .iter()
            .find(|(_, t)| t.ends_with(" 2025.10.1"))
            .map(|(at, t)| (at.as_str(), t.as_str()))
            .unwrap_or_else(|| panic!("no version label: {self:#?}"))
    }

    fn related_at(&self, text: &str) -> Option<&str> {
        self.related
            .iter()
            .find(|(_, t)| t.contains(text))
            .map(|(at, _)| at.as_str())
    }
}

fn lint(root: &Path) -> Vec<Found> {
    let linted = lint_repo(root, &Options::default()).unwrap();
    let problems: Vec<&String> = linted
        .log
        .iter()
        .filter(|l| l.starts_with("warning:"))
        .collect();
    assert!(
        problems.is_empty(),
        "{} does not load cleanly: {problems:?}",
        root.display()
    );
    let mut found: Vec<Found> = linted
        .report
        .findings
        .into_iter()
        .map(|f| Found {
            rule: f.rule,
            at: f.location.to_string(),
            label: f.location.message,
            related: f
                .related
                .into_iter()
                .map(|l| (l.to_string(), l.message))
                .collect(),
        })
        .collect();
    found.sort_by(|a, b| (&a.rule, &a.at).cmp(&(&b.rule, &b.at)));
    found
}

fn rules_of(found: &[Found]) -> Vec<&str> {
    found.iter().map(|f| f.rule.as_str()).collect()
}

fn one<'f>(found: &'f [Found], rule: &str) -> &'f Found {
    let hits: Vec<&Found> = found.iter().filter(|f| f.rule == rule).collect();
    assert_eq!(hits.len(), 1, "expected one {rule} finding, got {found:#?}");
    hits[0]
}

/// A copy of the example repo, removed when dropped. Being outside this
/// project's git repository, its files are shown from its own root, as to
/// a user linting their copy.
struct Variant {
    dir: tempfile::TempDir,
}

impl Variant {
    fn new() -> Variant {
        let dir = tempfile::Builder::new()
            .prefix("example-variant-")
            .tempdir()
            .expect("temporary directory");
        crate::common::copy_dir(&crate::common::example_repo(), dir.path());
        Variant { dir }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Replaces the one occurrence of `from` in `file` by `to`.
    fn edit(self, file: &str, from: &str, to: &str) -> Variant {
        let path = self.root().join(file);
        let text = std::fs::read_to_string(&path).expect("read file to edit");
        assert_eq!(
            text.matches(from).count(),
            1,
            "{file} must contain {from:?} exactly once"
        );
        std::fs::write(&path, text.replacen(from, to, 1)).expect("write edited file");
        self
    }

    /// Appends a YAML document to `file`.
    fn append(self, file: &str, doc: &str) -> Variant {
        let path = self.root().join(file);
        let mut text = std::fs::read_to_string(&path).expect("read file to extend");
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("---\n");
        text.push_str(doc);
        std::fs::write(&path, text).expect("write extended file");
        self
    }
}

#[test]
fn example_repo_yields_exactly_the_two_founding_findings() {
    let found = lint(Variant::new().root());
    let mut text = String::new();
    for f in &found {
        text.push_str(&format!("{} @ {}: {}\n", f.rule, f.at, f.label));
        for (at, label) in &f.related {
            text.push_str(&format!("    {at}: {label}\n"));
        }
    }
    insta::with_settings!({prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!("example_repo_findings", text);
    });
    assert_eq!(rules_of(&found), [CACHE, KEEPALIVES]);
    let cache = one(&found, CACHE);
    // Where the fix adds synchronous_commit; the version is related.
    assert_eq!(cache.at, "apps/authentik/database.yaml:21:7");
    assert_eq!(cache.version().0, "apps/authentik/helmrelease.yaml:11:16");
    assert_eq!(
        cache.related_at("storage class ceph-block"),
        Some("apps/authentik/database.yaml:12:19")
    );
    assert_eq!(
        cache.related_at("${CLUSTER_STORAGE_CLASS} is defined here"),
        Some("clusters/home/cluster-settings.yaml:10:26")
    );
    assert_eq!(
        one(&found, KEEPALIVES).at,
        "apps/authentik/helmrelease.yaml:21:18"
    );
}

#[test]
fn synchronous_commit_off_silences_the_cache_rule() {
    let v = Variant::new().edit(
        "apps/authentik/database.yaml",
        "      shared_buffers: 256MB\n",
        "      shared_buffers: 256MB\n      synchronous_commit: \"off\"\n",
    );
    assert_eq!(rules_of(&lint(v.root())), [KEEPALIVES]);
}

#[test]
fn local_path_storage_silences_the_cache_rule() {
    let v = Variant::new().edit(
        "infrastructure/storage/ceph-block.yaml",
        "provisioner: rook-ceph.rbd.csi.ceph.com",
        "provisioner: rancher.io/local-path",
    );
    assert_eq!(rules_of(&lint(v.root())), [KEEPALIVES]);
}

#[test]
fn authentik_before_2025_10_silences_the_cache_rule() {
    let v = Variant::new().edit(
        "apps/authentik/helmrelease.yaml",
        "version: 2025.10.1",
        "version: 2025.8.3",
    );
    assert_eq!(rules_of(&lint(v.root())), [KEEPALIVES]);
}

#[test]
fn image_tag_with_digest_wins_over_an_old_chart_version() {
    let digest = "0123456789abcdef".repeat(4);
    let v = Variant::new()
        .edit(
            "apps/authentik/helmrelease.yaml",
            "version: 2025.10.1",
            "version: 2025.8.3",
        )
        .edit(
            "apps/authentik/helmrelease.yaml",
            "    global:\n",
            &format!("    global:\n      image:\n        tag: 2025.10.1@sha256:{digest}\n"),
        );
    let found = lint(v.root());
    assert_eq!(rules_of(&found), [CACHE, KEEPALIVES]);
    let cache = one(&found, CACHE);
    // `        tag: 2025.10.1@sha256:…` is line 19; the value starts at column 14.
    assert_eq!(cache.version().0, "apps/authentik/helmrelease.yaml:19:14");
}

#[test]
fn chart_ref_to_an_oci_repository_points_at_its_tag() {
    let v = Variant::new()
        .edit(
            "apps/authentik/helmrelease.yaml",
            "  chart:\n    spec:\n      chart: authentik\n      version: 2025.10.1\n      sourceRef:\n        kind: HelmRepository\n        name: authentik\n        namespace: flux-system\n",
            "  chartRef:\n    kind: OCIRepository\n    name: authentik\n    namespace: flux-system\n",
        )
        .append(
            "infrastructure/sources/authentik.yaml",
            "apiVersion: source.toolkit.fluxcd.io/v1\n\
             kind: OCIRepository\n\
             metadata:\n  \
               name: authentik\n\
             spec:\n  \
               interval: 2h\n  \
               ref:\n    \
                 tag: 2025.10.1\n  \
               url: oci://ghcr.io/goauthentik/helm-charts/authentik\n",
        );
    let found = lint(v.root());
    assert_eq!(rules_of(&found), [CACHE, KEEPALIVES]);
    let cache = one(&found, CACHE);
    // The appended document starts on line 9 (after the separator on
    // line 8); `    tag: 2025.10.1` is its 8th line.
    assert_eq!(
        cache.version(),
        (
            "infrastructure/sources/authentik.yaml:16:10",
            "authentik 2025.10.1"
        )
    );
}

#[test]
fn version_from_a_post_build_variable_points_at_use_and_definition() {
    let v = Variant::new()
        .edit(
            "apps/authentik/helmrelease.yaml",
            "version: 2025.10.1",
            "version: ${AUTHENTIK_VERSION}",
        )
        .edit(
            "clusters/home/cluster-settings.yaml",
            "  TIMEZONE: Europe/Berlin\n",
            "  TIMEZONE: Europe/Berlin\n  AUTHENTIK_VERSION: 2025.10.1\n",
        );
    let found = lint(v.root());
    assert_eq!(rules_of(&found), [CACHE, KEEPALIVES]);
    let cache = one(&found, CACHE);
    assert_eq!(
        cache.version(),
        (
            "apps/authentik/helmrelease.yaml:11:16",
            "authentik 2025.10.1"
        )
    );
    assert_eq!(
        cache.related_at("${AUTHENTIK_VERSION} is defined here"),
        Some("clusters/home/cluster-settings.yaml:12:22"),
        "{cache:#?}"
    );
}
