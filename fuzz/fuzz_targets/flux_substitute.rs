//! Flux postBuild substitution over arbitrary scalar text: `${...}`
//! syntax errors become issues; nothing panics or loops.
#![no_main]

use std::collections::BTreeMap;
use std::path::PathBuf;

use homelab_lint::source::Object;
use homelab_lint::source::flux::{Var, Vars, substitute};
use homelab_lint::yaml::{FileId, Limits, Node, SourceMap, Span, Value, parse_documents};
use libfuzzer_sys::fuzz_target;

const OBJECT: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz\ndata:\n  k: placeholder\n";

fuzz_target!(|text: &str| {
    let mut sources = SourceMap::default();
    let file = sources.add(PathBuf::from("fuzz.yaml"), OBJECT.into());
    let mut root = parse_documents(OBJECT, file, &Limits::default())
        .unwrap()
        .remove(0);
    if let Some(v) = root.get_mut("data").and_then(|d| d.get_mut("k")) {
        *v = Node::new(
            Value::Str(text.to_string()),
            Span {
                file,
                ..Span::default()
            },
        );
    }
    let mut obj = Object::new(root, FileId(0), 0);
    let mut map = BTreeMap::new();
    for (name, value) in [("A", "a"), ("B", "${A}"), ("EMPTY", "")] {
        map.insert(
            name.to_string(),
            Var {
                value: value.to_string(),
                defined_at: None,
                unknown: false,
            },
        );
    }
    let vars = Vars {
        map,
        incomplete: false,
        at: None,
    };
    let _ = substitute(&sources, &mut obj, &vars);
});
