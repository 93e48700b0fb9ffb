// The built-in rule pack is embedded with include_dir!, which on stable
// Rust cannot tell cargo about files added to rules/ later: without this,
// a new rule file is not compiled in until some source file changes.
// Cargo scans a directory given to rerun-if-changed for any change.
fn main() {
    println!("cargo:rerun-if-changed=rules");
}
