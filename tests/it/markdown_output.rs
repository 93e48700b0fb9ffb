//! `-o markdown` and `inventory --graph`: the summary of the example and
//! of three corpus folders (snapshots), every Mermaid diagram they hold
//! rendered to SVG by the real Mermaid CLI (headless Chromium), and every
//! `--graph dot` by Graphviz; each repository's graph draws every app and
//! database of it. `scripts/install-mermaid-cli` puts the
//! Mermaid CLI into `target/tools/mermaid`; Chromium and Graphviz are
//! Debian's `chromium` and `graphviz`.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use homelab_lint::pipeline::Input;

/// The corpus folders snapshotted, each with the name of its snapshot
/// (what it shows): a chain drawn (buroa: CloudNativePG on ceph-block), a
/// finding without one (gandazgul), several findings and an input
/// problem (bjw-s).
const CORPUS: [(&str, &str); 3] = [
    ("buroa__k8s-gitops", "markdown_corpus_chain"),
    ("gandazgul__k8s-infrastructure", "markdown_corpus_no_chain"),
    ("bjw-s-labs__home-ops", "markdown_corpus_several"),
];

fn run(args: &[&str]) -> String {
    let out = common::lint(Path::new(env!("CARGO_MANIFEST_DIR")), args);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn markdown(path: &str) -> String {
    run(&[path, "--no-probe", "-o", "markdown"])
}

fn example_markdown() -> String {
    run(&["--example", "--no-probe", "-o", "markdown"])
}

/// The corpus folders, or `None` (skipped loudly) without the corpus.
fn corpus_dirs() -> Option<Vec<PathBuf>> {
    let corpus = common::corpus()?;
    Some(CORPUS.iter().map(|(name, _)| corpus.join(name)).collect())
}

/// The body of every ```mermaid block of a Markdown text.
fn mermaid_blocks(text: &str) -> Vec<String> {
    text.split("```mermaid\n")
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap().to_string())
        .collect()
}

/// `mmdc` and the Chromium it drives, or `None` (skipped loudly).
fn mermaid_cli() -> Option<(PathBuf, PathBuf)> {
    let mmdc = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/tools/mermaid/node_modules/@mermaid-js/mermaid-cli/src/cli.js");
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    match (mmdc.is_file(), chromium) {
        (true, Some(chromium)) => Some((mmdc, chromium)),
        _ => {
            common::skip_or_fail(
                "the Mermaid CLI (scripts/install-mermaid-cli) or Chromium (Debian: chromium) \
                 is missing",
            );
            None
        }
    }
}

/// Renders each diagram to SVG with the Mermaid CLI, one process for all
/// (it renders every block of a Markdown input); panics with its output
/// when one does not render.
fn render_with_mermaid(diagrams: &[String]) {
    let Some((mmdc, chromium)) = mermaid_cli() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Chromium refuses to start its sandbox as root (CI containers).
    let config = dir.path().join("puppeteer.json");
    std::fs::write(&config, r#"{"args": ["--no-sandbox"]}"#).unwrap();
    let input = dir.path().join("diagrams.md");
    let body: String = diagrams
        .iter()
        .map(|d| format!("```mermaid\n{d}```\n\n"))
        .collect();
    std::fs::write(&input, body).unwrap();
    let output = dir.path().join("rendered.md");
    let out = Command::new("node")
        .arg(&mmdc)
        .args(["--puppeteerConfigFile"])
        .arg(&config)
        .arg("--input")
        .arg(&input)
        .arg("--output")
        .arg(&output)
        .env("PUPPETEER_EXECUTABLE_PATH", &chromium)
        .env("PUPPETEER_SKIP_DOWNLOAD", "1")
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "mmdc failed: {said}");
    for i in 1..=diagrams.len() {
        let svg = dir.path().join(format!("rendered-{i}.svg"));
        let text = std::fs::read_to_string(&svg)
            .unwrap_or_else(|e| panic!("{}: {e}\n{said}", svg.display()));
        assert!(text.contains("<svg"), "{}", diagrams[i - 1]);
        // A syntax error renders as Mermaid's error picture, not a failure.
        assert!(
            !text.contains("Syntax error"),
            "diagram {i} did not parse:\n{}",
            diagrams[i - 1]
        );
    }
}

/// The summaries of the example and the corpus folders (snapshots),
/// every Mermaid diagram they hold and `inventory --graph mermaid` of each
/// rendered by the Mermaid CLI, and `inventory --graph dot` of each by
/// Graphviz. One test, so that each repository is linted once per output.
#[test]
fn summaries_and_graphs_render() {
    let example = example_markdown();
    insta::assert_snapshot!("markdown_example", example);
    let mut diagrams = mermaid_blocks(&example);
    let example_input = Input {
        example: true,
        ..Input::default()
    };
    let (mermaid, dot) = repository_graphs(&["--example"], &example_input);
    // The example's finding marks the edges of its chain with its rule.
    let rule = "authentik-cache-on-sync-replicated-postgres";
    assert!(mermaid.contains(&format!("==>|\"{rule}\"|")), "{mermaid}");
    assert!(
        dot.contains(&format!("color=red, penwidth=2, label=\"{rule}\"")),
        "{dot}"
    );
    diagrams.push(mermaid);
    let mut dots = vec![dot];
    for ((_, snapshot), dir) in CORPUS.iter().zip(corpus_dirs().unwrap_or_default()) {
        let input = Input {
            paths: vec![dir.clone()],
            ..Input::default()
        };
        let dir = dir.to_str().unwrap();
        let text = markdown(dir);
        insta::assert_snapshot!(*snapshot, text);
        diagrams.extend(mermaid_blocks(&text));
        let (mermaid, dot) = repository_graphs(&[dir], &input);
        diagrams.push(mermaid);
        dots.push(dot);
    }
    assert!(diagrams.len() >= 3, "{diagrams:#?}");
    render_with_mermaid(&diagrams);
    render_with_dot(&dots);
}

/// `inventory --graph mermaid` and `--graph dot` of a repository, after
/// checking that each draws every app and every database of it, in a
/// subgraph of its namespace: the apps are the HelmReleases and workloads
/// `inventory -o json` lists, the databases those of the typed model.
fn repository_graphs(repo: &[&str], input: &Input) -> (String, String) {
    let graph = |language: &str| run(&[&["inventory"], repo, &["--graph", language]].concat());
    let (mermaid, dot) = (graph("mermaid"), graph("dot"));
    let listing: serde_json::Value =
        serde_json::from_str(&run(&[&["inventory"], repo, &["-o", "json"]].concat())).unwrap();
    let mut drawn: Vec<(String, Option<String>)> = listing["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| {
            let kind = o["kind"].as_str().unwrap();
            let group = o["apiVersion"]
                .as_str()
                .unwrap()
                .rsplit_once('/')
                .map(|(g, _)| g);
            let containers = ["spec", "template", "spec", "containers"]
                .iter()
                .try_fold(&o["object"], |v, k| v.get(k))
                .or_else(|| o["object"]["spec"].get("containers"))
                .or_else(|| o["object"].pointer("/spec/jobTemplate/spec/template/spec/containers"));
            match (group, kind) {
                (Some("helm.toolkit.fluxcd.io"), "HelmRelease") => true,
                (Some("apps" | "batch") | None, _) => containers.is_some(),
                _ => false,
            }
        })
        .map(|o| {
            let id = format!(
                "{}/{}/{}",
                o["kind"].as_str().unwrap(),
                o["namespace"].as_str().unwrap(),
                o["name"].as_str().unwrap()
            );
            (id, o["namespace"].as_str().map(str::to_string))
        })
        .collect();
    let loaded = homelab_lint::pipeline::load(input).unwrap();
    let model = homelab_lint::model::Model::new(&loaded.repo);
    let databases = homelab_lint::model::database::all(&model);
    for db in &databases {
        let o = model.object(db.object);
        drawn.push((o.id(), o.namespace().map(str::to_string)));
    }
    assert!(!drawn.is_empty(), "{repo:?} has no app");
    for (id, namespace) in &drawn {
        assert!(
            mermaid.contains(&format!("<b>{id}</b>")),
            "{id} is not drawn:\n{mermaid}"
        );
        assert!(
            dot.contains(&format!("[label=\"{id}\\l")),
            "{id} is not drawn:\n{dot}"
        );
        let namespace = namespace.as_deref().unwrap();
        assert!(
            mermaid.contains(&format!("[\"{namespace}\"]")),
            "{namespace}"
        );
        assert!(
            dot.contains(&format!("label=\"{namespace}\";")),
            "{namespace}"
        );
    }
    (mermaid, dot)
}

/// Renders each graph to SVG with Graphviz `dot`: no error, no warning,
/// and a box per object.
fn render_with_dot(graphs: &[String]) {
    if !common::runs(
        "dot",
        &["-V"],
        "Graphviz dot (Debian: graphviz) is not on PATH",
    ) {
        return;
    }
    for graph in graphs {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("graph.dot");
        std::fs::write(&input, graph).unwrap();
        let out = Command::new("dot")
            .arg("-Tsvg")
            .arg(&input)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stderr.is_empty(),
            "{}\n{graph}",
            String::from_utf8_lossy(&out.stderr)
        );
        let svg = String::from_utf8(out.stdout).unwrap();
        let boxes = graph.matches("[label=").count();
        assert_eq!(svg.matches("class=\"node\"").count(), boxes, "{graph}");
    }
}

/// `--graph` draws the whole repository: the object filters and
/// provenance of the inventory listing do not apply, and are refused.
#[test]
fn graph_refuses_the_listing_options() {
    for option in [
        &["--kind", "Secret"][..],
        &["--name", "x"],
        &["--provenance"],
    ] {
        let args = [&["inventory", "--example", "--graph", "dot"][..], option].concat();
        let out = common::lint(Path::new(env!("CARGO_MANIFEST_DIR")), &args);
        assert_eq!(out.status.code(), Some(2), "{option:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
            "{option:?}"
        );
    }
}
