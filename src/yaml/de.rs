//! A serde `Deserializer` over a parsed [`Node`] tree, for the files the
//! binary embeds (the built-in rules and release files): read through
//! the repository's own parser, their reading costs half of what
//! serde-saphyr spent on it in every run. Files a user writes (`--rules`,
//! the configuration) stay on serde-saphyr, whose errors they are
//! promised.
//!
//! A plain scalar read as a string keeps the text it was written with
//! (`version: 2025.10` is "2025.10", not the float's "2025.1"), as
//! serde-saphyr does.

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};

use super::node::{Node, Span, Value};

/// Why a document does not read as the type asked for, and where.
#[derive(Debug)]
pub struct Error {
    pub message: String,
    /// The innermost node the error arose at.
    pub span: Option<Span>,
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Error {
            message: msg.to_string(),
            span: None,
        }
    }
}

/// `node`, parsed from `text`, read as a `T`.
pub fn from_node<'de, T: de::Deserialize<'de>>(
    node: &'de Node,
    text: &'de str,
) -> Result<T, Error> {
    T::deserialize(NodeDe { node, text })
}

/// One node of the tree, with the text its spans point into.
#[derive(Clone, Copy)]
struct NodeDe<'de> {
    node: &'de Node,
    text: &'de str,
}

impl<'de> NodeDe<'de> {
    fn at(self, node: &'de Node) -> NodeDe<'de> {
        NodeDe {
            node,
            text: self.text,
        }
    }

    /// The error, placed at this node unless a node inside it already
    /// placed it.
    fn place(self, mut e: Error) -> Error {
        e.span.get_or_insert(self.node.span());
        e
    }

    /// A typed plain scalar as written.
    fn written(self) -> Option<&'de str> {
        let span = self.node.span();
        self.text.get(span.start as usize..span.end as usize)
    }
}

impl<'de> de::Deserializer<'de> for NodeDe<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        let out = match &self.node.value {
            Value::Null => v.visit_unit(),
            Value::Bool(b) => v.visit_bool(*b),
            Value::Int(i) => v.visit_i64(*i),
            Value::Float(f) => v.visit_f64(*f),
            Value::Str(s) => v.visit_str(s),
            Value::Seq(items) => v.visit_seq(Items {
                de: self,
                items: items.iter(),
            }),
            Value::Map(entries) => v.visit_map(Entries {
                de: self,
                entries: entries.iter(),
                value: None,
            }),
        };
        out.map_err(|e| self.place(e))
    }

    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match &self.node.value {
            Value::Bool(_) | Value::Int(_) | Value::Float(_) => match self.written() {
                Some(text) => v.visit_str(text).map_err(|e| self.place(e)),
                None => self.deserialize_any(v),
            },
            _ => self.deserialize_any(v),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_str(v)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        self.deserialize_str(v)
    }

    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        match self.node.value {
            Value::Null => v.visit_none(),
            _ => v.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_newtype_struct(self)
    }

    /// Externally tagged, as serde writes enums in YAML: a unit variant
    /// is its name, any other a map of its name to its content.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        let out = match &self.node.value {
            Value::Str(s) => v.visit_enum(s.as_str().into_deserializer()),
            Value::Map(entries) if entries.len() == 1 => v.visit_enum(Variant {
                name: self.at(&entries[0].0),
                content: self.at(&entries[0].1),
            }),
            _ => Err(de::Error::custom(
                "expected an enum variant: its name, or a map of its name to its content",
            )),
        };
        out.map_err(|e| self.place(e))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char bytes
        byte_buf unit unit_struct seq tuple tuple_struct map struct
        ignored_any
    }
}

struct Items<'de> {
    de: NodeDe<'de>,
    items: std::slice::Iter<'de, Node>,
}

impl<'de> de::SeqAccess<'de> for Items<'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Error> {
        self.items
            .next()
            .map(|item| seed.deserialize(self.de.at(item)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Entries<'de> {
    de: NodeDe<'de>,
    entries: std::slice::Iter<'de, (Node, Node)>,
    /// The value of the key just read.
    value: Option<&'de Node>,
}

impl<'de> de::MapAccess<'de> for Entries<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(self.de.at(key)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| <Error as de::Error>::custom("a map value before its key"))?;
        seed.deserialize(self.de.at(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A variant written as a map of its name to its content.
struct Variant<'de> {
    name: NodeDe<'de>,
    content: NodeDe<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'de> {
    type Error = Error;
    type Variant = NodeDe<'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, NodeDe<'de>), Error> {
        Ok((seed.deserialize(self.name)?, self.content))
    }
}

impl<'de> de::VariantAccess<'de> for NodeDe<'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<(), Error> {
        de::Deserialize::deserialize(self)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Error> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, v: V) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_seq(self, v)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        de::Deserializer::deserialize_map(self, v)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::yaml::{FileId, Limits, parse_values};

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Doc {
        version: String,
        count: u64,
        ratio: f64,
        on: bool,
        #[serde(default)]
        note: Option<String>,
        names: Vec<String>,
        map: BTreeMap<String, String>,
        kinds: Vec<Kind>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Kind {
        Plain,
        OneOf(Vec<String>),
        Range { low: i64 },
    }

    fn read<T: de::DeserializeOwned>(text: &str) -> Result<T, Error> {
        let doc = parse_values(text, FileId(0), &Limits::default()).unwrap();
        from_node(&doc[0], text)
    }

    /// Plain scalars read as strings as written; typed fields, options,
    /// maps and each form of enum variant read as serde-saphyr reads them.
    #[test]
    fn documents_read_as_their_types() {
        let text = "version: 2025.10\ncount: 3\nratio: 2\non: true\nnames: [1.0, yes, \"a\"]\n\
             map: {x: 0x1F}\nkinds:\n  - plain\n  - oneOf: [a, b]\n  - range: {low: -2}\n";
        let doc: Doc = read(text).unwrap();
        assert_eq!(doc, serde_saphyr::from_str::<Doc>(text).unwrap());
        assert_eq!(
            doc,
            Doc {
                version: "2025.10".into(),
                count: 3,
                ratio: 2.0,
                on: true,
                note: None,
                names: vec!["1.0".into(), "yes".into(), "a".into()],
                map: BTreeMap::from([("x".into(), "0x1F".into())]),
                kinds: vec![
                    Kind::Plain,
                    Kind::OneOf(vec!["a".into(), "b".into()]),
                    Kind::Range { low: -2 },
                ],
            }
        );
    }

    /// An error names what went wrong at the innermost node it concerns.
    #[test]
    fn errors_are_placed_at_their_node() {
        let text = "version: a\ncount: 1\nratio: 1\non: true\nnames: []\nmap: {}\nkinds: [plain]\nbogus: 1\n";
        let err = read::<Doc>(text).unwrap_err();
        assert!(err.message.contains("unknown field `bogus`"), "{err}");
        let text = "version: a\ncount: x\n";
        let err = read::<Doc>(text).unwrap_err();
        assert!(err.message.contains("invalid type: string \"x\""), "{err}");
        assert_eq!(err.span.map(|s| (s.line, s.col)), Some((2, 8)));
    }
}
