//! `kubectl homelab-lint server`: a Language Server Protocol server over
//! stdio. Findings as the user types (every open file of the repository
//! the file belongs to), hover with where each value comes from, fixes
//! and suppressions as code actions, and go-to-definition. Offline: no
//! cluster and no probe.
//!
//! One thread: `lsp-server` reads and writes the messages on two threads
//! of its own, and this loop takes them in order. A change schedules a
//! lint of its repository after a short pause ([`workspace::DEBOUNCE`]);
//! a request that reads the lint (hover, code actions, definition) first
//! runs the one that is due, so that it answers for the text the editor
//! holds.

mod actions;
mod definition;
mod diagnostics;
mod documents;
mod hover;
mod lookup;
mod postgres;
mod uris;
mod watch;
mod workspace;

use std::path::{Path, PathBuf};
use std::time::Instant;

use lsp_server::{Connection, ErrorCode, Message, Notification, Request, Response};
use lsp_types::notification::{
    DidChangeTextDocument, DidChangeWatchedFiles, DidCloseTextDocument, DidOpenTextDocument,
    DidSaveTextDocument, Notification as _, PublishDiagnostics,
};
use lsp_types::request::{CodeActionRequest, GotoDefinition, HoverRequest, Request as _};
use lsp_types::{
    CodeActionProviderCapability, HoverProviderCapability, OneOf, PublishDiagnosticsParams,
    SaveOptions, ServerCapabilities, ServerInfo, TextDocumentPositionParams,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions,
    TextDocumentSyncSaveOptions,
};

use documents::Documents;
use workspace::Workspace;

/// Serves one editor on stdin and stdout until it asks to exit. `false`
/// when it sent `exit` without `shutdown` first, which the protocol
/// answers with exit status 1.
pub fn run() -> Result<bool, String> {
    let (connection, io) = Connection::stdio();
    let capabilities = serde_json::to_value(capabilities()).map_err(|e| e.to_string())?;
    let initialize = serde_json::json!({
        "capabilities": capabilities,
        "serverInfo": ServerInfo {
            name: "homelab-lint".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        },
    });
    let (id, mut params) = connection
        .initialize_start()
        .map_err(|e| format!("the editor did not initialize: {e}"))?;
    connection
        .initialize_finish(id, initialize)
        .map_err(|e| format!("the editor did not initialize: {e}"))?;
    // Only what it can watch is read of it: a client whose request does
    // not read is served without watching.
    let mut uris = uris::Repaired::default();
    uris.repair(&mut params);
    let params: lsp_types::InitializeParams = serde_json::from_value(params).unwrap_or_default();
    let mut server = Server {
        connection: &connection,
        uris,
        docs: Documents::default(),
        workspace: Workspace {
            watch: watch::Watch::of(&params),
            ..Workspace::default()
        },
    };
    if let Some(request) = server.workspace.watch.request() {
        server.send(request);
    }
    let clean = server.serve()?;
    drop(connection);
    io.join()
        .map_err(|e| format!("the connection to the editor failed: {e}"))?;
    Ok(clean)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                // A keystroke sends its edit, not the file: a large file
                // is not sent again whole at each one.
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::SaveOptions(SaveOptions {
                    include_text: Some(false),
                })),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

struct Server<'c> {
    connection: &'c Connection,
    uris: uris::Repaired,
    docs: Documents,
    workspace: Workspace,
}

impl Server<'_> {
    /// Whether the editor ended the session as the protocol asks:
    /// `shutdown`, then `exit` (or it closed the connection).
    fn serve(&mut self) -> Result<bool, String> {
        loop {
            let received = match self.workspace.next_due() {
                Some(due) => match self.connection.receiver.recv_deadline(due) {
                    Ok(message) => Some(message),
                    Err(e) if e.is_timeout() => None,
                    Err(_) => return Ok(true),
                },
                None => match self.connection.receiver.recv() {
                    Ok(message) => Some(message),
                    Err(_) => return Ok(true),
                },
            };
            match received {
                None => self.lint(false),
                Some(Message::Request(req)) => {
                    if self
                        .connection
                        .handle_shutdown(&req)
                        .map_err(|e| e.to_string())?
                    {
                        return Ok(true);
                    }
                    self.request(req);
                }
                Some(Message::Notification(note)) if note.method == "exit" => return Ok(false),
                Some(Message::Notification(note)) => self.notification(note),
                Some(Message::Response(response)) => self.response(response),
            }
        }
    }

    fn send(&self, message: impl Into<Message>) {
        // The editor is gone when this fails: the loop ends on its next
        // read.
        let _ = self.connection.sender.send(message.into());
    }

    /// The client's answer to a request of ours: only the one that asks
    /// it to watch files is sent.
    fn response(&mut self, response: Response) {
        if !watch::Watch::answers(&response.id) {
            return;
        }
        match response.response_result {
            Ok(_) => self.workspace.start_watching(),
            Err(e) => log(&format!(
                "the editor does not watch files ({}): every lint reads every file",
                e.message
            )),
        }
    }

    fn notification(&mut self, note: Notification) {
        if note.method == DidChangeWatchedFiles::METHOD {
            if let Some(params) = params(&mut self.uris, note, DidChangeWatchedFiles::METHOD) {
                self.changed_on_disk(params);
            }
            return;
        }
        let when = match note.method.as_str() {
            DidOpenTextDocument::METHOD => params::<lsp_types::DidOpenTextDocumentParams>(
                &mut self.uris,
                note,
                DidOpenTextDocument::METHOD,
            )
            .and_then(|p| {
                let path = documents::path_of(&p.text_document.uri)?;
                self.docs
                    .open(path.clone(), p.text_document.uri, p.text_document.text);
                self.workspace.may_ignore_more(&path);
                Some((path, Instant::now()))
            }),
            DidChangeTextDocument::METHOD => params::<lsp_types::DidChangeTextDocumentParams>(
                &mut self.uris,
                note,
                DidChangeTextDocument::METHOD,
            )
            .and_then(|p| {
                let path = documents::path_of(&p.text_document.uri)?;
                self.docs
                    .change(&path, p.content_changes)
                    .then(|| (path, Instant::now() + workspace::DEBOUNCE))
            }),
            DidSaveTextDocument::METHOD => params::<lsp_types::DidSaveTextDocumentParams>(
                &mut self.uris,
                note,
                DidSaveTextDocument::METHOD,
            )
            .and_then(|p| {
                let path = documents::path_of(&p.text_document.uri)?;
                self.workspace.may_ignore_more(&path);
                Some((path, Instant::now()))
            }),
            DidCloseTextDocument::METHOD => params::<lsp_types::DidCloseTextDocumentParams>(
                &mut self.uris,
                note,
                DidCloseTextDocument::METHOD,
            )
            .and_then(|p| {
                let path = documents::path_of(&p.text_document.uri)?;
                let doc = self.docs.close(&path)?;
                self.publish(&doc.uri, Vec::new());
                Some((path, Instant::now()))
            }),
            _ => None,
        };
        if let Some((path, due)) = when {
            self.schedule(&path, due);
        }
    }

    /// Takes note of what the client saw change on disk, and lints the
    /// repositories it changed after the typing pause (a checkout
    /// reports many files at once). A change to a file open in the editor
    /// is its save: its buffer is what is linted.
    fn changed_on_disk(&mut self, params: lsp_types::DidChangeWatchedFilesParams) {
        let due = Instant::now() + workspace::DEBOUNCE;
        for (path, created_or_deleted) in watch::changes(params) {
            let Some(root) = self.workspace.changed_on_disk(&path, created_or_deleted) else {
                continue;
            };
            if created_or_deleted || self.docs.get(&path).is_none() {
                self.schedule(&root, due);
            }
        }
    }

    /// Lints the repository of `path` at `due` (or sooner, if it already is).
    fn schedule(&mut self, path: &Path, due: Instant) {
        match self.workspace.repo_of(path) {
            Ok(repo) => repo.due = Some(repo.due.map_or(due, |d| d.min(due))),
            Err(e) => log(&format!("{}: not linted: {e}", path.display())),
        }
    }

    /// Runs the lints that are due (all pending ones with `all`) and
    /// publishes what they found.
    fn lint(&mut self, all: bool) {
        for i in self.workspace.lint_due(&self.docs, all) {
            let repo = &self.workspace.repos[i];
            let Some(last) = &repo.last else { continue };
            let root = repo.root().to_path_buf();
            let mut by_file = diagnostics::of(&root, last, &self.docs);
            let detail = match last {
                Ok(a) => format!(
                    "load {} ms, rules {} ms; reused {}",
                    a.took.0.as_millis(),
                    a.took.1.as_millis(),
                    a.reused.as_deref().unwrap_or("nothing (first lint)")
                ),
                Err(e) => e.clone(),
            };
            log(&format!(
                "linted {} in {} ms ({detail})",
                root.display(),
                repo.took.as_millis()
            ));
            for warning in last.iter().flat_map(|a| &a.warnings) {
                log(warning);
            }
            // A file that had diagnostics and is no longer open or has
            // none is cleared.
            let before = std::mem::take(&mut self.workspace.repos[i].published);
            for path in before {
                by_file.entry(path).or_default();
            }
            let mut published = Vec::new();
            for (path, list) in by_file {
                let Some(uri) = self.docs.uri(&path) else {
                    continue;
                };
                if !list.is_empty() {
                    published.push(path);
                }
                self.publish(&uri, list);
            }
            self.workspace.repos[i].published = published;
        }
        self.workspace.close_unused(&self.docs);
    }

    fn publish(&self, uri: &lsp_types::Uri, diagnostics: Vec<lsp_types::Diagnostic>) {
        let params = PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics,
            version: None,
        };
        let mut note = Notification::new(PublishDiagnostics::METHOD.into(), params);
        note.params["uri"] = self.uris.as_sent(uri).into();
        self.send(note);
    }

    fn request(&mut self, req: Request) {
        let id = req.id.clone();
        let answer = match req.method.as_str() {
            HoverRequest::METHOD => self.answer(req, |s, p: lsp_types::HoverParams| {
                s.at(&p.text_document_position_params, hover::at).flatten()
            }),
            GotoDefinition::METHOD => self.answer(req, |s, p: lsp_types::GotoDefinitionParams| {
                s.at(&p.text_document_position_params, |a, rel, text, at| {
                    definition::at(a, &s.docs, rel, text, at)
                })
                .map(lsp_types::GotoDefinitionResponse::Array)
            }),
            CodeActionRequest::METHOD => self.answer(req, |s, p: lsp_types::CodeActionParams| {
                let path = documents::path_of(&p.text_document.uri)?;
                let repo = s.workspace.holding(&path)?;
                let analysis = repo.last.as_ref()?.as_ref().ok()?;
                let rel = path.strip_prefix(repo.root()).ok()?;
                Some(actions::at(analysis, &s.docs, rel, p.range))
            }),
            _ => Err((
                ErrorCode::MethodNotFound,
                format!("{} is not supported", req.method),
            )),
        };
        let response = match answer {
            Ok(value) => Response::new_ok(id, value),
            Err((code, message)) => Response::new_err(id, code as i32, message),
        };
        self.send(response);
    }

    /// Answers a request that reads the lint, after running the lints
    /// still due; `null` when there is nothing to say.
    fn answer<P: serde::de::DeserializeOwned, R: serde::Serialize>(
        &mut self,
        mut req: Request,
        f: impl FnOnce(&Self, P) -> Option<R>,
    ) -> Result<serde_json::Value, (ErrorCode, String)> {
        self.uris.repair(&mut req.params);
        let method = req.method.clone();
        let params = req
            .extract::<P>(&method)
            .map_err(|e| (ErrorCode::InvalidParams, e.to_string()))?
            .1;
        if self.workspace.next_due().is_some() {
            self.lint(true);
        }
        serde_json::to_value(f(self, params)).map_err(|e| (ErrorCode::InternalError, e.to_string()))
    }

    /// Runs `f` on the lint of the file at a position: the analysis, the
    /// file's path in the repository, the text and the byte offset.
    fn at<R>(
        &self,
        at: &TextDocumentPositionParams,
        f: impl FnOnce(&crate::pipeline::editor::Analysis, &Path, &str, usize) -> R,
    ) -> Option<R> {
        let path: PathBuf = documents::path_of(&at.text_document.uri)?;
        let repo = self.workspace.holding(&path)?;
        let analysis = repo.last.as_ref()?.as_ref().ok()?;
        let rel = path.strip_prefix(repo.root()).ok()?;
        // The text the lint read: positions are into it.
        let sources = &analysis.loaded.repo.files.sources;
        let text = &sources.get(sources.find(rel)?).text;
        let offset = documents::offset(text, at.position);
        Some(f(analysis, rel, text, offset))
    }
}

/// A line of the server's log (stderr, which editors keep and people
/// read in a terminal): it names paths and errors from the repository,
/// escaped as every other output is, a line break too.
fn log(text: &str) {
    use crate::report::control::{Breaks, escape};
    eprintln!("homelab-lint server: {}", escape(text, Breaks::Escape));
}

/// A notification's parameters, its URIs repaired ([`uris`]). One that
/// still does not read is logged with why rather than dropped unseen.
fn params<P: serde::de::DeserializeOwned>(
    uris: &mut uris::Repaired,
    mut note: Notification,
    method: &str,
) -> Option<P> {
    uris.repair(&mut note.params);
    match note.extract(method) {
        Ok(params) => Some(params),
        Err(lsp_server::ExtractError::JsonError { error, .. }) => {
            log(&format!("{method} not read: {error}"));
            None
        }
        Err(lsp_server::ExtractError::MethodMismatch(_)) => None,
    }
}
