//! Release knowledge as data: `rules/releases/<app>.yaml` lists the
//! releases of an app whose upgrade changes what it needs (Authentik
//! 2025.10 moves its cache to Postgres). With `--base`, the app versions
//! of the base commit form a [`Baseline`]; the `releaseCrossed` rule step
//! holds for an app whose version moved across one of these releases, and
//! later steps of the same rule join the current facts (database,
//! settings, storage) to it.

use std::collections::HashMap;

use include_dir::{Dir, include_dir};
use schemars::JsonSchema;
use semver::Version;
use serde::{Deserialize, Serialize};

use crate::model::Model;
use crate::model::app::{self, AppQuery};
use crate::model::version::{Releases, parse_lenient};
use crate::source::Issue;

static BUILTIN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/rules/releases");

/// The releases of one app that change what it needs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReleaseFile {
    /// The app's name, as rules refer to this file and messages show it
    /// (`authentik`).
    pub app: String,
    /// Helm chart names that deploy the app.
    #[serde(default)]
    pub charts: Vec<String>,
    /// Image repositories of the app (registry optional for Docker Hub).
    #[serde(default)]
    pub images: Vec<String>,
    /// The releases, in any order.
    pub releases: Vec<Release>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Release {
    /// The first version with these changes (`2025.10` means 2025.10.0;
    /// pre-releases of it count as it).
    pub version: String,
    /// What changes, one fact per entry.
    pub changes: Vec<Change>,
    /// The release notes and other upstream sources of the facts.
    pub references: Vec<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Change {
    /// Stable kebab-case id that rules select changes by
    /// (`cache-in-postgres`).
    pub id: String,
    /// The fact, without a final period (facts are joined with `; ` into
    /// diagnostics).
    pub text: String,
    /// The settings that make this change hurt, as rule steps evaluated
    /// with the app bound as `app` (`object`, `values`, `env`, `anyOf`,
    /// ...). When given, the change counts only where they hold, and the
    /// objects they match are shown with the finding; without it the
    /// change concerns every install of the app.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<super::steps::Spec>,
}

impl Release {
    /// The version this release starts at, without pre-release tags.
    pub fn start(&self) -> Option<Version> {
        parse_lenient(&self.version)
    }
}

impl ReleaseFile {
    /// Releases a move from `from` to `to` crosses: `from < start <= to`,
    /// sorted by version. A downgrade crosses nothing. Without `from`
    /// (no earlier version to compare with), the releases `to` has
    /// reached: `start <= to`.
    pub fn crossed(&self, from: Option<&Version>, to: &Version) -> Vec<&Release> {
        let strip = |v: &Version| Version::new(v.major, v.minor, v.patch);
        let (from, to) = (from.map(strip), strip(to));
        let mut out: Vec<(Version, &Release)> = self
            .releases
            .iter()
            .filter_map(|r| Some((r.start()?, r)))
            .filter(|(start, _)| from.as_ref().is_none_or(|f| f < start) && *start <= to)
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out.into_iter().map(|(_, r)| r).collect()
    }

    pub fn query(&self) -> AppQuery<'_> {
        AppQuery {
            charts: &self.charts,
            images: &self.images,
        }
    }
}

/// Parses one release file; problems carry line and column.
pub fn parse(path: &str, text: &str) -> Result<ReleaseFile, Issue> {
    checked(path, super::from_yaml(path, text, "invalid release file")?)
}

/// A release file as read, refused when its facts are malformed.
fn checked(path: &str, file: ReleaseFile) -> Result<ReleaseFile, Issue> {
    let mut problems = Vec::new();
    for r in &file.releases {
        if r.start().is_none() {
            problems.push(format!("release {:?} is not a version", r.version));
        }
        if r.references.is_empty() {
            problems.push(format!("release {} has no references", r.version));
        }
        for c in &r.changes {
            if c.text.trim_end().ends_with('.') || c.text.trim().is_empty() {
                problems.push(format!(
                    "change {}: text must not be empty or end with a period",
                    c.id
                ));
            }
        }
    }
    if file.charts.is_empty() && file.images.is_empty() {
        problems.push("neither charts nor images name the app".into());
    }
    if problems.is_empty() {
        Ok(file)
    } else {
        Err(Issue::located(path, 1, 1, problems.join("; ")))
    }
}

/// The built-in release files, sorted by app, parsed once per process:
/// every run needs them (a run without `--base` too, for
/// `releaseReached`), and parsing them was 2 % of a joryirving__home-ops
/// lint, serial. The pipeline parses them beside the repository's load;
/// a [`Baseline`] borrows them rather than copying every file's steps.
pub fn builtin() -> &'static [ReleaseFile] {
    static PARSED: std::sync::OnceLock<Vec<ReleaseFile>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| {
        let mut files: Vec<ReleaseFile> = BUILTIN
            .files()
            .filter(|f| f.path().extension().is_some_and(|e| e == "yaml"))
            .filter_map(|f| {
                let path = f.path().display().to_string();
                let file = super::from_builtin(&path, f.contents_utf8()?, "invalid release file");
                checked(&path, file.ok()?).ok()
            })
            .collect();
        files.sort_by(|a, b| a.app.cmp(&b.app));
        files
    })
}

/// What the base commit of a `--base` run ran: per app and object, the
/// version. Without `--base` it has no versions, and then `releaseCrossed`
/// never holds.
#[derive(Clone, Debug)]
pub struct Baseline {
    pub releases: &'static [ReleaseFile],
    /// `(app, object id)` -> version in the base commit, with the
    /// releases its text allows (a floating tag or a range allows several).
    versions: HashMap<(String, String), (Version, Option<Releases>)>,
    present: bool,
    /// Where the versions come from (`base commit 1a2b3c`, `running in
    /// cluster home`), shown with each bump.
    pub source: String,
}

impl Default for Baseline {
    fn default() -> Baseline {
        Baseline::none()
    }
}

impl Baseline {
    /// No base commit: nothing is a bump, but the built-in release files
    /// still tell `releaseReached` which releases the current versions
    /// have reached.
    pub fn none() -> Baseline {
        Baseline {
            releases: builtin(),
            versions: HashMap::new(),
            present: false,
            source: String::new(),
        }
    }

    /// The app versions of a model, for every app the release files
    /// know: the base commit's, or the live cluster's (where a
    /// HelmRelease's version is the deployed one).
    pub fn of(
        base: &Model,
        releases: &'static [ReleaseFile],
        source: impl Into<String>,
    ) -> Baseline {
        let mut versions = HashMap::new();
        for file in releases {
            for a in app::find(base, &file.query()) {
                if let Some(v) = a.version.clone() {
                    versions.insert(
                        (file.app.clone(), base.object(a.object).id()),
                        (v, a.releases().ok()),
                    );
                }
            }
        }
        Baseline {
            releases,
            versions,
            present: true,
            source: source.into(),
        }
    }

    /// Whether a base commit was given.
    pub fn is_present(&self) -> bool {
        self.present
    }

    /// The version the base commit ran of `app` in the object `object_id`.
    pub fn version(&self, app: &str, object_id: &str) -> Option<&Version> {
        self.versions
            .get(&(app.to_string(), object_id.to_string()))
            .map(|(v, _)| v)
    }

    /// The releases the base commit's version text of `app` in
    /// `object_id` allows, when it reads as releases.
    pub fn allowed(&self, app: &str, object_id: &str) -> Option<&Releases> {
        self.versions
            .get(&(app.to_string(), object_id.to_string()))
            .and_then(|(_, r)| r.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each built-in release file parses, and reads through the
    /// repository's parser as serde-saphyr reads it.
    #[test]
    fn builtin_release_files_parse() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules/releases");
        let mut count = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path().display().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            let saphyr = parse(&path, &text).unwrap();
            let ours: ReleaseFile =
                super::super::from_builtin(&path, &text, "invalid release file").unwrap();
            assert_eq!(format!("{ours:?}"), format!("{saphyr:?}"), "{path}");
            count += 1;
        }
        assert_eq!(builtin().len(), count);
        assert!(builtin().iter().any(|f| f.app == "authentik"));
    }

    #[test]
    fn a_bump_crosses_the_releases_between_its_versions() {
        let authentik = builtin().iter().find(|f| f.app == "authentik").unwrap();
        let v = |s| parse_lenient(s).unwrap();
        let crossed = |a, b| {
            authentik
                .crossed(Some(&v(a)), &v(b))
                .iter()
                .map(|r| r.version.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(crossed("2025.8.3", "2025.10.1"), ["2025.10"]);
        assert_eq!(crossed("2025.6.4", "2025.10.0-rc1"), ["2025.8", "2025.10"]);
        assert!(crossed("2025.10.1", "2025.10.2").is_empty());
        assert!(crossed("2025.10.1", "2025.8.3").is_empty());
        let reached: Vec<_> = authentik
            .crossed(None, &v("2025.10.2"))
            .iter()
            .map(|r| r.version.clone())
            .collect();
        assert_eq!(reached, ["2025.8", "2025.10"]);
    }

    #[test]
    fn malformed_release_files_are_reported_with_their_place() {
        let err = parse(
            "x.yaml",
            "app: a\ncharts: [a]\nreleases:\n  - version: 1\n    bogus: 2\n",
        )
        .unwrap_err();
        assert_eq!(err.path, "x.yaml");
        assert!(err.line >= 4, "{err}");
        let err = parse(
            "x.yaml",
            "app: a\ncharts: [a]\nreleases:\n  - version: latest\n    changes: []\n    references: []\n",
        )
        .unwrap_err();
        assert!(err.message.contains("not a version"), "{err}");
    }
}
