//! The block scanner against saphyr: for any text the scanner takes, the
//! trees are the same (values, styles, spans). Inputs are spelled from
//! fragments of block-style YAML, so that most of them are texts the
//! scanner takes; the raw bytes are tried as text as well.
#![no_main]

use homelab_lint::yaml::block_scanner_differs;
use libfuzzer_sys::fuzz_target;

const FRAGMENTS: [&str; 49] = [
    "a",
    "key",
    ": ",
    ":",
    "\n",
    "  ",
    " ",
    "- ",
    "-",
    "|",
    "|-",
    ">",
    ">+",
    "\"x y\"",
    "'it''s'",
    "[",
    "]",
    ", ",
    "{}",
    "{",
    "}",
    " }",
    "\"q\" ",
    "# c",
    "---",
    "...",
    "1",
    "-2",
    "true",
    "~",
    "é",
    "http://h:8/p",
    "#",
    "\n  ",
    "\n    ",
    "\n- ",
    "&a ",
    "&b",
    "*a",
    " *b",
    " # c",
    // Quoted scalars over several lines, blank lines, escapes at a break.
    "\"",
    "'",
    "\\",
    "\n\n",
    // Flow collections over several lines, `-` starting a flow scalar,
    // local tags.
    ",\n   ",
    "\n   ]",
    "-c",
    "!e ",
];

fn check(text: &str) {
    if let (_, Some(difference)) = block_scanner_differs(text) {
        panic!("{text:?}: {difference}");
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        check(text);
    }
    let spelled: String = data
        .iter()
        .map(|&b| FRAGMENTS[usize::from(b) % FRAGMENTS.len()])
        .collect();
    check(&spelled);
});
