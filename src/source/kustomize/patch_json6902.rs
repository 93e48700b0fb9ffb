//! RFC 6902 JSON patch applied to the span-carrying tree, so values added by
//! a patch point at the patch.

use crate::yaml::{Limits, Node, Size, Span, Value};

type Fail = (Option<Span>, String);

/// Applies `ops` to `root`; an operation that would take the object past
/// the object budget of `limits` fails, leaving what was done before it.
pub(crate) fn apply(root: &mut Node, ops: &Node, limits: &Limits) -> Result<(), Fail> {
    let Some(list) = ops.as_seq() else {
        return Err((
            Some(ops.span),
            "a JSON patch must be a list of operations".into(),
        ));
    };
    // Removals and replacements are not taken off: an upper bound is
    // enough, and measuring the whole object again per operation is not.
    let mut size = Size::of(root, limits);
    for op in list {
        apply_one(root, op, &mut size, limits).map_err(|m| (Some(op.span), m))?;
    }
    Ok(())
}

fn pointer(op: &Node, key: &str) -> Result<Vec<String>, String> {
    let Some(p) = op.get(key).and_then(Node::as_str) else {
        return Err(format!("operation is missing '{key}'"));
    };
    parse_pointer(p)
}

pub(crate) fn parse_pointer(p: &str) -> Result<Vec<String>, String> {
    if p.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = p.strip_prefix('/') else {
        return Err(format!("JSON pointer '{p}' must start with '/'"));
    };
    Ok(rest
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn apply_one(root: &mut Node, op: &Node, size: &mut Size, limits: &Limits) -> Result<(), String> {
    let kind = op.get("op").and_then(Node::as_str).unwrap_or("");
    let path = pointer(op, "path")?;

    let value = || {
        op.get("value")
            .cloned()
            .ok_or_else(|| format!("{kind} operation needs a value"))
    };
    match kind {
        "add" => add(root, &path, value()?),
        "remove" => remove(root, &path).map(drop),
        "replace" => {
            let v = value()?;
            let slot = get_mut(root, &path).ok_or_else(|| {
                format!(
                    "replace operation does not apply: doc is missing path: {}",
                    show(&path)
                )
            })?;
            *slot = v;
            Ok(())
        }
        "move" => {
            let from = pointer(op, "from")?;
            let v = remove(root, &from)?;
            add(root, &path, v)
        }
        "copy" => {
            let from = pointer(op, "from")?;
            let v = get_mut(root, &from).ok_or_else(|| {
                format!(
                    "copy operation does not apply: doc is missing from path: {}",
                    show(&from)
                )
            })?;
            // Measured before the copy is made, so that the budget also
            // bounds the memory a refused copy would have taken.
            size.grow(Size::of(v, limits), path.len());
            if let Some(why) = size.over(limits) {
                return Err(format!(
                    "patch output budget exceeded: the object would have {why} after this copy operation"
                ));
            }
            let v = v.clone();
            add(root, &path, v)
        }
        "test" => {
            let v = value()?;
            match get_mut(root, &path) {
                Some(n) if n.to_json() == v.to_json() => Ok(()),
                _ => Err(format!("testing value {} failed", show(&path))),
            }
        }
        other => Err(format!("unknown JSON patch operation '{other}'")),
    }
}

fn show(path: &[String]) -> String {
    format!("/{}", path.join("/"))
}

fn index(seg: &str, len: usize, allow_end: bool) -> Option<usize> {
    if seg == "-" && allow_end {
        return Some(len);
    }
    if seg.len() > 1 && seg.starts_with('0') {
        return None;
    }
    let i: usize = seg.parse().ok()?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    (i <= max && (allow_end || len > 0)).then_some(i)
}

fn get_mut<'a>(node: &'a mut Node, path: &[String]) -> Option<&'a mut Node> {
    let Some((first, rest)) = path.split_first() else {
        return Some(node);
    };
    let child = match &mut node.value {
        Value::Map(entries) => entries
            .iter_mut()
            .find(|(k, _)| k.scalar_text().as_deref() == Some(first.as_str()))
            .map(|(_, v)| v)?,
        Value::Seq(items) => {
            let i = index(first, items.len(), false)?;
            items.get_mut(i)?
        }
        _ => return None,
    };
    get_mut(child, rest)
}

fn add(root: &mut Node, path: &[String], value: Node) -> Result<(), String> {
    let Some((last, parent_path)) = path.split_last() else {
        *root = value;
        return Ok(());
    };
    let parent = get_mut(root, parent_path).ok_or_else(|| {
        format!(
            "add operation does not apply: doc is missing path: {}",
            show(path)
        )
    })?;
    let span = value.span;
    match &mut parent.value {
        Value::Map(entries) => {
            match entries
                .iter_mut()
                .find(|(k, _)| k.scalar_text().as_deref() == Some(last.as_str()))
            {
                Some(slot) => slot.1 = value,
                None => crate::yaml::edit_vec(entries, |e| {
                    e.push((Node::synthetic_str(last.clone(), span), value))
                }),
            }
            Ok(())
        }
        Value::Seq(items) => {
            let i = index(last, items.len(), true).ok_or_else(|| {
                format!(
                    "add operation does not apply: index out of range: {}",
                    show(path)
                )
            })?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err(format!(
            "add operation does not apply: {} is not a container",
            show(parent_path)
        )),
    }
}

fn remove(root: &mut Node, path: &[String]) -> Result<Node, String> {
    let Some((last, parent_path)) = path.split_last() else {
        return Err("cannot remove the whole document".into());
    };
    let missing = || {
        format!(
            "remove operation does not apply: doc is missing path: {}",
            show(path)
        )
    };
    let parent = get_mut(root, parent_path).ok_or_else(missing)?;
    match &mut parent.value {
        Value::Map(entries) => {
            let i = entries
                .iter()
                .position(|(k, _)| k.scalar_text().as_deref() == Some(last.as_str()))
                .ok_or_else(missing)?;
            Ok(crate::yaml::edit_vec(entries, |e| e.remove(i).1))
        }
        Value::Seq(items) => {
            let i = index(last, items.len(), false).ok_or_else(missing)?;
            Ok(items.remove(i))
        }
        _ => Err(missing()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one as y;

    #[test]
    fn operations() {
        let mut d = y("a: {b: 1}\nl: [x, y]\n");
        let ops = y(r#"
- {op: add, path: /a/c, value: 2}
- {op: add, path: /l/1, value: z}
- {op: add, path: /l/-, value: w}
- {op: replace, path: /a/b, value: 9}
- {op: remove, path: /l/0}
- {op: copy, from: /a/c, path: /a/d}
- {op: move, from: /a/d, path: /m}
- {op: test, path: /m, value: 2}
- {op: add, path: /k~1x, value: s}
"#);
        apply(&mut d, &ops, &Limits::default()).unwrap();
        assert_eq!(
            d.to_json(),
            y("a: {b: 9, c: 2}\nl: [z, y, w]\nm: 2\nk/x: s\n").to_json()
        );
    }

    #[test]
    fn copies_that_double_the_object_stop_at_the_budget() {
        let mut d = y("a: {b: x}\n");
        let ops: String = (0..40)
            .map(|i| format!("- {{op: copy, from: /a, path: /a/c{i}}}\n"))
            .collect();
        let ops = y(&ops);
        let (span, why) = apply(&mut d, &ops, &Limits::default()).unwrap_err();
        assert!(
            why.starts_with(
                "patch output budget exceeded: the object would have more than 1000000 nodes"
            ),
            "{why}"
        );
        // Stopped at the 20th copy or so, not after 40 doublings.
        assert!(span.unwrap().line < 25, "{span:?}");
    }

    #[test]
    fn missing_paths_fail() {
        let mut d = y("a: 1\n");
        assert!(
            apply(
                &mut d,
                &y("- {op: replace, path: /b, value: 1}\n"),
                &Limits::default()
            )
            .is_err()
        );
        assert!(apply(&mut d, &y("- {op: remove, path: /b}\n"), &Limits::default()).is_err());
        assert!(
            apply(
                &mut d,
                &y("- {op: add, path: /x/y, value: 1}\n"),
                &Limits::default()
            )
            .is_err()
        );
        assert!(
            apply(
                &mut d,
                &y("- {op: test, path: /a, value: 2}\n"),
                &Limits::default()
            )
            .is_err()
        );
    }
}
