//! The check that holds the block scanner to saphyr: the differential
//! test (`tests/it/yaml_fast_path.rs`) runs it on every corpus and test
//! file, the `yaml_fast_path` fuzz target on any text.

use super::{Builder, Folded, Limits, Lines, Node, Value, compat};
use crate::yaml::FileId;

/// Whether [`super::parse_documents`] read `text` with the block scanner,
/// and if so the first place where its trees differ from saphyr's (in a
/// value, a style or a span), or where one read failed and the other not.
pub fn block_scanner_differs(text: &str) -> (bool, Option<String>) {
    let lines = Lines::new(text);
    let limits = Limits::default();
    let repaired = compat::Repaired::default();
    let builder = Builder::new(
        &lines,
        FileId(0),
        &limits,
        Folded::AsKustomizeWrites,
        &repaired,
    );
    // Text the scanner leaves midway is saphyr's.
    let Some(fast) = builder.scan(text) else {
        return (false, None);
    };
    let full = builder.run(text);
    let differs = match (fast, full) {
        (Ok(fast), Ok(full)) if fast.len() != full.len() => Some(format!(
            "{} documents from the block scanner, {} from saphyr",
            fast.len(),
            full.len()
        )),
        (Ok(fast), Ok(full)) => fast
            .iter()
            .zip(&full)
            .enumerate()
            .find_map(|(i, (a, b))| differ(a, b, &format!("document {i}"))),
        (Ok(_), Err(e)) => Some(format!(
            "the block scanner took text saphyr refuses at byte {}: {}",
            e.offset, e.message
        )),
        // The scanner's events broke a budget: the parse goes on to saphyr.
        (Err(_), _) => None,
    };
    (true, differs)
}

/// The first difference between two trees, by path.
fn differ(a: &Node, b: &Node, path: &str) -> Option<String> {
    if a.span() != b.span() {
        return Some(format!(
            "{path}: span {:?} against {:?}",
            a.span(),
            b.span()
        ));
    }
    if a.style() != b.style() {
        return Some(format!(
            "{path}: style {:?} against {:?}",
            a.style(),
            b.style()
        ));
    }
    let scalar = |v: &Value| match v {
        Value::Float(f) => format!("Float({:?})", f.to_bits()),
        Value::Seq(_) | Value::Map(_) => String::new(),
        other => format!("{other:?}"),
    };
    match (&a.value, &b.value) {
        (Value::Seq(x), Value::Seq(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items against {}", x.len(), y.len()));
            }
            x.iter()
                .zip(y.iter())
                .enumerate()
                .find_map(|(i, (x, y))| differ(x, y, &format!("{path}[{i}]")))
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} entries against {}", x.len(), y.len()));
            }
            x.iter().zip(y.iter()).enumerate().find_map(|(i, (x, y))| {
                let at = format!("{path}.{}", y.0.as_str().unwrap_or("?"));
                differ(&x.0, &y.0, &format!("{at} (key {i})")).or_else(|| differ(&x.1, &y.1, &at))
            })
        }
        (x, y) if scalar(x) == scalar(y) && !scalar(x).is_empty() => None,
        (x, y) => Some(format!("{path}: {x:?} against {y:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each shape the scanner takes, and some it must leave, against
    /// saphyr; the corpus-wide run is `tests/it/yaml_fast_path.rs`.
    #[test]
    fn block_scanner_agrees_with_saphyr_on_each_shape() {
        let taken = [
            "a: 1\nb:\n  c: \"x y\"\n  d: 'q''s'\ne:\n- f\n- g: h\n  i: j\nk:\nl: |\n  text\n  more\n\nm: [a, b]\nn: {}\n# c\n",
            "a: 1\n---\nb: 2\n",
            "a: 1\n\n# c\n---\nb:\n",
            "a: 1",
            "a: |\n  x\n  y",
            "a: |\n  x\n  y\n  ",
            "a: >-\n  x\n  y\n\n  z\n   more\n  w\n\n\nb: |+\n  k\n\n\n",
            "- a\n-\n  b: 1\n- \"x\" # c\n- \"y\"\n",
            "a: [ \"x\", y , z ]\nb: { }\n",
            "r: {kind: H, name: c, n: 'q'}\ns: [{kind: C, name: \"x\"}, {a: [1, 2]}]\nt: {a: {b: c}}\n",
            "r: {a: }\ns: {a}\nt: {a: b,}\nu: {\"k\": v}\n",
            "x: [a, [b, c]]\ny: [ {a: b} ]\n",
            "c: { drop: [\"ALL\"] }\nd: [ [a] , {b: c}  ]\n",
            "a:\n  - x\n  - y\nb: 1\n",
            "e:\n- g: h\n  i: j\n- k\nz: 1\n",
            "--- # c\na: b #c\n...\n",
            "x:\n  y:\n    z: |\n      deep\n  w: 2\n",
            "args: [--a, \"--b=1\"]\nk: -1\nurl: http://x:8080/y\n",
            "a: b\n  c: d\n",
            "a: [\n  b]\n",
            "&a x: 1\n",
            "a: 1\n b: 2\n",
            "a: 'x\n  y'\n",
            "a: \"x\\ty\\\"q\\\\ \\u00e9\\x41\\U0001F600\\/\"\nb: [\"\\n\", c]\n",
            "a: \"\\q\"\n",
            "a: \"\\ud800\"\n",
        ];
        assert!(block_scanner_differs("a: 1\nb:\n  - c: d\n").0);
        assert!(block_scanner_differs("a: &x 1\nb: *x\n").0);
        // Anchors and aliases as GitOps files write them: on scalars and
        // on the collection after a key or dash, aliases as values,
        // merge keys, one name anchored twice, one per document.
        let anchored = [
            "a: &x 1\nb: *x\n",
            "a: &x \"q\"\nb: &y 'r'\nd: *y # c\n",
            "p: &p\n  x: 1\n  y:\n    - z\nq:\n  <<: *p\n  x: 2\n",
            "s: &s\n- a\n- b\nt: *s\n",
            "s: &s # c\n  - a\nt:\n  - *s\n  - &i x\n  - *i\n",
            "- &m\n  k: v\n- *m\n- &n\n  - 1\n",
            "a: &x 1\nb: &x 2\nc: *x\n",
            "a: &x \"q\" # c\nb: [*x, *x ]\nc: {k: *x}\nd: 'r'   \ne: \"s\" #c\n",
            "a: &x 1\n---\nb: &x 2\nc: *x\n",
            "env: &e\n  A: \"1\"\nx:\n  env: *e\n  more:\n    <<: *e\n",
        ];
        let shapes = taken.iter().map(|t| (t, false));
        for (text, must_take) in shapes.chain(anchored.iter().map(|t| (t, true))) {
            let (took, differs) = block_scanner_differs(text);
            assert_eq!(differs, None, "{text:?}");
            assert!(
                took || !must_take,
                "the block scanner left {text:?} to saphyr"
            );
        }
        // Left to saphyr: an alias to no anchor (saphyr's error), one to
        // an anchor of an earlier document, an anchored empty value, an
        // anchored block scalar or flow collection, an anchor on a key.
        for text in [
            "a: *x\n",
            "a: &x 1\n---\nb: *x\n",
            "a: &x\nb: 1\n",
            "a: &x |\n  t\n",
            "a: &x [1]\n",
            "a: &x 1\nb: [&y 2]\n",
            "a: &x 1\nb: {*x: 2}\n",
            "&x a: 1\n",
            "- &x a: 1\n",
            "a: &x *y\n",
        ] {
            assert!(!block_scanner_differs(text).0, "{text:?}");
        }
    }

    /// Random block-style documents (nested keys and items, values of
    /// every kind the scanner reads and some it must leave), each against
    /// saphyr. Deterministic: the same texts every run.
    #[test]
    fn block_scanner_agrees_with_saphyr_on_generated_documents() {
        const VALUES: [&str; 30] = [
            "1",
            "-2.5",
            "true",
            "~",
            "x y",
            "http://h:80/p",
            "'q''s'",
            "\"d q\"",
            "[]",
            "{}",
            "[a, \"b\", c d]",
            "{k: v, \"q\": [1, {x: y}]}",
            "|\n{i}  l1\n\n{i}  l2\n",
            ">-\n{i}  f1\n{i}  f2\n\n{i}   m\n",
            "|+\n{i}  k\n\n",
            ">\n{i}  a\n{i}  b",
            "",
            "# c",
            "x # c",
            "é",
            "--flag=1",
            "a:b",
            "\"x\" ",
            "[a,]",
            "|\n\n{i}  late",
            "&a v",
            "&b \"q\"",
            "*a",
            "*b # c",
            "&c",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..3000 {
            let mut text = String::new();
            let mut depth = 0usize;
            for _ in 0..next(12) + 1 {
                let indent = "  ".repeat(depth);
                let value = VALUES[next(VALUES.len())].replace("{i}", &indent);
                match next(6) {
                    0 => text.push_str("---\n"),
                    1 if depth > 0 => depth -= 1,
                    2 => {
                        text.push_str(&format!("{indent}k{}:\n", next(3)));
                        depth += 1;
                    }
                    3 => text.push_str(&format!("{indent}- {value}\n")),
                    4 => text.push_str(&format!("{indent}- k: {value}\n")),
                    _ => text.push_str(&format!("{indent}k{}: {value}\n", next(3))),
                }
            }
            let (_, differs) = block_scanner_differs(&text);
            assert_eq!(differs, None, "{text:?}");
        }
    }
}
