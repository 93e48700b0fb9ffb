//! The files a kustomization reads other than as resources: generator
//! inputs (`files:`, `envs:`, `env:`), patch files, transformer
//! configurations and replacements. kustomize reads each through its
//! loader's `Load` (api/internal/loader/fileloader.go `FileLoader.Load`,
//! called by api/kv/kv.go `keyValuesFromFileSources` and
//! `keyValuesFromEnvFiles`, api/internal/builtins/PatchTransformer.go and
//! PatchJson6902Transformer.go `Config`, api/resource/factory.go
//! `SliceFromPatches`), which fetches an entry over HTTP when
//! `IsRemoteFile` holds (Go's `url.Parse` finds the scheme `http` or
//! `https`) and otherwise reads a path below the kustomization's folder,
//! under the load restrictor. Only the scheme decides: a scheme-less
//! `github.com/org/repo/file`, a `git::` or `ssh://` entry is a path there,
//! and is missing unless the folder holds it. kustomize-controller builds
//! on the same loader; its `--no-remote-bases` only swaps the filesystem
//! (fluxcd/pkg kustomize/kustomize_generator.go `SecureBuild`,
//! kustomize/filesys/fs_secure.go), which refuses a clone outside the
//! root but never sees an HTTP fetch, so Flux reads these files either
//! way (its FAQ, fluxcd/website content/en/flux/faq.md: the flag "does
//! not affect the usage of remote targets pointing to a single file").
//! Here one is fetched with `--remote` ([`super::remote`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::source::files::{Files, Input, Parsed, ReadError};
use crate::source::{Gap, Issue, join_within};
use crate::yaml::{FileId, Span};

/// Where a kustomization's input file is read from.
pub(crate) enum InputFile {
    /// A file of the repository (or of a fetched git folder).
    Local(PathBuf),
    /// A file fetched from `url`, registered in the source map under it
    /// when read as text.
    Remote { url: String, bytes: Arc<[u8]> },
}

impl InputFile {
    /// The file as a user reads its name.
    pub fn shown(&self, files: &Files) -> String {
        match self {
            InputFile::Local(path) => files.shown(path),
            InputFile::Remote { url, .. } => url.clone(),
        }
    }

    /// Its text, registered in the source map.
    pub fn text(&self, files: &mut Files) -> Result<(FileId, Arc<str>), Issue> {
        match self {
            InputFile::Local(path) => files.text(path),
            InputFile::Remote { url, bytes } => super::remote::register(files, url, bytes),
        }
    }

    /// Its bytes (a generator reads a file whole, text or not).
    pub fn bytes(&self, files: &Files) -> Result<Vec<u8>, ReadError> {
        match self {
            InputFile::Local(path) => files.bytes(path),
            InputFile::Remote { bytes, .. } => Ok(bytes.to_vec()),
        }
    }

    /// Its YAML documents.
    pub fn documents(&self, files: &mut Files) -> Result<Arc<Parsed>, Issue> {
        match self {
            InputFile::Local(path) => files.documents(path),
            InputFile::Remote { url, .. } => {
                let (file, text) = self.text(files)?;
                let docs = crate::yaml::parse_documents(&text, file, &files.limits().yaml)
                    .map_err(|e| Issue::yaml(Path::new(url), e))?;
                let docs = docs.into_iter().map(Arc::new).collect();
                Ok(Arc::new(Parsed::of(file, docs, &text)))
            }
        }
    }
}

/// Whether kustomize's `FileLoader.Load` fetches `entry` over HTTP
/// (api/internal/loader/fileloader.go `IsRemoteFile`): a URL scheme, in
/// any case, that is `http` or `https`.
pub(crate) fn is_remote_file(entry: &str) -> bool {
    scheme(entry).is_some_and(|s| s.eq_ignore_ascii_case("http") || s.eq_ignore_ascii_case("https"))
}

/// The scheme Go's `url.Parse` reads: letters, digits, `+`, `-` and `.`
/// before the first `:`, starting with a letter.
fn scheme(entry: &str) -> Option<&str> {
    let (scheme, _) = entry.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)))
        .then_some(scheme)
}

/// The file `entry`, which kustomization `by` in `dir` reads as `role`
/// (at `span`): fetched when it is an http(s) URL, else a file in or
/// below `dir` (anywhere in the repository when not `restrict`ed, as
/// kustomize-controller loads).
pub(crate) fn open(
    files: &mut Files,
    dir: &Path,
    restrict: bool,
    by: &Path,
    entry: &str,
    span: Span,
    role: Input,
) -> Result<InputFile, Issue> {
    if is_remote_file(entry) {
        let (url, bytes) = super::remote::fetch_input(files, entry, span, role)?;
        return Ok(InputFile::Remote { url, bytes });
    }
    let Some(path) = join_within(dir, entry) else {
        return Err(Issue::at(
            &files.sources,
            span,
            format!("'{entry}' leaves the repository"),
        ));
    };
    if restrict && !path.starts_with(dir) {
        return Err(Issue::at(
            &files.sources,
            span,
            format!(
                "security; file '{}' is not in or below '{}'",
                files.shown(&path),
                files.shown(dir)
            ),
        ));
    }
    if let Some(reason) = files.outside(&path) {
        return Err(Issue::at(&files.sources, span, reason));
    }
    if !files.is_file(&path) {
        // A remote base's form is a path here: say so, since it reads
        // like something fetched.
        let hint = match super::resources::is_remote(entry) {
            true => {
                "; kustomize fetches only an http(s) URL here and reads any other entry as a path"
            }
            false => "",
        };
        return Err(Issue::at(
            &files.sources,
            span,
            format!("file '{}' does not exist{hint}", files.shown(&path)),
        )
        .gap(Gap::Missing));
    }
    files.note_input(path.clone(), role, by.to_path_buf());
    Ok(InputFile::Local(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_http_or_https_scheme_is_fetched_as_kustomize_decides() {
        for remote in [
            "https://example.com/a.conf",
            "HTTPS://example.com/a.conf",
            "http://127.0.0.1:8080/p.yaml",
        ] {
            assert!(is_remote_file(remote), "{remote}");
        }
        for path in [
            "github.com/org/repo/a.conf",
            "git::https://example.com/org/repo.git//a.conf",
            "ssh://git@example.com/org/repo/a.conf",
            "git@github.com:org/repo.git",
            "file:///etc/passwd",
            "a.conf",
            "dir/k=v",
            "1http://x",
        ] {
            assert!(!is_remote_file(path), "{path}");
        }
    }
}
