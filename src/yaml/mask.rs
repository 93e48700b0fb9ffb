//! Secret values hidden from the source text that reports show: a
//! snippet prints the lines around a finding, and those may be a
//! Secret's `data`/`stringData`, or a URL written with its credentials
//! (`https://user:token@host/…`). Each hidden character becomes `*` byte
//! for byte (whitespace kept), so spans into the file stay valid. A
//! message that quotes such a URL hides them too ([`without_credentials`]).

use std::borrow::Cow;

use super::limits::Limits;
use super::node::{FileId, Node, Value};
use super::parse::parse_documents;

/// `text` with the values of every Secret's `data` and `stringData`
/// masked; `None` when there is nothing to mask. A file that mentions a
/// Secret and does not parse is masked whole: what is a value cannot be
/// told.
pub fn secrets(text: &str) -> Option<String> {
    let mut ranges = url_credentials(text);
    // Only a double-quoted scalar's escapes (`"\x53ecret"`, or `"Sec\`
    // folded onto the next line) spell the kind without the word.
    let mentioned = text.contains("Secret") || text.contains("secretGenerator");
    if !mentioned && !text.contains('\\') {
        return (!ranges.is_empty()).then(|| mask(text, &ranges));
    }
    let Ok(docs) = parse_documents(text, FileId(0), &Limits::default()) else {
        return mentioned.then(|| mask(text, &[(0, text.len())]));
    };
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

/// `text` (a message, a `-v` line) with the credentials of every URL in
/// it replaced by `***`.
pub fn without_credentials(text: &str) -> Cow<'_, str> {
    let ranges = url_credentials(text);
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in ranges {
        out.push_str(&text[from..start]);
        out.push_str("***");
        from = end;
    }
    out.push_str(&text[from..]);
    Cow::Owned(out)
}

/// `text` with the credentials of every URL in it masked byte for byte,
/// as [`secrets`] masks them: what a value that holds such a URL, and no
/// Secret's value, looks like in the text reports show.
pub fn credentials_masked(text: &str) -> Cow<'_, str> {
    match url_credentials(text) {
        ranges if ranges.is_empty() => Cow::Borrowed(text),
        ranges => Cow::Owned(mask(text, &ranges)),
    }
}

/// The credentials of each URL in `text`, as byte ranges: the userinfo
/// between `scheme://` and the last `@` of the authority, which ends at
/// `/`, `\`, `?` or `#` as a URL parser ends it (the WHATWG URL
/// standard's authority state, which reqwest's `url` follows), or at a
/// space. Quotes and brackets do not end it: a password may hold them,
/// and one shown in part is shown. An ssh user
/// without a password (`ssh://git@github.com/…`) is a login name, not a
/// credential: ssh authenticates with keys.
pub fn url_credentials(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let start = from + found + "://".len();
        let scheme = text[..from + found]
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)))
            .next()
            .unwrap_or("");
        let authority = &text[start..];
        let end = authority
            .find(|c: char| "/\\?#".contains(c) || c.is_whitespace() || c.is_control())
            .unwrap_or(authority.len());
        if let Some(at) = authority[..end].rfind('@')
            && is_credential(scheme, &authority[..at])
        {
            out.push((start, start + at));
        }
        from = start;
    }
    out
}

/// Whether the userinfo of a `scheme` URL is a credential: its password
/// (or, without one, its user, where a token goes) is not empty and not a
/// placeholder a program fills in (`${PASSWORD}`, `$${VAR}` escaped for
/// Flux, `$TOKEN`, `{TOKEN}`, `{{ .token }}`, `%s`). Without a password,
/// an ssh user is a login name (ssh authenticates with keys), and an
/// `s3://` user is a bucket (Longhorn's backup target,
/// `s3://bucket@region/`).
fn is_credential(scheme: &str, userinfo: &str) -> bool {
    let (user, password) = match userinfo.split_once(':') {
        Some((user, password)) => (user, Some(password).filter(|p| !p.is_empty())),
        None => (userinfo, None),
    };
    let scheme = scheme.to_ascii_lowercase();
    if password.is_none() && (scheme.contains("ssh") || scheme == "s3") {
        return false;
    }
    let secret = password.unwrap_or(user);
    !secret.is_empty() && !is_placeholder(secret)
}

fn is_placeholder(text: &str) -> bool {
    let unsigiled = text.trim_start_matches('$');
    let variable = unsigiled.len() < text.len()
        && !unsigiled.is_empty()
        && unsigiled
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_');
    let braced = unsigiled.len() >= 2 && unsigiled.starts_with('{') && unsigiled.ends_with('}');
    variable || braced || matches!(text, "%s" | "%v")
}

/// What a report shows instead of a secret value: its length.
pub fn redacted(text: &str) -> String {
    format!("<redacted: {} bytes>", text.len())
}

fn range(n: &Node) -> (usize, usize) {
    (n.span().start as usize, n.span().end as usize)
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
        // A URL's credentials, in any file.
        let text = "resources:\n  - https://user:hunter2@example.com/a.yaml\n";
        assert_eq!(
            secrets(text).unwrap(),
            "resources:\n  - https://************@example.com/a.yaml\n"
        );
        // The kind spelled with escapes is still a Secret's.
        for kind in ["\"\\x53ecret\"", "\"Sec\\\n  ret\""] {
            let text = format!("kind: {kind}\nstringData: {{password: hunter2}}\n");
            let masked = secrets(&text).unwrap_or_default();
            assert!(masked.contains("password: *******"), "{kind}: {masked}");
        }
    }
}

#[cfg(test)]
mod url_tests {
    use super::without_credentials;

    #[test]
    fn the_credentials_of_every_url_in_a_text_are_hidden() {
        let cases = [
            (
                "remote resource 'https://user:hunter2@example.com/a.yaml' is not fetched",
                "remote resource 'https://***@example.com/a.yaml' is not fetched",
            ),
            (
                "git::https://ghp_token@github.com/o/r//x?ref=v1, HTTP://u:p%40ss@h:8443?x",
                "git::https://***@github.com/o/r//x?ref=v1, HTTP://***@h:8443?x",
            ),
            // The last `@` of the authority ends the userinfo.
            ("https://a@b:c@host/p", "https://***@host/p"),
            // An `@` in the path is no userinfo.
            (
                "https://example.com/@types/x.yaml",
                "https://example.com/@types/x.yaml",
            ),
            // An ssh login is no credential; an ssh password is.
            (
                "ssh://git@github.com/o/r and ssh://git:pw@h/r",
                "ssh://git@github.com/o/r and ssh://***@h/r",
            ),
            ("git@github.com:o/r.git", "git@github.com:o/r.git"),
            ("https://", "https://"),
            // Placeholders a program fills in are no credentials, nor is
            // Longhorn's `s3://bucket@region/`.
            (
                "https://${USER}:${PASSWORD}@h/ postgres://$${U}:$${P}@db \
                 https://x-access-token:{TOKEN}@github.com https://x:%s@h https://$TOKEN@h \
                 https://{{ .token }}@h s3://longhorn@ca-east-1/",
                "https://${USER}:${PASSWORD}@h/ postgres://$${U}:$${P}@db \
                 https://x-access-token:{TOKEN}@github.com https://x:%s@h https://$TOKEN@h \
                 https://{{ .token }}@h s3://longhorn@ca-east-1/",
            ),
            ("s3://key:s3cret@minio/", "s3://***@minio/"),
            // Sub-delimiters are a password's characters.
            ("'https://u:p(a)ss,w\"@host' is", "'https://***@host' is"),
        ];
        for (text, want) in cases {
            assert_eq!(without_credentials(text), want, "{text}");
        }
    }
}
