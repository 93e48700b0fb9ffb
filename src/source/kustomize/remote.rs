//! Remote entries of a kustomization: a remote resource or component is
//! fetched and read when the user asked for it (`--remote`, see
//! [`crate::source::remote`]), else it is a gap that says what it names
//! and why it was not read. A remote git folder is built as kustomize
//! builds it (api/internal/target/kusttarget.go `accumulateResources`
//! and `accumulateComponents`: `ldr.New(path)` clones the repository and
//! `accumulateDirectory` builds the folder, a component against the
//! objects of the kustomization that lists it), on the files of its
//! checkout registered in the run's one source map under their remote
//! names (`<repo>//<file>?ref=<ref>`): its components, generator inputs
//! and patch files are read like a local folder's, and its objects keep
//! where each value is written there.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::source::files::Parsed;
use crate::source::remote::{self, Checkout, Entry, Fetched};

impl Builder<'_> {
    /// A remote `resources:` entry at `span`, or with `component` a
    /// remote `components:` entry.
    pub(super) fn load_remote(
        &mut self,
        entry: &str,
        span: Span,
        acc: &mut Acc,
        component: bool,
    ) -> Result<(), Issue> {
        let what = match component {
            true => "component",
            false => "resource",
        };
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
        let Some(fetcher) = self.files.remote().cloned() else {
            let why = format!(
                "{}; remote entries are fetched only with --remote",
                parsed.describe()
            );
            return Err(gap(self.files, why));
        };
        if self.files.spoil_fork() {
            return Err(Issue::file(Path::new(entry), "not fetched on a fork"));
        }
        let fetched = fetcher
            .fetch(&parsed)
            .map_err(|e| gap(self.files, e.to_string()))?;
        match (fetched, parsed) {
            (Fetched::File { text }, Entry::File { url }) => {
                self.remote_file(&url, text, span, acc)
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
        text: String,
        span: Span,
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        let name = PathBuf::from(url);
        let sources = &mut self.files.sources;
        let file = match sources.find(&name) {
            Some(id) => id,
            None => sources.add_external(name, text.into()),
        };
        let text = self.files.sources.get(file).text.clone();
        let docs = crate::yaml::parse_documents(&text, file, &self.files.limits().yaml)
            .map_err(|e| Issue::yaml(Path::new(url), e).gap(Gap::Malformed))?;
        let parsed = Parsed {
            file,
            docs: docs.into_iter().map(Arc::new).collect(),
        };
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
