//! Builds [`Node`] trees from saphyr's event stream.
//!
//! We build our own tree instead of using `saphyr::MarkedYaml` because we
//! need byte offsets (saphyr counts characters), the scalar style (for Flux
//! re-typing), merge keys, and hard budgets that hold on hostile input: the
//! builder is iterative, so nesting depth costs heap, not stack, and is
//! capped; alias expansion is charged per node copied.

use std::collections::HashMap;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span as PSpan, Tag};

use super::node::{FileId, Node, Span, Style, Value};

/// Budgets for one file. Defaults are far above anything seen in real
/// GitOps repos (largest corpus file: about 1 MB, depth < 40).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: usize,
    pub max_depth: usize,
    /// Nodes that alias expansion may copy, per file.
    pub max_alias_nodes: usize,
    /// Bytes one string may have after Flux postBuild substitution.
    pub max_subst_value_bytes: usize,
    /// Bytes that all substitution of a run may add to the strings it
    /// expands (`${V//a/${V//a/…}}` doubles per level).
    pub max_subst_growth_bytes: usize,
    /// Pattern-matching steps (value bytes x pattern elements) that the
    /// `${V#glob}` trims of a run may take.
    pub max_subst_steps: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 16 * 1024 * 1024,
            max_depth: 256,
            max_alias_nodes: 1_000_000,
            max_subst_value_bytes: 4 * 1024 * 1024,
            max_subst_growth_bytes: 64 * 1024 * 1024,
            max_subst_steps: 200_000_000,
        }
    }
}

/// A YAML syntax error or a broken budget, at a position in the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct YamlError {
    pub message: String,
    /// 1-based line and character column; 0 when the whole file is meant.
    pub line: u32,
    pub col: u32,
    pub offset: u32,
}

/// Converts saphyr's character indices to byte offsets.
pub struct OffsetMap<'a> {
    text: &'a str,
    /// Byte offset of every character; empty when the text is ASCII and
    /// the two coincide.
    bytes: Vec<u32>,
}

impl<'a> OffsetMap<'a> {
    pub fn new(text: &'a str) -> Self {
        let bytes = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices().map(|(b, _)| b as u32).collect()
        };
        OffsetMap { text, bytes }
    }

    pub fn byte(&self, char_index: usize) -> u32 {
        if self.bytes.is_empty() {
            char_index.min(self.text.len()) as u32
        } else {
            self.bytes
                .get(char_index)
                .copied()
                .unwrap_or(self.text.len() as u32)
        }
    }

    fn span(&self, file: FileId, s: PSpan) -> Span {
        self.span_between(file, s.start, s.end)
    }

    fn span_between(&self, file: FileId, start: Marker, end: Marker) -> Span {
        let (a, b) = (self.byte(start.index()), self.byte(end.index()));
        Span {
            file,
            start: a,
            end: b.max(a),
            line: start.line() as u32,
            col: start.col() as u32 + 1,
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Node>,
        start: Marker,
        anchor: usize,
    },
    Map {
        entries: Vec<(Node, Node)>,
        /// Maps merged in with `<<`, applied when the mapping closes so
        /// that explicit keys win wherever they are written.
        merges: Vec<Node>,
        key: Option<Node>,
        start: Marker,
        anchor: usize,
    },
}

/// Parses every document of a file. Empty documents (a file that is only
/// `---`, or comments) are left out.
pub fn parse_documents(text: &str, file: FileId, limits: &Limits) -> Result<Vec<Node>, YamlError> {
    if text.len() > limits.max_bytes {
        return Err(YamlError {
            message: format!(
                "file is {} bytes, over the limit of {} bytes",
                text.len(),
                limits.max_bytes
            ),
            line: 0,
            col: 0,
            offset: 0,
        });
    }
    let offsets = OffsetMap::new(text);
    let mut parser = Parser::new_from_str(text);
    let mut docs = Vec::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, Node> = HashMap::new();
    let mut alias_budget = limits.max_alias_nodes;
    let mut root: Option<Node> = None;

    let err_at = |m: Marker, message: String| YamlError {
        message,
        line: m.line() as u32,
        col: m.col() as u32 + 1,
        offset: offsets.byte(m.index()),
    };

    while let Some(ev) = parser.next_event() {
        let (event, pspan) = ev.map_err(|e| err_at(*e.marker(), e.info().to_string()))?;
        let completed: Option<(Node, usize)> = match event {
            Event::StreamStart | Event::Nothing | Event::StreamEnd => None,
            Event::DocumentStart(_) => {
                anchors.clear();
                None
            }
            Event::DocumentEnd => {
                if let Some(r) = root.take()
                    && !r.is_null()
                {
                    docs.push(r);
                }
                None
            }
            Event::Alias(id) => {
                let node = anchors.get(&id).cloned().ok_or_else(|| {
                    err_at(pspan.start, "alias refers to an unknown anchor".into())
                })?;
                let size = count_nodes(&node);
                if size > alias_budget {
                    return Err(err_at(
                        pspan.start,
                        format!(
                            "alias expansion exceeds the budget of {} nodes (alias bomb?)",
                            limits.max_alias_nodes
                        ),
                    ));
                }
                alias_budget -= size;
                Some((node, 0))
            }
            Event::Scalar(text, style, anchor, tag) => {
                let mut node = scalar(&text, style, tag.as_deref());
                node.span = offsets.span(file, pspan);
                Some((node, anchor))
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= limits.max_depth {
                    return Err(err_at(
                        pspan.start,
                        format!("nesting deeper than {} levels", limits.max_depth),
                    ));
                }
                stack.push(if matches!(event, Event::SequenceStart(..)) {
                    Frame::Seq {
                        items: Vec::new(),
                        start: pspan.start,
                        anchor,
                    }
                } else {
                    Frame::Map {
                        entries: Vec::new(),
                        merges: Vec::new(),
                        key: None,
                        start: pspan.start,
                        anchor,
                    }
                });
                None
            }
            Event::SequenceEnd => match stack.pop() {
                Some(Frame::Seq {
                    items,
                    start,
                    anchor,
                }) => Some((
                    Node::new(
                        Value::Seq(shrunk(items)),
                        offsets.span_between(file, start, pspan.end),
                    ),
                    anchor,
                )),
                _ => return Err(err_at(pspan.start, "unbalanced sequence end".into())),
            },
            Event::MappingEnd => match stack.pop() {
                Some(Frame::Map {
                    mut entries,
                    merges,
                    start,
                    anchor,
                    ..
                }) => {
                    apply_merges(&mut entries, merges);
                    Some((
                        Node::new(
                            Value::Map(shrunk(entries)),
                            offsets.span_between(file, start, pspan.end),
                        ),
                        anchor,
                    ))
                }
                _ => return Err(err_at(pspan.start, "unbalanced mapping end".into())),
            },
        };
        let Some((node, anchor)) = completed else {
            continue;
        };
        if anchor != 0 {
            anchors.insert(anchor, node.clone());
        }
        match stack.last_mut() {
            None => root = Some(node),
            Some(Frame::Seq { items, .. }) => items.push(node),
            Some(Frame::Map {
                entries,
                merges,
                key,
                ..
            }) => match key.take() {
                None => *key = Some(node),
                Some(k) if k.style == Style::Plain && k.as_str() == Some("<<") => {
                    match node.value {
                        Value::Seq(items) => merges.extend(items),
                        _ => merges.push(node),
                    }
                }
                Some(k) => {
                    // Later duplicates win, as in go-yaml's decoding into maps.
                    if let Some(slot) = entries.iter_mut().find(|(e, _)| e.value == k.value) {
                        *slot = (k, node);
                    } else {
                        entries.push((k, node));
                    }
                }
            },
        }
    }
    if let Some(r) = root.take()
        && !r.is_null()
    {
        docs.push(r);
    }
    Ok(docs)
}

/// Trees live for the whole run, and growing a Vec by pushing leaves up
/// to half of it unused.
fn shrunk<T>(mut v: Vec<T>) -> Vec<T> {
    v.shrink_to_fit();
    v
}

fn count_nodes(node: &Node) -> usize {
    let mut n = 0;
    node.walk(&mut |_, _| n += 1);
    n
}

fn apply_merges(entries: &mut Vec<(Node, Node)>, merges: Vec<Node>) {
    for merged in merges {
        let Value::Map(extra) = merged.value else {
            continue;
        };
        for (k, v) in extra {
            if !entries.iter().any(|(e, _)| e.value == k.value) {
                entries.push((k, v));
            }
        }
    }
}

fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Node {
    let node_style = match style {
        ScalarStyle::Plain => Style::Plain,
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => Style::Quoted,
        ScalarStyle::Literal | ScalarStyle::Folded => Style::Block,
    };
    let value = match tag {
        Some(t) if t.is_yaml_core_schema() => match t.suffix.as_str() {
            "str" | "binary" | "timestamp" => Value::Str(text.to_string()),
            "null" => Value::Null,
            "bool" | "int" | "float" => {
                resolve_plain(text).unwrap_or_else(|| Value::Str(text.to_string()))
            }
            _ => Value::Str(text.to_string()),
        },
        // Application tags (`!env_var`, `!secret`): the content stays text.
        Some(_) => Value::Str(text.to_string()),
        None if node_style == Style::Plain => {
            resolve_plain(text).unwrap_or_else(|| Value::Str(text.to_string()))
        }
        None => Value::Str(text.to_string()),
    };
    Node {
        value,
        span: Span::default(),
        style: node_style,
        origin: None,
    }
}

/// Plain scalars resolved as go-yaml v3 (kustomize, Flux) resolves them
/// (gopkg.in/yaml.v3 resolve.go, `resolve`): the YAML 1.2 core schema
/// words, then for text starting with a digit or sign Go's
/// `strconv.ParseInt(s, 0, 64)` with every `_` removed, then `ParseUint`,
/// then floats matching go-yaml's `yamlStyleFloat`. YAML 1.1 words such as
/// `on` and `yes` stay strings here; [`Node::as_bool_lenient`] reads them
/// where a setting is boolean.
pub fn resolve_plain(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" => return Some(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Some(Value::Bool(false)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Some(Value::Float(f64::INFINITY));
        }
        "-.inf" | "-.Inf" | "-.INF" => return Some(Value::Float(f64::NEG_INFINITY)),
        ".nan" | ".NaN" | ".NAN" => return Some(Value::Float(f64::NAN)),
        _ => {}
    }
    match text.as_bytes()[0] {
        // go-yaml hands these to Go's ParseFloat, which also reads `.5e3`.
        b'.' => is_yaml_float(text)
            .then(|| text.parse().ok().map(Value::Float))
            .flatten(),
        b'0'..=b'9' | b'-' | b'+' => {
            let plain = text.replace('_', "");
            if let Some(v) = go_parse_int(&plain) {
                return Some(v);
            }
            is_yaml_float(&plain)
                .then(|| plain.parse().ok().map(Value::Float))
                .flatten()
        }
        _ => None,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`, falling back to `ParseUint` as
/// go-yaml does: an optional sign (ParseInt only), then `0x`, `0o`, `0b`
/// (either case) or a leading `0` for octal, then at least one digit of
/// that base and nothing else, so `0x-5` is no number. Values above
/// `i64::MAX` that fit in a `u64` are integers to go-yaml; they are kept
/// as the nearest float, as a JSON reader would hold them.
fn go_parse_int(s: &str) -> Option<Value> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.get(..2).map(str::to_ascii_lowercase);
    let (radix, digits) = match lower.as_deref() {
        Some("0x") => (16, &body[2..]),
        Some("0o") => (8, &body[2..]),
        Some("0b") => (2, &body[2..]),
        _ if body.len() > 1 && body.starts_with('0') => (8, &body[1..]),
        _ => (10, body),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        // i64::MIN has no positive counterpart: build it from the magnitude.
        (magnitude <= i64::MIN.unsigned_abs())
            .then(|| Value::Int((magnitude as i64).wrapping_neg()))
    } else if let Ok(v) = i64::try_from(magnitude) {
        Some(Value::Int(v))
    } else {
        // ParseUint takes no sign: `+18446744073709551615` is left to
        // yamlStyleFloat, `+0xFFFFFFFFFFFFFFFF` stays a string.
        (!s.starts_with('+')).then_some(Value::Float(magnitude as f64))
    }
}

/// go-yaml's `yamlStyleFloat`:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let from = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - from
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Vec<Node> {
        parse_documents(text, FileId(0), &Limits::default()).unwrap()
    }

    #[test]
    fn multi_document_and_empty_documents() {
        let docs = parse("---\na: 1\n---\n---\n# only a comment\n---\nb: [x, y]\n");
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[1].to_json(), serde_json::json!({"b": ["x", "y"]}));
    }

    #[test]
    fn key_and_value_spans_are_line_and_column() {
        let docs = parse("spec:\n  chart:\n    version: 2025.10.1\n");
        let key = docs[0]
            .path(&["spec", "chart"])
            .unwrap()
            .get_key("version")
            .unwrap();
        assert_eq!((key.span.line, key.span.col), (3, 5));
        let value = docs[0].path(&["spec", "chart", "version"]).unwrap();
        assert_eq!((value.span.line, value.span.col), (3, 14));
        assert_eq!(value.as_str(), Some("2025.10.1"));
    }

    #[test]
    fn byte_offsets_are_right_after_non_ascii_text() {
        let text = "a: \"größe ✓\"\nb: value\n";
        let docs = parse(text);
        let b = docs[0].get("b").unwrap();
        assert_eq!(&text[b.span.start as usize..b.span.end as usize], "value");
        assert_eq!(b.span.col, 4);
    }

    #[test]
    fn merge_keys_and_redefined_anchors() {
        let docs =
            parse("base: &a {x: 1, y: 2}\nuse: {<<: *a, y: 3}\nother: &a {z: 9}\nlater: *a\n");
        assert_eq!(
            docs[0].get("use").unwrap().to_json(),
            serde_json::json!({"x": 1, "y": 3})
        );
        assert_eq!(
            docs[0].get("later").unwrap().to_json(),
            serde_json::json!({"z": 9})
        );
    }

    #[test]
    fn yaml_1_1_booleans_stay_strings_but_read_leniently() {
        let docs = parse("a: on\nb: \"true\"\nc: yes\nd: 0x1F\ne: 1.5\nf: ~\ng: 0400\n");
        let d = &docs[0];
        assert_eq!(d.get("a").unwrap().value, Value::Str("on".into()));
        assert_eq!(d.get("a").unwrap().as_bool_lenient(), Some(true));
        assert_eq!(d.get("b").unwrap().value, Value::Str("true".into()));
        assert_eq!(d.get("c").unwrap().as_bool_lenient(), Some(true));
        assert_eq!(d.get("d").unwrap().value, Value::Int(31));
        assert_eq!(d.get("e").unwrap().value, Value::Float(1.5));
        assert!(d.get("f").unwrap().is_null());
        assert_eq!(d.get("g").unwrap().value, Value::Int(256));
    }

    #[test]
    fn integers_and_floats_as_go_yaml_v3_reads_them() {
        let cases: &[(&str, Value)] = &[
            ("0x-5", Value::Str("0x-5".into())),
            (
                "-0x-8000000000000000",
                Value::Str("-0x-8000000000000000".into()),
            ),
            ("-0x8000000000000000", Value::Int(i64::MIN)),
            ("0x8000000000000000", Value::Float(2f64.powi(63))),
            (
                "+0xFFFFFFFFFFFFFFFF",
                Value::Str("+0xFFFFFFFFFFFFFFFF".into()),
            ),
            ("99999999999999999999", Value::Float(1e20)),
            ("1_000", Value::Int(1000)),
            ("0X1f", Value::Int(31)),
            ("0o17", Value::Int(15)),
            ("-0b101", Value::Int(-5)),
            ("+12", Value::Int(12)),
            ("0777", Value::Int(511)),
            ("089", Value::Float(89.0)),
            ("0x", Value::Str("0x".into())),
            ("1e5", Value::Float(1e5)),
            ("1.", Value::Float(1.0)),
            ("-.5", Value::Float(-0.5)),
            (".5e1", Value::Float(5.0)),
            ("1.5e", Value::Str("1.5e".into())),
            ("2001-12-14", Value::Str("2001-12-14".into())),
            ("1-2", Value::Str("1-2".into())),
            ("_1", Value::Str("_1".into())),
            ("-", Value::Str("-".into())),
        ];
        for (text, want) in cases {
            let got = resolve_plain(text).unwrap_or_else(|| Value::Str(text.to_string()));
            assert_eq!(&got, want, "{text}");
        }
    }

    #[test]
    fn custom_and_core_tags() {
        let docs = parse("a: !env_var FOO\nb: !!str 123\nc: !!int \"7\"\n");
        assert_eq!(
            docs[0].to_json(),
            serde_json::json!({"a": "FOO", "b": "123", "c": 7})
        );
    }

    #[test]
    fn syntax_error_has_line_and_column() {
        let err = parse_documents("a: 1\nb: [1, 2\n", FileId(0), &Limits::default()).unwrap_err();
        assert!(err.line >= 2, "{err:?}");
    }

    #[test]
    fn alias_bomb_is_refused() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            text.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        let err = parse_documents(&text, FileId(0), &Limits::default()).unwrap_err();
        assert!(err.message.contains("alias expansion"), "{err}");
        assert!(err.line > 1);
    }

    #[test]
    fn deep_nesting_is_refused_without_overflowing_the_stack() {
        let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let err = parse_documents(&text, FileId(0), &Limits::default()).unwrap_err();
        assert!(
            err.message.contains("nesting") || err.message.contains("recursion"),
            "{err}"
        );
        let block = format!("{}x\n", "- ".repeat(10_000));
        let err = parse_documents(&block, FileId(0), &Limits::default()).unwrap_err();
        assert!(err.message.contains("nesting"), "{err}");
    }
}
