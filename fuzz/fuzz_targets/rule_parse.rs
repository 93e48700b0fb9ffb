//! Rule files: arbitrary text is a rule or an error with a position.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = homelab_lint::rules::parse("fuzz.yaml", text);
});
