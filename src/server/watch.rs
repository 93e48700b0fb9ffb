//! Being told of changes on disk. A client that can watch files
//! (`workspace/didChangeWatchedFiles`, registered dynamically) is asked to
//! watch every file of its workspace folders; once it has agreed, a
//! repository below one of them reads at each lint only what changed on
//! disk since the last (see [`crate::pipeline::editor::Session::watched`])
//! instead of walking and reading every file again. Without that, or for
//! a repository outside the folders, every lint walks and reads.

use std::path::{Component, Path, PathBuf};

use lsp_server::{Request, RequestId};
use lsp_types::notification::{DidChangeWatchedFiles, Notification as _};
use lsp_types::request::{RegisterCapability, Request as _};
use lsp_types::{
    DidChangeWatchedFilesParams, DidChangeWatchedFilesRegistrationOptions, FileChangeType,
    FileSystemWatcher, GlobPattern, InitializeParams, Registration, RegistrationParams,
};

use super::documents;

/// The id of the registration request, whose answer says whether the
/// client watches.
const REQUEST: &str = "homelab-lint/watch-files";

/// What the client can watch, and whether it agreed to.
#[derive(Default)]
pub struct Watch {
    /// It registers file watchers dynamically.
    can: bool,
    /// Its workspace folders, as real paths: what it watches.
    folders: Vec<PathBuf>,
    /// It agreed to watch them.
    pub active: bool,
}

impl Watch {
    pub fn of(params: &InitializeParams) -> Watch {
        let can = params
            .capabilities
            .workspace
            .as_ref()
            .and_then(|w| w.did_change_watched_files.as_ref())
            .and_then(|d| d.dynamic_registration)
            .unwrap_or(false);
        #[allow(deprecated)] // Older clients name only the root.
        let uris: Vec<&lsp_types::Uri> = match &params.workspace_folders {
            Some(folders) => folders.iter().map(|f| &f.uri).collect(),
            None => params.root_uri.iter().collect(),
        };
        let folders = uris
            .into_iter()
            .filter_map(documents::path_of)
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        Watch {
            can,
            folders,
            active: false,
        }
    }

    /// The request that asks the client to watch every file of its
    /// folders; `None` when it cannot.
    pub fn request(&self) -> Option<Request> {
        if !self.can || self.folders.is_empty() {
            return None;
        }
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: vec![FileSystemWatcher {
                glob_pattern: GlobPattern::String("**/*".into()),
                kind: None,
            }],
        };
        let params = RegistrationParams {
            registrations: vec![Registration {
                id: REQUEST.into(),
                method: DidChangeWatchedFiles::METHOD.into(),
                register_options: serde_json::to_value(options).ok(),
            }],
        };
        Some(Request::new(
            REQUEST.to_string().into(),
            RegisterCapability::METHOD.into(),
            params,
        ))
    }

    /// Whether `id` is the answer to [`Watch::request`].
    pub fn answers(id: &RequestId) -> bool {
        *id == RequestId::from(REQUEST.to_string())
    }

    /// Whether the client reports every change on disk under `root`.
    pub fn covers(&self, root: &Path) -> bool {
        self.active && self.folders.iter().any(|f| root.starts_with(f))
    }
}

/// What changed: each path (absolute) with whether it was created or
/// deleted (rather than changed). What git keeps in `.git` is no file of
/// the repository, and a commit changes much of it.
pub fn changes(params: DidChangeWatchedFilesParams) -> Vec<(PathBuf, bool)> {
    params
        .changes
        .into_iter()
        .filter_map(|c| {
            Some((
                documents::path_of(&c.uri)?,
                c.typ != FileChangeType::CHANGED,
            ))
        })
        .filter(|(path, _)| {
            !path
                .components()
                .any(|c| c == Component::Normal(".git".as_ref()))
        })
        .collect()
}
