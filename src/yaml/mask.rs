//! Secret values hidden from the source text that reports show: a
//! snippet prints the lines around a finding, and those may be a
//! Secret's `data`/`stringData`. Each hidden character becomes `*` byte
//! for byte (whitespace kept), so spans into the file stay valid.

use super::limits::Limits;
use super::node::{FileId, Node, Value};
use super::parse::parse_documents;

/// `text` with the values of every Secret's `data` and `stringData`
/// masked; `None` when there is nothing to mask. A file that mentions a
/// Secret and does not parse is masked whole: what is a value cannot be
/// told.
pub fn secrets(text: &str) -> Option<String> {
    // Only a double-quoted scalar's escapes (`"\x53ecret"`, or `"Sec\`
    // folded onto the next line) spell the kind without the word.
    let mentioned = text.contains("Secret") || text.contains("secretGenerator");
    if !mentioned && !text.contains('\\') {
        return None;
    }
    let Ok(docs) = parse_documents(text, FileId(0), &Limits::default()) else {
        return mentioned.then(|| mask(text, &[(0, text.len())]));
    };
    let mut ranges = Vec::new();
    for doc in docs
        .iter()
        .filter(|d| d.str_at(&["kind"]) == Some("Secret"))
    {
        for key in ["data", "stringData"] {
            match doc.get(key).map(|n| &n.value) {
                Some(Value::Map(entries)) => ranges.extend(entries.iter().map(|(_, v)| range(v))),
                Some(_) => ranges.extend(doc.get(key).map(range)),
                None => {}
            }
        }
    }
    // A kustomize secretGenerator's `literals` (`KEY=value`): the value.
    for entry in docs
        .iter()
        .filter_map(|d| d.get("secretGenerator")?.as_seq())
        .flatten()
    {
        for literal in entry
            .get("literals")
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
        {
            let (start, end) = range(literal);
            if let Some(eq) = text.get(start..end).and_then(|t| t.find('=')) {
                ranges.push((start + eq + 1, end));
            }
        }
    }
    (!ranges.is_empty()).then(|| mask(text, &ranges))
}

/// What a report shows instead of a secret value: its length.
pub fn redacted(text: &str) -> String {
    format!("<redacted: {} bytes>", text.len())
}

fn range(n: &Node) -> (usize, usize) {
    (n.span.start as usize, n.span.end as usize)
}

fn mask(text: &str, ranges: &[(usize, usize)]) -> String {
    let mut out = text.as_bytes().to_vec();
    for &(start, end) in ranges {
        let end = end.min(text.len());
        let Some(piece) = text.get(start..end) else {
            continue;
        };
        for (at, c) in piece.char_indices() {
            if !c.is_whitespace() {
                let from = start + at;
                out[from..from + c.len_utf8()].fill(b'*');
            }
        }
    }
    String::from_utf8(out).expect("ASCII replaces whole characters")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_values_are_masked_byte_for_byte() {
        let text = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData:\n  password: hunter2\n  block: |\n    säkret\ndata: {token: aHVudGVyMg==}\n---\nkind: ConfigMap\ndata: {a: visible}\n";
        let masked = secrets(text).unwrap();
        assert_eq!(masked.len(), text.len());
        assert!(
            !masked.contains("hunter2") && !masked.contains("kret") && !masked.contains("aHVu"),
            "{masked}"
        );
        assert!(
            masked.contains("password: *******\n") && masked.contains("visible"),
            "{masked}"
        );
        assert_eq!(secrets("kind: ConfigMap\ndata: {a: b}\n"), None);
        // A secretGenerator's literal values, not its keys.
        let text = "secretGenerator:\n  - name: s\n    literals: [A=hunter2, \"B=x=y\"]\n";
        assert_eq!(
            secrets(text).unwrap(),
            "secretGenerator:\n  - name: s\n    literals: [A=*******, \"B=****]\n"
        );
        // The kind spelled with escapes is still a Secret's.
        for kind in ["\"\\x53ecret\"", "\"Sec\\\n  ret\""] {
            let text = format!("kind: {kind}\nstringData: {{password: hunter2}}\n");
            let masked = secrets(&text).unwrap_or_default();
            assert!(masked.contains("password: *******"), "{kind}: {masked}");
        }
    }
}
