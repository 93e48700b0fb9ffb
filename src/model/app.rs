//! Which app an object runs, and at which version: from a HelmRelease's
//! chart (directly, or through an OCIRepository) or from container images,
//! in workloads and in Helm values.

use semver::Version;

use super::version::{self, Releases, parse_lenient};
use super::{Model, ObjRef};
pub use crate::source::object::{pod_spec, workload_containers};
use crate::yaml::{Node, Value};

/// How a rule names an app.
#[derive(Clone, Debug, Default)]
pub struct AppQuery<'a> {
    /// Helm chart names (`authentik`).
    pub charts: &'a [String],
    /// Image repositories, with or without registry (`ghcr.io/goauthentik/server`).
    pub images: &'a [String],
}

#[derive(Clone, Debug)]
pub struct App {
    /// The HelmRelease or workload.
    pub object: ObjRef,
    /// The chart or image repository that identified it.
    pub identity: String,
    pub version: Option<Version>,
    /// Where the version is written (chart version, OCIRepository tag,
    /// image tag); may carry a Flux variable's origin.
    pub version_node: Option<Node>,
}

impl App {
    /// The releases its version text allows, or why it names none (a
    /// digest alone, `latest`, an image without a tag, no version).
    pub fn releases(&self) -> Result<Releases, String> {
        let Some(text) = self.version_node.as_ref().and_then(Node::scalar_text) else {
            return Err("has no version written".into());
        };
        if text.starts_with("sha256:") || text.starts_with("sha512:") {
            return version::releases(&text).map_err(|why| format!("version {why}"));
        }
        let (reference, digest) = match text.split_once('@') {
            Some((reference, digest)) => (reference, Some(digest)),
            None => (text.as_str(), None),
        };
        // An image reference (`repo:tag`) rather than a tag or a chart
        // version: neither holds a `:` or a `/`.
        let image = reference
            .contains([':', '/'])
            .then(|| split_image(reference));
        let tag = match &image {
            Some(image) => image.tag,
            None => Some(reference),
        };
        let what = match &image {
            Some(image) => format!("image {}", image.repository),
            None => "version".to_string(),
        };
        match (tag.filter(|t| !t.is_empty()), digest) {
            (Some(tag), _) => version::releases(tag).map_err(|why| match image {
                Some(_) => format!("tag {why}"),
                None => format!("version {why}"),
            }),
            (None, Some(digest)) => Err(format!(
                "{what} is pinned by digest {} only, which names no release",
                version::short_digest(digest)
            )),
            (None, None) => Err(format!(
                "{what} has no tag, so it runs whatever `latest` is"
            )),
        }
    }
}
/// A container image reference split into its parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageRef<'a> {
    pub repository: &'a str,
    pub tag: Option<&'a str>,
}

/// Splits `registry:5000/repo:tag@sha256:…`; the tag is what follows the
/// last `:` after the last `/`.
pub fn split_image(image: &str) -> ImageRef<'_> {
    let no_digest = image.split('@').next().unwrap_or(image);
    let last_slash = no_digest.rfind('/').map_or(0, |i| i + 1);
    match no_digest[last_slash..].rfind(':') {
        Some(i) => ImageRef {
            repository: &no_digest[..last_slash + i],
            tag: Some(&no_digest[last_slash + i + 1..]),
        },
        None => ImageRef {
            repository: no_digest,
            tag: None,
        },
    }
}

/// Docker Hub images are written with and without their registry.
fn normalize_repo(repo: &str) -> &str {
    let repo = repo
        .strip_prefix("docker.io/")
        .or_else(|| repo.strip_prefix("index.docker.io/"))
        .unwrap_or(repo);
    repo.strip_prefix("library/").unwrap_or(repo)
}

/// Whether two image repositories name the same one (Docker Hub with or
/// without its registry and `library/`).
pub fn same_repository(a: &str, b: &str) -> bool {
    normalize_repo(a) == normalize_repo(b)
}

/// What identifies the app an object runs, whatever the query: taken
/// once per model ([`Model::app_facts`]), as every app rule asks and
/// walking each release's values per rule dominated the rules' time.
pub(crate) enum AppFacts {
    Release {
        object: ObjRef,
        chart: String,
        /// [`images_in`] of the effective values.
        images: Vec<(String, Option<Node>)>,
        /// [`own_image_tag`] of the effective values.
        own_tag: Option<Node>,
        /// The chart version that runs: the deployed one for a live
        /// release, which lags the spec while an upgrade is pending or
        /// failing.
        chart_version: Option<Node>,
    },
    Workload {
        object: ObjRef,
        /// Each container's image node, repository and tag, in order.
        images: Vec<(Node, String, Option<String>)>,
    },
}

/// The [`AppFacts`] of every release and workload, in model order.
pub(crate) fn facts(model: &Model) -> Vec<AppFacts> {
    let mut out = Vec::new();
    for (i, obj) in model.objects.iter().enumerate() {
        if let Some(release) = model.release(i) {
            let chart_version = match obj.is_live() {
                true => deployed_chart_version(&obj.root).or(release.version.as_ref()),
                false => release.version.as_ref(),
            };
            out.push(AppFacts::Release {
                object: i,
                chart: release
                    .chart
                    .as_ref()
                    .and_then(Node::as_str)
                    .unwrap_or("")
                    .to_string(),
                images: images_in(&release.values),
                own_tag: own_image_tag(&release.values),
                chart_version: chart_version.cloned(),
            });
        } else if let Some(containers) = workload_containers(obj) {
            let images = containers
                .iter()
                .filter_map(|c| c.get("image"))
                .filter_map(|image| {
                    let parts = split_image(image.as_str()?);
                    Some((
                        image.clone(),
                        parts.repository.to_string(),
                        parts.tag.map(str::to_string),
                    ))
                })
                .collect();
            out.push(AppFacts::Workload { object: i, images });
        }
    }
    out
}

/// Every app in the model that the query names.
pub fn find(model: &Model, query: &AppQuery) -> Vec<App> {
    let mut apps = Vec::new();
    // Each side normalized once ([`same_repository`]): every image of
    // every app is compared with every image the query names.
    let wanted: Vec<&str> = query.images.iter().map(|w| normalize_repo(w)).collect();
    let image_matches = |repository: &str| wanted.contains(&normalize_repo(repository));
    for facts in model.app_facts() {
        match facts {
            AppFacts::Release {
                object,
                chart,
                images,
                own_tag,
                chart_version,
            } => {
                let image = images.iter().find(|(repo, _)| image_matches(repo));
                let chart_matches = query.charts.iter().any(|c| c == chart);
                if !chart_matches && image.is_none() {
                    continue;
                }
                // An image tag set in the values is what runs; otherwise the
                // chart version (for app charts such as Authentik's, equal to
                // the app version).
                let tagged = image.and_then(|(repo, tag)| tag.as_ref().map(|t| (repo, t)));
                let own_tag = own_tag.as_ref().filter(|_| chart_matches);
                let (identity, version_node) = match (tagged, own_tag) {
                    (Some((repo, tag)), _) => (repo.clone(), Some(tag.clone())),
                    (None, Some(tag)) => (chart.clone(), Some(tag.clone())),
                    // The chart version is the app's only for the charts the
                    // query names: an image matched in another chart's values
                    // (app-template, a vendor chart) without a tag says nothing
                    // about the app's version.
                    (None, None) if chart_matches => (chart.clone(), chart_version.clone()),
                    (None, None) => (chart.clone(), None),
                };
                apps.push(App {
                    object: *object,
                    identity,
                    version: version_node.as_ref().and_then(version_of),
                    version_node,
                });
            }
            AppFacts::Workload { object, images } => {
                if let Some((image, repository, tag)) = images
                    .iter()
                    .find(|(_, repository, _)| image_matches(repository))
                {
                    apps.push(App {
                        object: *object,
                        identity: repository.clone(),
                        version: tag.as_deref().and_then(parse_lenient),
                        version_node: Some(image.clone()),
                    });
                }
            }
        }
    }
    apps
}

/// Every app of the model, whatever rule asks: each HelmRelease, by its
/// chart and chart version, and each workload, by its first container's
/// image (the whole repository's graph draws them all).
pub fn every(model: &Model) -> Vec<App> {
    model
        .app_facts()
        .iter()
        .map(|facts| match facts {
            AppFacts::Release {
                object,
                chart,
                chart_version,
                ..
            } => App {
                object: *object,
                identity: chart.clone(),
                version: chart_version.as_ref().and_then(version_of),
                version_node: chart_version.clone(),
            },
            AppFacts::Workload { object, images } => {
                let first = images.first();
                App {
                    object: *object,
                    identity: first.map(|(_, repo, _)| repo.clone()).unwrap_or_default(),
                    version: first
                        .and_then(|(_, _, tag)| tag.as_deref())
                        .and_then(parse_lenient),
                    version_node: first.map(|(image, _, _)| image.clone()),
                }
            }
        })
        .collect()
}

/// The chart version a HelmRelease's status says is deployed: the newest
/// `history` snapshot that is deployed (helm-controller v1), else
/// `lastAppliedRevision` (v2beta1).
pub fn deployed_chart_version(release: &Node) -> Option<&Node> {
    let status = release.get("status")?;
    status
        .get("history")
        .and_then(Node::as_seq)
        .and_then(|h| h.iter().find(|s| s.str_at(&["status"]) == Some("deployed")))
        .and_then(|s| s.get("chartVersion"))
        .or_else(|| status.get("lastAppliedRevision"))
}

/// The tag of the chart's own image when the values pin only the tag and
/// leave the repository to the chart (`global.image.tag` in Authentik's
/// chart, `image.tag` in most others): that tag is what runs, whatever
/// the chart version says.
fn own_image_tag(values: &Node) -> Option<Node> {
    [&["global", "image"][..], &["image"][..]]
        .iter()
        .filter_map(|path| values.path(path))
        .filter(|image| image.get("repository").is_none())
        .filter_map(|image| image.get("tag"))
        .find(|tag| tag.scalar_text().is_some_and(|t| !t.is_empty()))
        .cloned()
}

fn version_of(node: &Node) -> Option<Version> {
    let text = node.scalar_text()?;
    // An image node holds `repo:tag`; a tag or chart version node just the version.
    let tag = split_image(&text).tag.map(str::to_string).unwrap_or(text);
    parse_lenient(&tag)
}

/// Images in Helm values: `image: repo:tag` strings and
/// `{repository, tag}` maps (the common chart convention). Returns the
/// repository and the node that holds the tag, if any.
fn images_in(values: &Node) -> Vec<(String, Option<Node>)> {
    let mut found = Vec::new();
    images_under(values, &mut found);
    found
}

/// [`images_in`] below `node`, in document order (a value before what it
/// holds): a walk that asks only for each key, as a walk that kept every
/// node's whole path was most of the cost of reading every release's
/// values.
fn images_under(node: &Node, found: &mut Vec<(String, Option<Node>)>) {
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|item| images_under(item, found)),
        Value::Map(entries) => {
            for (key, value) in entries.iter() {
                if key
                    .as_str()
                    .is_some_and(|k| k.eq_ignore_ascii_case("image"))
                {
                    image_at(value, found);
                }
                images_under(value, found);
            }
        }
        _ => {}
    }
}

/// The image an `image` key holds: `repo:tag` text, or a
/// `{registry, repository, tag}` map.
fn image_at(node: &Node, found: &mut Vec<(String, Option<Node>)>) {
    match &node.value {
        Value::Str(s) => {
            let parts = split_image(s);
            found.push((
                parts.repository.to_string(),
                parts.tag.is_some().then(|| node.clone()),
            ));
        }
        Value::Map(_) => {
            if let Some(repo) = node.get("repository").and_then(Node::as_str) {
                let registry = node.get("registry").and_then(Node::as_str);
                let repo = match registry {
                    Some(r) if !r.is_empty() => format!("{r}/{repo}"),
                    _ => repo.to_string(),
                };
                let tag = node
                    .get("tag")
                    .filter(|t| t.scalar_text().is_some_and(|s| !s.is_empty()))
                    .cloned();
                found.push((repo, tag));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_images_with_registry_ports_and_digests() {
        assert_eq!(
            split_image("ghcr.io/goauthentik/server:2025.10.1@sha256:abc"),
            ImageRef {
                repository: "ghcr.io/goauthentik/server",
                tag: Some("2025.10.1")
            }
        );
        assert_eq!(
            split_image("registry:5000/team/app"),
            ImageRef {
                repository: "registry:5000/team/app",
                tag: None
            }
        );
        assert_eq!(normalize_repo("docker.io/library/postgres"), "postgres");
    }
}
