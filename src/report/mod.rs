//! Rendering results for people and machines: one renderer per format.

pub mod concise;
pub mod control;
pub mod github;
pub mod graph;
pub mod human;
pub mod inventory;
pub mod json;
pub mod markdown;
pub mod metrics;
pub mod probe;
pub mod pushgateway;
pub mod sarif;
pub mod statistics;

/// The formats a lint report is rendered in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Format {
    /// Source snippets with labels, for people.
    #[default]
    Human,
    /// One JSON document (see docs/output.md).
    Json,
    /// The JSON document as YAML.
    Yaml,
    /// One line per finding: `path:line:col: severity rule: message`.
    Concise,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions workflow commands: annotations on the changed files.
    Github,
    /// A Markdown summary for a pull request comment or
    /// `$GITHUB_STEP_SUMMARY`, each finding's chain drawn in Mermaid.
    Markdown,
    /// The chains of every finding as one graph (`inventory --graph`).
    Graph(graph::Language),
}
