//! Objects parsed from in-memory files, for unit tests of the stages that
//! read across objects (substitution sources, values sources).

use std::path::PathBuf;
use std::sync::Arc;

use super::Object;
use crate::yaml::{Limits, SourceMap, parse_documents};

pub(crate) struct TestRepo {
    pub sources: SourceMap,
    pub objects: Vec<Object>,
}

impl TestRepo {
    /// `files` are `(path, text)`; every document becomes an object.
    pub fn new(files: &[(&str, &str)]) -> TestRepo {
        let mut sources = SourceMap::default();
        let mut objects = Vec::new();
        for (path, text) in files {
            let id = sources.add(PathBuf::from(path), Arc::from(*text));
            let docs = parse_documents(text, id, &Limits::default())
                .unwrap_or_else(|e| panic!("{path}: {e:?}"));
            for (i, doc) in docs.into_iter().enumerate() {
                objects.push(Object::new(doc, id, i));
            }
        }
        TestRepo { sources, objects }
    }

    pub fn find(&self, kind: &str, ns: &str, name: &str) -> Option<&Object> {
        self.objects
            .iter()
            .find(|o| o.kind() == kind && o.name() == name && o.namespace().unwrap_or("") == ns)
    }
}
