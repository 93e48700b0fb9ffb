//! `inventory`: the rendered objects with the origin of every value, the
//! debugging view users know from `flux build`.

use serde::Serialize;
use serde::ser::SerializeSeq;
use serde_json::{Map, Value as J, json};

use std::collections::HashMap;

use crate::source::Object;
use crate::source::helm;
use crate::source::repo::Repo;
use crate::yaml::{Node, Origin, SourceMap, Span, Value, path_to_string};

/// What to include per object.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// Add a map from every scalar's path to where it was written.
    pub provenance: bool,
    /// Only objects of this kind (`inventory --kind`).
    pub kind: Option<&'a str>,
    /// Only objects with this name (`inventory --name`).
    pub name: Option<&'a str>,
}

impl Options<'_> {
    fn wants(&self, o: &Object) -> bool {
        self.kind.is_none_or(|k| o.kind() == k) && self.name.is_none_or(|n| o.name() == n)
    }

    fn filtered(&self) -> bool {
        self.kind.is_some() || self.name.is_some()
    }
}

/// The inventory of `repo`, to serialize. With a kind or name filter,
/// only the objects that pass it, and the fates of only the files they
/// came from: the objects asked for are not printed after every file of
/// the repository. Each object's JSON is made as it is written and
/// dropped after: a tree of every object's JSON held at once took 73
/// bytes of memory per input byte, four times the lint (100,000 small
/// ConfigMaps: 693 MB against 162 MB).
pub fn document<'r>(repo: &'r Repo, opts: Options<'r>) -> impl Serialize + 'r {
    let src = &repo.files.sources;
    let files: std::collections::HashSet<&std::path::Path> = repo
        .objects
        .iter()
        .filter(|o| opts.wants(o))
        .map(|o| src.path(o.file))
        .collect();
    let issues: Vec<J> = repo.issues.iter().map(issue_json).collect();
    // Fields in the order serde_json's sorted maps gave them.
    #[derive(Serialize)]
    struct Document<'r> {
        coverage: J,
        fates: Vec<J>,
        files: usize,
        issues: Vec<J>,
        objects: Objects<'r>,
        root: String,
        skipped: Vec<J>,
    }
    Document {
        coverage: coverage_json(repo, &|_| true),
        fates: repo
            .fates
            .iter()
            .filter(|f| !opts.filtered() || files.contains(f.path.as_path()))
            .map(|f| {
                json!({
                    "path": f.path.display().to_string(),
                    "fate": f.fate.key(),
                    "reason": f.fate.reason(),
                })
            })
            .collect(),
        files: repo.files.sources.len(),
        issues,
        objects: Objects { repo, opts },
        root: repo.files.root().display().to_string(),
        skipped: repo
            .skipped
            .iter()
            .filter(|_| !opts.filtered())
            .map(|s| {
                json!({
                    "path": s.path.display().to_string(),
                    "reason": s.reason,
                })
            })
            .collect(),
    }
}

fn issue_json(i: &crate::source::Issue) -> J {
    json!({
        "path": i.path,
        "line": i.line,
        "column": i.col,
        "message": i.message,
    })
}

/// The objects of the inventory, each made when it is serialized.
struct Objects<'r> {
    repo: &'r Repo,
    opts: Options<'r>,
}

impl Serialize for Objects<'_> {
    fn serialize<S: serde::Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let (repo, opts) = (self.repo, self.opts);
        let src = &repo.files.sources;
        // Objects by kind and name: a scan of every object per
        // `valuesFrom` entry was releases x entries x objects.
        let mut by_name: HashMap<(&str, &str), Vec<&Object>> = HashMap::new();
        for o in &repo.objects {
            by_name.entry((o.kind(), o.name())).or_default().push(o);
        }
        let lookup = |kind: &str, ns: &str, name: &str| {
            by_name
                .get(&(kind, name))?
                .iter()
                .copied()
                .find(|o| o.namespace().unwrap_or(ns) == ns)
        };
        // One values budget and parse per key for every release, as the
        // lint's model has.
        let shared = helm::Shared::new(repo.files.budget_left().bytes);
        let mut seq = ser.serialize_seq(None)?;
        for o in repo.objects.iter().filter(|o| opts.wants(o)) {
            seq.serialize_element(&object_json(o, src, opts, &lookup, &shared))?;
        }
        seq.end()
    }
}

/// One object's entry: its identity, the steps that made it, its JSON
/// (a Secret's values redacted), and a HelmRelease's resolved values.
fn object_json<'a>(
    o: &Object,
    src: &SourceMap,
    opts: Options,
    lookup: &dyn Fn(&str, &str, &str) -> Option<&'a Object>,
    shared: &helm::Shared,
) -> J {
    let mut entry = Map::new();
    entry.insert("apiVersion".into(), json!(o.api_version()));
    entry.insert("kind".into(), json!(o.kind()));
    entry.insert("namespace".into(), json!(o.namespace()));
    entry.insert("name".into(), json!(o.name()));
    entry.insert("file".into(), json!(src.path(o.file).display().to_string()));
    entry.insert("document".into(), json!(o.doc_index));
    entry.insert(
        "chain".into(),
        J::Array(
            o.chain
                .iter()
                .map(|s| {
                    json!({
                        "kind": s.kind.as_str(),
                        "detail": &*s.detail,
                        "at": s.at.map(|sp| src.location(sp)),
                    })
                })
                .collect(),
        ),
    );
    let object = if o.kind() == "Secret" && o.api_version() == "v1" {
        let mut object = o.root.to_json();
        redact_secret(&mut object);
        object
    } else {
        src.shown_json(&o.root)
    };
    entry.insert("object".into(), object);
    if opts.provenance {
        entry.insert("provenance".into(), provenance(&o.root, src));
    }
    if o.group() == "helm.toolkit.fluxcd.io" && o.kind() == "HelmRelease" {
        let release = helm::resolve_sharing(src, o, lookup, shared);
        entry.insert("helm".into(), helm_json(&release, src, opts));
    }
    J::Object(entry)
}

/// A Secret's values replaced by how long they are, its keys kept: the
/// inventory is for debugging where values come from, and no secret is
/// ever printed (snippets mask the same keys, `yaml::mask`). Where each
/// value was written is still in the provenance.
fn redact_secret(object: &mut J) {
    for key in ["data", "stringData"] {
        match object.get_mut(key) {
            Some(J::Object(entries)) => {
                for value in entries.values_mut() {
                    *value = redacted(value);
                }
            }
            Some(value) => *value = redacted(value),
            None => {}
        }
    }
}

fn redacted(value: &J) -> J {
    match value {
        J::String(text) => json!(crate::yaml::redacted(text)),
        _ => json!("<redacted>"),
    }
}

/// Coverage figures and the Flux Kustomizations that did not render
/// completely, with why: the same in `inventory`, `lint --format json`
/// and SARIF.
/// The coverage of the files `shown` holds for ([`Repo::coverage_of`]).
pub fn coverage_json(repo: &Repo, shown: &dyn Fn(&std::path::Path) -> bool) -> J {
    let (c, incomplete) = repo.coverage_of(shown);
    let src = &repo.files.sources;
    json!({
        "manifestFilesRendered": c.rendered,
        "manifestFilesNotRendered": c.lost,
        "filesByFate": c.by_fate,
        "fluxKustomizations": c.kustomizations,
        "fluxKustomizationsIncomplete": incomplete.iter().map(|r| json!({
            "kustomization": format!("{}/{}", r.namespace, r.name),
            "file": src.path(r.file).display().to_string(),
            "outcome": r.outcome.key(),
            "why": r.outcome.why(),
        })).collect::<Vec<_>>(),
        "summary": c.summary(),
    })
}

fn helm_json(release: &helm::Release, src: &SourceMap, opts: Options) -> J {
    let spanned = |n: &Option<Node>| {
        n.as_ref().map(|n| {
            json!({
                "value": n.scalar_text().map(|text| src.shown_value(n, text)),
                "at": src.location(n.span()),
            })
        })
    };
    let mut out = Map::new();
    out.insert("chart".into(), spanned(&release.chart).into());
    out.insert("version".into(), spanned(&release.version).into());
    out.insert("values".into(), src.shown_json(&release.values));
    if opts.provenance {
        out.insert("valuesProvenance".into(), provenance(&release.values, src));
    }
    // What the values could not take in, said where they are shown.
    if !release.issues.is_empty() {
        out.insert(
            "issues".into(),
            release.issues.iter().map(issue_json).collect(),
        );
    }
    J::Object(out)
}

/// Every scalar's path mapped to where it was written and, for values that
/// came through a Flux variable, where that variable is defined.
fn provenance(root: &Node, src: &SourceMap) -> J {
    let mut out = Map::new();
    root.walk(&mut |path, node| {
        if matches!(node.value, Value::Seq(_) | Value::Map(_)) {
            return;
        }
        let mut entry = Map::new();
        entry.insert("at".into(), json!(src.location(node.span())));
        if let Some(origin) = node.origin() {
            match origin {
                Origin::Substituted {
                    variable,
                    defined_at,
                    unknown,
                    undefined,
                    ..
                } => {
                    if !undefined.is_empty() {
                        entry.insert("undefined".into(), json!(undefined));
                    }
                    entry.insert("variable".into(), json!(variable));
                    entry.insert(
                        "definedAt".into(),
                        json!(defined_at.map(|s: Span| src.location(s))),
                    );
                    if *unknown {
                        entry.insert("unknown".into(), json!(true));
                    }
                }
                Origin::Secret => {}
            }
        }
        out.insert(path_to_string(path), J::Object(entry));
    });
    J::Object(out)
}
