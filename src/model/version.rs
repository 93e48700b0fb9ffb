//! App versions as written in real repos: chart versions, image tags with
//! `v` prefixes, variants and digests, OCIRepository semver ranges.

use semver::{Comparator, Version, VersionReq};

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

/// The releases a version text allows: one (`2025.10.1`), any of a
/// floating tag's (`2025.10` is every 2025.10.x: Authentik tags each
/// release `YYYY.M.P`, its family `YYYY.M` and `latest`, goauthentik/
/// authentik `.github/actions/docker-push-variables/push_vars.py`), or
/// any a semver range allows (an OCIRepository's `ref.semver`, a chart
/// version constraint).
#[derive(Clone, Debug)]
pub struct Releases {
    /// Alternatives (`||`), each a conjunction of comparators.
    any_of: Vec<VersionReq>,
    pub kind: Pin,
    /// The text as written.
    pub text: String,
}

/// How a version text pins the release.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    Exact,
    FloatingTag,
    Range,
}

impl Releases {
    /// What the text is, for a reason that names it: `floating tag 2025`.
    pub fn describe(&self) -> String {
        let kind = match self.kind {
            Pin::Exact => "version",
            Pin::FloatingTag => "floating tag",
            Pin::Range => "version range",
        };
        format!("{kind} {}", self.text)
    }

    /// Whether every release allowed meets `req` (`Some(true)`), none does
    /// (`Some(false)`), or some do and some do not (`None`). Exact: both
    /// sets are unions of intervals whose ends are the comparators'
    /// versions or the next patch, minor or major after one, so testing
    /// those points (and 0.0.0) tests every interval between them.
    pub fn meet(&self, req: &VersionReq) -> Option<bool> {
        let points = self
            .any_of
            .iter()
            .chain([req])
            .flat_map(|r| r.comparators.iter())
            .flat_map(edges)
            .chain([Version::new(0, 0, 0)]);
        let (mut inside, mut outside) = (false, false);
        for point in points {
            if self.any_of.iter().any(|r| r.matches(&point)) {
                match req.matches(&point) {
                    true => inside = true,
                    false => outside = true,
                }
            }
        }
        match (inside, outside) {
            (true, true) => None,
            (inside, _) => Some(inside),
        }
    }
}

/// The versions at which a comparator's truth can change.
fn edges(c: &Comparator) -> [Version; 4] {
    let (major, minor, patch) = (c.major, c.minor.unwrap_or(0), c.patch.unwrap_or(0));
    [
        Version::new(major, minor, patch),
        Version::new(major, minor, patch.saturating_add(1)),
        Version::new(major, minor.saturating_add(1), 0),
        Version::new(major.saturating_add(1), 0, 0),
    ]
}

/// Reads a tag or a version constraint: `Err` says why it names no
/// release (a digest, `latest`, a branch tag).
pub fn releases(text: &str) -> Result<Releases, String> {
    let trimmed = text.trim();
    if trimmed.starts_with("sha256:") || trimmed.starts_with("sha512:") {
        return Err(format!(
            "{} is a digest, which names no release",
            short_digest(trimmed)
        ));
    }
    let made = |any_of, kind| Releases {
        any_of,
        kind,
        text: trimmed.to_string(),
    };
    if let Some(numbers) = tag_numbers(trimmed) {
        let kind = match numbers.len() {
            3 => Pin::Exact,
            _ => Pin::FloatingTag,
        };
        let joined: Vec<String> = numbers.iter().map(u64::to_string).collect();
        let req = VersionReq::parse(&format!("={}", joined.join(".")))
            .map_err(|e| format!("{trimmed} is not read: {e}"))?;
        return Ok(made(vec![req], kind));
    }
    match range(trimmed) {
        Some(any_of) => Ok(made(any_of, Pin::Range)),
        None => Err(format!("{trimmed} is not a release number")),
    }
}

/// `sha256:0123456789ab…`: enough to find it, not a wall of hex.
pub fn short_digest(digest: &str) -> String {
    match digest.char_indices().nth(19) {
        Some((at, _)) => format!("{}…", &digest[..at]),
        None => digest.to_string(),
    }
}

/// The numbers of a release tag (`v2025.10.1`, `2025.10`, `16-alpine`):
/// one to three, at the start after an optional `v`, ended by the text's
/// end or a `-`, `+` or `_` suffix; a fourth number is dropped.
fn tag_numbers(text: &str) -> Option<Vec<u64>> {
    let text = text.strip_prefix(['v', 'V']).unwrap_or(text);
    let end = text.find(['-', '+', '_']).unwrap_or(text.len());
    let numbers: Vec<u64> = text[..end]
        .split('.')
        .map(|n| match n.chars().all(|c| c.is_ascii_digit()) {
            true => n.parse().ok(),
            false => None,
        })
        .collect::<Option<_>>()?;
    (!numbers.is_empty()).then(|| numbers.into_iter().take(3).collect())
}

/// A Masterminds semver constraint (what source-controller reads in
/// `ref.semver` and a chart version): `||` alternatives of comparators
/// separated by spaces or commas, hyphen ranges `1.2 - 1.4`, wildcards;
/// a bare version means `=` (Cargo's would mean `^`).
fn range(text: &str) -> Option<Vec<VersionReq>> {
    text.split("||")
        .map(|alternative| {
            let words: Vec<&str> = alternative
                .split([' ', ','])
                .filter(|w| !w.is_empty())
                .collect();
            let mut comparators = Vec::new();
            let mut i = 0;
            while i < words.len() {
                let word = words[i];
                if words.get(i + 1) == Some(&"-") {
                    comparators.push(format!(">={}", words[i].trim_start_matches('v')));
                    comparators.push(format!("<={}", words.get(i + 2)?.trim_start_matches('v')));
                    i += 3;
                    continue;
                }
                let op_len = word.len()
                    - word
                        .trim_start_matches(['<', '>', '=', '~', '^', '!'])
                        .len();
                let (op, version) = word.split_at(op_len);
                // `>= 1.2`: the operator written apart from its version.
                let (version, step) = match version.is_empty() {
                    true => (*words.get(i + 1)?, 2),
                    false => (version, 1),
                };
                if op.contains('!') {
                    return None;
                }
                let op = if op.is_empty() || op == "==" { "=" } else { op };
                let version = version.trim_start_matches(['v', 'V']);
                comparators.push(match version {
                    "*" | "x" | "X" => "*".to_string(),
                    _ => format!("{op}{version}"),
                });
                i += step;
            }
            let wild = |c: &String| c == "*";
            let joined: Vec<&str> = comparators
                .iter()
                .filter(|c| !wild(c) || comparators.len() == 1)
                .map(String::as_str)
                .collect();
            VersionReq::parse(&joined.join(", ")).ok()
        })
        .collect()
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
        assert_eq!(releases("2025.10.0-rc1").unwrap().meet(&req), Some(true));
        assert_eq!(releases("2025.8.3").unwrap().meet(&req), Some(false));
    }

    #[test]
    fn floating_tags_and_ranges_decide_only_when_every_release_agrees() {
        let req = VersionReq::parse(">=2025.10").unwrap();
        let meet = |text: &str| releases(text).unwrap().meet(&req);
        assert_eq!(meet("2025.10.1"), Some(true));
        assert_eq!(meet("2025.8.3"), Some(false));
        assert_eq!(meet("2025.10"), Some(true));
        assert_eq!(meet("2025.8"), Some(false));
        assert_eq!(meet("2025"), None);
        assert_eq!(meet("2024"), Some(false));
        assert_eq!(meet(">=2025.10.0 <2026.0.0"), Some(true));
        assert_eq!(meet(">= 2025.8.0"), None);
        assert_eq!(meet("2025.2.x"), Some(false));
        assert_eq!(meet("2025.6 - 2025.12"), None);
        assert_eq!(meet("~2025.8.0 || ^2026.1"), None);
        assert_eq!(meet("~2025.10.0 || ^2026.1"), Some(true));
        assert_eq!(releases("2025.10").unwrap().kind, Pin::FloatingTag);
        assert_eq!(releases("v2025.10.1-rc1").unwrap().kind, Pin::Exact);
        assert_eq!(releases(">=2025.10.0").unwrap().kind, Pin::Range);
        // A window inside the tag's releases: neither end of the tag is in
        // it, yet some of its releases are.
        let window = VersionReq::parse(">=2025.10, <2025.11").unwrap();
        assert_eq!(releases("2025").unwrap().meet(&window), None);
    }

    #[test]
    fn digests_and_words_name_no_release() {
        let err = releases("sha256:0123456789abcdef0123456789abcdef").unwrap_err();
        assert!(err.starts_with("sha256:0123456789ab… is a digest"), "{err}");
        assert!(releases("latest").is_err());
        assert!(releases("gh-main").is_err());
        assert!(releases("release").is_err());
    }
}
