//! RFC 6902 JSON patch applied to the span-carrying tree, so values added by
//! a patch point at the patch.

use std::sync::Arc;

use super::budget::{Spend, scan_cost};
use crate::yaml::{Limits, Node, Size, Span, Value};

type Fail = (Option<Span>, String);

/// Applies `ops` to `root`, paying `spend` for the keys searched and the
/// nodes written as it goes (never for the whole object: P patches each
/// adding a key to N objects measured each object whole per patch, and
/// cost N·P² node visits). An operation that would take the object past
/// the object budget of `limits`, or that `spend` refuses, fails,
/// leaving what was done before it.
pub(crate) fn apply(
    root: &mut Node,
    ops: &Node,
    limits: &Limits,
    spend: &mut Spend<'_>,
) -> Result<(), Fail> {
    let Some(list) = ops.as_seq() else {
        return Err((
            Some(ops.span()),
            "a JSON patch must be a list of operations".into(),
        ));
    };
    // Measured at the first copy, the only operation that can double the
    // object; removals and replacements are not taken off: an upper
    // bound is enough, and measuring the whole object again per
    // operation is not.
    let mut size = None;
    for op in list {
        let mut walk = Walk {
            spend,
            size: &mut size,
            limits,
        };
        walk.apply_one(root, op).map_err(|m| (Some(op.span()), m))?;
    }
    Ok(())
}

/// What one operation pays with as it walks the object.
struct Walk<'w, 's> {
    spend: &'w mut Spend<'s>,
    /// The object's size, once a copy needed it.
    size: &'w mut Option<Size>,
    limits: &'w Limits,
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

impl Walk<'_, '_> {
    fn apply_one(&mut self, root: &mut Node, op: &Node) -> Result<(), String> {
        let kind = op.get("op").and_then(Node::as_str).unwrap_or("");
        let path = pointer(op, "path")?;
        let value = |walk: &mut Self| {
            let v = op
                .get("value")
                .ok_or_else(|| format!("{kind} operation needs a value"))?;
            (walk.spend)(Size::of(v, walk.limits).nodes)?;
            Ok::<_, String>(v.clone())
        };
        match kind {
            "add" => {
                let v = value(self)?;
                self.add(root, &path, v)
            }
            "remove" => self.remove(root, &path).map(drop),
            "replace" => {
                let v = value(self)?;
                let slot = self.get_mut(root, &path)?.ok_or_else(|| {
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
                let v = self.remove(root, &from)?;
                self.add(root, &path, v)
            }
            "copy" => {
                let from = pointer(op, "from")?;
                let limits = self.limits;
                if self.size.is_none() {
                    let whole = Size::of(root, limits);
                    (self.spend)(whole.nodes)?;
                    *self.size = Some(whole);
                }
                let v = self.get_mut(root, &from)?.ok_or_else(|| {
                    format!(
                        "copy operation does not apply: doc is missing from path: {}",
                        show(&from)
                    )
                })?;
                // Measured before the copy is made, so that the budget also
                // bounds the memory a refused copy would have taken.
                let copied = Size::of(v, limits);
                let size = self.size.get_or_insert_default();
                size.grow(copied, path.len());
                if let Some(why) = size.over(limits) {
                    return Err(format!(
                        "patch output budget exceeded: the object would have {why} after this copy operation"
                    ));
                }
                let v = v.clone();
                (self.spend)(copied.nodes)?;
                self.add(root, &path, v)
            }
            "test" => {
                let v = op
                    .get("value")
                    .ok_or_else(|| format!("{kind} operation needs a value"))?;
                let limits = self.limits;
                (self.spend)(Size::of(v, limits).nodes.saturating_mul(2))?;
                match self.get_mut(root, &path)? {
                    Some(n) if n.to_json() == v.to_json() => Ok(()),
                    _ => Err(format!("testing value {} failed", show(&path))),
                }
            }
            other => Err(format!("unknown JSON patch operation '{other}'")),
        }
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

/// Whether mapping key `k` is `seg`: text compared without a copy of
/// the key (a search made a string of every key it passed).
fn key_is(k: &Node, seg: &str) -> bool {
    match &k.value {
        Value::Str(s) => s == seg,
        _ => k.scalar_text().as_deref() == Some(seg),
    }
}

impl Walk<'_, '_> {
    /// The position of key `seg` in `entries`, paid for as a search.
    fn find(&mut self, entries: &[(Node, Node)], seg: &str) -> Result<Option<usize>, String> {
        (self.spend)(scan_cost(entries.len()))?;
        Ok(entries.iter().position(|(k, _)| key_is(k, seg)))
    }

    fn get_mut<'a>(
        &mut self,
        node: &'a mut Node,
        path: &[String],
    ) -> Result<Option<&'a mut Node>, String> {
        let Some((first, rest)) = path.split_first() else {
            return Ok(Some(node));
        };
        let child = match &mut node.value {
            Value::Map(entries) => match self.find(entries, first)? {
                Some(i) => &mut Arc::make_mut(entries)[i].1,
                None => return Ok(None),
            },
            Value::Seq(items) => {
                (self.spend)(1)?;
                match index(first, items.len(), false).and_then(|i| Arc::make_mut(items).get_mut(i))
                {
                    Some(child) => child,
                    None => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        self.get_mut(child, rest)
    }

    fn add(&mut self, root: &mut Node, path: &[String], value: Node) -> Result<(), String> {
        let Some((last, parent_path)) = path.split_last() else {
            *root = value;
            return Ok(());
        };
        let parent = self.get_mut(root, parent_path)?.ok_or_else(|| {
            format!(
                "add operation does not apply: doc is missing path: {}",
                show(path)
            )
        })?;
        let span = value.span();
        match &mut parent.value {
            Value::Map(entries) => {
                match self.find(entries, last)? {
                    Some(i) => Arc::make_mut(entries)[i].1 = value,
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
                // The items after it move up one.
                (self.spend)(scan_cost(items.len() - i))?;
                Arc::make_mut(items).insert(i, value);
                Ok(())
            }
            _ => Err(format!(
                "add operation does not apply: {} is not a container",
                show(parent_path)
            )),
        }
    }

    fn remove(&mut self, root: &mut Node, path: &[String]) -> Result<Node, String> {
        let Some((last, parent_path)) = path.split_last() else {
            return Err("cannot remove the whole document".into());
        };
        let missing = || {
            format!(
                "remove operation does not apply: doc is missing path: {}",
                show(path)
            )
        };
        let parent = self.get_mut(root, parent_path)?.ok_or_else(missing)?;
        match &mut parent.value {
            Value::Map(entries) => {
                let i = self.find(entries, last)?.ok_or_else(missing)?;
                Ok(crate::yaml::edit_vec(entries, |e| e.remove(i).1))
            }
            Value::Seq(items) => {
                let i = index(last, items.len(), false).ok_or_else(missing)?;
                (self.spend)(scan_cost(items.len() - i))?;
                Ok(Arc::make_mut(items).remove(i))
            }
            _ => Err(missing()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one as y;

    /// `apply` with the default limits and nothing to pay.
    fn run(d: &mut Node, ops: &Node) -> Result<(), Fail> {
        apply(d, ops, &Limits::default(), &mut |_| Ok(()))
    }

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
        run(&mut d, &ops).unwrap();
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
        let (span, why) = run(&mut d, &ops).unwrap_err();
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
        assert!(run(&mut d, &y("- {op: replace, path: /b, value: 1}\n")).is_err());
        assert!(run(&mut d, &y("- {op: remove, path: /b}\n")).is_err());
        assert!(run(&mut d, &y("- {op: add, path: /x/y, value: 1}\n")).is_err());
        assert!(run(&mut d, &y("- {op: test, path: /a, value: 2}\n")).is_err());
    }
}
