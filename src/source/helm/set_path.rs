//! Helm `--set` paths (`targetPath`): parsed, bounded, and set into values.

use super::values::Values;
use crate::source::quoted;
use crate::yaml::{Node, Span, Value};
use std::sync::Arc;

/// One step of a Helm `--set` path.
#[derive(Debug, PartialEq)]
pub(super) enum Seg {
    Key(String),
    Index(usize),
}

/// Helm's `strvals` limit on list indices.
const MAX_INDEX: usize = 65536;

/// Helm's `strvals.MaxNestedNameLevel`: the `.`s that follow a key (not
/// those after a list index), past which helm-controller fails the path.
const MAX_NESTED_NAME_LEVEL: usize = 30;

/// Steps of one path, keys and list indexes together. Helm bounds no
/// nesting of list indexes (`a[0][0]…`), but the values a path makes are
/// walked by recursion here (merges, the inventory, dropping them): a
/// path of 100,000 steps (200 KB) overflowed the stack. As deep as a
/// YAML document may nest.
const MAX_PATH_STEPS: usize = 256;

/// A `--set` style path: `a.b`, `a\.b`, `list[0].name`.
pub(super) fn parse_path(path: &str) -> Result<Vec<Seg>, String> {
    let mut segs = Vec::new();
    let mut chars = path.chars();
    let mut nested_names = 0;
    loop {
        if segs.len() >= MAX_PATH_STEPS {
            return Err(format!(
                "the path has more than {MAX_PATH_STEPS} keys and list indexes, more than the linter follows"
            ));
        }
        let mut key = String::new();
        let mut stop = None;
        while let Some(c) = chars.next() {
            match c {
                '\\' => key.push(chars.next().ok_or("path ends with a backslash")?),
                '.' | '[' => {
                    stop = Some(c);
                    break;
                }
                ',' | '=' => return Err(format!("unexpected {c:?} in path")),
                c => key.push(c),
            }
        }
        if key.is_empty() {
            return Err("empty key in path".into());
        }
        segs.push(Seg::Key(key));
        if stop == Some('.') {
            nested_names += 1;
            if nested_names > MAX_NESTED_NAME_LEVEL {
                return Err(format!(
                    "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}: helm-controller fails"
                ));
            }
        }
        while stop == Some('[') {
            let index: String = chars.by_ref().take_while(|c| *c != ']').collect();
            let i: usize = index
                .parse()
                .map_err(|_| format!("bad list index {}", quoted(&index)))?;
            if i > MAX_INDEX {
                return Err(format!(
                    "list index {i} is over Helm's limit of {MAX_INDEX}"
                ));
            }
            segs.push(Seg::Index(i));
            if segs.len() > MAX_PATH_STEPS {
                return Err(format!(
                    "the path has more than {MAX_PATH_STEPS} keys and list indexes, more than the linter follows"
                ));
            }
            stop = chars.next();
        }
        match stop {
            None => return Ok(segs),
            Some('.') => {}
            Some(c) => return Err(format!("unexpected {c:?} after a list index")),
        }
    }
}

/// helm-controller `ReplacePathValue`: a value quoted at both ends is a
/// string (quotes trimmed); otherwise Helm's `--set` typing applies
/// (`true`, `null`, integers without a leading zero) and `{a,b}` is a list.
pub(super) fn target_value(raw: &str, span: Span) -> Result<Node, String> {
    let quoted = (raw.starts_with('\'') && raw.ends_with('\''))
        || (raw.starts_with('"') && raw.ends_with('"'));
    let (text, as_string) = if quoted {
        (raw.trim_matches(['\'', '"']), true)
    } else {
        (raw, false)
    };
    let scalar = |s: String| Node::new(typed(s, as_string), span);
    if let Some(list) = text.strip_prefix('{') {
        let (items, rest) = split_unescaped(list, &[',', '}'], true);
        if !rest.starts_with('}') {
            return Err("list must terminate with '}'".into());
        }
        let items = items.into_iter().map(scalar).collect();
        return Ok(Node::new(Value::Seq(Arc::new(items)), span));
    }
    let (mut items, rest) = split_unescaped(text, &[','], false);
    if !rest.is_empty() {
        return Err("text after ',' would be read as another key".into());
    }
    Ok(scalar(items.pop().unwrap_or_default()))
}

/// Splits at the `seps` (backslash escapes any char) and stops at `}`
/// when `in_list`. Returns the pieces and the unread rest.
fn split_unescaped<'t>(text: &'t str, seps: &[char], in_list: bool) -> (Vec<String>, &'t str) {
    let mut items = Vec::new();
    let mut cur = String::new();
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => {
                if let Some((_, n)) = chars.next() {
                    cur.push(n);
                }
            }
            '}' if in_list => {
                items.push(cur);
                return (items, &text[i..]);
            }
            c if seps.contains(&c) => {
                items.push(std::mem::take(&mut cur));
                if !in_list {
                    return (items, &text[i..]);
                }
            }
            c => cur.push(c),
        }
    }
    items.push(cur);
    (items, "")
}

/// strvals `typedVal`.
fn typed(s: String, as_string: bool) -> Value {
    if as_string {
        return Value::Str(s.into());
    }
    if s.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if s.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    if s.eq_ignore_ascii_case("null") {
        return Value::Null;
    }
    if s == "0" {
        return Value::Int(0);
    }
    if !s.starts_with('0')
        && let Ok(i) = s.parse::<i64>()
    {
        return Value::Int(i);
    }
    Value::Str(s.into())
}

/// List items the `targetPath`s of one HelmRelease may create. Each
/// index may be up to Helm's [`MAX_INDEX`], and a list grows to hold it:
/// a thousand `kN[65536]` entries (74 KB) made 65 million nodes (2.4 GB,
/// then an abort). Helm itself would build them; no real release comes
/// near.
pub(super) const RELEASE_LIST_ITEMS: usize = 4 * MAX_INDEX;

/// Sets `value` at a `--set` path, creating maps and lists on the way;
/// the items lists grow by are taken from `list_items`.
pub(super) fn set_path(
    root: &mut Values,
    path: &str,
    value: Node,
    list_items: &std::cell::Cell<usize>,
) -> Result<(), String> {
    let segs = parse_path(path)?;
    let span = value.span();
    let mut cur = root;
    let mut value = Some(value);
    for (i, seg) in segs.iter().enumerate() {
        let next = segs.get(i + 1);
        let fresh = || match next {
            Some(Seg::Index(_)) => Values::Node(Node::new(Value::Seq(Default::default()), span)),
            _ => Values::map(span),
        };
        let slot: &mut Values = match seg {
            Seg::Key(k) => cur
                .key(k, || (Node::synthetic_str(k.as_str(), span), fresh()))
                .ok_or_else(|| format!("{} is under a value that is not a map", quoted(k)))?,
            Seg::Index(n) => {
                let Some(items) = cur.items() else {
                    return Err(format!("index {n} is under a value that is not a list"));
                };
                if items.len() <= *n {
                    let grow = n + 1 - items.len();
                    let Some(left) = list_items.get().checked_sub(grow) else {
                        return Err(format!(
                            "the list indexes of this HelmRelease's targetPaths would make over {RELEASE_LIST_ITEMS} list items; this one is not set"
                        ));
                    };
                    list_items.set(left);
                    items.resize_with(n + 1, || Values::Node(Node::new(Value::Null, span)));
                }
                let item = &mut items[*n];
                // strvals replaces what is there by an empty map when a
                // key follows, and starts a list over a null.
                match next {
                    Some(Seg::Key(_)) if !item.is_map() => *item = fresh(),
                    Some(Seg::Index(_)) if item.is_null() => *item = fresh(),
                    _ => {}
                }
                item
            }
        };
        match next {
            None => {
                if let Some(v) = value.take() {
                    *slot = Values::Node(v);
                }
            }
            Some(Seg::Key(_)) if !slot.is_map() => {
                return Err("an intermediate value is not a map".into());
            }
            Some(Seg::Index(_)) if !slot.is_seq() => {
                return Err("an intermediate value is not a list".into());
            }
            _ => {}
        }
        cur = slot;
    }
    Ok(())
}
