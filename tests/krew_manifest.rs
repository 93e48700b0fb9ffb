//! The krew manifest `krew/homelab-lint.yaml` has the fields krew
//! requires (name equal to the file name, a `v` version, one platform per
//! OS and architecture with uri, sha256 and bin), and `scripts/release`
//! packages a binary into an archive whose sha256 it writes into a
//! manifest of the same shape.

mod common;

use std::path::Path;
use std::process::Command;

use homelab_lint::yaml::{FileId, Limits, Node, parse_documents};

const BIN: &str = env!("CARGO_BIN_EXE_kubectl-homelab_lint");
const HOST_TARGET: &str = "x86_64-unknown-linux-gnu";

fn parse(text: &str) -> Node {
    let mut docs = parse_documents(text, FileId(0), &Limits::default()).unwrap();
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

fn str_at<'a>(node: &'a Node, path: &[&str]) -> &'a str {
    node.str_at(path)
        .unwrap_or_else(|| panic!("{} is missing or not a string", path.join(".")))
}

/// Problems with a manifest, as krew's validation would find them.
fn problems(file_stem: &str, m: &Node) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            out.push(what);
        }
    };
    check(
        m.str_at(&["apiVersion"]) == Some("krew.googlecontainertools.github.com/v1alpha2"),
        "apiVersion".into(),
    );
    check(m.str_at(&["kind"]) == Some("Plugin"), "kind".into());
    check(
        m.str_at(&["metadata", "name"]) == Some(file_stem),
        format!("metadata.name must equal the file name {file_stem}"),
    );
    let version = m.str_at(&["spec", "version"]).unwrap_or("");
    check(
        version.starts_with('v') && semver::Version::parse(&version[1..]).is_ok(),
        format!("spec.version {version:?} must be v and a semantic version"),
    );
    for field in ["homepage", "shortDescription", "description"] {
        check(
            m.str_at(&["spec", field])
                .is_some_and(|s| !s.trim().is_empty()),
            format!("spec.{field} is missing"),
        );
    }
    let platforms = m
        .path(&["spec", "platforms"])
        .and_then(Node::as_seq)
        .cloned()
        .unwrap_or_default();
    check(!platforms.is_empty(), "spec.platforms is empty".into());
    let mut seen = Vec::new();
    for (i, p) in platforms.iter().enumerate() {
        let os = p.str_at(&["selector", "matchLabels", "os"]).unwrap_or("");
        let arch = p.str_at(&["selector", "matchLabels", "arch"]).unwrap_or("");
        check(
            !seen.contains(&(os, arch)),
            format!("platform {i}: {os}/{arch} twice"),
        );
        seen.push((os, arch));
        let uri = p.str_at(&["uri"]).unwrap_or("");
        check(
            uri.starts_with("https://") && uri.ends_with(".tar.gz") && uri.contains(version),
            format!("platform {i}: uri {uri:?} must be an https .tar.gz of {version}"),
        );
        let sha = p.str_at(&["sha256"]).unwrap_or("");
        check(
            sha.len() == 64
                && sha
                    .chars()
                    .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)),
            format!("platform {i}: sha256 {sha:?} must be 64 lower-case hex digits"),
        );
        let bin = p.str_at(&["bin"]).unwrap_or("");
        check(
            bin == "kubectl-homelab_lint",
            format!("platform {i}: bin {bin:?}"),
        );
        // The bin must be among the files copied out of the archive.
        let files = p.get("files").and_then(Node::as_seq);
        check(
            files.is_none_or(|fs| fs.iter().any(|f| f.str_at(&["from"]) == Some(bin))),
            format!("platform {i}: files do not include {bin}"),
        );
    }
    out
}

#[test]
fn manifest_has_the_fields_krew_requires_for_four_platforms() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("krew/homelab-lint.yaml");
    let m = parse(&std::fs::read_to_string(&path).unwrap());
    let stem = path.file_stem().unwrap().to_str().unwrap();
    let found = problems(stem, &m);
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert_eq!(
        str_at(&m, &["spec", "version"]),
        format!("v{}", env!("CARGO_PKG_VERSION")),
        "the manifest's version follows Cargo.toml"
    );
    let mut platforms: Vec<String> = m
        .path(&["spec", "platforms"])
        .and_then(Node::as_seq)
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                str_at(p, &["selector", "matchLabels", "os"]),
                str_at(p, &["selector", "matchLabels", "arch"])
            )
        })
        .collect();
    platforms.sort();
    assert_eq!(
        platforms,
        ["darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"]
    );
}

#[test]
fn the_checker_rejects_what_krew_rejects() {
    let good = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("krew/homelab-lint.yaml"),
    )
    .unwrap();
    for (from, to) in [
        ("version: v0.1.0", "version: 0.1.0"),
        ("name: homelab-lint", "name: homelab_lint"),
        ("sha256: \"0000", "sha256: \"00"),
        ("bin: kubectl-homelab_lint", "bin: other"),
        ("arch: arm64", "arch: amd64"),
    ] {
        let bad = parse(&good.replacen(from, to, 1));
        assert!(
            !problems("homelab-lint", &bad).is_empty(),
            "{from} -> {to} went unnoticed"
        );
    }
}

#[test]
fn release_script_packages_the_host_binary_and_fills_its_sha256() {
    if !common::bash_available() || !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("bash")
        .arg(root.join("scripts/release"))
        .arg("--out")
        .arg(out.path())
        .args(["--targets", HOST_TARGET])
        .arg("--binary")
        .arg(format!("{HOST_TARGET}={BIN}"))
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let archive = out.path().join(format!(
        "kubectl-homelab_lint-v{}-{HOST_TARGET}.tar.gz",
        env!("CARGO_PKG_VERSION")
    ));
    let bytes = std::fs::read(&archive).unwrap();
    use sha2::{Digest, Sha256};
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let generated = parse(&std::fs::read_to_string(out.path().join("homelab-lint.yaml")).unwrap());
    let found = problems("homelab-lint", &generated);
    assert!(found.is_empty(), "{}", found.join("\n"));
    let platforms = generated
        .path(&["spec", "platforms"])
        .and_then(Node::as_seq)
        .unwrap();
    assert_eq!(platforms.len(), 1);
    assert_eq!(str_at(&platforms[0], &["sha256"]), sha);
    assert!(
        std::fs::read_to_string(out.path().join("SHA256SUMS"))
            .unwrap()
            .contains(&sha)
    );

    // The archive holds the binary krew will link as the plugin.
    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let names = String::from_utf8_lossy(&listing.stdout);
    assert!(
        names.lines().any(|l| l == "kubectl-homelab_lint"),
        "{names}"
    );

    // The checked-in manifest is what the script writes, but for sha256.
    let checked_in = parse(&std::fs::read_to_string(root.join("krew/homelab-lint.yaml")).unwrap());
    let mut a = generated.to_json();
    let mut b = checked_in.to_json();
    let linux_amd64 = b["spec"]["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["selector"]["matchLabels"]["os"] == "linux"
                && p["selector"]["matchLabels"]["arch"] == "amd64"
        })
        .cloned()
        .unwrap();
    b["spec"]["platforms"] = serde_json::json!([linux_amd64]);
    a["spec"]["platforms"][0]["sha256"] = serde_json::Value::Null;
    b["spec"]["platforms"][0]["sha256"] = serde_json::Value::Null;
    assert_eq!(
        a, b,
        "krew/homelab-lint.yaml differs from what scripts/release writes"
    );
}

#[test]
fn release_script_fails_clearly_for_targets_it_cannot_build() {
    if !common::bash_available() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    // A target whose standard library is not installed here (no rustup
    // target add for darwin can link without an Apple linker either).
    let run = Command::new("bash")
        .arg(root.join("scripts/release"))
        .arg("--out")
        .arg(out.path())
        .args(["--targets", "aarch64-apple-darwin"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    if cfg!(target_os = "macos") {
        eprintln!("SKIPPED on macOS: darwin can be built here");
        return;
    }
    assert_eq!(run.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot build on this machine"), "{err}");
    assert!(err.contains("aarch64-apple-darwin:"), "{err}");
    assert!(!out.path().join("homelab-lint.yaml").exists());
}
