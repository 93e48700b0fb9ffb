//! ConfigMap and Secret keys as the API server stores them: Secret `data`
//! is base64, `stringData` overrides it key by key, and SOPS-encrypted
//! files hold ciphertext that only the cluster can read. Objects that make
//! a controller write a Secret (SealedSecret, ExternalSecret) name its keys
//! but not its values: [`provided`] is the one place that knows which keys
//! each of them holds.

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

/// The ConfigMap or Secret an object puts into the cluster, and the keys
/// it will hold there.
#[derive(Clone, Debug, PartialEq)]
pub struct Provided<'a> {
    /// `ConfigMap` or `Secret`.
    pub kind: &'static str,
    /// The name of the ConfigMap or Secret in the cluster.
    pub name: String,
    /// The keys known from the repository, in the order written.
    pub keys: Vec<(String, DataValue<'a>)>,
    /// Keys beyond `keys` may exist that only the cluster knows (an
    /// ExternalSecret's `dataFrom`, a Secret it merges into).
    pub open: bool,
}

/// What `obj` provides: a ConfigMap or Secret itself, the Secret that
/// sealed-secrets' controller unseals from a SealedSecret (same name and
/// namespace; `spec.encryptedData` and `spec.template.data` keys), or the
/// one External Secrets writes for an ExternalSecret (`spec.target.name`,
/// default the ExternalSecret's name). `None` for anything else, and for an
/// ExternalSecret with `creationPolicy: None`, which writes no Secret.
pub fn provided(obj: &Object) -> Option<Provided<'_>> {
    let name = obj.name().to_string();
    let mut keys: Vec<(String, DataValue<'_>)> = Vec::new();
    let mut open = false;
    let kind = match (obj.group(), obj.kind()) {
        ("", "ConfigMap") => {
            for (key, node) in map_entries(obj.root.get("data")) {
                keys.push((key, text_value(node)));
            }
            "ConfigMap"
        }
        ("", "Secret") => {
            for (key, node) in map_entries(obj.root.get("data")) {
                keys.push((key, decode_data(node)));
            }
            for (key, node) in map_entries(obj.root.get("stringData")) {
                set(&mut keys, key, text_value(node));
            }
            "Secret"
        }
        ("bitnami.com", "SealedSecret") => {
            let spec = obj.root.get("spec");
            for (key, node) in map_entries(spec.and_then(|s| s.get("encryptedData"))) {
                set(&mut keys, key, DataValue::Unknown { node });
            }
            // Templates over the unsealed values: only the cluster can
            // render them.
            for (key, node) in map_entries(spec.and_then(|s| s.path(&["template", "data"]))) {
                set(&mut keys, key, DataValue::Unknown { node });
            }
            // The old format seals the whole Secret in `spec.data`.
            open = spec.and_then(|s| s.get("data")).is_some();
            "Secret"
        }
        ("external-secrets.io", "ExternalSecret") => {
            let target = obj.root.path(&["spec", "target"]);
            let policy = target.and_then(|t| t.str_at(&["creationPolicy"]));
            if policy == Some("None") {
                return None;
            }
            let name = target
                .and_then(|t| t.str_at(&["name"]))
                .filter(|n| !n.is_empty())
                .map_or(name, str::to_string);
            let template = target.and_then(|t| t.get("template"));
            // A template replaces the fetched keys unless it merges them in
            // (external-secrets `TemplateMergePolicy`, default `Replace`).
            let merge = template.and_then(|t| t.str_at(&["mergePolicy"])) == Some("Merge");
            if template.is_none() || merge {
                for entry in obj
                    .root
                    .path(&["spec", "data"])
                    .and_then(Node::as_seq)
                    .into_iter()
                    .flatten()
                {
                    if let Some(key) = entry.get("secretKey").and_then(Node::scalar_text) {
                        set(&mut keys, key, DataValue::Unknown { node: entry });
                    }
                }
                open |= obj
                    .root
                    .path(&["spec", "dataFrom"])
                    .and_then(Node::as_seq)
                    .is_some_and(|d| !d.is_empty());
            }
            for (key, node) in map_entries(template.and_then(|t| t.get("data"))) {
                // A value without template actions is written as is.
                let value = match text_value(node) {
                    DataValue::Text { text, .. } if text.contains("{{") => {
                        DataValue::Unknown { node }
                    }
                    other => other,
                };
                set(&mut keys, key, value);
            }
            open |= template.is_some_and(|t| t.get("templateFrom").is_some());
            open |= policy == Some("Merge");
            return Some(Provided {
                kind: "Secret",
                name,
                keys,
                open,
            });
        }
        _ => return None,
    };
    Some(Provided {
        kind,
        name,
        keys,
        open,
    })
}

/// Whether the ConfigMap or Secret that `obj` provides exists in
/// `namespace`: its own, or one that emberstack's kubernetes-reflector
/// mirrors it into. Reflector copies a source annotated
/// `reflection-allowed: "true"` and `reflection-auto-enabled: "true"`
/// into every namespace that `reflection-allowed-namespaces` (and, when
/// set, `reflection-auto-namespaces`) lists: comma-separated names or
/// regular expressions, none meaning every namespace.
pub fn provided_in(obj: &Object, namespace: &str) -> bool {
    if obj.namespace() == Some(namespace) {
        return true;
    }
    let meta = match (obj.group(), obj.kind()) {
        ("bitnami.com", "SealedSecret") => obj.root.path(&["spec", "template", "metadata"]),
        ("external-secrets.io", "ExternalSecret") => {
            obj.root.path(&["spec", "target", "template", "metadata"])
        }
        _ => obj.root.get("metadata"),
    };
    let annotation = |name: &str| {
        meta.and_then(|m| {
            m.path(&[
                "annotations",
                &format!("reflector.v1.k8s.emberstack.com/{name}"),
            ])
        })
        .and_then(Node::scalar_text)
    };
    let on = |name: &str| annotation(name).is_some_and(|v| v.trim() == "true");
    let listed = |name: &str| {
        annotation(name).is_none_or(|list| {
            let list = list.trim();
            list.is_empty()
                || list.split(',').map(str::trim).any(|p| {
                    p == namespace
                        || regex::Regex::new(&format!("^(?:{p})$"))
                            .is_ok_and(|r| r.is_match(namespace))
                })
        })
    };
    on("reflection-allowed")
        && on("reflection-auto-enabled")
        && listed("reflection-allowed-namespaces")
        && listed("reflection-auto-namespaces")
}

/// Every key of a ConfigMap (`data`) or Secret (`data`, then `stringData`)
/// or of the Secret another object provides, in the order written.
pub fn entries(obj: &Object) -> Vec<(String, DataValue<'_>)> {
    provided(obj).map(|p| p.keys).unwrap_or_default()
}

fn set<'a>(keys: &mut Vec<(String, DataValue<'a>)>, key: String, value: DataValue<'a>) {
    match keys.iter_mut().find(|(k, _)| *k == key) {
        Some(slot) => slot.1 = value,
        None => keys.push((key, value)),
    }
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

/// SOPS writes every value it encrypts as `ENC[AES256_GCM,data:…,iv:…,
/// tag:…,type:…]` (getsops/sops `aes/cipher.go`). Values that
/// `unencrypted_regex`, `unencrypted_suffix`, `encrypted_regex` and the
/// like left out are written in the clear, and kustomize-controller's
/// decryption hands them to the cluster unchanged: they are known.
fn is_encrypted(text: &str) -> bool {
    text.starts_with("ENC[")
}

fn text_value(node: &Node) -> DataValue<'_> {
    match &node.value {
        Value::Seq(_) | Value::Map(_) => DataValue::Invalid {
            node,
            message: "value is not a string".into(),
        },
        _ => {
            let text = node.scalar_text().unwrap_or_default();
            if is_encrypted(&text) {
                DataValue::Unknown { node }
            } else {
                DataValue::Text { text, node }
            }
        }
    }
}

fn decode_data(node: &Node) -> DataValue<'_> {
    let text = match text_value(node) {
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
