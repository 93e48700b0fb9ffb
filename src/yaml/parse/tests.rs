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

/// Duplicate keys are found by looking at each entry in a small
/// mapping and through the index in a large one (built part way):
/// either way the later value wins at the first key's place, nested
/// collections keep their own entries, and a merge adds only the keys
/// the mapping lacks.
#[test]
fn duplicate_keys_in_small_and_large_mappings() {
    for size in [3, INDEX_FROM - 1, INDEX_FROM, INDEX_FROM + 5] {
        let mut text = String::from("base: &b {k0: merged, extra: merged}\nm:\n  <<: *b\n");
        for i in 0..size {
            text.push_str(&format!(
                "  k{i}: [{i}, {{inner{i}: {i}, inner{i}: last}}]\n"
            ));
        }
        text.push_str("  k0: again\n");
        text.push_str(&format!("  k{}: again\n", size - 1));
        let docs = parse(&text);
        let m = docs[0].get("m").unwrap().as_map().unwrap();
        let keys: Vec<_> = m.iter().map(|(k, _)| k.as_str().unwrap()).collect();
        let mut want: Vec<String> = (0..size).map(|i| format!("k{i}")).collect();
        want.push("extra".into());
        assert_eq!(keys, want, "mapping of {size}");
        let m = docs[0].get("m").unwrap();
        assert_eq!(m.get("k0").unwrap().as_str(), Some("again"));
        let last = format!("k{}", size - 1);
        assert_eq!(m.get(&last).unwrap().as_str(), Some("again"));
        if size > 2 {
            let second = m.get("k1").unwrap().to_json();
            assert_eq!(second, serde_json::json!([1, {"inner1": "last"}]));
        }
        assert_eq!(m.get("extra").unwrap().as_str(), Some("merged"));
    }
}

/// Keys alike in length and last byte are still told apart, and a
/// number key is not the string key written the same.
#[test]
fn keys_alike_in_length_and_last_byte_stay_apart() {
    let docs = parse("ab: 1\ncb: 2\n1: 3\n\"1\": 4\nab: 5\n1: 6\ncb: 7\n");
    let m = docs[0].as_map().unwrap();
    let keys: Vec<_> = m.iter().map(|(k, _)| k.value.clone()).collect();
    let want = [
        Value::Str("ab".into()),
        Value::Str("cb".into()),
        Value::Int(1),
        Value::Str("1".into()),
    ];
    assert_eq!(keys, want);
    let values: Vec<_> = m.iter().map(|(_, v)| v.value.clone()).collect();
    let want = [Value::Int(5), Value::Int(7), Value::Int(6), Value::Int(4)];
    assert_eq!(values, want);
}

#[test]
fn key_and_value_spans_are_line_and_column() {
    let docs = parse("spec:\n  chart:\n    version: 2025.10.1\n");
    let key = docs[0]
        .path(&["spec", "chart"])
        .unwrap()
        .get_key("version")
        .unwrap();
    assert_eq!((key.span().line, key.span().col), (3, 5));
    let value = docs[0].path(&["spec", "chart", "version"]).unwrap();
    assert_eq!((value.span().line, value.span().col), (3, 14));
    assert_eq!(value.as_str(), Some("2025.10.1"));
}

#[test]
fn byte_offsets_are_right_after_non_ascii_text() {
    let text = "a: \"größe ✓\"\nb: value\n";
    let docs = parse(text);
    let b = docs[0].get("b").unwrap();
    assert_eq!(
        &text[b.span().start as usize..b.span().end as usize],
        "value"
    );
    assert_eq!(b.span().col, 4);
}

#[test]
fn merge_keys_and_redefined_anchors() {
    let docs = parse("base: &a {x: 1, y: 2}\nuse: {<<: *a, y: 3}\nother: &a {z: 9}\nlater: *a\n");
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
fn aliases_end_where_go_yaml_ends_their_names() {
    // `kubectl kustomize` (v5.5) reads this as asserted here; saphyr
    // alone reads the aliases `app:`, unknown.
    let text = "name: &app ipmi\nc:\n  *app:\n    image: x\n  k: *app\n\
                    f: {*app: v, w: \"a\n b\"}\nlast:\n  *app:\n";
    let docs = parse(text);
    assert_eq!(
        docs[0].to_json(),
        serde_json::json!({
            "name": "ipmi", "c": {"ipmi": {"image": "x"}, "k": "ipmi"},
            "f": {"ipmi": "v", "w": "a b"}, "last": {"ipmi": null},
        })
    );
    // Spans point into the text as written, after the inserted spaces
    // too (on the same line and on later lines).
    let at = |n: &Node| {
        let s = n.span();
        (&text[s.start as usize..s.end as usize], s.line, s.col)
    };
    let c = docs[0].get("c").unwrap();
    assert_eq!(at(c.path(&["ipmi", "image"]).unwrap()), ("x", 4, 12));
    let f = docs[0].get("f").unwrap();
    assert_eq!(at(f.get("ipmi").unwrap()), ("v", 6, 11));
    assert_eq!(at(f.get_key("w").unwrap()), ("w", 6, 14));
    assert_eq!(f.get("w").unwrap().span().col, 17);
    assert_eq!(at(docs[0].get_key("last").unwrap()), ("last", 8, 1));
    // With the quoted-scalar repair after an inserted space: its value
    // is found by the offset as written.
    // In flow collections `:` right after the name is the value
    // indicator even with no blank after it.
    let docs = parse("a: &app x\nf: {*app:v, k: [*app:w]}\n");
    assert_eq!(
        docs[0].to_json(),
        serde_json::json!({"a": "x", "f": {"x": "v", "k": [{"x": "w"}]}})
    );
    let w = &docs[0].path(&["f", "k"]).unwrap().as_seq().unwrap()[0];
    assert_eq!(w.get("x").unwrap().span().col, 22);
    let docs = parse("a: &app x\nm:\n  *app:\n    q: \"one\ntwo\"\n");
    assert_eq!(
        docs[0].to_json(),
        serde_json::json!({"a": "x", "m": {"x": {"q": "one two"}}})
    );
}

#[test]
fn aliases_go_yaml_refuses_stay_errors() {
    // kubectl kustomize (v5.5) refuses each with the message asserted
    // ("yaml: line 2: did not find expected key", ...); for the last,
    // the anchor is unknown to go-yaml as well.
    for (text, message, at) in [
        (
            "a: &app x\nk: *app:x\n",
            "did not find expected key",
            (2, 8),
        ),
        (
            "a: &app x\nk: *app?\n",
            "mapping keys are not allowed",
            (2, 8),
        ),
        (
            "a: &app x\nk: *app:\n",
            "mapping values are not allowed",
            (2, 8),
        ),
        ("a: &app x\nk:\n  *nope:\n", "unknown anchor", (3, 3)),
    ] {
        let err = parse_documents(text, FileId(0), &Limits::default()).unwrap_err();
        assert!(err.message.contains(message), "{text:?}: {err:?}");
        assert_eq!((err.line, err.col), at, "{text:?}: {err:?}");
    }
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
        let got = resolve_plain(text).unwrap_or_else(|| Value::Str((*text).into()));
        assert_eq!(&got, want, "{text}");
    }
}

/// The core schema's words at their full length (up to five bytes), and
/// longer text that starts as one does, which stays a string.
#[test]
fn words_resolve_at_their_length_and_no_longer() {
    let cases: &[(&str, Value)] = &[
        ("~", Value::Null),
        ("NULL", Value::Null),
        ("FALSE", Value::Bool(false)),
        ("False", Value::Bool(false)),
        ("True", Value::Bool(true)),
        ("falsey", Value::Str("falsey".into())),
        ("nulls", Value::Str("nulls".into())),
        ("~home", Value::Str("~home".into())),
        ("-.INF", Value::Float(f64::NEG_INFINITY)),
        ("+.Inf", Value::Float(f64::INFINITY)),
    ];
    for (text, want) in cases {
        let got = resolve_plain(text).unwrap_or_else(|| Value::Str((*text).into()));
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

/// A quoted scalar's span is the scalar and its properties, not the
/// spaces and comment after it, on either path (the block scanner takes
/// the first document, saphyr the flow mapping of the second).
#[test]
fn quoted_scalars_end_at_their_closing_quote() {
    let text = "a: \"on\" # default\nb: &x 'it''s'   \nc: \"a\\\"b\" #\nd: \"two\n  lines\"  # c\ne: plain # c\n---\n{f: 'g'  , h: \"i\" }\n";
    let docs = parse(text);
    let written = |doc: usize, key: &str| {
        let span = docs[doc].get(key).unwrap().span();
        &text[span.start as usize..span.end as usize]
    };
    assert_eq!(written(0, "a"), "\"on\"");
    assert_eq!(written(0, "b"), "&x 'it''s'");
    assert_eq!(written(0, "c"), "\"a\\\"b\"");
    assert_eq!(written(0, "d"), "\"two\n  lines\"");
    assert_eq!(written(0, "e"), "plain");
    assert_eq!(written(1, "f"), "'g'");
    assert_eq!(written(1, "h"), "\"i\"");
}
