//! The buffers the editor has open, and the two ways of naming a place
//! in them: the protocol's (a URI, a line and a UTF-16 column, 0-based)
//! and the linter's (a path, a byte offset).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use lsp_types::{Position, Range, Uri};

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

    /// Replaces a buffer's text; `false` when it is not open.
    pub fn change(&mut self, path: &Path, text: String) -> bool {
        match self.open.get_mut(path) {
            Some(doc) => {
                doc.text = text;
                true
            }
            None => false,
        }
    }

    pub fn close(&mut self, path: &Path) -> Option<Document> {
        self.open.remove(path)
    }

    pub fn get(&self, path: &Path) -> Option<&Document> {
        self.open.get(path)
    }

    /// The open buffers under `root`, by path relative to it.
    pub fn under<'a>(&'a self, root: &'a Path) -> impl Iterator<Item = (&'a Path, &'a Document)> {
        self.open
            .iter()
            .filter_map(move |(path, doc)| Some((path.strip_prefix(root).ok()?, doc)))
    }
}

/// The file a `file:` URI names, absolute; `None` for another scheme.
pub fn path_of(uri: &Uri) -> Option<PathBuf> {
    let url = url::Url::parse(uri.as_str()).ok()?;
    url.to_file_path().ok()
}

/// The `file:` URI of an absolute path.
pub fn uri_of(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

/// The protocol's position of a byte offset in `text` (columns count
/// UTF-16 code units, the protocol's default encoding).
pub fn position(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |n| n + 1);
    Position {
        line: before.matches('\n').count() as u32,
        character: before[line_start..].encode_utf16().count() as u32,
    }
}

pub fn range(text: &str, start: usize, end: usize) -> Range {
    Range {
        start: position(text, start),
        end: position(text, end.max(start)),
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

/// The byte offset of a 1-based line and character column (the linter's
/// issues), clamped to the text.
pub fn offset_of_line_col(text: &str, line: u32, col: u32) -> usize {
    let start = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1) as usize)
        .map(str::len)
        .sum::<usize>()
        .min(text.len());
    let rest = &text[start..];
    let line_len = rest.find('\n').unwrap_or(rest.len());
    start
        + rest[..line_len]
            .char_indices()
            .nth(col.saturating_sub(1) as usize)
            .map_or(line_len, |(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_round_trip() {
        let text = "a: é𝄞x\nb: 2\n";
        let x = text.find('x').unwrap();
        let at = position(text, x);
        assert_eq!((at.line, at.character), (0, 6));
        assert_eq!(offset(text, at), x);
        let b = text.find('b').unwrap();
        assert_eq!(offset(text, position(text, b)), b);
        assert_eq!(offset_of_line_col(text, 2, 1), b);
        assert_eq!(offset_of_line_col(text, 1, 5), text.find('𝄞').unwrap());
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
        assert_eq!(offset_of_line_col(text, 1, 99), 4);
    }

    #[test]
    fn file_uris_and_paths_convert_both_ways() {
        let path = Path::new("/tmp/a dir/é.yaml");
        let uri = uri_of(path).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20dir/%C3%A9.yaml");
        assert_eq!(path_of(&uri).unwrap(), path);
    }
}
