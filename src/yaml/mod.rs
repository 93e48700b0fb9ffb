//! YAML with a span on every node, and the registry of source files that
//! spans point into.

mod block;
mod compat;
pub mod de;
pub mod hidden;
mod limits;
mod mask;
mod node;
mod parse;
mod path_key;
mod position;
mod size;
mod tag;

pub use node::{
    Entry, FileId, Node, Origin, PathSeg, Span, Style, Value, edit_vec, path_to_string,
    take_entries,
};
pub mod edit;
pub mod jsonpath;
pub use limits::Limits;
pub use mask::{redacted, secrets as mask_secrets, url_credentials, without_credentials};
pub use parse::{YamlError, block_scanner_differs, parse_documents, parse_values, resolve_plain};
pub use path_key::{PathKey, PathKeyMap, PathKeySet, PathQuery};
pub use position::{OffsetMap, ceil_char, floor_char};
pub use size::Size;
pub(crate) use tag::any_origin;

use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The hasher of the maps keyed by what a repository names: paths (the
/// source map's and the reader's), names in them, file ids, and object
/// ids (group, kind, name). std's SipHash over `Path` was 13 % of the
/// main thread at 100k objects. foldhash is as fast as FxHash on short
/// keys and, seeded per process as std's is, no repository can choose
/// keys that collide.
pub type PathHasher = foldhash::fast::RandomState;
/// A map keyed by repository paths, names, file ids or object ids, with
/// [`PathHasher`].
pub type PathMap<K, V> = std::collections::HashMap<K, V, PathHasher>;
/// A set of repository paths, names, file ids or object ids, with
/// [`PathHasher`].
pub type PathSet<K> = std::collections::HashSet<K, PathHasher>;

/// The hash of a path in the source map: by its bytes ([`PathKey`]).
fn hash_path(hasher: &PathHasher, path: &Path) -> u64 {
    hasher.hash_one(PathKey::of(path))
}

/// A file as read, with its path relative to the linted directory (or,
/// for cluster state, see [`SourceMap::add_external`]).
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: Arc<str>,
    /// Not a file of the linted directory: cluster state.
    external: bool,
    /// The text reports show, Secret values masked; made on first use.
    shown_text: std::sync::OnceLock<Arc<str>>,
}

impl SourceFile {
    /// The text as reports may show it: the values of Secrets' `data`
    /// and `stringData` masked (same length, so spans hold).
    pub fn text_to_show(&self) -> &Arc<str> {
        self.shown_text
            .get_or_init(|| match mask::secrets(&self.text) {
                Some(masked) => masked.into(),
                None => self.text.clone(),
            })
    }
}

/// Every file the run has read. Spans hold a [`FileId`] into this table so
/// that nodes stay small.
///
/// A clone shares the table until one of them adds a file: the forks of
/// [`crate::source::Files`] that build on other threads read it and
/// register nothing, so they need no copy each of every path and entry
/// (122,000 on the 100k-object synthetic repo).
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Arc<Vec<SourceFile>>,
    /// The ids by path, hashed with `hasher`: the table holds the id
    /// alone and compares the path `files` holds. A map keyed by path
    /// held a second copy of every path and 32 bytes a slot (13.5 MB at
    /// 100k objects, against 1.3 MB here).
    by_path: Arc<hashbrown::HashTable<FileId>>,
    hasher: PathHasher,
    /// Some path was registered twice: `by_path` holds its last id only.
    registered_twice: bool,
    shown: Shown,
}

/// Where reports root the paths they show: the top of the git repository
/// that holds the linted directory, since GitHub (annotations, SARIF),
/// SARIF viewers and editors resolve paths from there. Without git, the
/// linted directory.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The repository's top level, absolute; `None` outside git.
    pub top: Option<PathBuf>,
    /// The linted directory relative to `top` (`kubernetes` for a lint of
    /// `repo/kubernetes`); empty at the top or outside git.
    pub prefix: PathBuf,
}

impl SourceMap {
    pub fn add(&mut self, path: PathBuf, text: Arc<str>) -> FileId {
        self.insert(path, text, false)
    }

    /// A file that is not in the linted directory: a snapshot file by
    /// its absolute path, or a page of the live cluster by a name that is
    /// no path (`cluster://…`).
    pub fn add_external(&mut self, path: PathBuf, text: Arc<str>) -> FileId {
        self.insert(path, text, true)
    }

    /// Room for `more` files: a load registers every YAML file at once,
    /// and growing the map one doubling at a time hashed each path again
    /// at each.
    pub fn reserve(&mut self, more: usize) {
        let (files, hasher) = (&self.files, &self.hasher);
        Arc::make_mut(&mut self.by_path)
            .reserve(more, |id| hash_path(hasher, &files[id.0 as usize].path));
        Arc::make_mut(&mut self.files).reserve(more);
    }

    fn insert(&mut self, path: PathBuf, text: Arc<str>, external: bool) -> FileId {
        let id = FileId(self.files.len() as u32);
        let (files, hasher) = (&self.files, &self.hasher);
        let hash = hash_path(hasher, &path);
        let by_path = Arc::make_mut(&mut self.by_path);
        match by_path.find_mut(hash, |at| files[at.0 as usize].path == path) {
            Some(before) => {
                *before = id;
                self.registered_twice = true;
            }
            None => {
                by_path.insert_unique(hash, id, |at| hash_path(hasher, &files[at.0 as usize].path));
            }
        }
        Arc::make_mut(&mut self.files).push(SourceFile {
            path,
            text,
            external,
            shown_text: std::sync::OnceLock::new(),
        });
        id
    }

    pub fn set_shown(&mut self, shown: Shown) {
        self.shown = shown;
    }

    pub fn shown_root(&self) -> &Shown {
        &self.shown
    }

    /// The path reports show: from the repository's top level for files
    /// inside it, absolute for files outside, and cluster pages by name.
    pub fn shown(&self, id: FileId) -> PathBuf {
        let file = self.get(id);
        if !file.external {
            return self.shown.prefix.join(&file.path);
        }
        match &self.shown.top {
            Some(top) => file
                .path
                .strip_prefix(top)
                .unwrap_or(&file.path)
                .to_path_buf(),
            None => file.path.clone(),
        }
    }

    /// Whether a file is a page of the live cluster: text this run
    /// fetched, with no file anywhere to point at.
    pub fn is_virtual(&self, id: FileId) -> bool {
        let file = self.get(id);
        file.external && !file.path.is_absolute()
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn path(&self, id: FileId) -> &Path {
        &self.get(id).path
    }

    pub fn find(&self, path: &Path) -> Option<FileId> {
        let hash = hash_path(&self.hasher, path);
        let files = &self.files;
        self.by_path
            .find(hash, |at| files[at.0 as usize].path == path)
            .copied()
    }

    /// Whether [`SourceMap::find`] gives `id` for `path`, known without
    /// hashing the path: `id` holds the very same path and no path was
    /// registered twice. `false` when that is not known; a check of a
    /// reused build asks this of each file it read.
    pub fn holds_at(&self, path: &Path, id: FileId) -> bool {
        !self.registered_twice
            && self
                .files
                .get(id.0 as usize)
                .is_some_and(|f| f.path.as_os_str() == path.as_os_str())
    }

    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The 1-based line and character column of a byte offset. Spans keep
    /// only where they start, but SARIF regions also need where they end.
    /// Line breaks are counted as YAML counts them (`\r\n`, `\r`, `\n`), so
    /// the result agrees with the start positions the parser recorded.
    /// `None` for an unknown file or an offset outside the text or inside
    /// a character.
    pub fn line_col(&self, file: FileId, offset: u32) -> Option<(u32, u32)> {
        let text: &str = &self.files.get(file.0 as usize)?.text;
        let offset = offset as usize;
        text.get(..offset)?;
        let (mut line, mut col) = (1u32, 1u32);
        for (i, c) in text[..offset].char_indices() {
            match c {
                // The `\r` of a `\r\n` pair: the `\n` counts the break.
                '\r' if text[i + 1..].starts_with('\n') => {}
                '\n' | '\r' => {
                    line += 1;
                    col = 1;
                }
                _ => col += 1,
            }
        }
        Some((line, col))
    }

    /// Where `needle` is first written inside `span`'s text, as a span of
    /// its own: a variable inside a block scalar, at its line and column
    /// rather than at the block's start. `None` when the text as written
    /// does not hold it (an escape sequence in a quoted scalar, say).
    pub fn find_within(&self, span: Span, needle: &str) -> Option<Span> {
        let text = &self.get(span.file).text;
        let written = text.get(span.start as usize..span.end as usize)?;
        let offset = written.find(needle)?;
        let before = &written[..offset];
        let (line, col) = match before.rfind('\n') {
            None => (span.line, span.col + before.chars().count() as u32),
            Some(n) => (
                span.line + before.matches('\n').count() as u32,
                1 + before[n + 1..].chars().count() as u32,
            ),
        };
        let start = span.start + offset as u32;
        Some(Span {
            file: span.file,
            start,
            end: start + needle.len() as u32,
            line,
            col,
        })
    }

    /// Whether the text at `span` is, in part, a Secret's value, which
    /// reports never show ([`SourceFile::text_to_show`]): a Helm value
    /// from a Secret, a variable defined in one, a Secret's own field.
    pub fn is_secret_span(&self, span: Span) -> bool {
        let Some(file) = self.files.get(span.file.0 as usize) else {
            return false;
        };
        let range = span.start as usize..span.end as usize;
        let (text, shown) = (file.text.get(range.clone()), file.text_to_show().get(range));
        // A URL's credentials masked make no Secret of the value that
        // holds them: it is shown with them hidden.
        text != shown && text.map(mask::credentials_masked).as_deref() != shown
    }

    /// Whether what `node` holds came from a Secret: written in one, or
    /// substituted from one (in part: `${HOST}:${PASSWORD}`).
    pub fn is_secret(&self, node: &Node) -> bool {
        node.origin().is_some_and(Origin::is_secret) || self.is_secret_span(node.span())
    }

    /// `text`, the value of `node`, as reports show it: its length
    /// only when it came from a Secret, the credentials of a URL in it
    /// hidden.
    pub fn shown_value(&self, node: &Node, text: String) -> String {
        match self.is_secret(node) {
            true => mask::redacted(&text),
            false => match mask::without_credentials(&text) {
                std::borrow::Cow::Owned(hidden) => hidden,
                std::borrow::Cow::Borrowed(_) => text,
            },
        }
    }

    /// `node` as JSON, each value that came from a Secret replaced by
    /// its length, and the credentials of a URL in a value hidden. Keys
    /// are kept, as a Secret's own are, unless a Secret's variable was
    /// substituted into one; a map or list that substitution made from
    /// one is replaced whole.
    pub fn shown_json(&self, node: &Node) -> serde_json::Value {
        node.to_json_with(&|n, key| {
            let scalar = !matches!(n.value, Value::Seq(_) | Value::Map(_));
            let substituted = matches!(n.origin(), Some(Origin::Substituted { secret: true, .. }));
            let hidden = match key {
                true => substituted,
                false => substituted || scalar && self.is_secret(n),
            };
            if hidden {
                return Some(serde_json::Value::String(match n.scalar_text() {
                    Some(text) if scalar => mask::redacted(&text),
                    _ => "<redacted>".into(),
                }));
            }
            // A URL written with its credentials (a GitRepository's, a
            // DSN in values) shows them hidden.
            match n.as_str().map(mask::without_credentials) {
                Some(std::borrow::Cow::Owned(text)) => Some(serde_json::Value::String(text)),
                _ => None,
            }
        })
    }

    /// `path:line:col`, the form editors and terminals link.
    pub fn location(&self, span: Span) -> String {
        format!(
            "{}:{}:{}",
            self.shown(span.file).display(),
            span.line,
            span.col
        )
    }
}

/// The first document of `text`, for unit tests.
#[cfg(test)]
pub(crate) fn parse_one(text: &str) -> Node {
    parse_documents(text, FileId(0), &Limits::default())
        .expect("test YAML parses")
        .remove(0)
}

/// Every string of up to `parts_up_to` of `parts` one after another,
/// the empty one first, for unit tests that try them all.
#[cfg(test)]
pub(crate) fn every_string_of(parts: &[&str], parts_up_to: usize) -> Vec<String> {
    let mut all = vec![String::new()];
    let mut last = all.clone();
    for _ in 0..parts_up_to {
        last = last
            .iter()
            .flat_map(|p| parts.iter().map(move |c| format!("{p}{c}")))
            .collect();
        all.extend(last.iter().cloned());
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> (SourceMap, FileId) {
        let mut m = SourceMap::default();
        let id = m.add(PathBuf::from("a.yaml"), Arc::from(text));
        (m, id)
    }

    #[test]
    fn line_col_counts_characters_and_yaml_line_breaks() {
        let (m, f) = map("a: é\r\nb: x\rc: ü\n");
        assert_eq!(m.line_col(f, 0), Some((1, 1)));
        // After `é` (two bytes): one column further, not two.
        assert_eq!(m.line_col(f, 5), Some((1, 5)));
        // Between `\r` and `\n`: still the end of line 1.
        assert_eq!(m.line_col(f, 6), Some((1, 5)));
        assert_eq!(m.line_col(f, 7), Some((2, 1)));
        // A lone `\r` ends a line too.
        assert_eq!(m.line_col(f, 12), Some((3, 1)));
        assert_eq!(m.line_col(f, 17), Some((3, 5)));
        assert_eq!(m.line_col(f, 18), Some((4, 1)));
    }

    /// The table keeps ids only: finding a path compares it with the
    /// path the map holds for each candidate, growing rehashes those, and
    /// a path registered again is found at its last id.
    #[test]
    fn paths_are_found_at_their_last_id_as_the_table_grows() {
        let mut m = SourceMap::default();
        let ids: Vec<FileId> = (0..100)
            .map(|i| m.add(PathBuf::from(format!("d/{i}.yaml")), Arc::from("")))
            .collect();
        for (i, id) in ids.iter().enumerate() {
            assert_eq!(m.find(Path::new(&format!("d/{i}.yaml"))), Some(*id));
        }
        // `Path` equality is by component, as its hash is.
        assert_eq!(m.find(Path::new("d//7.yaml")), Some(ids[7]));
        assert_eq!(m.find(Path::new("d/100.yaml")), None);
        assert!(m.holds_at(Path::new("d/3.yaml"), ids[3]));
        let again = m.add(PathBuf::from("d/3.yaml"), Arc::from("b"));
        assert_eq!(m.find(Path::new("d/3.yaml")), Some(again));
        assert!(!m.holds_at(Path::new("d/3.yaml"), again));
    }

    #[test]
    fn line_col_rejects_offsets_outside_the_text() {
        let (m, f) = map("é\n");
        assert_eq!(m.line_col(f, 1), None, "inside a character");
        assert_eq!(m.line_col(f, 4), None, "past the end");
        assert_eq!(m.line_col(FileId(7), 0), None, "unknown file");
    }

    #[test]
    fn line_col_agrees_with_parsed_start_positions() {
        let text = "a:\r\n  ü: x\r\n  b: [1, 2]\n";
        let (m, f) = map(text);
        let docs = parse_documents(text, f, &Limits::default()).unwrap();
        docs[0].walk(&mut |_, n| {
            assert_eq!(
                m.line_col(f, n.span().start),
                Some((n.span().line, n.span().col)),
                "{n:?}"
            );
        });
    }
}
