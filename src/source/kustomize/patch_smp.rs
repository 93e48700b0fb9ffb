//! Strategic merge as kustomize's kyaml merge2 does it: maps merge key by
//! key, `null` deletes, lists whose elements carry an associative key
//! (`name`, `mountPath`, ...) merge element by element, other lists are
//! replaced; `$patch: delete|replace|merge` directives are honoured.
//! Nodes taken from the patch keep the patch's spans.

use super::budget::{Spend, scan_cost};
use crate::yaml::{Node, Value};
use std::sync::Arc;

/// kyaml's AssociativeSequenceKeys, in its order of preference.
const ASSOCIATIVE_KEYS: [&str; 7] = [
    "mountPath",
    "devicePath",
    "ip",
    "type",
    "topologyKey",
    "name",
    "containerPort",
];

/// Merges `patch` into `dest` in place, paying `spend` for each key
/// searched (the nodes of the patch are the caller's to pay). Returns
/// false when the patch deletes the whole object. On an error `dest` is
/// left as far as it was merged.
pub(crate) fn merge(dest: &mut Node, patch: &Node, spend: &mut Spend<'_>) -> Result<bool, String> {
    Ok(merge_value(dest, patch, spend)? && dest.as_map().is_some_and(|m| !m.is_empty()))
}

fn directive(n: &Node) -> Option<&str> {
    n.get("$patch").and_then(Node::as_str)
}

/// The patch value without `$`-directives, for places where there is
/// nothing to merge with. One without any is shared as it is: a patch
/// applied to many objects (a parent's defaults for each child
/// Kustomization) was copied, every string and collection, into each.
fn clean(n: &Node) -> Option<Node> {
    if !has_directive_key(n) {
        return Some(n.clone());
    }
    match &n.value {
        Value::Map(entries) => {
            if directive(n) == Some("delete") {
                return None;
            }
            let mut out = n.clone();
            out.value = Value::Map(
                entries
                    .iter()
                    .filter(|(k, _)| !k.as_str().is_some_and(|s| s.starts_with('$')))
                    .filter_map(|(k, v)| clean(v).map(|v| (k.clone(), v)))
                    .collect(),
            );
            Some(out)
        }
        Value::Seq(items) => {
            let mut out = n.clone();
            out.value = Value::Seq(Arc::new(
                items
                    .iter()
                    .filter(|i| !is_marker(i))
                    .filter_map(clean)
                    .collect(),
            ));
            Some(out)
        }
        _ => Some(n.clone()),
    }
}

/// Whether a mapping at or under `n` has a key starting with `$`, which
/// [`clean`] drops (a directive, a marker element, `$setElementOrder`).
fn has_directive_key(n: &Node) -> bool {
    match &n.value {
        Value::Map(entries) => entries
            .iter()
            .any(|(k, v)| k.as_str().is_some_and(|k| k.starts_with('$')) || has_directive_key(v)),
        Value::Seq(items) => items.iter().any(has_directive_key),
        _ => false,
    }
}

/// A list element that only carries a `$patch` directive for the list.
fn is_marker(n: &Node) -> bool {
    n.as_map()
        .is_some_and(|m| m.len() == 1 && directive(n).is_some())
}

/// Merges `patch` into `dest` without a copy of `dest` (a copy of the
/// object per patch made P patches over N objects cost N·P²); false
/// when the patch deletes it.
fn merge_value(dest: &mut Node, patch: &Node, spend: &mut Spend<'_>) -> Result<bool, String> {
    let replace_with = |dest: &mut Node, new: Option<Node>| match new {
        Some(new) => {
            *dest = new;
            true
        }
        None => false,
    };
    match &patch.value {
        Value::Map(entries) => {
            match directive(patch) {
                Some("delete") => return Ok(false),
                Some("replace") => return Ok(replace_with(dest, clean(patch))),
                _ => {}
            }
            if dest.as_map().is_none() {
                return Ok(replace_with(dest, clean(patch)));
            }
            // The keys the object lacks are added together, after the
            // loop: an entry added on its own rebuilt the whole mapping,
            // once for each of a patch's new keys.
            let mut added = Vec::new();
            let merged = merge_entries(dest, entries, &mut added, spend);
            if !added.is_empty() {
                dest.edit_map(|map| map.extend(added));
            }
            merged?;
            if let Some(keep) = patch.get("$retainKeys").and_then(Node::as_seq) {
                let keep: Vec<String> = keep.iter().filter_map(Node::scalar_text).collect();
                dest.edit_map(|map| {
                    map.retain(|(k, _)| k.as_str().is_some_and(|s| keep.iter().any(|r| r == s)))
                });
            }
            Ok(true)
        }
        Value::Seq(items) => {
            let replace = items
                .iter()
                .any(|i| is_marker(i) && directive(i) == Some("replace"));
            match associative_key(dest, patch).filter(|_| !replace && dest.as_seq().is_some()) {
                Some(key) => merge_associative(dest, patch, key, spend)?,
                None => *dest = clean(patch).expect("a list is kept"),
            }
            Ok(true)
        }
        _ => {
            *dest = patch.clone();
            Ok(true)
        }
    }
}

/// Merges a patch mapping's `entries` into the mapping `dest`, into
/// `added` (in patch order) what `dest` lacks; those belong after every
/// entry of `dest`, so removing one of its entries leaves them in place.
fn merge_entries(
    dest: &mut Node,
    entries: &[(Node, Node)],
    added: &mut Vec<(Node, Node)>,
    spend: &mut Spend<'_>,
) -> Result<(), String> {
    for (k, v) in entries {
        let Some(key) = k.as_str() else { continue };
        if key.starts_with('$') {
            continue;
        }
        if added.iter().any(|(ak, _)| ak.as_str() == Some(key)) {
            // A key written twice in the patch meets what its first
            // writing added: merged as one entry of `dest`, as before.
            dest.edit_map(|map| map.append(added));
        }
        let width = dest.as_map().map_or(0, <[_]>::len) + added.len();
        spend(scan_cost(width))?;
        let at = dest
            .as_map()
            .and_then(|m| m.iter().position(|(dk, _)| dk.as_str() == Some(key)));
        let keep = match (at, v.is_null()) {
            (Some(_), true) => false,
            (Some(i), false) => {
                let slot = &mut dest.as_map_mut().expect("a mapping")[i].1;
                merge_value(slot, v, spend)?
            }
            (None, true) => continue,
            (None, false) => {
                added.extend(clean(v).map(|new| (k.clone(), new)));
                continue;
            }
        };
        if let (Some(i), false) = (at, keep) {
            dest.edit_map(|map| map.remove(i));
        }
    }
    Ok(())
}

/// kyaml's IsAssociative/GetAssociativeKey: the first associative key found
/// in the first element of either list.
fn associative_key(dest: &Node, patch: &Node) -> Option<&'static str> {
    for list in [dest, patch] {
        let Some(first) = list.as_seq().and_then(|s| s.iter().find(|i| !is_marker(i))) else {
            continue;
        };
        if let Some(k) = ASSOCIATIVE_KEYS.iter().find(|k| first.get(k).is_some()) {
            return Some(k);
        }
    }
    None
}

/// The text of `n`'s `key`, borrowed when it is a string.
fn key_of<'n>(n: &'n Node, key: &str) -> Option<std::borrow::Cow<'n, str>> {
    let v = n.get(key)?;
    match v.as_str() {
        Some(s) => Some(std::borrow::Cow::Borrowed(s)),
        None => v.scalar_text().map(std::borrow::Cow::Owned),
    }
}

/// kyaml merges with ListPrepend (as apimachinery's strategic merge does):
/// the patch's elements come first, in patch order, each merged with the
/// element of the same key; elements only in `dest` follow in their order.
/// On an error the list keeps every element, merged or not.
fn merge_associative(
    dest: &mut Node,
    patch: &Node,
    key: &str,
    spend: &mut Spend<'_>,
) -> Result<(), String> {
    let Some(items) = dest.as_seq_mut() else {
        return Ok(());
    };
    let mut rest: Vec<Option<Node>> = std::mem::take(items).into_iter().map(Some).collect();
    let mut front = Vec::new();
    let mut merged = Ok(());
    for p in patch.as_seq().into_iter().flatten() {
        if is_marker(p) {
            continue;
        }
        if let Err(m) = spend(scan_cost(rest.len())) {
            merged = Err(m);
            break;
        }
        let found = key_of(p, key).and_then(|k| {
            rest.iter().position(|d| {
                d.as_ref()
                    .and_then(|d| key_of(d, key))
                    .is_some_and(|dk| dk == k)
            })
        });
        match found {
            Some(i) => {
                let mut item = rest[i].take().expect("found once");
                match merge_value(&mut item, p, spend) {
                    Ok(true) => front.push(item),
                    Ok(false) => {}
                    Err(m) => {
                        front.push(item);
                        merged = Err(m);
                        break;
                    }
                }
            }
            None => front.extend(clean(p)),
        }
    }
    front.extend(rest.into_iter().flatten());
    *items = front;
    merged
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one as y;

    /// Nothing to pay.
    fn free(_: usize) -> Result<(), String> {
        Ok(())
    }

    #[test]
    fn containers_merge_by_name_and_env_by_name() {
        let mut d = y(
            "spec:\n  containers:\n  - name: a\n    image: x\n    env:\n    - {name: A, value: '1'}\n  - name: b\n    image: y\n",
        );
        let p = y(
            "spec:\n  containers:\n  - name: a\n    image: z\n    env:\n    - {name: B, value: '2'}\n    - {name: A, value: '3'}\n",
        );
        assert!(merge(&mut d, &p, &mut free).unwrap());
        let want = y(
            "spec:\n  containers:\n  - name: a\n    image: z\n    env:\n    - {name: B, value: '2'}\n    - {name: A, value: '3'}\n  - name: b\n    image: y\n",
        );
        assert_eq!(d.to_json(), want.to_json());
    }

    #[test]
    fn directives_delete_and_replace() {
        let mut d = y(
            "spec:\n  volumes:\n  - {name: a, emptyDir: {}}\n  - {name: b, emptyDir: {}}\n  sel: {x: 1, y: 2}\n  args: [a, b]\n",
        );
        let p = y(
            "spec:\n  volumes:\n  - {name: a, $patch: delete}\n  sel:\n    $patch: replace\n    z: 3\n  args: [c]\n",
        );
        merge(&mut d, &p, &mut free).unwrap();
        let want =
            y("spec:\n  volumes:\n  - {name: b, emptyDir: {}}\n  sel: {z: 3}\n  args: [c]\n");
        assert_eq!(d.to_json(), want.to_json());
    }

    #[test]
    fn null_removes_and_delete_drops_object() {
        let mut d = y("a: 1\nb: 2\n");
        merge(&mut d, &y("b: null\n"), &mut free).unwrap();
        assert_eq!(d.to_json(), y("a: 1\n").to_json());
        assert!(!merge(&mut d, &y("$patch: delete\n"), &mut free).unwrap());
    }

    /// Keys the object lacks follow its own, in patch order, whatever the
    /// patch removes or merges between them.
    #[test]
    fn added_keys_follow_in_patch_order() {
        let mut d = y("a: 1\nb: 2\nc: {x: 1}\n");
        let p = y("x: 1\nb: null\nc: {y: 2}\ny: {z: 3}\na: 4\n");
        merge(&mut d, &p, &mut free).unwrap();
        let want = y("a: 4\nc: {x: 1, y: 2}\nx: 1\ny: {z: 3}\n");
        assert_eq!(d.to_json(), want.to_json());
        let keys: Vec<_> = d
            .as_map()
            .unwrap()
            .iter()
            .filter_map(|(k, _)| k.as_str())
            .collect();
        assert_eq!(keys, ["a", "c", "x", "y"]);
    }

    /// What the object lacks is added without its directives however deep
    /// they are, and shared with the patch where it has none.
    #[test]
    fn added_values_lose_their_directives_and_share_the_rest() {
        let mut d = y("a: 1\n");
        let p = y(
            "plain: {x: [1, {y: 2}]}\nnew:\n  keep: {z: [3]}\n  list:\n  - $patch: replace\n  - {name: n, sub: {$patch: delete}}\n  - {name: m, deep: {$retainKeys: [v], v: 4}}\n",
        );
        merge(&mut d, &p, &mut free).unwrap();
        let want = y(
            "a: 1\nplain: {x: [1, {y: 2}]}\nnew:\n  keep: {z: [3]}\n  list:\n  - {name: n}\n  - {name: m, deep: {v: 4}}\n",
        );
        assert_eq!(d.to_json(), want.to_json());
        let shared = |n: &Node, m: &Node| match (&n.value, &m.value) {
            (Value::Map(a), Value::Map(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        assert!(shared(d.get("plain").unwrap(), p.get("plain").unwrap()));
        let keep = |n: &Node| n.path(&["new", "keep"]).unwrap().clone();
        assert!(shared(&keep(&d), &keep(&p)));
        assert!(!shared(d.get("new").unwrap(), p.get("new").unwrap()));
    }
}
