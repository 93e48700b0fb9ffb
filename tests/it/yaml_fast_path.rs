//! The block scanner (src/yaml/block.rs) against saphyr: on every YAML
//! file of the corpus and of the test fixtures that the scanner takes,
//! the trees must be the same, values, styles and spans alike.

use std::path::{Path, PathBuf};

use homelab_lint::yaml::block_scanner_differs;

use crate::common;

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        let yaml = path.extension().is_some_and(|e| e == "yaml" || e == "yml");
        if entry.file_type().is_file()
            && yaml
            && !path.components().any(|c| c.as_os_str() == ".git")
        {
            out.push(path.to_path_buf());
        }
    }
}

#[test]
fn block_scanner_reads_every_corpus_and_fixture_file_as_saphyr_does() {
    let mut files = Vec::new();
    for repo in common::corpus_repos() {
        yaml_files(&repo, &mut files);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for dir in ["testdata", "tests", "rules", "examples"] {
        yaml_files(&root.join(dir), &mut files);
    }
    let (mut taken, mut bytes, mut taken_bytes) = (0, 0, 0);
    let mut differences = Vec::new();
    for path in &files {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        bytes += text.len();
        let (scanned, differs) = block_scanner_differs(&text);
        if scanned {
            taken += 1;
            taken_bytes += text.len();
        }
        if let Some(d) = differs {
            differences.push(format!("{}: {d}", path.display()));
        }
    }
    eprintln!(
        "block scanner: {taken} of {} files, {taken_bytes} of {bytes} bytes",
        files.len()
    );
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    // The scanner must take most files, or the test proves little.
    assert!(
        taken * 2 > files.len(),
        "only {taken} of {} files taken",
        files.len()
    );
}

/// Flow mappings with a key and no value, and quoted scalars with spaces
/// before the next `,` or bracket: taken, with saphyr's trees; near
/// misses left to saphyr.
#[test]
fn block_scanner_takes_bare_flow_keys_and_spaced_quoted_scalars_as_saphyr_does() {
    let cases = [
        ("t: { name: Anime, mal_id: 46, poster }\n", true),
        ("t: {poster}\n", true),
        ("t: { a, b: c }\n", true),
        ("t: {a,b}\n", true),
        ("- [ {a}, b ]\n", true),
        ("- [ {a }  , b ]\n", true),
        ("- [ x, {a, b}  ]\n", true),
        ("t: { name: \"AFI's 100\" }\n", true),
        ("t: [ 'a' , \"b\"   ]\n", true),
        ("t: { \"k\" }\n", true),
        ("t: { 'k'  , v: 1 }\n", true),
        ("t: [ {\"k\" }, ['a' ] ]\n", true),
        // A quoted key with spaces before its colon, a trailing comma, an
        // empty value, an alias alone as key, a comment after the
        // bracket: saphyr's.
        ("t: { \"k\" : v }\n", false),
        ("t: { a, }\n", false),
        ("t: { a: }\n", false),
        ("a: &x 1\nt: { *x }\n", false),
        ("a: &x 1\nt: {*x}\n", false),
        ("t: { \"a\" } # c\n", false),
        ("t: { \"a\" b }\n", false),
        // A word of a plain scalar that starts with `-` and a flow
        // indicator is saphyr's error; `-` before anything else is text.
        ("- [a -]\n", false),
        ("t: {a, b -}\n", false),
        ("t: {a: b -, c}\n", false),
        ("- [a - b, a -b, a-]\n", true),
    ];
    assert_taken_as_saphyr_reads(&cases);
}

/// Plain and quoted scalars over several lines, and a key's scalar or
/// flow collection on the line after it: taken, folded as saphyr folds them, with its spans;
/// what saphyr rejects or reads otherwise (a shallower line, a `: ` or
/// comment inside, an escaped line break, a key over two lines) left to
/// it.
#[test]
fn block_scanner_takes_scalars_over_several_lines_as_saphyr_does() {
    let cases = [
        ("k: a\n  b\n", true),
        ("k: a\n\n  b\n\n\n  c\nn: 1\n", true),
        ("k: a   \n    b  c  \n", true),
        ("k: a\n  }} b.\n  - c\n", true),
        ("- a\n  b\n- c\n", true),
        ("k:\n  - a\n    b\n", true),
        ("k:\n- a\n  b\n", true),
        ("k: &x a\n  b\nn: *x\n", true),
        ("k:\n  &x a\n  b\n", true),
        ("k: a\n  # c\nn: 1\n", true),
        ("k:\n  a\n  b\nn: 1\n", true),
        ("k:\n  a # c\nn: 1\n", true),
        ("k:\n  [a, b]\n  # c\nn: {x: 1}\n", true),
        ("k:\n  [a, b]: c\n", false),
        ("k:\n  \"a\n  b\"\n", true),
        ("k: \"a\n\n  b \"  # c\nn: 1\n", true),
        ("k: 'it''s\n  here'\n", true),
        ("k: \"a\\t\n  b\\\"\"\n", true),
        ("k: \"a\n b\"\n", true),
        ("- \"\n\n\n  \"\n- x\n", true),
        ("- k: \"a   \n    b\"\n", true),
        ("- k: a\n  b\n", false),
        ("k: a\n  b: c\n", false),
        ("k: a\n  b # c\n  d\n", false),
        ("k: a # c\n  b\n", false),
        ("k: \"a\\\n  b\"\n", false),
        ("k: \"a\\ \n  b\"\n", false),
        ("  k: \"a\n  b\"\n", false),
        ("k: \"a\n  b\": 1\n", false),
        ("k: \"a\n---\n\"\n", false),
        ("k: 'a\n", false),
        ("\"a\n b\": 1\n", false),
    ];
    assert_taken_as_saphyr_reads(&cases);
}

/// Flow collections broken over lines after a bracket, a comma or a
/// quoted scalar, a comma after a sequence's last item, and plain
/// scalars in flow that start with `-`: taken, with saphyr's trees; a
/// line no deeper than the block collection, a plain scalar or key before
/// a break, a comment inside, a comma closing a mapping and `-` before a
/// flow indicator left to saphyr.
#[test]
fn block_scanner_takes_flow_collections_over_several_lines_as_saphyr_does() {
    let cases = [
        ("k:\n  [\n    \"a\",\n    \"b\",\n  ]\nn: 1\n", true),
        ("k:\n  [\n    \"a\",\n    'b'   \n  ]\n", true),
        ("k: [a,\n  b]\n", true),
        ("k: [\n  a, b,\n\n  c ]\n", true),
        (
            "- [\n    x,\n    {a: 1,\n     b: [c,\n      d]  ,\n     e: \"f\"\n  }]\n",
            true,
        ),
        ("k: [a, b,]\n", true),
        ("k: [a, b , ]\n", true),
        ("k: {a: 1,\n  b: \"2\"}\n", true),
        ("k: [\n  ]\n", true),
        ("- k: [\n    x ]\n  n: 1\n", true),
        ("k: [-c, service dbus start && /entrypoint.sh]\n", true),
        ("k: [a, -b, -1, {-a: -b}]\n", true),
        ("k: [\"a\",\n]\n", false),
        ("- k: [\n  x ]\n", false),
        ("k: [a\n  , b]\n", false),
        ("k: [\n  a, # c\n  b]\n", false),
        ("k: [ # c\n  a]\n", false),
        ("k: [\n  \"a\"\n  : b]\n", false),
        ("k: {\"a\"\n  : b}\n", false),
        ("k: {a:\n  b}\n", false),
        ("k: [a,\n  b] # c\n", false),
        ("k: [a,\n---\n]\n", false),
        ("k: [-, a]\n", false),
        ("k: [a, -]\n", false),
        ("k: {a: 1,}\n", false),
        ("k: [a,,]\n", false),
    ];
    assert_taken_as_saphyr_reads(&cases);
}

/// A local tag on a plain value (`!env_var NAME`), and an anchor on a
/// key's value on the next line: taken, spans from the tag or anchor as
/// saphyr's; other tags, a tag on anything else or after an anchor, and
/// an anchor before a key or a collection left to saphyr.
#[test]
fn block_scanner_takes_local_tags_and_anchors_on_the_next_line_as_saphyr_does() {
    let cases = [
        ("k: !env_var SONARR_API_KEY\n", true),
        ("- !x a\n  b\n", true),
        ("k: !a-b_1 1\nn: 2\n", true),
        ("k: !t  a # c\n", true),
        ("k: !!str a\n", false),
        ("k: !e!x a\n", false),
        ("k: !<u> a\n", false),
        ("k: !x \"a\"\n", false),
        ("k: &a !x b\n", false),
        ("k: !x\n  a\n", false),
        ("- !x ", false),
        ("k: !x   ", false),
        ("k: !x.y a\n", false),
        ("!x a: b\n", false),
        ("k: !x [a]\n", false),
        ("k: !x a: b\n", false),
        ("k:\n  &gid 100\nn: *gid\n", true),
        ("k:\n  &x \"a\"  # c\n", true),
        ("k:\n  &x [a, b]\n", false),
        ("k:\n  &x a: b\n", false),
        ("k:\n  &x\n  a: b\n", false),
        ("k:\n  &x # c\n  a: b\n", false),
    ];
    assert_taken_as_saphyr_reads(&cases);
}

/// The line after a plain value is a continuation only when deeper than
/// the value's collection: blank lines, lines of spaces shorter than the
/// collection's column, and a shallower line after them.
#[test]
fn block_scanner_reads_the_line_after_a_plain_value_as_saphyr_does() {
    let cases = [
        ("- k: a\n\n    b\n", true),
        ("k:\n  m: a\n \n    b\n", true),
        ("k:\n  m: a\n \n\n  n: b\n", true),
        ("k:\n  m: a\n\nn: 1\n", true),
        ("k:\n  m: a\n  n: b\nx: y", true),
        ("k:\n  m: a\n #\n    b\n", false),
        ("k:\n  m: a\nx\n", false),
    ];
    assert_taken_as_saphyr_reads(&cases);
}

/// A sequence as a sequence's item (`- - a`), nested, with a mapping,
/// a scalar over lines or a flow collection in it: taken, with saphyr's
/// trees and spans; an empty item in it, or a line between its dash and
/// the outer one, left to saphyr.
#[test]
fn block_scanner_takes_sequences_as_items_as_saphyr_does() {
    let cases = [
        ("- - a\n", true),
        ("- - a\n  - b\n- c\n", true),
        ("- - - a\n    - b\n  - c\n", true),
        ("- - k: v\n    n: 1\n  - x\n", true),
        ("k:\n- - a\n  - b\nn: 1\n", true),
        ("k:\n  - - a\n    - b\n", true),
        ("- - \n    - b\n", true),
        ("- - a\n    b\n", true),
        ("- - # c\n    - x\n", true),
        ("- - &x a\n  - *x\n", true),
        ("- - [a, b]\n  - {c: d}\n", true),
        ("- - |\n    text\n  - b\n", true),
        ("-   -   a\n    -   b\n", true),
        ("- - a\n---\n- - b\n", true),
        ("- -\n  - b\n", false),
        ("- - a\n b\n", false),
        ("- - a\n  -\n", false),
    ];
    assert_taken_as_saphyr_reads(&cases);
}

/// Each text reads to saphyr's tree, and is taken by the block scanner
/// or left to saphyr as each case says.
fn assert_taken_as_saphyr_reads(cases: &[(&str, bool)]) {
    for &(text, taken) in cases {
        let (scanned, differs) = block_scanner_differs(text);
        assert_eq!(differs, None, "{text:?}");
        assert_eq!(scanned, taken, "{text:?}");
    }
}
