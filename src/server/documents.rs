//! The buffers the editor has open, and the two ways of naming a place
//! in them: the protocol's (a URI, a line and a UTF-16 column, 0-based)
//! and the linter's (a path, a byte offset).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Position, Range, TextDocumentContentChangeEvent, Uri};

/// One open buffer.
pub struct Document {
    pub uri: Uri,
    pub text: String,
}

/// The open buffers by absolute path.
#[derive(Default)]
pub struct Documents {
    open: HashMap<PathBuf, Document>,
}

impl Documents {
    pub fn open(&mut self, path: PathBuf, uri: Uri, text: String) {
        self.open.insert(path, Document { uri, text });
    }

    /// Applies the editor's changes to a buffer, in order: each replaces
    /// a range of the text as the one before left it, or the whole text
    /// (no range); `false` when it is not open.
    pub fn change(&mut self, path: &Path, changes: Vec<TextDocumentContentChangeEvent>) -> bool {
        let Some(doc) = self.open.get_mut(path) else {
            return false;
        };
        for change in changes {
            match change.range {
                Some(range) => {
                    let start = offset(&doc.text, range.start);
                    let end = offset(&doc.text, range.end).max(start);
                    doc.text.replace_range(start..end, &change.text);
                }
                None => doc.text = change.text,
            }
        }
        true
    }

    pub fn close(&mut self, path: &Path) -> Option<Document> {
        self.open.remove(path)
    }

    pub fn get(&self, path: &Path) -> Option<&Document> {
        self.open.get(path)
    }

    /// The URI the editor knows the file at `path` (absolute, real) by:
    /// the one it opened it with, which may reach it through a symlink;
    /// else the path's own.
    pub fn uri(&self, path: &Path) -> Option<Uri> {
        match self.open.get(path) {
            Some(doc) => Some(doc.uri.clone()),
            None => uri_of(path),
        }
    }

    /// The open buffers under `root`, by path relative to it.
    pub fn under<'a>(&'a self, root: &'a Path) -> impl Iterator<Item = (&'a Path, &'a Document)> {
        self.open
            .iter()
            .filter_map(move |(path, doc)| Some((path.strip_prefix(root).ok()?, doc)))
    }
}

/// The file a `file:` URI names, absolute, with its folders' symlinks
/// resolved; `None` for another scheme. A repository's root is its real
/// path, and an editor may reach its files through a link (a linked
/// project or home folder, macOS's `/tmp`): they are the repository's
/// files all the same. The file's own name is kept, as the repository's
/// walk names a file that is a link; what does not exist (deleted, or
/// only in the editor) keeps the rest of its path as written.
pub fn path_of(uri: &Uri) -> Option<PathBuf> {
    let url = url::Url::parse(uri.as_str()).ok()?;
    let path = url.to_file_path().ok()?;
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Some(path);
    };
    let real = parent.ancestors().find_map(|existing| {
        let rest = parent.strip_prefix(existing).ok()?;
        Some(existing.canonicalize().ok()?.join(rest))
    });
    Some(real.map_or(path.clone(), |p| p.join(name)))
}

/// The `file:` URI of an absolute path.
pub fn uri_of(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

/// Where each line of a text starts, so that converting an offset costs
/// a search and its line, not a count over the text before it: every
/// diagnostic of a file is converted, and counting from the start per
/// diagnostic made many findings in one large file quadratic.
pub struct Lines<'t> {
    text: &'t str,
    /// The byte offset of each line's start (after a `\n`).
    starts: Vec<usize>,
    /// Whether each line is ASCII, where a byte is a column.
    ascii: Vec<bool>,
}

impl<'t> Lines<'t> {
    pub fn new(text: &'t str) -> Lines<'t> {
        let (mut starts, mut ascii) = (vec![0], Vec::new());
        for line in text.split_inclusive('\n') {
            ascii.push(line.is_ascii());
            starts.push(starts.last().unwrap_or(&0) + line.len());
        }
        // The last start is the text's end: a line only when the text
        // ends with a break (or is empty).
        if !text.is_empty() && !text.ends_with('\n') {
            starts.pop();
        } else {
            ascii.push(true);
        }
        Lines {
            text,
            starts,
            ascii,
        }
    }

    /// The protocol's position of a byte offset (columns count UTF-16
    /// code units, the protocol's default encoding); an offset inside a
    /// character is taken for that character's start.
    pub fn position(&self, offset: usize) -> Position {
        let offset = crate::yaml::floor_char(self.text, offset.min(self.text.len()));
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character = match self.ascii[line] {
            true => offset - start,
            false => self.text[start..offset].encode_utf16().count(),
        };
        Position {
            line: line as u32,
            character: character as u32,
        }
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range {
            start: self.position(start),
            end: self.position(end.max(start)),
        }
    }

    /// The byte offset of a 1-based line and character column (the
    /// linter's issues), clamped to the text.
    pub fn offset_of_line_col(&self, line: u32, col: u32) -> usize {
        let line = line.saturating_sub(1) as usize;
        let Some(&start) = self.starts.get(line) else {
            return self.text.len();
        };
        let rest = &self.text[start..];
        let line_len = rest.find('\n').unwrap_or(rest.len());
        let col = col.saturating_sub(1) as usize;
        match self.ascii[line] {
            true => start + col.min(line_len),
            false => {
                start
                    + rest[..line_len]
                        .char_indices()
                        .nth(col)
                        .map_or(line_len, |(i, _)| i)
            }
        }
    }
}

/// The byte offset of a protocol position in `text`: the end of the line
/// (or of the text) when the position is past it.
pub fn offset(text: &str, at: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..at.line {
        match text[line_start..].find('\n') {
            Some(n) => line_start += n + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |n| line_start + n);
    let mut units = 0;
    for (i, c) in text[line_start..line_end].char_indices() {
        if units >= at.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    line_end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_round_trip() {
        let text = "a: é𝄞x\nb: 2\n";
        let x = text.find('x').unwrap();
        let lines = Lines::new(text);
        let at = lines.position(x);
        assert_eq!((at.line, at.character), (0, 6));
        assert_eq!(offset(text, at), x);
        let b = text.find('b').unwrap();
        assert_eq!(offset(text, lines.position(b)), b);
        assert_eq!(lines.offset_of_line_col(2, 1), b);
        assert_eq!(lines.offset_of_line_col(1, 5), text.find('𝄞').unwrap());
        assert_eq!(lines.offset_of_line_col(2, 3), b + 2);
        let end = lines.position(text.len());
        assert_eq!((end.line, end.character), (2, 0));
    }

    #[test]
    fn positions_past_the_end_are_clamped() {
        let text = "a: 1\n";
        let end = offset(
            text,
            Position {
                line: 9,
                character: 0,
            },
        );
        assert_eq!(end, text.len());
        let lines = Lines::new(text);
        assert_eq!(lines.offset_of_line_col(1, 99), 4);
        assert_eq!(lines.offset_of_line_col(9, 1), text.len());
        let past = lines.position(99);
        assert_eq!((past.line, past.character), (1, 0));
        let unended = Lines::new("a\nbé");
        let last = unended.position(5);
        assert_eq!((last.line, last.character), (1, 2));
        assert_eq!(unended.offset_of_line_col(2, 3), 5);
    }

    #[test]
    fn file_uris_and_paths_convert_both_ways() {
        let path = Path::new("/tmp/a dir/é.yaml");
        let uri = uri_of(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20dir/%C3%A9.yaml");
        assert_eq!(path_of(&uri).unwrap(), path);
    }
}
