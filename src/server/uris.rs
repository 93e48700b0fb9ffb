//! URIs as clients send them, made ones lsp-types reads. lsp-types
//! parses every URI strictly by RFC 3986, which allows `[` and `]` only
//! around an IPv6 host; the `url` crate, which many clients build file
//! URIs with, leaves them raw in a path (its path set, WHATWG URL's,
//! encodes neither), so the file of a folder named `[draft]` arrives as
//! `file:///home/me/[draft]/a.yaml` and its whole message failed to
//! read. The characters RFC 3986 allows nowhere, and `[`/`]` past the
//! authority, are percent-encoded before the message is parsed; the
//! file path they name is the same. What the client sent is remembered,
//! so that what is published for the file names it as the client does.

use std::collections::HashMap;
use std::str::FromStr;

use lsp_types::Uri;
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};

/// The ASCII bytes outside RFC 3986's `reserved`, `unreserved` and `%`,
/// with `[` and `]`, which it reserves for an IPv6 host. Every byte of a
/// non-ASCII character is encoded too.
const NOT_IN_A_PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'\\')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}')
    .add(b'[')
    .add(b']');

/// The URIs repaired so far: the one lsp-types read, by what the client
/// sent.
#[derive(Default)]
pub struct Repaired {
    sent: HashMap<String, String>,
}

impl Repaired {
    /// Repairs in place every URI of `params` (the value of a key `uri`
    /// or ending in `Uri`, at any depth) that lsp-types would refuse and
    /// that reads once repaired.
    pub fn repair(&mut self, params: &mut serde_json::Value) {
        match params {
            serde_json::Value::Object(map) => {
                for (key, value) in map.iter_mut() {
                    if let serde_json::Value::String(text) = value
                        && (key == "uri" || key.ends_with("Uri"))
                    {
                        if let Some(read) = readable(text) {
                            self.sent
                                .insert(read.clone(), std::mem::replace(text, read));
                        }
                    } else {
                        self.repair(value);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.repair(v)),
            _ => {}
        }
    }

    /// The URI as the client sent it, for `uri` (as lsp-types read it).
    pub fn as_sent<'u>(&'u self, uri: &'u Uri) -> &'u str {
        self.sent
            .get(uri.as_str())
            .map_or(uri.as_str(), String::as_str)
    }
}

/// `text` with what RFC 3986 refuses after its authority
/// percent-encoded, when lsp-types refuses it as it is and reads it so.
fn readable(text: &str) -> Option<String> {
    if Uri::from_str(text).is_ok() {
        return None;
    }
    // `scheme://authority` is kept: a `[` there may open an IPv6 host.
    let after_authority = text.find("://").map_or(0, |at| {
        let rest = at + 3;
        rest + text[rest..]
            .find(['/', '?', '#'])
            .unwrap_or(text.len() - rest)
    });
    let (head, tail) = text.split_at(after_authority);
    let repaired = format!("{head}{}", utf8_percent_encode(tail, NOT_IN_A_PATH));
    Uri::from_str(&repaired).is_ok().then_some(repaired)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brackets_in_a_path_are_encoded_and_the_sent_uri_kept() {
        let mut repaired = Repaired::default();
        let mut params = serde_json::json!({
            "textDocument": {"uri": "file:///tmp/[draft]/a b|^.yaml", "text": "[x]"},
            "changes": [{"uri": "file:///tmp/ok.yaml"}],
        });
        repaired.repair(&mut params);
        let uri = params["textDocument"]["uri"].as_str().unwrap();
        assert_eq!(uri, "file:///tmp/%5Bdraft%5D/a%20b%7C%5E.yaml");
        assert_eq!(params["textDocument"]["text"], "[x]");
        assert_eq!(params["changes"][0]["uri"], "file:///tmp/ok.yaml");
        assert_eq!(
            repaired.as_sent(&Uri::from_str(uri).unwrap()),
            "file:///tmp/[draft]/a b|^.yaml"
        );
    }

    #[test]
    fn an_ipv6_host_is_kept() {
        assert_eq!(readable("http://[::1]:8080/a"), None);
        assert_eq!(
            readable("http://[::1]:8080/[a]").as_deref(),
            Some("http://[::1]:8080/%5Ba%5D")
        );
    }
}
