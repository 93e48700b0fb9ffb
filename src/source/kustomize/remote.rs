//! Remote entries of a kustomization: a remote resource, component or
//! transformer, or a file it reads at an http(s) URL (a generator
//! input, a patch: see [`super::input`]), is fetched and read when the user asked for it
//! (`--remote`, see [`crate::source::remote`]), else it is a gap that
//! says what it names and why it was not read. A remote git folder is
//! built as kustomize builds it (api/internal/target/kusttarget.go
//! `accumulateResources` and `accumulateComponents`: `ldr.New(path)`
//! clones the repository and `accumulateDirectory` builds the folder, a
//! component against the objects of the kustomization that lists it),
//! on the files of its
//! checkout registered in the run's one source map under their remote
//! names (`<repo>//<file>?ref=<ref>`): its components, generator inputs
//! and patch files are read like a local folder's, and its objects keep
//! where each value is written there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::source::files::{Input, Parsed};
use crate::source::remote::{self, Checkout, Entry, Fetched};
use crate::yaml::FileId;

/// The list a remote entry is in, which says how its objects are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ListedIn {
    /// `resources:`: its objects join the kustomization's.
    Resource,
    /// `components:`: a folder applied to the kustomization's objects.
    Component,
    /// `transformers:`: accumulated like a resource, each object it
    /// yields a transformer's configuration (api/internal/target/
    /// kusttarget.go `configureExternalTransformers` calls
    /// `accumulateResources` on the entries that are no inline YAML).
    Transformer,
}

impl ListedIn {
    fn as_str(self) -> &'static str {
        match self {
            ListedIn::Resource => "resource",
            ListedIn::Component => "component",
            ListedIn::Transformer => "transformer",
        }
    }
}

impl Builder<'_> {
    /// A remote entry at `span` of the list `listed`, its objects added
    /// to `acc` (a component's changes made to them).
    pub(super) fn load_remote(
        &mut self,
        entry: &str,
        span: Span,
        acc: &mut Acc,
        listed: ListedIn,
    ) -> Result<(), Issue> {
        let what = listed.as_str();
        let component = listed == ListedIn::Component;
        let gap = |files: &Files, why: String| {
            let message = format!("remote {what} '{entry}' is not fetched: {why}");
            Issue::at(&files.sources, span, message).gap(Gap::Remote)
        };
        let parsed = remote::parse(entry).map_err(|why| gap(self.files, why))?;
        if component && let Entry::File { .. } = parsed {
            // kustomize builds a component from a folder with a
            // kustomization only (`accumulateComponents`).
            let why = "it is a manifest file, and a component is a folder of a git repository";
            return Err(gap(self.files, why.into()));
        }
        let fetched = fetch(self.files, &parsed, &parsed.describe(), &gap)?;
        match (fetched, parsed) {
            (Fetched::File { bytes }, Entry::File { url }) => {
                self.remote_file(&url, &bytes, span, acc)
            }
            (
                Fetched::Tree { dir },
                Entry::Git {
                    repo,
                    path,
                    reference,
                },
            ) => {
                let checkout = Checkout { repo, reference };
                self.remote_tree(&dir, &path, checkout, span, acc, component)
            }
            _ => Err(gap(
                self.files,
                "the cache holds another kind of entry".into(),
            )),
        }
    }

    /// The objects of a fetched manifest, registered under its URL.
    fn remote_file(
        &mut self,
        url: &str,
        bytes: &[u8],
        span: Span,
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        let (file, text) = register(self.files, url, bytes).map_err(|i| i.gap(Gap::Malformed))?;
        let docs = crate::yaml::parse_documents(&text, file, &self.files.limits().yaml)
            .map_err(|e| Issue::yaml(Path::new(url), e).gap(Gap::Malformed))?;
        let parsed = Parsed::of(file, docs.into_iter().map(Arc::new).collect(), &text);
        let loaded =
            resources::objects_of(self.files, parsed).map_err(|i| i.gap(Gap::Malformed))?;
        for r in loaded {
            acc.append(r, self.files, span)?;
        }
        Ok(())
    }

    /// Builds folder `path` of the checkout in `dir` into `acc`, as the
    /// entry at `span` lists it: a kustomization, or with `component` a
    /// component applied to `acc`'s objects. What fails in it is a gap of
    /// this build, which goes on without it.
    fn remote_tree(
        &mut self,
        dir: &Path,
        path: &str,
        checkout: Checkout,
        span: Span,
        acc: &mut Acc,
        component: bool,
    ) -> Result<(), Issue> {
        let Some(folder) = crate::source::join_within(Path::new(""), path) else {
            let message = format!("remote folder '{path}' leaves its repository");
            return Err(Issue::at(&self.files.sources, span, message).gap(Gap::Remote));
        };
        // Registered here first, at the same point in every run, and
        // shared with the checkout's files.
        self.default_config()?;
        let mut files = self.files.checkout(dir, checkout);
        let (result, gaps) = {
            let mut b = Builder::new(&mut files, true);
            // One build's budgets, the fetched folder's part of them.
            (b.builds, b.merged, b.generator_bytes_left) =
                (self.builds, self.merged, self.generator_bytes_left);
            let result = b.build_dir(&folder, acc, component, Some(span));
            (self.builds, self.merged, self.generator_bytes_left) =
                (b.builds, b.merged, b.generator_bytes_left);
            (result, std::mem::take(&mut b.gaps))
        };
        self.files.take_checkout(files);
        self.gaps.extend(gaps);
        result.map_err(|issue| {
            let gap = issue.gap.unwrap_or(Gap::Remote);
            issue.gap(gap)
        })
    }
}

/// A file a kustomization reads at `url` (at `span`, as `role`: a
/// generator input, a patch), fetched as a remote manifest is: the same
/// fetcher, cache, budgets and `-v` line. kustomize GETs the URL itself,
/// whatever it looks like (api/internal/loader/fileloader.go
/// `FileLoader.Load` and `httpClientGetContent`): it is never a git
/// folder here. Returns the URL and the bytes served, which the reader
/// takes as text ([`register`]) or, a generator, as they are.
pub(super) fn fetch_input(
    files: &mut Files,
    url: &str,
    span: Span,
    role: Input,
) -> Result<(String, Arc<[u8]>), Issue> {
    // Go's url.Parse lowers the scheme; the fetcher's https rule reads it.
    let url = match url.split_once(':') {
        Some((scheme, rest)) => format!("{}:{rest}", scheme.to_ascii_lowercase()),
        None => url.to_string(),
    };
    let gap = |files: &Files, why: String| {
        let message = format!(
            "remote file '{url}' ({}) is not fetched: {why}",
            role.as_str()
        );
        Issue::at(&files.sources, span, message).gap(Gap::Remote)
    };
    let entry = Entry::File { url: url.clone() };
    match fetch(files, &entry, "kustomize fetches it over HTTP", &gap)? {
        Fetched::File { bytes } => Ok((url, bytes)),
        Fetched::Tree { .. } => Err(gap(files, "the cache holds another kind of entry".into())),
    }
}

/// `entry` fetched (or from the cache), when the user asked for fetches;
/// else, or when it cannot be, the issue `gap` makes of why, `what`
/// saying what the entry is when fetching is off. On a fork, nothing is
/// fetched: the build is done again in order, so that what a fetch
/// registers gets the same [`FileId`] in every run.
fn fetch(
    files: &mut Files,
    entry: &Entry,
    what: &str,
    gap: &dyn Fn(&Files, String) -> Issue,
) -> Result<Fetched, Issue> {
    let Some(fetcher) = files.remote().cloned() else {
        let why = format!("{what}; remote entries are fetched only with --remote");
        return Err(gap(files, why));
    };
    if files.spoil_fork() {
        return Err(Issue::file(
            Path::new(&entry.key().0),
            "not fetched on a fork",
        ));
    }
    fetcher.fetch(entry).map_err(|e| gap(files, e.to_string()))
}

/// A fetched file's text, registered in the source map under its URL
/// (once: a URL read by several entries is one file); not UTF-8, an
/// issue at its first bad byte, as a file of the repository gets.
pub(super) fn register(
    files: &mut Files,
    url: &str,
    bytes: &[u8],
) -> Result<(FileId, Arc<str>), Issue> {
    let name = PathBuf::from(url);
    let sources = &mut files.sources;
    let file = match sources.find(&name) {
        Some(id) => id,
        None => {
            let text = crate::source::files::utf8_text(bytes.to_vec(), url)?;
            sources.add_external(name, text.into())
        }
    };
    Ok((file, sources.get(file).text.clone()))
}
