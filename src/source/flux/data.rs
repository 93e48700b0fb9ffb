//! ConfigMap and Secret keys as the API server stores them: Secret `data`
//! is base64, `stringData` overrides it key by key, and SOPS-encrypted
//! files hold ciphertext that only the cluster can read.

use crate::source::Object;
use crate::yaml::{Node, Value};

/// One key of a ConfigMap or Secret.
#[derive(Clone, Debug, PartialEq)]
pub enum DataValue<'a> {
    /// Readable text. `node` is where the value is written.
    Text { text: String, node: &'a Node },
    /// Encrypted (SOPS): the cluster will see a value we cannot know.
    Unknown { node: &'a Node },
    /// Written, but not something the API server would accept.
    Invalid { node: &'a Node, message: String },
}

impl<'a> DataValue<'a> {
    pub fn node(&self) -> &'a Node {
        match self {
            DataValue::Text { node, .. }
            | DataValue::Unknown { node }
            | DataValue::Invalid { node, .. } => node,
        }
    }
}

/// Every key of a ConfigMap (`data`) or Secret (`data`, then `stringData`),
/// in the order written. Other kinds have none.
pub fn entries(obj: &Object) -> Vec<(String, DataValue<'_>)> {
    let mut out: Vec<(String, DataValue<'_>)> = Vec::new();
    match obj.kind() {
        "ConfigMap" => {
            for (key, node) in map_entries(obj.root.get("data")) {
                out.push((key, text_value(node, false)));
            }
        }
        "Secret" => {
            // A SOPS file keeps its metadata at the top level; values that
            // look readable may still be ciphertext or MACed, so none is
            // trusted.
            let sops = obj.root.get("sops").is_some();
            for (key, node) in map_entries(obj.root.get("data")) {
                let value = if sops {
                    DataValue::Unknown { node }
                } else {
                    decode_data(node)
                };
                out.push((key, value));
            }
            for (key, node) in map_entries(obj.root.get("stringData")) {
                let value = text_value(node, sops);
                match out.iter_mut().find(|(k, _)| *k == key) {
                    Some(slot) => slot.1 = value,
                    None => out.push((key, value)),
                }
            }
        }
        _ => {}
    }
    out
}

/// The value of one key, as [`entries`] reads it.
pub fn entry<'a>(obj: &'a Object, key: &str) -> Option<DataValue<'a>> {
    entries(obj)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

fn map_entries(node: Option<&Node>) -> impl Iterator<Item = (String, &Node)> {
    node.and_then(Node::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.scalar_text()?, v)))
}

fn is_encrypted(text: &str) -> bool {
    text.starts_with("ENC[")
}

fn text_value(node: &Node, sops: bool) -> DataValue<'_> {
    match &node.value {
        Value::Seq(_) | Value::Map(_) => DataValue::Invalid {
            node,
            message: "value is not a string".into(),
        },
        _ => {
            let text = node.scalar_text().unwrap_or_default();
            if sops || is_encrypted(&text) {
                DataValue::Unknown { node }
            } else {
                DataValue::Text { text, node }
            }
        }
    }
}

fn decode_data(node: &Node) -> DataValue<'_> {
    let text = match text_value(node, false) {
        DataValue::Text { text, .. } => text,
        other => return other,
    };
    match decode_base64(&text) {
        Some(bytes) => DataValue::Text {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            node,
        },
        None => DataValue::Invalid {
            node,
            message: "Secret data value is not valid base64".into(),
        },
    }
}

/// Standard base64 with padding, as Go's `encoding/json` decodes `[]byte`
/// (it skips `\r` and `\n`).
pub fn decode_base64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let clean: Vec<u8> = text
        .bytes()
        .filter(|b| *b != b'\n' && *b != b'\r')
        .collect();
    base64::engine::general_purpose::STANDARD.decode(clean).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{FileId, Limits, parse_documents};

    fn object(text: &str) -> Object {
        let mut docs = parse_documents(text, FileId(0), &Limits::default()).unwrap();
        Object::new(docs.remove(0), FileId(0), 0)
    }

    #[test]
    fn base64_round_trips_and_rejects_garbage() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(decode_base64("YWJj").unwrap(), b"abc");
        assert_eq!(decode_base64("").unwrap(), b"");
        assert!(decode_base64("aGVsbG8").is_none());
        assert!(decode_base64("a=Vs").is_none());
        assert!(decode_base64("****").is_none());
    }

    #[test]
    fn string_data_overrides_data() {
        let obj = object(
            "apiVersion: v1\nkind: Secret\ndata:\n  A: YQ==\n  B: Yg==\nstringData:\n  B: plain\n",
        );
        let e = entries(&obj);
        assert!(matches!(&e[0].1, DataValue::Text { text, .. } if text == "a"));
        assert!(matches!(&e[1].1, DataValue::Text { text, .. } if text == "plain"));
    }

    #[test]
    fn encrypted_values_are_unknown_even_without_sops_metadata() {
        let obj = object(
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  A: ENC[AES256_GCM,data:x,type:str]\n  B: ok\n",
        );
        assert!(matches!(entry(&obj, "A"), Some(DataValue::Unknown { .. })));
        assert!(matches!(entry(&obj, "B"), Some(DataValue::Text { .. })));
        assert!(entry(&obj, "C").is_none());
        let bad = object("apiVersion: v1\nkind: Secret\ndata:\n  A: not-base64!\n");
        assert!(matches!(entry(&bad, "A"), Some(DataValue::Invalid { .. })));
    }
}
