//! Value tests shared by the steps that look at a value (`env`, `values`,
//! `object`): the test a rule names, and how it judges what the
//! repository shows of a value.

use std::cell::Cell;
use std::sync::{Mutex, OnceLock, PoisonError};

use serde::{Deserialize, Serialize};

use crate::yaml::Node;
use crate::yaml::jsonpath::JsonPath;

/// Tests on a value (an environment variable, a Helm value, a field).
/// A variable whose value the repo does
/// not show (`valueFrom` a Secret) passes none of them. When a Secret the
/// repo cannot read feeds the whole environment (`envFrom`), tests that
/// expect a variable to be absent still pass and the finding says so.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub enum ValueTest {
    /// Set, to any value.
    Set,
    /// Not set anywhere the repo shows.
    Unset,
    /// Set to one of these values (case-insensitive).
    OneOf(Vec<String>),
    /// Set, and not to one of these values (case-insensitive).
    NoneOf(Vec<String>),
    /// Not set, or set to none of these values (case-insensitive): a
    /// setting whose default is not among them.
    NotOneOf(Vec<String>),
    /// Not set, or set to anything but true, 1, yes or on.
    NotEnabled,
    /// Set to one of true, 1, yes, on.
    Enabled,
    /// Not set, or set to base64 of a JSON object that has none of these
    /// keys (Authentik's `CONN_OPTIONS`).
    LacksJsonKeys(Vec<String>),
    /// Set, to a value this regular expression finds a match in
    /// (`pgvecto[.-]rs`: an image of that name, any registry and tag).
    Matches(#[schemars(with = "String")] Pattern),
    /// Set to something other than a string (a number, boolean or null
    /// where the API expects a string).
    NotString,
    /// A map with a key other than these (a Postgres parameter written
    /// beside Patroni's own `postgresql` keys); the finding names the key.
    KeysOtherThan(Vec<String>),
}

/// A `matches` regular expression, compiled once: a user's when the
/// rule file is read, so that one that does not compile, or compiles
/// past the `regex` crate's size limit, is an error at its line and
/// column in the file; a built-in one (which the tests compile, as a
/// user's copy of the file is read) when a value is first tested against
/// it, as most runs test none (a compile is some 270,000 instructions).
/// A rule's evaluation never compiles it again per value.
#[derive(Clone)]
pub struct Pattern {
    text: String,
    regex: OnceLock<Option<regex::Regex>>,
}

impl Pattern {
    pub fn is_match(&self, text: &str) -> bool {
        self.regex
            .get_or_init(|| compiled(&self.text).ok())
            .as_ref()
            .is_some_and(|r| r.is_match(text))
    }
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Pattern").field(&self.text).finish()
    }
}

impl Serialize for Pattern {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

thread_local! {
    /// Set while a built-in file is read ([`deferring`]).
    static DEFERRED: Cell<bool> = const { Cell::new(false) };
}

/// Runs `read` with the patterns it reads left to be compiled when first
/// used: for the files the binary embeds, whose patterns the tests
/// compile.
pub(crate) fn deferring<T>(read: impl FnOnce() -> T) -> T {
    let before = DEFERRED.replace(true);
    let out = read();
    DEFERRED.set(before);
    out
}

impl<'de> Deserialize<'de> for Pattern {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pattern, D::Error> {
        let text = String::deserialize(d)?;
        if DEFERRED.get() {
            return Ok(Pattern {
                text,
                regex: OnceLock::new(),
            });
        }
        let regex = compiled(&text).map_err(|e| {
            // A syntax error quotes the whole pattern over several lines,
            // its last line says what is wrong; the issue is one line.
            let why = match &e {
                regex::Error::Syntax(text) => text.lines().last().unwrap_or("").to_string(),
                other => other.to_string(),
            };
            let shown: String = text.chars().take(80).collect();
            let more = match shown.len() < text.len() {
                true => format!("… ({} bytes)", text.len()),
                false => String::new(),
            };
            serde::de::Error::custom(format!(
                "pattern {shown:?}{more} is not a regular expression: {why}"
            ))
        })?;
        Ok(Pattern {
            text,
            regex: OnceLock::from(Some(regex)),
        })
    }
}

static KEPT_PATTERNS: Mutex<Vec<regex::Regex>> = Mutex::new(Vec::new());

/// `text` compiled, or the same pattern compiled before: the release
/// files write one pattern at each place a version is set (rook-ceph's
/// three), and a compile is some 270,000 instructions, in every run. A
/// copy shares the compiled program.
fn compiled(text: &str) -> Result<regex::Regex, regex::Error> {
    /// Distinct patterns kept: the built-in files hold a handful; a
    /// user's many more are compiled each time rather than searched.
    const KEPT: usize = 64;
    let mut kept = KEPT_PATTERNS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(same) = kept.iter().find(|r| r.as_str() == text) {
        return Ok(same.clone());
    }
    let regex = regex::Regex::new(text)?;
    if kept.len() < KEPT {
        kept.push(regex.clone());
    }
    Ok(regex)
}

/// What a test sees of a value.
pub(super) enum Seen<'a> {
    Known {
        text: String,
        node: Option<&'a Node>,
    },
    /// Set where the repo does not show the value (a Secret).
    Hidden,
    Absent,
}

pub(super) fn passes(test: &ValueTest, seen: &Seen) -> bool {
    let in_list =
        |val: &str, list: &[String]| list.iter().any(|l| l.eq_ignore_ascii_case(val.trim()));
    let is_true = |val: &str| {
        matches!(
            val.trim().to_ascii_lowercase().as_str(),
            "true" | "1" | "yes" | "on"
        )
    };
    match (seen, test) {
        (
            Seen::Absent,
            ValueTest::Unset
            | ValueTest::NotEnabled
            | ValueTest::LacksJsonKeys(_)
            | ValueTest::NotOneOf(_),
        ) => true,
        (Seen::Absent | Seen::Hidden, _) => false,
        (Seen::Known { text, node }, test) => match test {
            ValueTest::Set => true,
            ValueTest::Unset => false,
            ValueTest::OneOf(list) => in_list(text, list),
            ValueTest::NoneOf(list) | ValueTest::NotOneOf(list) => !in_list(text, list),
            ValueTest::Enabled => is_true(text),
            ValueTest::NotEnabled => !is_true(text),
            ValueTest::LacksJsonKeys(keys) => lacks_json_keys(text, keys),
            ValueTest::Matches(pattern) => pattern.is_match(text),
            ValueTest::NotString => {
                node.is_some_and(|n| !matches!(n.value, crate::yaml::Value::Str(_)))
            }
            // Decided on the map itself, in `path_test`.
            ValueTest::KeysOtherThan(_) => false,
        },
    }
}

/// `CONN_OPTIONS` is base64 of a JSON object of libpq keywords.
fn lacks_json_keys(val: &str, keys: &[String]) -> bool {
    let Some(bytes) = crate::source::data::decode_base64(val.trim()) else {
        return true;
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(&bytes)
    else {
        return true;
    };
    !keys.iter().any(|k| map.contains_key(k))
}

/// Runs a JSONPath test on `root`: `Some(node)` when it holds (the node
/// that passed, with the path shown for it; `None` for tests on absence),
/// `None` when it does not.
pub(super) fn path_test(
    path: &JsonPath,
    test: &ValueTest,
    root: &Node,
    work: &mut usize,
) -> Option<Option<(Node, String)>> {
    // Paths are checked and parsed when the rule is loaded (JsonPath::new).
    let hits = path.select(root);
    *work += hits.len();
    if hits.is_empty() {
        return passes(test, &Seen::Absent).then_some(None);
    }
    if let ValueTest::KeysOtherThan(allowed) = test {
        // The first key the map should not have, shown with its path.
        return hits.into_iter().find_map(|n| {
            let (key, value) = n
                .as_map()?
                .iter()
                .find(|(k, _)| k.as_str().is_some_and(|k| !allowed.iter().any(|a| a == k)))?;
            let shown = format!(
                "{}.{}",
                path.as_str().trim_start_matches("$."),
                key.as_str()?
            );
            Some(Some((value.clone(), shown)))
        });
    }
    hits.into_iter()
        .find(|n| {
            let seen = match n.scalar_text() {
                Some(text) => Seen::Known {
                    text,
                    node: Some(n),
                },
                None if n.is_null() => Seen::Known {
                    text: String::new(),
                    node: Some(n),
                },
                None => Seen::Known {
                    text: n.to_json().to_string(),
                    node: Some(n),
                },
            };
            passes(test, &seen)
        })
        .map(|n| Some((n.clone(), path.as_str().to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Value;

    /// A pattern read again is the one compiled before, which matches
    /// as a compile of its own would.
    #[test]
    fn a_pattern_read_twice_is_compiled_once() {
        let text = "^compiled-once-[0-9]+$";
        let first = compiled(text).unwrap();
        let second = compiled(text).unwrap();
        assert!(first.is_match("compiled-once-7") && second.is_match("compiled-once-7"));
        assert!(!second.is_match("compiled-once-x"));
        let kept = KEPT_PATTERNS.lock().unwrap();
        assert_eq!(kept.iter().filter(|r| r.as_str() == text).count(), 1);
    }

    /// A built-in file's pattern is compiled when first tested, then
    /// matches as one compiled as it is read; a user's is compiled as it
    /// is read, and one that does not compile is an error there.
    #[test]
    fn a_builtin_pattern_is_compiled_when_first_used() {
        let text = "matches: \"^deferred-[0-9]+$\"\n";
        let read = crate::rules::from_builtin::<ValueTest>("b.yaml", text, "t").unwrap();
        let ValueTest::Matches(deferred) = read else {
            panic!("{read:?}")
        };
        assert!(deferred.regex.get().is_none());
        assert!(deferred.is_match("deferred-7") && !deferred.is_match("deferred-x"));
        assert!(deferred.regex.get().is_some());
        let read = crate::rules::from_yaml::<ValueTest>("u.yaml", text, "t").unwrap();
        let ValueTest::Matches(user) = read else {
            panic!("{read:?}")
        };
        assert!(user.regex.get().is_some_and(Option::is_some));
        assert!(crate::rules::from_yaml::<ValueTest>("u.yaml", "matches: \"(\"\n", "t").is_err());
    }

    fn known(text: &str) -> Seen<'static> {
        Seen::Known {
            text: text.into(),
            node: None,
        }
    }

    #[test]
    fn a_hidden_value_passes_no_test_and_an_absent_one_only_tests_of_absence() {
        let list = vec!["off".to_string()];
        for test in [
            ValueTest::Set,
            ValueTest::OneOf(list.clone()),
            ValueTest::Enabled,
        ] {
            assert!(!passes(&test, &Seen::Hidden));
            assert!(!passes(&test, &Seen::Absent));
        }
        for test in [
            ValueTest::Unset,
            ValueTest::NotEnabled,
            ValueTest::NotOneOf(list),
        ] {
            assert!(!passes(&test, &Seen::Hidden));
            assert!(passes(&test, &Seen::Absent));
        }
    }

    #[test]
    fn lists_compare_without_case_and_surrounding_space() {
        let test = ValueTest::OneOf(vec!["Off".into()]);
        assert!(passes(&test, &known(" off ")));
        assert!(!passes(
            &ValueTest::NoneOf(vec!["OFF".into()]),
            &known("off")
        ));
        assert!(passes(&ValueTest::Enabled, &known("Yes")));
        assert!(passes(&ValueTest::NotEnabled, &known("0")));
    }

    #[test]
    fn json_keys_are_read_from_base64() {
        // {"keepalives": 1}
        let with = "eyJrZWVwYWxpdmVzIjogMX0=";
        let keys = vec!["keepalives".to_string()];
        assert!(!passes(
            &ValueTest::LacksJsonKeys(keys.clone()),
            &known(with)
        ));
        assert!(passes(
            &ValueTest::LacksJsonKeys(keys.clone()),
            &known("not base64")
        ));
        assert!(passes(&ValueTest::LacksJsonKeys(keys), &Seen::Absent));
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_an_error_with_the_reason() {
        let parsed: Result<ValueTest, _> = serde_saphyr::from_str("matches: \"pg[\"\n");
        let err = parsed
            .expect_err("an unclosed class must not load")
            .to_string();
        assert!(err.contains("is not a regular expression"), "{err}");
    }

    #[test]
    fn keys_other_than_names_the_first_stray_key() {
        let map = Node::new(
            Value::Map(
                vec![
                    (
                        Node::new(Value::Str("ttl".into()), Default::default()),
                        Node::new(Value::Str("30".into()), Default::default()),
                    ),
                    (
                        Node::new(Value::Str("max_connections".into()), Default::default()),
                        Node::new(Value::Str("200".into()), Default::default()),
                    ),
                ]
                .into(),
            ),
            Default::default(),
        );
        let root = Node::new(
            Value::Map(
                vec![(
                    Node::new(Value::Str("postgresql".into()), Default::default()),
                    map,
                )]
                .into(),
            ),
            Default::default(),
        );
        let mut work = 0;
        let hit = path_test(
            &JsonPath::new("$.postgresql".into()).unwrap(),
            &ValueTest::KeysOtherThan(vec!["ttl".into()]),
            &root,
            &mut work,
        );
        let (node, shown) = hit.flatten().expect("a stray key");
        assert_eq!(shown, "postgresql.max_connections");
        assert_eq!(node.scalar_text().as_deref(), Some("200"));
    }
}
