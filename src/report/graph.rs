//! The chain a finding rests on (app → database (setting) → storage
//! class), drawn as a graph: Mermaid for Markdown (GitHub renders a
//! `mermaid` block in a pull request comment or a step summary) and
//! Graphviz DOT for `inventory --graph`. Every label is text from the
//! repository, written in each language's own escapes so that it can
//! neither end the label nor carry markup.

use std::fmt::Write;

use super::control::{Breaks, escape};
use crate::rules::Link;

/// Objects and the facts shown with each, linked in the order rules
/// bound them.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Graph {
    nodes: Vec<Node>,
    edges: Vec<(usize, usize)>,
}

#[derive(Debug, PartialEq, Eq)]
struct Node {
    /// The object (`Kind/namespace/name`), or the binding's name for a
    /// chain that starts with no object.
    title: String,
    /// One line per binding that describes the object: `binding: k=v, …`.
    lines: Vec<String>,
}

/// The languages a graph is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Mermaid,
    Dot,
}

impl Graph {
    /// Adds one finding's chain: a binding with an object is a node (one
    /// per object, however many findings name it), a binding without one
    /// (a setting) is a line of the node before it.
    pub fn add_chain(&mut self, chain: &[Link]) {
        let mut previous: Option<usize> = None;
        for link in chain {
            // A binding that neither names an object nor states a fact
            // (a note attached to its database) draws nothing.
            if link.object.is_none() && link.facts.is_empty() {
                continue;
            }
            let facts: Vec<String> = link
                .facts
                .iter()
                .filter(|(k, _)| k != "object")
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            let line = if facts.is_empty() {
                link.binding.clone()
            } else {
                format!("{}: {}", link.binding, facts.join(", "))
            };
            let at = match (&link.object, previous) {
                (None, Some(at)) => at,
                (object, _) => {
                    let title = object.clone().unwrap_or_else(|| link.binding.clone());
                    let at = self.node(title);
                    if let Some(from) = previous.filter(|from| *from != at)
                        && !self.edges.contains(&(from, at))
                    {
                        self.edges.push((from, at));
                    }
                    at
                }
            };
            let lines = &mut self.nodes[at].lines;
            if !lines.contains(&line) {
                lines.push(line);
            }
            previous = Some(at);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    fn node(&mut self, title: String) -> usize {
        match self.nodes.iter().position(|n| n.title == title) {
            Some(at) => at,
            None => {
                self.nodes.push(Node {
                    title,
                    lines: Vec::new(),
                });
                self.nodes.len() - 1
            }
        }
    }

    pub fn write(&self, language: Language) -> String {
        match language {
            Language::Mermaid => self.mermaid(),
            Language::Dot => self.dot(),
        }
    }

    /// A Mermaid flowchart, left to right.
    pub fn mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        for (i, n) in self.nodes.iter().enumerate() {
            let label: Vec<String> = std::iter::once(format!("<b>{}</b>", mermaid_text(&n.title)))
                .chain(n.lines.iter().map(|l| mermaid_text(l)))
                .collect();
            let _ = writeln!(out, "  n{i}[\"{}\"]", label.join("<br/>"));
        }
        for (from, to) in &self.edges {
            let _ = writeln!(out, "  n{from} --> n{to}");
        }
        out
    }

    /// A Graphviz digraph, left to right, one box per object.
    pub fn dot(&self) -> String {
        let mut out = String::from("digraph homelab {\n  rankdir=LR;\n  node [shape=box];\n");
        for (i, n) in self.nodes.iter().enumerate() {
            let label: Vec<String> = std::iter::once(&n.title)
                .chain(&n.lines)
                .map(|l| dot_text(l))
                .collect();
            let _ = writeln!(out, "  n{i} [label=\"{}\\l\"];", label.join("\\l"));
        }
        for (from, to) in &self.edges {
            let _ = writeln!(out, "  n{from} -> n{to};");
        }
        out.push_str("}\n");
        out
    }
}

/// Text inside a quoted Mermaid label: hidden characters made visible,
/// and every character but letters, digits and plain punctuation written
/// as a Mermaid entity code (`#60;`), so that no quote ends the label and
/// no `<` starts markup in GitHub's renderer.
fn mermaid_text(s: &str) -> String {
    escape(s, Breaks::Escape)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || " .,:/=()+-_".contains(c) {
                c.to_string()
            } else {
                format!("#{};", c as u32)
            }
        })
        .collect()
}

/// Text inside a quoted DOT string: hidden characters made visible, then
/// the backslash and quote escaped (DOT's only escapes in a quoted
/// string; `\l` and `\n` are ours).
fn dot_text(s: &str) -> String {
    escape(s, Breaks::Escape)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(binding: &str, object: Option<&str>, facts: &[(&str, &str)]) -> Link {
        Link {
            binding: binding.into(),
            object: object.map(Into::into),
            facts: facts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    fn chain() -> Vec<Link> {
        vec![
            link(
                "app",
                Some("HelmRelease/security/authentik"),
                &[
                    ("object", "HelmRelease/security/authentik"),
                    ("version", "2025.10.1"),
                ],
            ),
            link(
                "database",
                Some("postgresql/security/pg"),
                &[("instances", "1")],
            ),
            link(
                "setting",
                None,
                &[("name", "synchronous_commit"), ("value", "on")],
            ),
            link(
                "storage",
                Some("StorageClass/ceph-block"),
                &[("replicas", "3")],
            ),
        ]
    }

    /// A setting is a line of its database's node; each object one node,
    /// linked in binding order, and a second finding over the same
    /// objects adds nothing.
    #[test]
    fn a_chain_is_one_node_per_object_with_its_settings() {
        let mut g = Graph::default();
        g.add_chain(&chain());
        g.add_chain(&chain());
        assert_eq!(
            g.mermaid(),
            "flowchart LR\n\
             \x20 n0[\"<b>HelmRelease/security/authentik</b><br/>app: version=2025.10.1\"]\n\
             \x20 n1[\"<b>postgresql/security/pg</b><br/>database: instances=1<br/>setting: name=synchronous_commit, value=on\"]\n\
             \x20 n2[\"<b>StorageClass/ceph-block</b><br/>storage: replicas=3\"]\n\
             \x20 n0 --> n1\n\
             \x20 n1 --> n2\n"
        );
    }

    /// Text that would end a label, open markup or hide characters is
    /// written as entity codes (Mermaid) or escapes (DOT).
    #[test]
    fn labels_cannot_end_early_or_carry_markup() {
        let mut g = Graph::default();
        g.add_chain(&[link(
            "app",
            Some("HelmRelease/x/a\"]<img src=x>\u{1b}[2J"),
            &[],
        )]);
        let m = g.mermaid();
        assert!(m.contains("a#34;#93;#60;img src=x#62;#92;x1b#91;2J"), "{m}");
        assert!(!m.contains("<img"), "{m}");
        let d = g.dot();
        assert!(d.contains(r#"a\"]<img src=x>\\x1b[2J"#), "{d}");
    }
}
