//! YAML loading: any text either parses into nodes whose spans lie inside
//! the text, or gives an error; never a panic, never unbounded work.
#![no_main]

use homelab_lint::yaml::{FileId, Limits, Node, Value, parse_documents};
use libfuzzer_sys::fuzz_target;

fn check_spans(node: &Node, len: u32) {
    assert!(
        node.span().start <= node.span().end && node.span().end <= len,
        "span out of the text"
    );
    match &node.value {
        Value::Seq(items) => items.iter().for_each(|n| check_spans(n, len)),
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            check_spans(k, len);
            check_spans(v, len);
        }),
        _ => {}
    }
}

fuzz_target!(|text: &str| {
    let limits = Limits {
        max_alias_nodes: 10_000,
        ..Limits::default()
    };
    if let Ok(docs) = parse_documents(text, FileId(0), &limits) {
        for d in &docs {
            check_spans(d, text.len() as u32);
        }
    }
});
