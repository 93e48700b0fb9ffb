//! A problem with one input (a file, an entry of a kustomization, a rule
//! file), at its file, line and column: reported, and the run goes on
//! with the rest.

use std::path::Path;

use crate::yaml::{SourceMap, Span, YamlError};

/// Something wrong with one input. The run goes on with the rest.
#[derive(Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
#[error("{path}{}: {message}", location(*line, *col))]
pub struct Issue {
    /// Repo-relative path.
    pub path: String,
    /// 1-based; 0 when the whole file is meant.
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// Set when the input is one a build can go on without (see [`Gap`]).
    pub gap: Option<Gap>,
    /// Set when a budget of the load stopped the work (see [`Budget`]).
    pub budget: Option<Budget>,
}

/// A budget of the load (`source::Limits`) that stopped a build or a
/// render: what it stopped is not wrong as written, only more than the
/// run follows, and the summary counts it apart from build errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Budget {
    /// Objects the Flux Kustomizations of a load render in all
    /// (`flux::Limits::max_rendered_objects`).
    RenderedObjects(usize),
    /// Kustomizations nested in one another (`kustomize::Limits::max_depth`).
    Depth(usize),
    /// Directories one kustomize build goes through
    /// (`kustomize::Limits::max_builds`).
    Builds(usize),
    /// Directories the builds of a load go through in all
    /// (`kustomize::Limits::max_run_builds`).
    RunBuilds(usize),
    /// Objects one kustomize build gathers (`kustomize::Limits::max_objects`).
    GatheredObjects(usize),
    /// Bytes the generators of one build read.
    GeneratorBytes(usize),
    /// Node visits the patches, replacements and transformers of a load
    /// make in all (`kustomize::Limits::max_run_work`).
    Work(u64),
    /// What postBuild substitution may expand (`flux::Limits`: the bytes
    /// of one value, the bytes and pattern steps of the run, the nesting
    /// of expressions); the issue says which.
    Substitution,
    /// Bytes patches, replacements and transformers add to the objects
    /// of a load in all, values and steps
    /// (`kustomize::Limits::max_run_output_bytes`).
    OutputBytes(u64),
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Budget::RenderedObjects(n) => write!(f, "render budget of {n} objects reached"),
            Budget::Depth(n) => write!(f, "nesting budget of {n} levels reached"),
            Budget::Builds(n) => write!(f, "build budget of {n} directories per build reached"),
            Budget::RunBuilds(n) => {
                write!(f, "build budget of {n} directories per run reached")
            }
            Budget::GatheredObjects(n) => {
                write!(f, "build budget of {n} objects per build reached")
            }
            Budget::GeneratorBytes(n) => {
                write!(f, "generator budget of {n} bytes per build reached")
            }
            Budget::Work(n) => write!(f, "work budget of {n} node visits reached"),
            Budget::OutputBytes(n) => write!(f, "output budget of {n} bytes added reached"),
            Budget::Substitution => write!(f, "substitution budget reached"),
        }
    }
}

/// An entry of a kustomization that is not in the repository. A Flux
/// build goes on without it, so one entry never takes its siblings down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gap {
    /// A remote base, component or file (`https://...`, `github.com/...?ref=`)
    /// that was not read: kustomize-controller fetches it (a git base
    /// unless the controller runs with `--no-remote-bases`, a file at an
    /// http(s) URL even then); this tool fetches remote entries only with
    /// `--remote`, and the issue says why this one was not (see
    /// `source::remote`).
    Remote,
    /// A local file or directory that does not exist: kustomize-controller
    /// fails the whole Flux Kustomization with kustomize's error.
    Missing,
    /// A resource file that is not valid YAML (as go-yaml reads it) or not
    /// Kubernetes objects: kustomize-controller fails the whole Flux
    /// Kustomization with kustomize's `MalformedYAMLError`; here the file
    /// loses only itself.
    Malformed,
    /// An entry of the wrong kind: a Component listed as a resource, or a
    /// kustomization as a component. kustomize refuses it ("expected kind
    /// != 'Component' for path ...", api/internal/target/kusttarget.go
    /// `accumulateDirectory`) and kustomize-controller fails the whole
    /// Flux Kustomization; here the entry loses only itself.
    WrongKind(Listed),
    /// A value postBuild substitution cannot parse (`${__field.labels.job}`
    /// in a Grafana dashboard: a name stops at the `.`, so envsubst finds no
    /// closing brace). Not a kustomize entry, but the same end:
    /// kustomize-controller returns envsubst's error ("variable substitution
    /// failed", fluxcd/pkg kustomize/kustomize_varsub.go), strict or not,
    /// and applies nothing of the Flux Kustomization.
    Substitution,
}

/// Which list of a kustomization holds a directory of the other kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Listed {
    /// A `kind: Component` directory under `resources:`.
    ComponentAsResource,
    /// A kustomization (any other kind) under `components:`.
    KustomizationAsComponent,
}

fn location(line: u32, col: u32) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}:{col}")
    }
}

/// Characters of user text that a message quotes: a name, a path or a
/// value written in the repository may be megabytes long, and a message
/// that echoes it whole is as long (and repeated per finding or entry).
const QUOTED_CHARS: usize = 120;

/// `text` quoted (`{:?}`, so line breaks and quotes are escaped), cut to
/// [`QUOTED_CHARS`] characters with its length in bytes said when longer:
/// every message that quotes text from the repository goes through it.
pub fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &text[..cut], text.len()),
    }
}

impl Issue {
    /// An issue about the whole file at `path`.
    pub fn file(path: &Path, message: impl Into<String>) -> Issue {
        Issue::located(path.display().to_string(), 0, 0, message)
    }

    /// An issue at `span`, in the file of `sources` it points into (no
    /// path when `sources` does not hold that file).
    pub fn at(sources: &SourceMap, span: Span, message: impl Into<String>) -> Issue {
        let path = if (span.file.0 as usize) < sources.len() {
            sources.path(span.file).display().to_string()
        } else {
            String::new()
        };
        Issue::located(path, span.line, span.col, message)
    }

    /// An issue at a 1-based line and column of `path` (0 and 0: the
    /// whole file), or of what `path` names (a rule, say). A URL's
    /// credentials that either quotes (a remote entry written as
    /// `https://user:token@host/…`) are hidden: every issue is made here.
    pub fn located(
        path: impl Into<String>,
        line: u32,
        col: u32,
        message: impl Into<String>,
    ) -> Issue {
        Issue {
            path: hide_credentials(path.into()),
            line,
            col,
            message: hide_credentials(message.into()),
            gap: None,
            budget: None,
        }
    }

    /// A YAML error in the file at `path`, at the error's position.
    pub fn yaml(path: &Path, error: YamlError) -> Issue {
        Issue::located(
            path.display().to_string(),
            error.line,
            error.col,
            error.message,
        )
    }

    /// The same issue, with `context` after its message (what build it
    /// was met in).
    pub fn noting(self, context: impl std::fmt::Display) -> Issue {
        Issue {
            message: format!("{} {context}", self.message),
            ..self
        }
    }

    /// The same issue, its path as `shown` shows it.
    pub fn shown_as(self, shown: impl FnOnce(&str) -> String) -> Issue {
        Issue {
            path: shown(&self.path),
            ..self
        }
    }

    /// The same issue, marked as where `budget` stopped the work.
    pub fn stopped_by(self, budget: Budget) -> Issue {
        Issue {
            budget: Some(budget),
            ..self
        }
    }

    /// The same issue, marked as a gap a build can go on without.
    pub fn gap(self, gap: Gap) -> Issue {
        Issue {
            gap: Some(gap),
            ..self
        }
    }
}

/// `text` without the credentials of the URLs in it, not copied when it
/// has none.
fn hide_credentials(text: String) -> String {
    match crate::yaml::without_credentials(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(hidden) => hidden,
    }
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn quoted_text_is_cut_to_a_readable_length() {
        assert_eq!(quoted("a\"b\n"), r#""a\"b\n""#);
        let long = "é".repeat(100_000);
        let shown = quoted(&long);
        assert_eq!(shown, format!("{:?}… (200000 bytes)", "é".repeat(120)));
    }
}
