//! The krew manifest, written by `scripts/krew-manifest` from the
//! SHA256SUMS of `scripts/release`, passes krew's own validation
//! (kubernetes-sigs/krew internal/index/validation/validate.go and
//! cmd/validate-krew-manifest/main.go: a safe name equal to the file's, a
//! `v` semantic version, selectors of `os`/`arch` only matching one
//! platform krew installs on each and never two platforms the same one,
//! sha256 of 64 lower-case hex digits, uri, bin, `files` entries with
//! `from` and `to`, a licence among them) and this project's release
//! conventions (an https `.tar.gz` of the version, a short description of
//! at most 50 characters, the project's repository as homepage); the release
//! script packages a binary with LICENSE, completions and man page, and
//! the manifest carries the sha256 of the archive actually built. Under
//! CI, `.ci/run` builds the real distribution archive and names its
//! directory in HOMELAB_LINT_DIST_DIR.

use crate::common;

use std::path::Path;
use std::process::Command;

use homelab_lint::yaml::{FileId, Limits, Node, parse_documents};

use crate::common::BIN;
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

/// The `os`/`arch` pairs krew installs on: a platform whose selector
/// matches none is refused (kubernetes-sigs/krew
/// cmd/validate-krew-manifest/main.go, allPlatforms).
const KREW_PLATFORMS: [(&str, &str); 11] = [
    ("windows", "386"),
    ("windows", "amd64"),
    ("windows", "arm64"),
    ("linux", "386"),
    ("linux", "amd64"),
    ("linux", "arm"),
    ("linux", "arm64"),
    ("linux", "ppc64le"),
    ("darwin", "386"),
    ("darwin", "amd64"),
    ("darwin", "arm64"),
];

/// Names krew refuses as a plugin name, whatever their case (Windows
/// device names; internal/index/validation/validate.go, windowsForbidden).
const WINDOWS_FORBIDDEN: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

/// Problems with a manifest, as krew's own checks find them: the
/// structural validation of kubernetes-sigs/krew
/// internal/index/validation/validate.go (ValidatePlugin, validatePlatform,
/// validateFiles, validateSelector) and what cmd/validate-krew-manifest,
/// which krew-index's CI runs, adds (the file name is the plugin name,
/// each selector matches a platform krew installs on, no two platforms
/// match the same one, a licence among the files installed). Beyond krew:
/// this project's release wants an https `.tar.gz` of the version, `bin`
/// its binary, a short description of at most 50 characters and its
/// repository as homepage (krew-index's review guidelines).
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
    // IsSafePluginName: `^[\w-]+$`, and no Windows device name.
    check(
        !file_stem.is_empty()
            && file_stem
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !WINDOWS_FORBIDDEN
                .iter()
                .any(|f| f.eq_ignore_ascii_case(file_stem)),
        format!("the plugin name {file_stem:?} is not allowed"),
    );
    check(
        m.str_at(&["metadata", "name"]) == Some(file_stem),
        format!("metadata.name must equal the file name {file_stem}"),
    );
    // semver.Parse: a leading `v`, then a semantic version.
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
    let short = m.str_at(&["spec", "shortDescription"]).unwrap_or("");
    check(
        !short.contains(['\r', '\n']),
        "spec.shortDescription has a line break".into(),
    );
    check(
        short.chars().count() <= 50,
        format!("spec.shortDescription is over 50 characters: {short:?}"),
    );
    check(
        m.str_at(&["spec", "homepage"]) == Some(env!("CARGO_PKG_REPOSITORY")),
        "spec.homepage must be the project's repository".into(),
    );
    let platforms = m
        .path(&["spec", "platforms"])
        .and_then(Node::as_seq)
        .cloned()
        .unwrap_or_default();
    check(!platforms.is_empty(), "spec.platforms is empty".into());
    let mut selected: Vec<Vec<(&str, &str)>> = Vec::new();
    for (i, p) in platforms.iter().enumerate() {
        let (problem, matched) = selector(p.get("selector"));
        check(
            problem.is_none(),
            format!("platform {i}: {}", problem.unwrap_or_default()),
        );
        check(
            !matched.is_empty(),
            format!("platform {i}: the selector matches no platform krew installs on"),
        );
        selected.push(matched);
        let uri = p.str_at(&["uri"]).unwrap_or("");
        check(
            uri.starts_with("https://") && uri.ends_with(".tar.gz") && uri.contains(version),
            format!("platform {i}: uri {uri:?} must be an https .tar.gz of {version}"),
        );
        // validSHA256: `^[a-f0-9]{64}$`.
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
        // validateFiles: absent, or entries that each have `from` and `to`.
        let files = p
            .get("files")
            .map(|f| f.as_seq().cloned().unwrap_or_default());
        if let Some(files) = &files {
            check(
                !files.is_empty(),
                format!("platform {i}: files must be absent or not empty"),
            );
            for (j, f) in files.iter().enumerate() {
                for field in ["from", "to"] {
                    check(
                        f.str_at(&[field]).is_some_and(|s| !s.is_empty()),
                        format!("platform {i}: files[{j}] has no {field}"),
                    );
                }
            }
        }
        // The bin and the licence must be among the files copied out of
        // the archive (validate-krew-manifest looks for the licence among
        // the files installed).
        for wanted in [bin, "LICENSE"] {
            check(
                files
                    .as_ref()
                    .is_some_and(|fs| fs.iter().any(|f| f.str_at(&["from"]) == Some(wanted))),
                format!("platform {i}: files do not include {wanted}"),
            );
        }
    }
    // isOverlappingPlatformSelectors: no os/arch is matched twice.
    for pair in KREW_PLATFORMS {
        let matching = selected.iter().filter(|m| m.contains(&pair)).count();
        check(
            matching <= 1,
            format!("{}/{} is matched by {matching} platforms", pair.0, pair.1),
        );
    }
    out
}

/// What krew's validateSelector says of a platform's selector, and the
/// os/arch pairs of [`KREW_PLATFORMS`] it matches (matchLabels and
/// matchExpressions with In, NotIn, Exists and DoesNotExist, as
/// k8s.io/apimachinery's LabelSelectorAsSelector reads them).
fn selector(sel: Option<&Node>) -> (Option<String>, Vec<(&'static str, &'static str)>) {
    let Some(sel) = sel else {
        return (Some("nil selector is not supported".into()), Vec::new());
    };
    let labels = sel.get("matchLabels").and_then(Node::as_map);
    let expressions = sel.get("matchExpressions").and_then(Node::as_seq);
    if labels.is_none_or(|l| l.is_empty()) && expressions.is_none_or(|e| e.is_empty()) {
        return (Some("empty selector is not supported".into()), Vec::new());
    }
    let label_keys = labels
        .into_iter()
        .flatten()
        .map(|(k, _)| k.as_str().unwrap_or(""));
    let expression_keys = expressions
        .into_iter()
        .flatten()
        .map(|e| e.str_at(&["key"]).unwrap_or(""));
    if let Some(key) = label_keys
        .chain(expression_keys)
        .find(|k| *k != "os" && *k != "arch")
    {
        return (Some(format!("key {key:?} not supported")), Vec::new());
    }
    if labels.is_some_and(|l| l.is_empty()) {
        return (Some("`matchLabels` specified but empty".into()), Vec::new());
    }
    if expressions.is_some_and(|e| e.is_empty()) {
        return (
            Some("`matchExpressions` specified but empty".into()),
            Vec::new(),
        );
    }
    let matches = |os: &str, arch: &str| {
        let value = |key: &str| if key == "os" { os } else { arch };
        labels
            .into_iter()
            .flatten()
            .all(|(k, v)| v.as_str() == Some(value(k.as_str().unwrap_or(""))))
            && expressions.into_iter().flatten().all(|e| {
                let key = e.str_at(&["key"]).unwrap_or("");
                let values: Vec<&str> = e
                    .get("values")
                    .and_then(Node::as_seq)
                    .into_iter()
                    .flatten()
                    .filter_map(Node::as_str)
                    .collect();
                match e.str_at(&["operator"]).unwrap_or("") {
                    "In" => values.contains(&value(key)),
                    "NotIn" => !values.contains(&value(key)),
                    // Both keys always have a value: DoesNotExist
                    // matches nothing.
                    "Exists" => true,
                    _ => false,
                }
            })
    };
    let matched = KREW_PLATFORMS
        .into_iter()
        .filter(|(os, arch)| matches(os, arch))
        .collect();
    (None, matched)
}

const TARGETS: [&str; 4] = [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn version() -> String {
    format!("v{}", env!("CARGO_PKG_VERSION"))
}

/// `scripts/krew-manifest` run on a SHA256SUMS file with these lines.
fn manifest_from_sums(lines: &[(String, String)]) -> Node {
    parse(&manifest_text(lines))
}

/// The text `scripts/krew-manifest` writes for a SHA256SUMS file with these lines.
fn manifest_text(lines: &[(String, String)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let sums = dir.path().join("SHA256SUMS");
    let text: String = lines.iter().map(|(s, n)| format!("{s}  {n}\n")).collect();
    std::fs::write(&sums, text).unwrap();
    let run = Command::new("bash")
        .arg(root().join("scripts/krew-manifest"))
        .arg(&sums)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8(run.stdout).unwrap()
}

/// A distinct 64-hex-digit value per archive name.
fn fake_sum(name: &str) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(name.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn four_platform_sums() -> Vec<(String, String)> {
    TARGETS
        .iter()
        .map(|t| {
            let name = format!("kubectl-homelab_lint-{}-{t}.tar.gz", version());
            (fake_sum(&name), name)
        })
        .collect()
}

#[test]
fn manifest_from_four_archives_has_what_krew_requires() {
    if !common::bash_available() {
        return;
    }
    let sums = four_platform_sums();
    let m = manifest_from_sums(&sums);
    let found = problems("homelab-lint", &m);
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert_eq!(
        str_at(&m, &["spec", "version"]),
        version(),
        "the manifest's version follows Cargo.toml"
    );
    let mut platforms: Vec<String> = Vec::new();
    for p in m
        .path(&["spec", "platforms"])
        .and_then(Node::as_seq)
        .unwrap()
    {
        let uri = str_at(p, &["uri"]);
        let (sum, _) = sums
            .iter()
            .find(|(_, name)| uri.ends_with(&format!("/{name}")))
            .unwrap_or_else(|| panic!("{uri} names no archive of SHA256SUMS"));
        assert_eq!(str_at(p, &["sha256"]), sum, "{uri}");
        platforms.push(format!(
            "{}/{}",
            str_at(p, &["selector", "matchLabels", "os"]),
            str_at(p, &["selector", "matchLabels", "arch"])
        ));
    }
    platforms.sort();
    assert_eq!(
        platforms,
        ["darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64"]
    );
    // Caveats are set-up steps only; what the tool does is the description.
    let caveats = str_at(&m, &["spec", "caveats"]);
    assert!(!caveats.contains("--live"), "{caveats}");
    assert!(
        caveats.contains(&format!("homelab-lint/{}/", version())),
        "{caveats}"
    );
}

/// The manifest is `krew/homelab-lint.yaml` of the repository, rendered:
/// every line of the template but its comments is in it, with the
/// placeholders filled in, and none is left.
#[test]
fn the_manifest_is_the_krew_template_rendered() {
    if !common::bash_available() {
        return;
    }
    let rendered = manifest_text(&four_platform_sums());
    assert!(!rendered.contains("{{"), "{rendered}");
    let template = std::fs::read_to_string(root().join("krew/homelab-lint.yaml")).unwrap();
    let mut lines = rendered.lines();
    for line in template
        .lines()
        .filter(|l| !l.starts_with('#') && *l != "{{PLATFORMS}}")
    {
        let want = line
            .replace("{{VERSION}}", &version())
            .replace("{{HOMEPAGE}}", env!("CARGO_PKG_REPOSITORY"));
        assert!(
            lines.any(|l| l == want),
            "the template's line {want:?} is not in the manifest, in order:\n{rendered}"
        );
    }
    let m = parse(&rendered);
    assert!(problems("homelab-lint", &m).is_empty());
    assert_eq!(
        m.path(&["spec", "platforms"])
            .and_then(Node::as_seq)
            .map(Vec::len),
        Some(4)
    );
}

#[test]
fn the_checker_rejects_what_krew_rejects() {
    if !common::bash_available() {
        return;
    }
    let good = manifest_from_sums(&four_platform_sums()).to_json();
    let good = serde_json::to_string(&good).unwrap();
    let v = version();
    for (from, to) in [
        (
            format!("\"version\":\"{v}\""),
            format!("\"version\":\"{}\"", &v[1..]),
        ),
        (
            "\"name\":\"homelab-lint\"".into(),
            "\"name\":\"homelab_lint\"".into(),
        ),
        ("\"sha256\":\"".into(), "\"sha256\":\"0".into()),
        (
            "\"bin\":\"kubectl-homelab_lint\"".into(),
            "\"bin\":\"other\"".into(),
        ),
        ("\"arch\":\"arm64\"".into(), "\"arch\":\"amd64\"".into()),
        ("\"from\":\"LICENSE\"".into(), "\"from\":\"COPYING\"".into()),
        (
            "\"shortDescription\":\"".into(),
            "\"shortDescription\":\"A description that is much too long for krew: ".into(),
        ),
    ] {
        assert!(good.contains(&from), "{from}");
        let bad = parse(&good.replacen(&from, &to, 1));
        assert!(
            !problems("homelab-lint", &bad).is_empty(),
            "{from} -> {to} went unnoticed"
        );
    }
}

/// Each rule of krew's validation the checker follows, broken once: the
/// checker names it.
#[test]
fn the_checker_follows_krews_validation() {
    if !common::bash_available() {
        return;
    }
    let good = manifest_from_sums(&four_platform_sums()).to_json();
    let good = serde_json::to_string(&good).unwrap();
    let linux_amd64 = r#""matchLabels":{"arch":"amd64","os":"linux"}"#;
    for (from, to, said) in [
        (r#""to":".""#, r#""to":"""#, "files[0] has no to"),
        (
            r#""os":"linux""#,
            r#""os":"plan9""#,
            "matches no platform krew installs on",
        ),
        (
            linux_amd64,
            r#""matchLabels":{"os":"linux","zone":"a"}"#,
            "key \"zone\" not supported",
        ),
        (
            linux_amd64,
            r#""matchLabels":{}"#,
            "empty selector is not supported",
        ),
        (
            linux_amd64,
            r#""matchExpressions":[{"key":"os","operator":"In","values":["linux"]}]"#,
            "linux/arm64 is matched by 2 platforms",
        ),
        (
            r#""files":["#,
            r#""files":[],"unused":["#,
            "files must be absent or not empty",
        ),
        (
            r#""shortDescription":""#,
            r#""shortDescription":"two\nlines "#,
            "spec.shortDescription has a line break",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let found = problems("homelab-lint", &parse(&good.replacen(from, to, 1)));
        assert!(
            found.iter().any(|p| p.contains(said)),
            "{from} -> {to}: {found:?}"
        );
    }
    // A Windows device name is no plugin name, whatever its case.
    let con = parse(&good.replacen(r#""name":"homelab-lint""#, r#""name":"con""#, 1));
    let found = problems("con", &con);
    assert!(
        found
            .iter()
            .any(|p| p.contains("the plugin name \"con\" is not allowed")),
        "{found:?}"
    );
    // matchExpressions select as Kubernetes reads them: one platform per
    // os/arch, written as expressions, passes.
    let expressions = good.replacen(
        linux_amd64,
        r#""matchExpressions":[{"key":"os","operator":"In","values":["linux"]},{"key":"arch","operator":"NotIn","values":["arm64","386","arm","ppc64le"]}]"#,
        1,
    );
    let found = problems("homelab-lint", &parse(&expressions));
    assert!(found.is_empty(), "{found:?}");
}

#[test]
fn krew_manifest_refuses_a_sum_that_is_not_a_sha256() {
    if !common::bash_available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sums = dir.path().join("SHA256SUMS");
    std::fs::write(
        &sums,
        format!(
            "{}  kubectl-homelab_lint-{}-x86_64-unknown-linux-gnu.tar.gz\n",
            "0".repeat(63),
            version()
        ),
    )
    .unwrap();
    let run = Command::new("bash")
        .arg(root().join("scripts/krew-manifest"))
        .arg(&sums)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&run.stderr).contains("is not a sha256"));
}

/// Checks a release directory holding the host's archive: its listing
/// (binary, LICENSE, completions, man page) and the krew manifest and
/// SHA256SUMS beside it, which must carry the archive's own sha256.
/// Returns the archive's path.
fn check_release_dir(out: &Path) -> std::path::PathBuf {
    let archive = out.join(format!(
        "kubectl-homelab_lint-{}-{HOST_TARGET}.tar.gz",
        version()
    ));
    let bytes = std::fs::read(&archive).unwrap_or_else(|e| panic!("{}: {e}", archive.display()));
    use sha2::{Digest, Sha256};
    let sha: String = Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let manifest = parse(&std::fs::read_to_string(out.join("homelab-lint.yaml")).unwrap());
    let found = problems("homelab-lint", &manifest);
    assert!(found.is_empty(), "{}", found.join("\n"));
    assert_eq!(str_at(&manifest, &["metadata", "name"]), "homelab-lint");
    assert_eq!(str_at(&manifest, &["spec", "version"]), version());
    let platforms = manifest
        .path(&["spec", "platforms"])
        .and_then(Node::as_seq)
        .unwrap();
    let linux_amd64 = platforms
        .iter()
        .find(|p| {
            p.str_at(&["selector", "matchLabels", "os"]) == Some("linux")
                && p.str_at(&["selector", "matchLabels", "arch"]) == Some("amd64")
        })
        .expect("a linux/amd64 platform");
    assert_eq!(str_at(linux_amd64, &["sha256"]), sha);
    assert!(str_at(linux_amd64, &["uri"]).ends_with(&format!(
        "/releases/download/{}/{}",
        version(),
        archive.file_name().unwrap().to_str().unwrap()
    )));
    assert!(
        std::fs::read_to_string(out.join("SHA256SUMS"))
            .unwrap()
            .contains(&format!(
                "{sha}  {}",
                archive.file_name().unwrap().to_str().unwrap()
            ))
    );

    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let names = String::from_utf8_lossy(&listing.stdout);
    for wanted in [
        "kubectl-homelab_lint",
        "kubectl_complete-homelab_lint",
        "LICENSE",
        "README.md",
        "completions/kubectl-homelab_lint.bash",
        "completions/kubectl-homelab_lint.zsh",
        "completions/kubectl-homelab_lint.fish",
        "man/kubectl-homelab_lint.1",
    ] {
        assert!(names.lines().any(|l| l == wanted), "no {wanted} in {names}");
    }
    // The licence is the full Apache-2.0 text, as at the root.
    let licence = Command::new("tar")
        .arg("-xzOf")
        .arg(&archive)
        .arg("LICENSE")
        .output()
        .unwrap();
    assert_eq!(
        licence.stdout,
        std::fs::read(root().join("LICENSE")).unwrap()
    );
    archive
}

#[test]
fn release_script_packages_the_host_binary_and_fills_its_sha256() {
    if !common::bash_available() || !cfg!(all(target_os = "linux", target_arch = "x86_64")) {
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let run = Command::new("bash")
        .arg(root().join("scripts/release"))
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
    check_release_dir(out.path());
    let text = std::fs::read_to_string(root().join("LICENSE")).unwrap();
    assert!(text.contains("Apache License") && text.contains("Version 2.0, January 2004"));
}

/// Whether a 64-bit little-endian ELF file has a PT_INTERP program
/// header, i.e. needs a dynamic loader (a static binary has none).
fn has_interpreter(elf: &[u8]) -> bool {
    assert_eq!(&elf[..4], b"\x7fELF");
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count).any(|i| {
        let at = phoff + i * size;
        u32::from_le_bytes(elf[at..at + 4].try_into().unwrap()) == 3
    })
}

/// The archive scripts/test built under CI (scripts/release): a static
/// binary that runs, under 20 MB when built with the `dist` profile.
#[test]
fn the_distribution_archive_is_static_under_20_mb_and_runs() {
    let Some(dir) = std::env::var_os("HOMELAB_LINT_DIST_DIR") else {
        common::skip_or_fail(
            "HOMELAB_LINT_DIST_DIR is not set (.ci/run sets it after scripts/release)",
        );
        return;
    };
    let archive = check_release_dir(Path::new(&dir));
    let unpacked = tempfile::tempdir().unwrap();
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(unpacked.path())
        .status()
        .unwrap();
    assert!(untar.success());
    let bin = unpacked.path().join("kubectl-homelab_lint");
    let size = std::fs::metadata(&bin).unwrap().len();
    // The size is the `dist` profile's promise; CI packages an
    // unoptimised binary (scripts/test says why), which is larger.
    let profile = std::env::var("HOMELAB_LINT_DIST_PROFILE").unwrap_or_else(|_| "dist".into());
    eprintln!("distribution binary: {size} bytes ({profile} profile)");
    if profile == "dist" {
        assert!(size < 20 * 1024 * 1024, "{size} bytes");
    }
    let elf = std::fs::read(&bin).unwrap();
    assert!(!has_interpreter(&elf), "the binary names a dynamic loader");
    let version = Command::new(&bin).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&version.stdout).contains(env!("CARGO_PKG_VERSION")),
        "{version:?}"
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
