//! Strategic merge as kustomize's kyaml merge2 does it: maps merge key by
//! key, `null` deletes, lists whose elements carry an associative key
//! (`name`, `mountPath`, ...) merge element by element, other lists are
//! replaced; `$patch: delete|replace|merge` directives are honoured.
//! Nodes taken from the patch keep the patch's spans.

use crate::yaml::{Node, Value};

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

/// Merges `patch` into `dest`. Returns false when the patch deletes the
/// whole object.
pub(crate) fn merge(dest: &mut Node, patch: &Node) -> Result<bool, String> {
    match merge_value(Some(dest.clone()), patch)? {
        Some(n) => {
            *dest = n;
            Ok(dest.as_map().is_some_and(|m| !m.is_empty()))
        }
        None => Ok(false),
    }
}

fn directive(n: &Node) -> Option<&str> {
    n.get("$patch").and_then(Node::as_str)
}

/// The patch value without `$`-directives, for places where there is
/// nothing to merge with.
fn clean(n: &Node) -> Option<Node> {
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
            out.value = Value::Seq(Box::new(
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

/// A list element that only carries a `$patch` directive for the list.
fn is_marker(n: &Node) -> bool {
    n.as_map()
        .is_some_and(|m| m.len() == 1 && directive(n).is_some())
}

fn merge_value(dest: Option<Node>, patch: &Node) -> Result<Option<Node>, String> {
    match &patch.value {
        Value::Map(entries) => {
            match directive(patch) {
                Some("delete") => return Ok(None),
                Some("replace") => return Ok(clean(patch)),
                _ => {}
            }
            let Some(mut dest) = dest.filter(|d| d.as_map().is_some()) else {
                return Ok(clean(patch));
            };
            let retain: Option<Vec<String>> = patch
                .get("$retainKeys")
                .and_then(Node::as_seq)
                .map(|s| s.iter().filter_map(Node::scalar_text).collect());
            for (k, v) in entries {
                let Some(key) = k.as_str() else { continue };
                if key.starts_with('$') {
                    continue;
                }
                if v.is_null() {
                    dest.remove(key);
                    continue;
                }
                let old = dest.get(key).cloned();
                match merge_value(old, v)? {
                    Some(merged) => {
                        let slot = dest.get_mut(key);
                        match slot {
                            Some(slot) => *slot = merged,
                            None => {
                                dest.edit_map(|map| map.push((k.clone(), merged)));
                            }
                        }
                    }
                    None => {
                        dest.remove(key);
                    }
                }
            }
            if let Some(keep) = retain {
                dest.edit_map(|map| {
                    map.retain(|(k, _)| k.as_str().is_some_and(|s| keep.iter().any(|r| r == s)))
                });
            }
            Ok(Some(dest))
        }
        Value::Seq(items) => {
            if items
                .iter()
                .any(|i| is_marker(i) && directive(i) == Some("replace"))
            {
                return Ok(clean(patch));
            }
            let Some(dest) = dest.filter(|d| d.as_seq().is_some()) else {
                return Ok(clean(patch));
            };
            match associative_key(&dest, patch) {
                Some(key) => merge_associative(dest, patch, key).map(Some),
                None => Ok(clean(patch)),
            }
        }
        _ => Ok(Some(patch.clone())),
    }
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

fn key_of(n: &Node, key: &str) -> Option<String> {
    n.get(key).and_then(Node::scalar_text)
}

/// kyaml merges with ListPrepend (as apimachinery's strategic merge does):
/// the patch's elements come first, in patch order, each merged with the
/// element of the same key; elements only in `dest` follow in their order.
fn merge_associative(mut dest: Node, patch: &Node, key: &str) -> Result<Node, String> {
    let Some(items) = dest.as_seq_mut() else {
        return Ok(dest);
    };
    let mut rest: Vec<Option<Node>> = std::mem::take(items).into_iter().map(Some).collect();
    let mut front = Vec::new();
    for p in patch.as_seq().into_iter().flatten() {
        if is_marker(p) {
            continue;
        }
        let found = key_of(p, key).and_then(|k| {
            rest.iter()
                .position(|d| d.as_ref().and_then(|d| key_of(d, key)).as_deref() == Some(&k))
        });
        match found {
            Some(i) => front.extend(merge_value(rest[i].take(), p)?),
            None => front.extend(clean(p)),
        }
    }
    front.extend(rest.into_iter().flatten());
    *items = front;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::parse_one as y;

    #[test]
    fn containers_merge_by_name_and_env_by_name() {
        let mut d = y(
            "spec:\n  containers:\n  - name: a\n    image: x\n    env:\n    - {name: A, value: '1'}\n  - name: b\n    image: y\n",
        );
        let p = y(
            "spec:\n  containers:\n  - name: a\n    image: z\n    env:\n    - {name: B, value: '2'}\n    - {name: A, value: '3'}\n",
        );
        assert!(merge(&mut d, &p).unwrap());
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
        merge(&mut d, &p).unwrap();
        let want =
            y("spec:\n  volumes:\n  - {name: b, emptyDir: {}}\n  sel: {z: 3}\n  args: [c]\n");
        assert_eq!(d.to_json(), want.to_json());
    }

    #[test]
    fn null_removes_and_delete_drops_object() {
        let mut d = y("a: 1\nb: 2\n");
        merge(&mut d, &y("b: null\n")).unwrap();
        assert_eq!(d.to_json(), y("a: 1\n").to_json());
        assert!(!merge(&mut d, &y("$patch: delete\n")).unwrap());
    }
}
