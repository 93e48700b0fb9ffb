//! App versions as written in real repos: chart versions, image tags with
//! `v` prefixes, variants and digests, OCIRepository semver ranges.

use semver::{Version, VersionReq};

/// The release a version text names, ignoring what follows the numbers
/// (`-alpine`, `@sha256:…`) and reading a range by its lower bound
/// (`>=2025.10.0 <2026.0.0` is 2025.10.0). `None` for `latest` and the like:
/// numbers after a word (`develop@sha256:…`, `sha-1a2b3c`, `release-2`)
/// are no version, and an unknown version is never guessed.
pub fn parse_lenient(text: &str) -> Option<Version> {
    let text = text.split('@').next().unwrap_or(text);
    let start = text.find(|c: char| c.is_ascii_digit())?;
    let prefix = &text[..start];
    let operator = |p: &str| p.chars().all(|c| "<>=~^ ".contains(c));
    let v_prefixed = prefix.strip_suffix(['v', 'V']).is_some_and(operator);
    if !operator(prefix) && !v_prefixed {
        return None;
    }
    let mut parts = [0u64; 3];
    for (part, piece) in parts.iter_mut().zip(text[start..].split('.')) {
        let digits: String = piece.chars().take_while(char::is_ascii_digit).collect();
        if digits.is_empty() {
            break;
        }
        *part = digits.parse().ok()?;
        if digits.len() != piece.len() {
            break;
        }
    }
    Some(Version::new(parts[0], parts[1], parts[2]))
}

/// Whether `version` satisfies a rule's constraint (`>=2025.10`), with
/// pre-releases compared by their numbers: 2025.10.0-rc1 is a 2025.10.
pub fn satisfies(req: &VersionReq, version: &Version) -> bool {
    req.matches(&Version::new(version.major, version.minor, version.patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_real_world_version_texts() {
        let v = |s| parse_lenient(s).map(|v| v.to_string());
        assert_eq!(v("2025.10.1").as_deref(), Some("2025.10.1"));
        assert_eq!(v("v2025.8").as_deref(), Some("2025.8.0"));
        assert_eq!(v("2025.10.1@sha256:0123abcd").as_deref(), Some("2025.10.1"));
        assert_eq!(v("2024.2.2-alpine").as_deref(), Some("2024.2.2"));
        assert_eq!(v(">=2025.10.0 <2026.0.0").as_deref(), Some("2025.10.0"));
        assert_eq!(v("latest"), None);
        assert_eq!(v("develop@sha256:005d0123"), None);
        assert_eq!(v("sha-1a2b3c"), None);
        assert_eq!(v("^1.2"), Some("1.2.0".into()));
        assert_eq!(v("V3"), Some("3.0.0".into()));
    }

    #[test]
    fn constraint_ignores_pre_release_tags() {
        let req = VersionReq::parse(">=2025.10").unwrap();
        assert!(satisfies(&req, &parse_lenient("2025.10.0-rc1").unwrap()));
        assert!(!satisfies(&req, &parse_lenient("2025.8.3").unwrap()));
    }
}
