//! Remote entries of a kustomization: a remote resource is fetched and
//! read when the user asked for it (`--remote`, see
//! [`crate::source::remote`]), else it is a gap that says what it names
//! and why it was not read. A remote git folder is built as a
//! kustomization of its own checkout, and its objects keep where each
//! value is written there (`<repo>//<file>?ref=<ref>`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::source::files::Parsed;
use crate::source::remote::{self, Checkout, Entry, Fetched};
use crate::yaml::FileId;

impl Builder<'_> {
    /// A remote `resources:` entry at `span`.
    pub(super) fn load_remote(
        &mut self,
        entry: &str,
        span: Span,
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        let gap = |files: &Files, why: String| {
            let message = format!("remote resource '{entry}' is not fetched: {why}");
            Issue::at(&files.sources, span, message).gap(Gap::Remote)
        };
        let parsed = remote::parse(entry).map_err(|why| gap(self.files, why))?;
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
                self.remote_tree(&dir, &path, checkout, span, acc)
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

    /// Builds folder `path` of the checkout in `dir` as kubectl would a
    /// local kustomization, on files of its own, then takes its texts in
    /// under their remote names.
    fn remote_tree(
        &mut self,
        dir: &Path,
        path: &str,
        checkout: Checkout,
        span: Span,
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        let at = |rel: &str| checkout.name(rel);
        let Some(folder) = crate::source::join_within(Path::new(""), path) else {
            let message = format!("remote folder '{path}' leaves its repository");
            return Err(Issue::at(&self.files.sources, span, message).gap(Gap::Remote));
        };
        let mut files = Files::new(dir, *self.files.limits())
            .fetching(self.files.remote().cloned())
            .of_checkout(checkout.clone())
            .within_budget_of(self.files);
        let mut sub = Acc::default();
        let (result, gaps) = {
            let mut b = Builder::new(&mut files, true);
            // One build's budgets, the fetched folder's part of it.
            (b.builds, b.generator_bytes_left) = (self.builds, self.generator_bytes_left);
            let result = b.build_dir(&folder, &mut sub, false, None);
            (self.builds, self.generator_bytes_left) = (b.builds, b.generator_bytes_left);
            (result, std::mem::take(&mut b.gaps))
        };
        self.files.take_spent(&files);
        // A remote entry of the fetched folder is already registered
        // under its own remote name.
        let fetched = |path: &Path| {
            files
                .sources
                .find(path)
                .is_some_and(|id| files.sources.is_virtual(id))
        };
        let ids: Vec<FileId> = (0..files.sources.len())
            .map(|i| {
                let f = files.sources.get(FileId(i as u32));
                let name = match fetched(&f.path) {
                    true => f.path.clone(),
                    false => PathBuf::from(at(&f.path.to_string_lossy())),
                };
                match self.files.sources.find(&name) {
                    Some(id) => id,
                    None => self.files.sources.add_external(name, f.text.clone()),
                }
            })
            .collect();
        let named = |mut issue: Issue| {
            if !issue.path.is_empty() && !fetched(Path::new(&issue.path)) {
                issue.path = at(&issue.path);
            }
            issue
        };
        self.gaps.extend(gaps.into_iter().map(named));
        if let Err(issue) = result {
            let gap = issue.gap.unwrap_or(Gap::Remote);
            return Err(named(issue).gap(gap));
        }
        for r in sub.res_mut() {
            rehome_object(&mut r.obj, &ids);
        }
        self.merge_into(sub, acc, span)
    }
}

/// Points every span of `obj` at the file `ids` maps its file to.
fn rehome_object(obj: &mut Object, ids: &[FileId]) {
    let map = |id: FileId| ids.get(id.0 as usize).copied().unwrap_or(id);
    obj.file = map(obj.file);
    for step in &mut obj.chain {
        if let Some(at) = &mut step.at {
            at.file = map(at.file);
        }
    }
    Arc::make_mut(&mut obj.root).each_mut(&mut |n| n.span.file = map(n.span.file));
}
