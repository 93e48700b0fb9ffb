use super::*;

fn budget() -> Budget {
    Budget {
        max_value_bytes: 1 << 20,
        growth_left: 1 << 24,
        steps_left: 10_000_000,
        exceeded: false,
    }
}

/// `vars` holds known values; `?NAME` marks an unknown one.
fn run(text: &str, vars: &[(&str, &str)]) -> Result<Expanded, String> {
    let lookup = |name: &str| match vars.iter().find(|(k, _)| k.trim_start_matches('?') == name) {
        Some((k, _)) if k.starts_with('?') => Lookup::Unknown,
        Some((_, v)) => Lookup::Value(v),
        None => Lookup::Undefined,
    };
    expand(text, &lookup, &mut budget())
}

fn expand_with(text: &str, vars: &[(&str, &str)]) -> Result<String, String> {
    run(text, vars).map(|e| e.text)
}

#[test]
fn envsubst_forms() {
    let v = [("A", "a"), ("E", ""), ("B", "b")];
    let cases = [
        ("${A}", "a"),
        ("x-${A}-y", "x-a-y"),
        ("${U}", ""),
        ("${U:=d}", "d"),
        ("${U:-d}", "d"),
        ("${U=d}", "d"),
        ("${A:-d}", "a"),
        ("${E:-d}", "d"),
        ("${U:=${B:=x}}", "b"),
        ("${U:=${V:=x}}", "x"),
        ("${U:-pre-${B}-post}", "pre-b-post"),
        ("$${A}", "${A}"),
        ("$$", "$"),
        ("pa$$word", "pa$word"),
        ("$A and $", "$A and $"),
        ("${A^^}", "A"),
        ("${#A}", "1"),
        ("${U:+alt}", "alt"),
    ];
    for (input, want) in cases {
        assert_eq!(expand_with(input, &v).as_deref(), Ok(want), "{input}");
    }
}

/// Cases from fluxcd/pkg envsubst eval_test.go `TestExpand`, plus the
/// ones where its forked `path.Match` departs from Go's.
#[test]
fn envsubst_functions_as_upstream_tests_them() {
    let v = [
        ("P", "path/to/file"),
        ("R", "/path/to/file"),
        ("F", "bash.string.txt"),
        ("S", "hello"),
        ("Z", "abcABC123ABCabc"),
        ("SL", "foo/bar/baz"),
        ("D", "foo.bar"),
        ("path_name", "/home/bozo/ideas/thoughts.for.today"),
    ];
    let cases = [
        ("${S:1:3}", "ell"),
        ("${S:-3}", "hello"),
        ("${path_name:11}", "ideas/thoughts.for.today"),
        ("${path_name:11:5}", "ideas"),
        ("${S/l/L}", "heLlo"),
        ("${S//l/L}", "heLLo"),
        ("${Z/%abc/XYZ}", "abcABC123ABCXYZ"),
        ("${Z/#abc/XYZ}", "XYZABC123ABCabc"),
        ("${Z//abc/xyz}", "xyzABC123ABCxyz"),
        ("${Z/abc/xyz}", "xyzABC123ABCabc"),
        ("${F#*.}", "string.txt"),
        ("${P#*/}", "to/file"),
        ("${R#*/}", "path/to/file"),
        ("${F##*.}", "txt"),
        // `*` crosses `/` in the fork (envsubst/path/match.go).
        ("${P##*/}", "file"),
        ("${R##*/}", "file"),
        ("${F%.*}", "bash.string"),
        ("${F%%.*}", "bash"),
        (r"${SL//\//-}", "foo-bar-baz"),
        (r"${SL/\//-}", "foo-bar/baz"),
        ("${D/./}", "foobar"),
        ("${S,}", "hello"),
        ("${S^}", "Hello"),
        ("${S#[a-h]?}", "llo"),
        ("${S#[^h]}", "hello"),
        // A malformed class never matches.
        ("${S#[}", "hello"),
        ("${S#h[e}", "hello"),
    ];
    for (input, want) in cases {
        assert_eq!(expand_with(input, &v).as_deref(), Ok(want), "{input}");
    }
}

#[test]
fn envsubst_errors() {
    for bad in [
        "${A", "${A:-x", "${A-x}", "${}", "${A x}", "${-}", "${A##}", "${A//}",
    ] {
        assert!(expand_with(bad, &[("A", "a")]).is_err(), "{bad}");
    }
    // Go slices backwards and panics: not bash's `${A:1:-1}`.
    assert!(expand_with("${A:1:-1}", &[("A", "abc")]).is_err());
    assert!(expand_with("${A:0:-1}", &[("A", "abc")]).is_err());
    assert_eq!(expand_with("${A:5:-1}", &[("A", "abc")]).as_deref(), Ok(""));
    let deep = format!("{}x{}", "${A:=".repeat(10_000), "}".repeat(10_000));
    assert!(expand_with(&deep, &[]).unwrap_err().starts_with(BUDGET));
    let ok = format!("{}x{}", "${A:=".repeat(60), "}".repeat(60));
    assert_eq!(expand_with(&ok, &[]).as_deref(), Ok("x"));
    // A cut through a character cannot be parsed back by Flux.
    assert!(expand_with("${A:0:1}", &[("A", "é")]).is_err());
}

/// Every argument is evaluated, but a default that is
/// not used contributes no undefined variable (it renders right); in
/// strict mode Flux still fails on it.
#[test]
fn unused_defaults_leave_no_undefined_variable() {
    let e = run("${A:=${B}}", &[("A", "a")]).unwrap();
    assert_eq!(e.text, "a");
    assert!(e.undefined.is_empty(), "{e:?}");
    assert_eq!(e.strict_unset, ["B"]);
    assert_eq!(e.uses, ["A", "B"]);
    let e = run("${A:=${B}}", &[]).unwrap();
    assert_eq!(e.text, "");
    assert_eq!(e.undefined, ["B"]);
    let e = run("${A:=x}-${C}", &[]).unwrap();
    assert_eq!(e.undefined, ["C"]);
    assert_eq!(e.strict_unset, ["C"]);
}

/// An empty default written out (`${X:=}`, `${X:-}`, `${X=}`) renders "" by
/// choice: fluxcd/pkg envsubst parses it as a default function without
/// arguments and strict mode spares default operators, so nothing is
/// undefined. A bare `${X}` and `${X:?}` still are.
#[test]
fn an_empty_default_written_out_is_not_undefined() {
    for text in ["${X:=}", "${X:-}", "${X=}"] {
        let e = run(text, &[]).unwrap();
        assert_eq!(e.text, "", "{text}");
        assert!(e.undefined.is_empty(), "{text}: {e:?}");
        assert!(e.strict_unset.is_empty(), "{text}: {e:?}");
    }
    assert_eq!(run("${X}", &[]).unwrap().undefined, ["X"]);
    assert_eq!(run("${X:?}", &[]).unwrap().undefined, ["X"]);
}

/// One rule for unknown values.
#[test]
fn unknown_values_stay_as_written_and_known_ones_expand() {
    let v = [
        ("?SECRET_DOMAIN", ""),
        ("TIMEZONE", "Europe/Berlin"),
        ("A", "a"),
    ];
    let cases = [
        ("${SECRET_DOMAIN/./-}", "${SECRET_DOMAIN/./-}"),
        ("${SECRET_DOMAIN:1}", "${SECRET_DOMAIN:1}"),
        ("${SECRET_DOMAIN:=x}", "${SECRET_DOMAIN:=x}"),
        ("${U:=${SECRET_DOMAIN}}", "${U:=${SECRET_DOMAIN}}"),
        ("${A:=${SECRET_DOMAIN}}", "a"),
        ("${A/a/${SECRET_DOMAIN}}", "${A/a/${SECRET_DOMAIN}}"),
        (
            "TZ ${TIMEZONE} on ${SECRET_DOMAIN}",
            "TZ Europe/Berlin on ${SECRET_DOMAIN}",
        ),
        ("$${A}-${SECRET_DOMAIN}", "${A}-${SECRET_DOMAIN}"),
        // Positions in chars, read from text outside ASCII.
        (
            "é ${SECRET_DOMAIN} ü ${TIMEZONE} ${SECRET_DOMAIN:-ö}",
            "é ${SECRET_DOMAIN} ü Europe/Berlin ${SECRET_DOMAIN:-ö}",
        ),
        (r"${SECRET_DOMAIN/\//-}", r"${SECRET_DOMAIN/\//-}"),
    ];
    for (input, want) in cases {
        let e = run(input, &v).unwrap();
        assert_eq!(e.text, want, "{input}");
    }
    assert!(run("${SECRET_DOMAIN/./-}", &v).unwrap().unresolved);
    assert!(!run("${A:=${SECRET_DOMAIN}}", &v).unwrap().unresolved);
}

/// Nested replacements double per level; the value cap stops
/// them before they are built.
#[test]
fn doubling_replacements_hit_the_value_cap() {
    let mut text = "a".to_string();
    for _ in 0..40 {
        text = format!("${{V//a/{text}{text}}}");
        if text.len() > 400 {
            break;
        }
    }
    let mut nested = "aa".to_string();
    for _ in 0..30 {
        nested = format!("${{V//a/{nested}}}");
    }
    let err = expand_with(&nested, &[("V", "aa")]).unwrap_err();
    assert!(err.starts_with(BUDGET), "{err}");
}

/// A trim by a pattern of many stars (`${V#**…*b}`) stays linear:
/// stars fold into one and the match is one pass per pattern element.
#[test]
fn glob_trims_are_linear_and_capped() {
    let value = "a".repeat(4000);
    let pattern = format!("{}b", "*".repeat(1000));
    let text = format!("${{V#{pattern}}}");
    assert_eq!(expand_with(&text, &[("V", &value)]).unwrap(), value);
    let hostile = format!("${{V#{}b}}", "*a".repeat(5000));
    let big = "a".repeat(100_000);
    let err = expand_with(&hostile, &[("V", &big)]).unwrap_err();
    assert!(err.starts_with(BUDGET), "{err}");
}

#[test]
fn many_escapes_parse_in_linear_time() {
    let text = "$$".repeat(200_000);
    assert_eq!(expand_with(&text, &[]).unwrap(), "$".repeat(200_000));
}
