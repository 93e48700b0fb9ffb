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
    edges: Vec<Edge>,
    /// Draw each namespace's objects in a subgraph of their own (a whole
    /// repository's graph; one finding's chain reads better without).
    by_namespace: bool,
}

#[derive(Debug, PartialEq, Eq)]
struct Node {
    /// The object (`Kind/namespace/name`), or the binding's name for a
    /// chain that starts with no object.
    title: String,
    /// The namespace the object is drawn in, when it has one.
    group: Option<String>,
    /// One line per binding that describes the object: `binding: k=v, …`.
    lines: Vec<String>,
}

#[derive(Debug, PartialEq, Eq)]
struct Edge {
    from: usize,
    to: usize,
    /// The rules whose findings rest on this edge: drawn thick and
    /// labelled with them.
    rules: Vec<String>,
}

/// The languages a graph is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    Mermaid,
    Dot,
}

impl Graph {
    /// A graph whose objects are grouped by namespace.
    pub fn by_namespace() -> Graph {
        Graph {
            by_namespace: true,
            ..Graph::default()
        }
    }

    /// Adds one chain: a binding with an object is a node (one per
    /// object, however many chains name it), a binding without one (a
    /// setting) is a line of the node before it.
    pub fn add_chain(&mut self, chain: &[Link]) {
        self.add(chain, None);
    }

    /// Adds the chain of a finding of `rule`: its edges are marked with
    /// the rule.
    pub fn add_finding(&mut self, chain: &[Link], rule: &str) {
        self.add(chain, Some(rule));
    }

    fn add(&mut self, chain: &[Link], rule: Option<&str>) {
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
                    let group = link.group.as_deref().filter(|_| self.by_namespace);
                    let at = self.node(title, group);
                    if let Some(from) = previous.filter(|from| *from != at) {
                        self.edge(from, at, rule);
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

    fn node(&mut self, title: String, group: Option<&str>) -> usize {
        match self.nodes.iter().position(|n| n.title == title) {
            Some(at) => {
                let node = &mut self.nodes[at];
                if node.group.is_none() {
                    node.group = group.map(str::to_string);
                }
                at
            }
            None => {
                self.nodes.push(Node {
                    title,
                    group: group.map(str::to_string),
                    lines: Vec::new(),
                });
                self.nodes.len() - 1
            }
        }
    }

    fn edge(&mut self, from: usize, to: usize, rule: Option<&str>) {
        let at = match self.edges.iter().position(|e| (e.from, e.to) == (from, to)) {
            Some(at) => at,
            None => {
                self.edges.push(Edge {
                    from,
                    to,
                    rules: Vec::new(),
                });
                self.edges.len() - 1
            }
        };
        let rules = &mut self.edges[at].rules;
        if let Some(rule) = rule.filter(|r| !rules.iter().any(|known| known == r)) {
            rules.push(rule.to_string());
        }
    }

    /// The nodes of each namespace, namespaces in name order, then the
    /// nodes of none.
    fn grouped(&self) -> (Vec<(&str, Vec<usize>)>, Vec<usize>) {
        let mut groups: std::collections::BTreeMap<&str, Vec<usize>> = Default::default();
        let mut loose = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            match &n.group {
                Some(g) => groups.entry(g).or_default().push(i),
                None => loose.push(i),
            }
        }
        (groups.into_iter().collect(), loose)
    }

    pub fn write(&self, language: Language) -> String {
        match language {
            Language::Mermaid => self.mermaid(),
            Language::Dot => self.dot(),
        }
    }

    /// Each namespace's nodes between the lines `group` opens and closes
    /// it with, the other nodes, then the edges: a language's words for
    /// each come from `group`, `node` and `edge`.
    fn layout(
        &self,
        out: &mut String,
        group: impl Fn(usize, &str) -> (String, &'static str),
        node: impl Fn(usize, &Node) -> String,
        edge: impl Fn(&Edge) -> String,
    ) {
        let (groups, loose) = self.grouped();
        for (g, (name, members)) in groups.iter().enumerate() {
            let (open, close) = group(g, name);
            out.push_str(&open);
            for &i in members {
                let _ = writeln!(out, "    {}", node(i, &self.nodes[i]));
            }
            out.push_str(close);
        }
        for i in loose {
            let _ = writeln!(out, "  {}", node(i, &self.nodes[i]));
        }
        for e in &self.edges {
            let _ = writeln!(out, "  {}", edge(e));
        }
    }

    /// A Mermaid flowchart, left to right, a subgraph per namespace.
    pub fn mermaid(&self) -> String {
        let mut out = String::from("flowchart LR\n");
        self.layout(
            &mut out,
            |g, name| {
                (
                    format!("  subgraph g{g}[\"{}\"]\n", mermaid_text(name)),
                    "  end\n",
                )
            },
            |i, n| {
                let label: Vec<String> =
                    std::iter::once(format!("<b>{}</b>", mermaid_text(&n.title)))
                        .chain(n.lines.iter().map(|l| mermaid_text(l)))
                        .collect();
                format!("n{i}[\"{}\"]", label.join("<br/>"))
            },
            |e| match e.rules.is_empty() {
                true => format!("n{} --> n{}", e.from, e.to),
                false => format!(
                    "n{} ==>|\"{}\"| n{}",
                    e.from,
                    mermaid_text(&e.rules.join(", ")),
                    e.to
                ),
            },
        );
        out
    }

    /// A Graphviz digraph, left to right, one box per object, a cluster
    /// per namespace.
    pub fn dot(&self) -> String {
        let mut out = String::from("digraph homelab {\n  rankdir=LR;\n  node [shape=box];\n");
        self.layout(
            &mut out,
            |g, name| {
                let open = format!(
                    "  subgraph cluster_{g} {{\n    label=\"{}\";\n",
                    dot_text(name)
                );
                (open, "  }\n")
            },
            |i, n| {
                let label: Vec<String> = std::iter::once(&n.title)
                    .chain(&n.lines)
                    .map(|l| dot_text(l))
                    .collect();
                format!("n{i} [label=\"{}\\l\"];", label.join("\\l"))
            },
            |e| match e.rules.is_empty() {
                true => format!("n{} -> n{};", e.from, e.to),
                false => format!(
                    "n{} -> n{} [color=red, penwidth=2, label=\"{}\"];",
                    e.from,
                    e.to,
                    dot_text(&e.rules.join(", "))
                ),
            },
        );
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
            group: None,
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

    /// A repository's graph puts each namespace's objects in a subgraph
    /// and marks the edges a finding rests on with its rule; objects of
    /// no namespace (a storage class) stay outside.
    #[test]
    fn namespaces_are_subgraphs_and_findings_mark_their_edges() {
        let mut g = Graph::by_namespace();
        let mut grouped = chain();
        grouped[0].group = Some("security".into());
        grouped[1].group = Some("security".into());
        g.add_chain(&grouped);
        let mut plex = link("app", Some("HelmRelease/media/plex"), &[]);
        plex.group = Some("media".into());
        g.add_chain(&[plex]);
        g.add_finding(&chain(), "some-rule");
        assert_eq!(
            g.mermaid(),
            "flowchart LR\n\
             \x20 subgraph g0[\"media\"]\n\
             \x20   n3[\"<b>HelmRelease/media/plex</b><br/>app\"]\n\
             \x20 end\n\
             \x20 subgraph g1[\"security\"]\n\
             \x20   n0[\"<b>HelmRelease/security/authentik</b><br/>app: version=2025.10.1\"]\n\
             \x20   n1[\"<b>postgresql/security/pg</b><br/>database: instances=1<br/>setting: name=synchronous_commit, value=on\"]\n\
             \x20 end\n\
             \x20 n2[\"<b>StorageClass/ceph-block</b><br/>storage: replicas=3\"]\n\
             \x20 n0 ==>|\"some-rule\"| n1\n\
             \x20 n1 ==>|\"some-rule\"| n2\n"
        );
        let d = g.dot();
        assert!(
            d.contains("  subgraph cluster_1 {\n    label=\"security\";\n    n0 [label="),
            "{d}"
        );
        assert!(
            d.contains("n0 -> n1 [color=red, penwidth=2, label=\"some-rule\"];"),
            "{d}"
        );
        // Without grouping (one finding's diagram), no subgraph.
        let mut plain = Graph::default();
        plain.add_chain(&grouped);
        assert!(!plain.mermaid().contains("subgraph"));
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
