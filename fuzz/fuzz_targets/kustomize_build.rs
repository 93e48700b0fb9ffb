//! kustomize rendering of an arbitrary kustomization.yaml next to one
//! arbitrary resource file (the input split at the first NUL byte).
#![no_main]

use std::path::Path;

use homelab_lint::source::Limits;
use homelab_lint::source::{Files, kustomize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(2, |b| *b == 0);
    let kustomization = parts.next().unwrap_or_default();
    let resource = parts.next().unwrap_or_default();
    let Ok(dir) = tempfile::tempdir() else { return };
    let app = dir.path().join("app");
    if std::fs::create_dir_all(&app).is_err()
        || std::fs::write(app.join("kustomization.yaml"), kustomization).is_err()
        || std::fs::write(app.join("resource.yaml"), resource).is_err()
    {
        return;
    }
    let mut files = Files::new(dir.path(), Limits::default());
    let _ = kustomize::build(&mut files, Path::new("app"));
    let _ = kustomize::build_flux_path(
        &mut files,
        Path::new("app"),
        &kustomize::FluxInputs::default(),
    );
});
