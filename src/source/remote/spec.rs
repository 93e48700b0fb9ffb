//! What a remote kustomize entry names, read as kustomize reads it.
//!
//! kustomize tries an entry as a file first and as a git repository
//! second (api/internal/target/kusttarget.go `accumulateResources`: a
//! `loader.IsRemoteFile` URL is fetched over HTTP, then `ldr.New(path)`
//! parses it with api/internal/git/repospec.go `NewRepoSpecFromURL`).
//! Fetching a GitHub page to learn that it is not YAML is a wasted
//! request, so the choice is made here from the URL alone, with the same
//! signs repospec.go reads: `git::`, a scheme-less `github.com/`, a
//! `.git` suffix, a `//` between repository and folder, or a
//! `?ref=`/`?version=` query (`ref` wins). The folder is the rest of the
//! path after `org/repo` on github.com (`parseGitUrl`), after `//` or
//! `.git` elsewhere; a github.com URL with a scheme that ends in a
//! manifest's extension and has no ref is a file (a release asset), as
//! kustomize's file-first attempt finds it. `submodules` and `timeout` are not read: submodules
//! are never fetched, and time is the run's budget.

/// A remote entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A manifest at a URL (`https://…/crd.yaml`).
    File { url: String },
    /// A folder of a git repository at a ref.
    Git {
        repo: String,
        path: String,
        reference: Option<String>,
    },
}

impl Entry {
    /// What the entry is, for a reason a user reads.
    pub fn describe(&self) -> String {
        match self {
            Entry::File { .. } => "it is a manifest file".to_string(),
            Entry::Git {
                repo,
                path,
                reference,
            } => {
                let folder = match path.as_str() {
                    "" => "its top folder".to_string(),
                    p => format!("folder {p}"),
                };
                let at = match reference {
                    Some(r) => format!("ref {r}"),
                    None => "its default branch".to_string(),
                };
                format!("it is git repository {repo}, {folder}, at {at}")
            }
        }
    }

    /// The URL fetched and the ref, which key the cache.
    pub fn key(&self) -> (String, String) {
        match self {
            Entry::File { url } => (url.clone(), String::new()),
            Entry::Git {
                repo, reference, ..
            } => (repo.clone(), reference.clone().unwrap_or_default()),
        }
    }

    /// The scheme of the URL fetched.
    pub fn scheme(&self) -> &str {
        let url = match self {
            Entry::File { url } => url,
            Entry::Git { repo, .. } => repo,
        };
        url.split_once("://").map_or("", |(s, _)| s)
    }
}

/// Hosts whose repositories kustomize reads as `host/org/repo/folder`
/// without a `//`.
const ORG_REPO_HOSTS: [&str; 3] = ["github.com", "gitlab.com", "bitbucket.org"];

/// Reads a remote entry; `Err` says why it is not one this tool fetches.
pub fn parse(entry: &str) -> Result<Entry, String> {
    let (forced_git, rest) = match entry.strip_prefix("git::") {
        Some(rest) => (true, rest.to_string()),
        None => (false, entry.to_string()),
    };
    if rest.starts_with("git@") || rest.starts_with("ssh://") || rest.starts_with("gh:") {
        return Err("it is fetched over ssh, and only https is fetched".into());
    }
    let scheme_less = ORG_REPO_HOSTS
        .iter()
        .any(|h| rest.starts_with(&format!("{h}/")));
    let url = if scheme_less {
        format!("https://{rest}")
    } else {
        rest
    };
    let Some((scheme, after)) = url.split_once("://") else {
        return Err("it is not a URL".into());
    };
    let scheme = scheme.to_ascii_lowercase();
    if !matches!(scheme.as_str(), "https" | "http" | "file") {
        return Err(format!("its scheme {scheme} is not fetched"));
    }
    let (location, query) = match after.split_once('?') {
        Some((l, q)) => (l, Some(q)),
        None => (after, None),
    };
    let reference = query.and_then(reference_of);
    let (host, path) = location.split_once('/').unwrap_or((location, ""));
    let base = format!("{scheme}://{host}");
    let git = |repo: &str, folder: &str| Entry::Git {
        repo: format!("{base}/{repo}"),
        path: folder.trim_matches('/').to_string(),
        reference: reference.clone(),
    };
    if let Some((repo, folder)) = path.split_once("//") {
        return Ok(git(repo, folder));
    }
    if let Some(i) = path.find(".git").filter(|&i| {
        let end = i + ".git".len();
        end == path.len() || path[end..].starts_with('/')
    }) {
        let end = i + ".git".len();
        return Ok(git(&path[..end], &path[end..]));
    }
    let host_name = host.rsplit('@').next().unwrap_or(host).to_ascii_lowercase();
    let manifest = [".yaml", ".yml", ".json"].iter().any(|e| path.ends_with(e));
    let org_repo_host = ORG_REPO_HOSTS.contains(&host_name.as_str()) && scheme != "file";
    // With a scheme, kustomize fetches the URL as a file first: a release
    // asset (`https://github.com/o/r/releases/download/v1/crd.yaml`) is one.
    if org_repo_host && (scheme_less || forced_git || reference.is_some() || !manifest) {
        let mut parts = path.splitn(3, '/');
        let (org, repo) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        if org.is_empty() || repo.is_empty() {
            return Err("it names no org/repo".into());
        }
        return Ok(git(&format!("{org}/{repo}"), parts.next().unwrap_or("")));
    }
    if forced_git || reference.is_some() || scheme == "file" {
        return Ok(git(path, ""));
    }
    Ok(Entry::File { url })
}

/// `ref`, else `version`, of a query (repospec.go `peelQuery`).
fn reference_of(query: &str) -> Option<String> {
    let get = |key: &str| {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, v)| *k == key && !v.is_empty())
            .map(|(_, v)| v.to_string())
    };
    get("ref").or_else(|| get("version"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(repo: &str, path: &str, reference: Option<&str>) -> Entry {
        Entry::Git {
            repo: repo.into(),
            path: path.into(),
            reference: reference.map(str::to_string),
        }
    }

    #[test]
    fn entries_read_as_kustomize_reads_them() {
        let cases = [
            (
                "github.com/fluxcd/flux2/manifests/install?ref=v2.2.3",
                git(
                    "https://github.com/fluxcd/flux2",
                    "manifests/install",
                    Some("v2.2.3"),
                ),
            ),
            (
                "https://github.com/org/repo//deploy/base?ref=main&version=x",
                git("https://github.com/org/repo", "deploy/base", Some("main")),
            ),
            (
                "git::https://example.com/org/repo.git//dir?version=v1",
                git("https://example.com/org/repo.git", "dir", Some("v1")),
            ),
            (
                "https://git.example.com/team/repo.git/sub/dir",
                git("https://git.example.com/team/repo.git", "sub/dir", None),
            ),
            (
                "https://raw.githubusercontent.com/o/r/v1/deploy/operator.yaml",
                Entry::File {
                    url: "https://raw.githubusercontent.com/o/r/v1/deploy/operator.yaml".into(),
                },
            ),
            (
                "https://github.com/o/r/releases/download/v1/crd.yaml",
                Entry::File {
                    url: "https://github.com/o/r/releases/download/v1/crd.yaml".into(),
                },
            ),
            (
                "https://github.com/o/r/deploy?ref=v1",
                git("https://github.com/o/r", "deploy", Some("v1")),
            ),
        ];
        for (entry, want) in cases {
            assert_eq!(parse(entry), Ok(want), "{entry}");
        }
    }

    #[test]
    fn ssh_and_unknown_schemes_are_refused_with_a_reason() {
        assert!(
            parse("git@github.com:org/repo.git")
                .unwrap_err()
                .contains("ssh")
        );
        assert!(parse("ftp://x/y.yaml").unwrap_err().contains("ftp"));
    }
}
