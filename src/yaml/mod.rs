//! YAML with a span on every node, and the registry of source files that
//! spans point into.

mod node;
mod parse;

pub use node::{FileId, Node, Origin, PathSeg, Span, Style, Value, path_to_string};
pub mod jsonpath;
pub use parse::{Limits, OffsetMap, YamlError, parse_documents, resolve_plain};

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file as read, with its path relative to the repository root.
#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: Arc<str>,
}

/// Every file the run has read. Spans hold a [`FileId`] into this table so
/// that nodes stay small.
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn add(&mut self, path: PathBuf, text: Arc<str>) -> FileId {
        self.files.push(SourceFile { path, text });
        FileId((self.files.len() - 1) as u32)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn path(&self, id: FileId) -> &Path {
        &self.get(id).path
    }

    pub fn find(&self, path: &Path) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.path == path)
            .map(|i| FileId(i as u32))
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `path:line:col`, the form editors and terminals link.
    pub fn location(&self, span: Span) -> String {
        format!(
            "{}:{}:{}",
            self.path(span.file).display(),
            span.line,
            span.col
        )
    }
}
