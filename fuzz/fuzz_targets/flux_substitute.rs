//! Flux postBuild substitution over arbitrary text with nested operators:
//! the input, split at the first NUL byte, is the text of two mapping
//! values (the second takes what the first gave, or is expanded again)
//! and of a mapping key, then `NAME=value` lines for the variables (plus
//! a known `V`, an empty `E` and an unknown `S`). Syntax errors and budget
//! hits become issues; nothing panics, loops or grows past the budgets.
//! Seed it with fuzz/dicts/flux_substitute.dict.
#![no_main]

use std::collections::BTreeMap;
use std::path::PathBuf;

use homelab_lint::source::Object;
use homelab_lint::source::flux::{Origins, Var, Vars, budget, substitute};
use homelab_lint::yaml::{FileId, Limits, Node, SourceMap, Span, Value, parse_documents};
use libfuzzer_sys::fuzz_target;

const OBJECT: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fuzz\ndata:\n  k: placeholder\n";

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |b| *b == 0);
    let Ok(text) = std::str::from_utf8(parts.next().unwrap_or_default()) else {
        return;
    };
    let defs = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let mut sources = SourceMap::default();
    let file = sources.add(PathBuf::from("fuzz.yaml"), OBJECT.into());
    let mut root = parse_documents(OBJECT, file, &Limits::default())
        .unwrap()
        .remove(0);
    let span = Span {
        file,
        ..Span::default()
    };
    if let Some(d) = root.get_mut("data") {
        d.insert("k", Node::new(Value::Str(text.into()), span));
        d.insert("l", Node::new(Value::Str(text.into()), span));
        d.edit_map(|entries| {
            entries.push((
                Node::new(Value::Str(text.into()), span),
                Node::new(Value::Int(1), span),
            ))
        });
    }
    let mut obj = Object::new(root, FileId(0), 0);
    let var = |value: &str, unknown: bool| Var {
        value: value.to_string(),
        defined_at: None,
        unknown,
        secret: false,
    };
    let mut map = BTreeMap::new();
    map.insert("V".to_string(), var("a/b.c-aaaa", false));
    map.insert("E".to_string(), var("", false));
    map.insert("S".to_string(), var("", true));
    for line in defs.lines().take(8) {
        if let Some((k, v)) = line.split_once('=') {
            map.insert(k.to_string(), var(v, false));
        }
    }
    let vars = Vars {
        map,
        ..Vars::default()
    };
    // Small budgets, so that the fuzzer reaches them and memory stays low.
    let limits = homelab_lint::source::flux::Limits {
        max_subst_value_bytes: 64 * 1024,
        max_subst_growth_bytes: 1024 * 1024,
        max_subst_steps: 5_000_000,
        ..Default::default()
    };
    let mut budget = budget(&limits);
    let _ = substitute(
        &sources,
        &mut obj,
        &vars,
        &mut budget,
        &mut Origins::default(),
        None,
    );
});
