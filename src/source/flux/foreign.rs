//! GitRepositories that are another repository. A Flux Kustomization that
//! builds from one renders that repository's tree, not a directory of this
//! one that happens to have the same path (`./kubernetes`, `./deploy`).

use crate::source::PathSet;

use crate::source::object::Object;

/// `GitRepository/<name>` of the GitRepositories whose `spec.url` is not
/// the URL the cluster's bootstrap syncs: a FluxInstance's
/// `spec.sync.url`, a flux-instance HelmRelease's `instance.sync.url`
/// value (controlplaneio-fluxcd/charts flux-instance values), or the URL
/// of flux bootstrap's `flux-system` GitRepository. With no such URL in
/// the repository, none is known to be another repository.
pub fn foreign_git_sources(git_repos: &[Object], bootstrap: &[Object]) -> PathSet<String> {
    let synced: PathSet<String> = bootstrap
        .iter()
        .filter_map(|o| {
            if o.is("fluxcd.controlplane.io", "FluxInstance") {
                o.root.str_at(&["spec", "sync", "url"])
            } else if o.is("helm.toolkit.fluxcd.io", "HelmRelease") {
                o.root
                    .str_at(&["spec", "values", "instance", "sync", "url"])
            } else {
                None
            }
        })
        .chain(
            git_repos
                .iter()
                .filter(|g| g.name() == "flux-system")
                .filter_map(|g| g.root.str_at(&["spec", "url"])),
        )
        .filter_map(normalized)
        .collect();
    if synced.is_empty() {
        return PathSet::default();
    }
    let url_of = |g: &Object| g.root.str_at(&["spec", "url"]).and_then(normalized);
    let this_repo: PathSet<&str> = git_repos
        .iter()
        .filter(|g| url_of(g).is_none_or(|u| synced.contains(&u)))
        .map(Object::name)
        .collect();
    git_repos
        .iter()
        .filter(|g| !this_repo.contains(g.name()))
        .map(|g| format!("GitRepository/{}", g.name()))
        .collect()
}

/// A Git URL as host and path, for comparing the forms one repository is
/// written in: `https://github.com/o/r.git`, `ssh://git@github.com/o/r`,
/// `git@github.com:o/r`. `None` for a URL a substitution still makes.
pub(super) fn normalized(url: &str) -> Option<String> {
    if url.contains('$') {
        return None;
    }
    let url = url.trim().to_ascii_lowercase();
    let (rest, scp) = match url.split_once("://") {
        Some((_, rest)) => (rest, false),
        None => (url.as_str(), true),
    };
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    let rest = if scp {
        rest.replacen(':', "/", 1)
    } else {
        rest.to_string()
    };
    let rest = rest.trim_end_matches('/');
    Some(rest.strip_suffix(".git").unwrap_or(rest).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::source::object::objects_of as objects;

    #[test]
    fn one_repository_in_its_several_spellings() {
        let a = normalized("https://github.com/Owner/home-ops.git/").unwrap();
        assert_eq!(a, "github.com/owner/home-ops");
        assert_eq!(
            normalized("ssh://git@github.com/owner/home-ops").unwrap(),
            a
        );
        assert_eq!(normalized("git@github.com:owner/home-ops.git").unwrap(), a);
        assert!(normalized("${REPO_URL}").is_none());
    }

    /// keycloak-operator (as d4rkfella/home-ops deploys it) builds `./kubernetes`
    /// of keycloak/keycloak-k8s-resources, which this repository also has.
    #[test]
    fn a_git_repository_of_another_url_than_the_synced_one_is_foreign() {
        let bootstrap = objects(
            "apiVersion: fluxcd.controlplane.io/v1\nkind: FluxInstance\nmetadata: {name: flux}\nspec:\n  sync: {kind: GitRepository, url: 'https://github.com/me/home-ops', path: kubernetes/flux/cluster}\n",
        );
        let git = objects(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: keycloak-k8s-resources}\nspec: {url: 'https://github.com/keycloak/keycloak-k8s-resources'}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {name: mine}\nspec: {url: 'ssh://git@github.com/me/home-ops.git'}\n",
        );
        let foreign = foreign_git_sources(&git, &bootstrap);
        assert_eq!(
            foreign,
            PathSet::from_iter(["GitRepository/keycloak-k8s-resources".to_string()])
        );
        // Without the synced URL nothing is known.
        assert!(foreign_git_sources(&git, &[]).is_empty());
    }
}
