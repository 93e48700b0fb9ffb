//! `ExternalArtifact` sources made by source-watcher's `ArtifactGenerator`
//! (`source.extensions.fluxcd.io/v1beta1`) from sources of the repository:
//! each artifact's copy rules map its paths back to repository
//! directories, so the Flux Kustomizations that build from it render.
//!
//! Copy semantics are source-watcher's (`internal/builder/builder.go`,
//! docs/spec/v1beta1/artifactgenerators.md): `@alias/dir` or `@alias/dir/`
//! copies the directory as `to/<basename of dir>` (cp -r), `@alias/dir/**`
//! copies its contents into `to`. Other globs select files one by one and
//! are not mapped.

use std::path::{Path, PathBuf};

use crate::source::{Object, PathMap, join_within};

/// Part of an artifact that is a directory of a source.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mount {
    /// Directory in the artifact.
    at: PathBuf,
    /// `kind/name` of the source.
    source: String,
    /// Directory in the source.
    from: PathBuf,
}

/// The artifacts of every ArtifactGenerator of the repository, by
/// `ExternalArtifact/<name>`.
#[derive(Debug, Default)]
pub struct Artifacts {
    by_source: PathMap<String, Artifact>,
}

#[derive(Debug, Default)]
struct Artifact {
    /// `namespace/name` of the generator.
    generator: String,
    mounts: Vec<Mount>,
    /// Copy rules that are not directories (globs over files).
    unmapped: Vec<String>,
}

/// A path of an artifact in terms of a source of the repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InSource {
    pub source: String,
    pub path: PathBuf,
}

impl Artifacts {
    pub fn from_generators<'a>(generators: impl IntoIterator<Item = &'a Object>) -> Artifacts {
        let mut out = Artifacts::default();
        for g in generators {
            let aliases: PathMap<&str, String> = g
                .root
                .path(&["spec", "sources"])
                .and_then(|n| n.as_seq())
                .into_iter()
                .flatten()
                .filter_map(|s| {
                    let alias = s.str_at(&["alias"])?;
                    let kind = s.str_at(&["kind"])?;
                    let name = s.str_at(&["name"])?;
                    Some((alias, format!("{kind}/{name}")))
                })
                .collect();
            let generator = format!("{}/{}", g.namespace().unwrap_or(""), g.name());
            for a in g
                .root
                .path(&["spec", "artifacts"])
                .and_then(|n| n.as_seq())
                .into_iter()
                .flatten()
            {
                let Some(name) = a.str_at(&["name"]) else {
                    continue;
                };
                let mut artifact = Artifact {
                    generator: generator.clone(),
                    ..Artifact::default()
                };
                for c in a.get("copy").and_then(|n| n.as_seq()).into_iter().flatten() {
                    let (Some(from), Some(to)) = (c.str_at(&["from"]), c.str_at(&["to"])) else {
                        continue;
                    };
                    match mount(&aliases, from, to) {
                        Some(m) => artifact.mounts.push(m),
                        None => artifact.unmapped.push(from.to_string()),
                    }
                }
                out.by_source
                    .insert(format!("ExternalArtifact/{name}"), artifact);
            }
        }
        out
    }

    /// Whether `source` (`kind/name`) is an artifact of a generator here.
    pub fn knows(&self, source: &str) -> bool {
        self.by_source.contains_key(source)
    }

    /// The sources an artifact copies directories from.
    pub fn sources_of(&self, source: &str) -> Vec<&str> {
        self.by_source
            .get(source)
            .into_iter()
            .flat_map(|a| a.mounts.iter().map(|m| m.source.as_str()))
            .collect()
    }

    /// Where `path` of the artifact `source` comes from, or why that is
    /// not known. `None` when no generator here makes that artifact.
    pub fn resolve(&self, source: &str, path: &Path) -> Option<Result<InSource, String>> {
        let a = self.by_source.get(source)?;
        if let Some(m) = a.mounts.iter().rev().find(|m| path.starts_with(&m.at)) {
            let rest = path.strip_prefix(&m.at).unwrap_or(Path::new(""));
            return Some(Ok(InSource {
                source: m.source.clone(),
                path: m.from.join(rest),
            }));
        }
        // A path above the copied directories: Flux generates a
        // kustomization over the directory, which takes in the one below.
        let below: Vec<&Mount> = a.mounts.iter().filter(|m| m.at.starts_with(path)).collect();
        Some(match below.as_slice() {
            [one] if a.unmapped.is_empty() => Ok(InSource {
                source: one.source.clone(),
                path: one.from.clone(),
            }),
            [] if a.unmapped.is_empty() => Err(format!(
                "no copy rule of ArtifactGenerator {} puts anything at {} of {source}",
                a.generator,
                path.display()
            )),
            _ => Err(format!(
                "{} of {source} combines several copy rules of ArtifactGenerator {} ({}), \
                 which are not mapped to one directory of the repository",
                path.display(),
                a.generator,
                a.mounts
                    .iter()
                    .map(|m| m.from.display().to_string())
                    .chain(a.unmapped.iter().cloned())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        })
    }
}

/// A copy rule that copies a whole directory of a source.
fn mount(aliases: &PathMap<&str, String>, from: &str, to: &str) -> Option<Mount> {
    let (alias, pattern) = from.strip_prefix('@')?.split_once('/')?;
    let source = aliases.get(alias)?.clone();
    let to = join_within(Path::new(""), to.strip_prefix("@artifact/")?)?;
    if let Some(dir) = pattern
        .strip_suffix("/**")
        .or((pattern == "**").then_some(""))
        && !has_glob(dir)
    {
        return Some(Mount {
            at: to,
            source,
            from: join_within(Path::new(""), dir)?,
        });
    }
    if has_glob(pattern) {
        return None;
    }
    let from = join_within(Path::new(""), pattern)?;
    // cp -r dir dest: the directory lands under its own name. A file copy
    // has an extension-like name; directories are checked when resolved.
    let at = match from.file_name() {
        Some(base) => to.join(base),
        None => to,
    };
    Some(Mount { at, source, from })
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '[', ']'])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{FileId, Limits, parse_documents};

    fn artifacts(text: &str) -> Artifacts {
        let doc = parse_documents(text, FileId(0), &Limits::default())
            .unwrap()
            .remove(0);
        Artifacts::from_generators(&[Object::new(doc, FileId(0), 0)])
    }

    const GEN: &str = "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: g, namespace: flux-system}\nspec:\n  sources:\n  - {alias: repo, kind: OCIRepository, name: flux-system}\n  artifacts:\n  - name: app\n    copy:\n    - {from: \"@repo/apps/app/\", to: \"@artifact/apps/app/\"}\n  - name: flat\n    copy:\n    - {from: \"@repo/deploy/flat/**\", to: \"@artifact/\"}\n  - name: files\n    copy:\n    - {from: \"@repo/deploy/*.yaml\", to: \"@artifact/\"}\n";

    #[test]
    fn directory_copies_land_under_their_name_and_globs_of_contents_do_not() {
        let a = artifacts(GEN);
        let at = |src: &str, p: &str| a.resolve(src, Path::new(p)).unwrap();
        // cp -r apps/app/ apps/app/ gives apps/app/app; the Flux path
        // apps/app holds just that directory.
        let expected = Ok(InSource {
            source: "OCIRepository/flux-system".into(),
            path: "apps/app".into(),
        });
        assert_eq!(at("ExternalArtifact/app", "apps/app"), expected);
        assert_eq!(at("ExternalArtifact/app", "apps/app/app"), expected);
        assert_eq!(
            at("ExternalArtifact/flat", "sub"),
            Ok(InSource {
                source: "OCIRepository/flux-system".into(),
                path: "deploy/flat/sub".into(),
            })
        );
        let err = at("ExternalArtifact/files", "").unwrap_err();
        assert!(err.contains("deploy/*.yaml"), "{err}");
        assert!(a.resolve("ExternalArtifact/none", Path::new("")).is_none());
    }
}
