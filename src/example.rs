//! The example repo bundled into the binary, so that `--example` works on
//! a fresh machine and after `kubectl krew install`.

use include_dir::{Dir, include_dir};

static EXAMPLE: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/testdata/example-repo");

/// Writes the example repo into a fresh temporary directory, removed when
/// the returned guard is dropped.
pub fn extract() -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("homelab-lint-example-")
        .tempdir()?;
    EXAMPLE.extract(dir.path())?;
    Ok(dir)
}
