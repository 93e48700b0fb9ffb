//! `patches`, `patchesStrategicMerge` and `patchesJson6902`: loading patch
//! text, choosing targets, and applying strategic-merge or JSON 6902.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::path::Path;

use crate::source::Issue;
use crate::source::files::{Files, Input};
use crate::source::object::{Object, StepKind};
use crate::yaml::{FileId, Node, Size, Span, Value};

use super::budget::{record_step, spend_scan, spend_work};
use super::inline::inline_docs;
use super::kustomization::Kustomization;
use super::{Gvk, Res, ResId, patch_json6902, patch_smp};

/// Applies a `patches:` list (kustomization or Flux Kustomization
/// `spec.patches`) to `objects`; patch files are read relative to
/// `base_dir`. A patch that deletes an object is refused here, since the
/// slice cannot shrink.
/// On an error the objects are left as they were.
pub fn apply_patches(
    objects: &mut [Object],
    patches: &Node,
    files: &mut Files,
    base_dir: &Path,
) -> Result<(), Issue> {
    let placeholder = || Object::new(Node::new(Value::Null, Span::default()), FileId(0), 0);
    let mut res: Vec<Res> = objects
        .iter_mut()
        .map(|o| Res::new(std::mem::replace(o, placeholder())))
        .collect();
    let mut undo = Undo {
        at: Some((0..objects.len()).collect()),
        saved: HashMap::new(),
    };
    let result = apply_entries(files, &mut res, patches, base_dir, false, &mut undo);
    if result.is_ok() && res.len() == objects.len() {
        for (slot, r) in objects.iter_mut().zip(res) {
            *slot = r.obj;
        }
        return Ok(());
    }
    let at = undo.at.unwrap_or_default();
    for (r, orig) in res.into_iter().zip(at) {
        if !undo.saved.contains_key(&orig) {
            objects[orig] = r.obj;
        }
    }
    for (orig, obj) in undo.saved {
        objects[orig] = obj;
    }
    result?;
    Err(Issue::at(
        &files.sources,
        patches.span(),
        "a patch deletes an object; deleting objects is not supported here",
    ))
}

/// What [`apply_patches`] needs to put the objects back after an error:
/// each changed object as it was, copied just before its first change
/// (a copy of every object per Flux Kustomization was a tenth of a
/// joryirving__home-ops run, where each child Kustomization patches its
/// HelmReleases). A kustomization's own patches record nothing: an
/// error fails its build.
#[derive(Default)]
struct Undo {
    /// The original index of the object at each position (a deletion
    /// shifts them); `None` when nothing is recorded.
    at: Option<Vec<usize>>,
    saved: HashMap<usize, Object>,
}

impl Undo {
    fn before_change(&mut self, pos: usize, r: &Res) {
        if let Some(at) = &self.at {
            self.saved.entry(at[pos]).or_insert_with(|| r.obj.clone());
        }
    }

    fn removed(&mut self, pos: usize) {
        if let Some(at) = &mut self.at {
            at.remove(pos);
        }
    }
}

/// The documents of a patch: inline `patch:` text or a `path:` file.
/// `inline_detail` is the step text of the list's inline patches, made
/// by the first of them (the same for all, and a tenth of finding a
/// patch's documents when made for each).
fn patch_docs(
    files: &mut Files,
    entry: &Node,
    dir: &Path,
    restrict: bool,
    kfile: &Path,
    inline_detail: &OnceCell<String>,
) -> Result<(Vec<Node>, String), Issue> {
    if let Some(p) = entry.get("patch").filter(|n| !n.is_null()) {
        let docs = inline_docs(files, p, kfile)?;
        let detail =
            inline_detail.get_or_init(|| format!("inline patch in {}", files.shown(kfile)));
        return Ok((docs, detail.clone()));
    }
    let Some(p) = entry.get("path").filter(|n| !n.is_null()) else {
        return Err(Issue::at(
            &files.sources,
            entry.span(),
            "a patch needs `patch` or `path`",
        ));
    };
    let rel = p.scalar_text().unwrap_or_default();
    let input = super::input::open(files, dir, restrict, kfile, &rel, p.span(), Input::Patch)?;
    let docs = input
        .documents(files)?
        .docs
        .iter()
        .map(|d| Node::clone(d))
        .collect();
    Ok((docs, input.shown(files)))
}

/// A patch target (kustomize's types.Selector). Name and namespace are
/// anchored regular expressions, in Go's dialect (kustomize compiles them
/// with Go's regexp, api/types/selector.go).
struct Selector {
    gvk: Gvk,
    name: Option<Pattern>,
    namespace: Option<Pattern>,
    /// The label and annotation selectors' terms, parsed once for every
    /// object the target is matched against (parsed for each, they were
    /// most of choosing a Flux Kustomization's targets by label).
    labels: Option<Vec<Result<Term, String>>>,
    annotations: Option<Vec<Result<Term, String>>>,
}

/// A target's name or namespace pattern, anchored at both ends.
enum Pattern {
    /// Letters, digits, `-` and `_` only: no character the regular
    /// expression reads as anything but itself, so it matches exactly
    /// that text. Nearly every target names its object this way, and a
    /// regular expression compiled for each was a tenth of the patches'
    /// time on joryirving__home-ops.
    Literal(String),
    Regex(regex::Regex),
}

impl Pattern {
    fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Literal(literal) => literal == text,
            Pattern::Regex(re) => re.is_match(text),
        }
    }
}

fn anchored(n: Option<&Node>) -> Result<Option<Pattern>, String> {
    match n.and_then(Node::scalar_text).filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s)
            if s.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            Ok(Some(Pattern::Literal(s)))
        }
        Some(s) => crate::source::go_regexp::compile(&format!("^(?:{s})$"))
            .map(|re| Some(Pattern::Regex(re)))
            .map_err(|e| format!("bad target pattern '{s}': {e}")),
    }
}

impl Selector {
    fn parse(n: &Node) -> Result<Selector, String> {
        let text = |k: &str| n.get(k).and_then(Node::scalar_text).unwrap_or_default();
        Ok(Selector {
            gvk: Gvk {
                group: text("group").into(),
                version: text("version").into(),
                kind: text("kind").into(),
            },
            name: anchored(n.get("name"))?,
            namespace: anchored(n.get("namespace"))?,
            labels: Some(text("labelSelector"))
                .filter(|s| !s.is_empty())
                .map(|s| terms(&s)),
            annotations: Some(text("annotationSelector"))
                .filter(|s| !s.is_empty())
                .map(|s| terms(&s)),
        })
    }

    /// reswrangler.Select: group/version/kind, original or current
    /// namespace and name, then the label and annotation selectors.
    fn matches(&self, r: &Res) -> Result<bool, String> {
        // Group, version and kind read in place first: most targets name
        // a kind that most objects are not, and an id made for each
        // object the patch passes over was a third of the selection.
        let root = &r.obj.root;
        let (group, version) = Gvk::split_api(root.str_at(&["apiVersion"]).unwrap_or(""));
        let kind = root.str_at(&["kind"]).unwrap_or("");
        if (!self.gvk.group.is_empty() && self.gvk.group != group)
            || (!self.gvk.version.is_empty() && self.gvk.version != version)
            || (!self.gvk.kind.is_empty() && self.gvk.kind != kind)
        {
            return Ok(false);
        }
        let cur = r.cur_view();
        if let Some(ns) = &self.namespace
            && !ns.is_match(r.org.view().effective_ns())
            && !ns.is_match(cur.effective_ns())
        {
            return Ok(false);
        }
        if let Some(name) = &self.name
            && !name.is_match(&r.org.name)
            && !name.is_match(cur.name)
        {
            return Ok(false);
        }
        for (sel, key) in [(&self.labels, "labels"), (&self.annotations, "annotations")] {
            if let Some(sel) = sel {
                let map = r.obj.root.path(&["metadata", key]);
                if !label_selector_matches(sel, map)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }
}

/// One term of a label selector: a key, and the values it is compared with.
enum Term {
    NotIn(String, Vec<String>),
    In(String, Vec<String>),
    Absent(String),
    NotEqual(String, String),
    Equal(String, String),
    Present(String),
}

/// Kubernetes label selector syntax: `a=b`, `a==b`, `a!=b`, `a`, `!a`,
/// `a in (x,y)`, `a notin (x,y)`, comma-separated. A term that does not
/// parse is an error only when a match reaches it.
fn terms(sel: &str) -> Vec<Result<Term, String>> {
    let mut terms = Vec::new();
    let mut depth = 0;
    let mut cur = String::new();
    for c in sel.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                terms.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    terms.push(cur);
    let parse = |term: &str| {
        let set_op = |op: &str| -> Option<(String, Vec<String>)> {
            let (k, rest) = term.split_once(op)?;
            let rest = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
            Some((
                k.trim().to_string(),
                rest.split(',').map(|v| v.trim().to_string()).collect(),
            ))
        };
        let pair = |(k, v): (&str, &str)| (k.trim().to_string(), v.trim().to_string());
        Ok(if let Some((k, vals)) = set_op(" notin ") {
            Term::NotIn(k, vals)
        } else if let Some((k, vals)) = set_op(" in ") {
            Term::In(k, vals)
        } else if let Some(k) = term.strip_prefix('!') {
            Term::Absent(k.trim().to_string())
        } else if let Some((k, v)) = term.split_once("!=").map(pair) {
            Term::NotEqual(k, v)
        } else if let Some((k, v)) = term
            .split_once("==")
            .or_else(|| term.split_once('='))
            .map(pair)
        {
            Term::Equal(k, v)
        } else if term
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        {
            Term::Present(term.to_string())
        } else {
            return Err(format!("unable to parse selector term '{term}'"));
        })
    };
    terms
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .map(parse)
        .collect()
}

/// Whether the labels or annotations `map` satisfy every term, in order.
fn label_selector_matches(
    terms: &[Result<Term, String>],
    map: Option<&Node>,
) -> Result<bool, String> {
    let get = |k: &str| map.and_then(|m| m.get(k)).and_then(Node::scalar_text);
    for term in terms {
        let ok = match term.as_ref().map_err(Clone::clone)? {
            Term::NotIn(k, vals) => get(k).is_none_or(|v| !vals.contains(&v)),
            Term::In(k, vals) => get(k).is_some_and(|v| vals.contains(&v)),
            Term::Absent(k) => get(k).is_none(),
            Term::NotEqual(k, v) => get(k).is_none_or(|x| x != *v),
            Term::Equal(k, v) => get(k).is_some_and(|x| x == *v),
            Term::Present(k) => get(k).is_some(),
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

fn select(files: &mut Files, res: &[Res], target: &Node) -> Result<Vec<usize>, Issue> {
    let sel = Selector::parse(target).map_err(|m| Issue::at(&files.sources, target.span(), m))?;
    spend_scan(files, res.len()).map_err(|m| Issue::at(&files.sources, target.span(), m))?;
    let mut out = Vec::new();
    for (i, r) in res.iter().enumerate() {
        if sel
            .matches(r)
            .map_err(|m| Issue::at(&files.sources, target.span(), m))?
        {
            out.push(i);
        }
    }
    Ok(out)
}

fn is_json6902(docs: &[Node]) -> bool {
    docs.iter().any(|d| matches!(d.value, Value::Seq(_)))
}

/// A `patches:` list.
pub(crate) fn apply_list(
    files: &mut Files,
    res: &mut Vec<Res>,
    list: &Node,
    dir: &Path,
    restrict: bool,
) -> Result<(), Issue> {
    apply_entries(files, res, list, dir, restrict, &mut Undo::default())
}

fn apply_entries(
    files: &mut Files,
    res: &mut Vec<Res>,
    list: &Node,
    dir: &Path,
    restrict: bool,
    undo: &mut Undo,
) -> Result<(), Issue> {
    let kfile = if (list.span().file.0 as usize) < files.sources.len() {
        files.sources.path(list.span().file).to_path_buf()
    } else {
        dir.to_path_buf()
    };
    let Some(entries) = list.as_seq() else {
        return Err(Issue::at(
            &files.sources,
            list.span(),
            "patches must be a list",
        ));
    };
    let inline_detail = OnceCell::new();
    for entry in entries {
        let (docs, detail) = patch_docs(files, entry, dir, restrict, &kfile, &inline_detail)?;
        let option = |k: &str| {
            entry
                .path(&["options", k])
                .and_then(Node::as_bool_lenient)
                .unwrap_or(false)
        };
        let target = entry.get("target").filter(|n| !n.is_null());
        if is_json6902(&docs) {
            let Some(target) = target else {
                return Err(Issue::at(
                    &files.sources,
                    entry.span(),
                    "must specify a target for JSON patch",
                ));
            };
            let ops = docs
                .into_iter()
                .find(|d| !d.is_null())
                .unwrap_or_else(|| Node::new(Value::Seq(Default::default()), entry.span()));
            for i in select(files, res, target)? {
                undo.before_change(i, &res[i]);
                apply_json(files, &mut res[i], &ops, entry.span(), &detail)?;
            }
            continue;
        }
        for patch in docs.iter().filter(|d| !d.is_null()) {
            let targets = match target {
                Some(t) => select(files, res, t)?,
                None => vec![unique_by_id(files, res, patch)?],
            };
            apply_smp_to(
                files,
                res,
                &targets,
                patch,
                option("allowNameChange"),
                option("allowKindChange"),
                entry.span(),
                &detail,
                undo,
            )?;
        }
    }
    Ok(())
}

/// The one object a target-less strategic-merge patch is for, found by the
/// patch's own id against every id the objects have had.
fn unique_by_id(files: &mut Files, res: &[Res], patch: &Node) -> Result<usize, Issue> {
    spend_scan(files, res.len()).map_err(|m| Issue::at(&files.sources, patch.span(), m))?;
    let id = ResId::of(patch);
    let found: Vec<usize> = res
        .iter()
        .enumerate()
        .filter(|(_, r)| r.any_id_matches(&id))
        .map(|(i, _)| i)
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => Err(Issue::at(
            &files.sources,
            patch.span(),
            format!(
                "no matches for Id {}; failed to find unique target for patch",
                id.display()
            ),
        )),
        _ => Err(Issue::at(
            &files.sources,
            patch.span(),
            format!(
                "multiple matches for Id {}; failed to find unique target for patch",
                id.display()
            ),
        )),
    }
}

#[allow(clippy::too_many_arguments)]
fn apply_smp_to(
    files: &mut Files,
    res: &mut Vec<Res>,
    targets: &[usize],
    patch: &Node,
    allow_name: bool,
    allow_kind: bool,
    span: Span,
    detail: &str,
    undo: &mut Undo,
) -> Result<(), Issue> {
    let mut deleted = Vec::new();
    let patch_nodes = Size::of(patch, &files.limits().yaml).nodes;
    for &i in targets {
        spend_work(files, patch_nodes)
            .map_err(|m| Issue::at(&files.sources, span, format!("{}: {m}", res[i].obj.id())))?;
        undo.before_change(i, &res[i]);
        let r = &mut res[i];
        let (name, ns, kind) = (
            r.obj.name().to_string(),
            r.obj.namespace().map(str::to_string),
            r.obj.kind().to_string(),
        );
        // kustomize gives the patch the target's name, namespace and kind
        // before merging (api/internal/builtins/PatchTransformer.go): a
        // patch's own name is a placeholder, and the target's nodes (with
        // where they are written) are what the merged object keeps.
        let meta_node = |k: &str| r.obj.root.path(&["metadata", k]).cloned();
        let (name_node, ns_node) = (meta_node("name"), meta_node("namespace"));
        if allow_name || allow_kind {
            r.store_prev();
        }
        let mut p = patch.clone();
        if let (Some(api), Some(_)) = (r.obj.root.get("apiVersion").cloned(), p.get("apiVersion")) {
            p.insert("apiVersion", api);
        }
        let merged = patch_smp::merge(r.obj.root_mut(), &p, &mut |visits| {
            spend_work(files, visits)
        });
        let keep =
            merged.map_err(|m| Issue::at(&files.sources, span, format!("{}: {m}", r.obj.id())))?;
        if !keep {
            deleted.push(i);
            continue;
        }
        let root = r.obj.root_mut();
        if !allow_kind {
            root.insert("kind", Node::synthetic_str(kind, span));
        }
        if !allow_name {
            match name_node {
                Some(n) => {
                    root.entry_map("metadata", span).insert("name", n);
                }
                None => super::set_meta(root, "name", &name, span),
            }
        }
        match ns {
            Some(ns) => match ns_node {
                Some(n) => {
                    root.entry_map("metadata", span).insert("namespace", n);
                }
                None => super::set_meta(root, "namespace", &ns, span),
            },
            None => {
                if let Some(meta) = root.get_mut("metadata") {
                    meta.remove("namespace");
                }
            }
        }
        record_step(files, &mut r.obj, StepKind::Patch, detail, span)
            .map_err(|m| Issue::at(&files.sources, span, format!("{}: {m}", r.obj.id())))?;
    }
    deleted.sort_unstable();
    for i in deleted.into_iter().rev() {
        res.remove(i);
        undo.removed(i);
    }
    Ok(())
}

/// Applies JSON 6902 `ops` to `r`: one visit per operation, and what
/// each pays as it walks the object.
fn apply_json(
    files: &mut Files,
    r: &mut Res,
    ops: &Node,
    span: Span,
    detail: &str,
) -> Result<(), Issue> {
    let limits = files.limits().yaml;
    let count = ops.as_seq().map_or(1, |ops| ops.len());
    let applied = spend_work(files, count)
        .map_err(|m| (None, m))
        .and_then(|()| {
            r.store_prev();
            patch_json6902::apply(r.obj.root_mut(), ops, &limits, &mut |visits| {
                spend_work(files, visits)
            })
        });
    applied.map_err(|(s, m)| {
        Issue::at(
            &files.sources,
            s.unwrap_or(span),
            format!("{}: {m}", r.obj.id()),
        )
    })?;
    record_step(files, &mut r.obj, StepKind::Patch, detail, span)
        .map_err(|m| Issue::at(&files.sources, span, format!("{}: {m}", r.obj.id())))?;
    Ok(())
}

/// `patchesStrategicMerge`: file paths or inline YAML, each document
/// patching the object with its id.
pub(crate) fn apply_strategic_merge_list(
    files: &mut Files,
    res: &mut Vec<Res>,
    list: &Node,
    k: &Kustomization,
) -> Result<(), Issue> {
    for entry in list.as_seq().into_iter().flatten() {
        let Some(text) = entry.as_str() else {
            return Err(k.err(
                entry.span(),
                "patchesStrategicMerge entries must be strings",
            ));
        };
        let (docs, detail) = if text.contains('\n') {
            (
                inline_docs(files, entry, &k.file)?,
                format!("inline patch in {}", files.shown(&k.file)),
            )
        } else {
            let input = k.input(files, text, entry.span(), Input::Patch)?;
            (
                input
                    .documents(files)?
                    .docs
                    .iter()
                    .map(|d| Node::clone(d))
                    .collect(),
                input.shown(files),
            )
        };
        for patch in docs.iter().filter(|d| !d.is_null()) {
            let target = unique_by_id(files, res, patch)?;
            apply_smp_to(
                files,
                res,
                &[target],
                patch,
                false,
                false,
                entry.span(),
                &detail,
                &mut Undo::default(),
            )?;
        }
    }
    Ok(())
}

/// `patchesJson6902`: a target plus operations inline or in a file.
pub(crate) fn apply_json6902_list(
    files: &mut Files,
    res: &mut [Res],
    list: &Node,
    k: &Kustomization,
) -> Result<(), Issue> {
    let inline_detail = OnceCell::new();
    for entry in list.as_seq().into_iter().flatten() {
        let Some(target) = entry.get("target") else {
            return Err(k.err(entry.span(), "patchesJson6902 entries need a target"));
        };
        let (docs, detail) = patch_docs(files, entry, &k.dir, k.restrict, &k.file, &inline_detail)?;
        let Some(ops) = docs.into_iter().find(|d| !d.is_null()) else {
            continue;
        };
        for i in select(files, res, target)? {
            apply_json(files, &mut res[i], &ops, entry.span(), &detail)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::Limits;

    fn objects_and_patches(patches: &str) -> (Files, Vec<Object>, Node, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let mut files = Files::new(dir.path(), Default::default());
        let text = "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata:\n  name: app\nspec:\n  interval: 1h\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n";
        let id = files.sources.add("objects.yaml".into(), text.into());
        let objects = crate::yaml::parse_documents(text, id, &Limits::default())
            .unwrap()
            .into_iter()
            .enumerate()
            .map(|(i, d)| Object::new(d, id, i))
            .collect();
        let pid = files.sources.add("patches.yaml".into(), patches.into());
        let list = crate::yaml::parse_documents(patches, pid, &Limits::default())
            .unwrap()
            .remove(0);
        (files, objects, list, dir)
    }

    const SET_TIMEOUT: &str = "- target: {kind: HelmRelease}\n  patch: |\n    apiVersion: helm.toolkit.fluxcd.io/v2\n    kind: HelmRelease\n    metadata: {name: x}\n    spec: {timeout: 5m}\n";

    #[test]
    fn flux_patches_change_only_their_targets() {
        let (mut files, mut objects, list, _dir) = objects_and_patches(SET_TIMEOUT);
        let before = objects.clone();
        apply_patches(&mut objects, &list, &mut files, Path::new("")).unwrap();
        assert_eq!(objects[0].root.str_at(&["spec", "timeout"]), Some("5m"));
        assert_eq!(objects[0].chain.len(), 1);
        assert_eq!(objects[1], before[1]);
    }

    #[test]
    fn target_names_read_braces_as_go_does() {
        // vrozaksen/home-ops targets `name: postgres-\${APP}` (the name
        // before Flux substitutes it); kustomize builds it. Unescaped, the
        // `$` ends the text: the target matches nothing, still no error.
        let re = |pattern: &str| {
            anchored(Some(&Node::synthetic_str(pattern, Default::default())))
                .unwrap()
                .unwrap()
        };
        let escaped = re("postgres-\\${APP}");
        assert!(escaped.is_match("postgres-${APP}") && !escaped.is_match("postgres-arr"));
        assert!(!re("postgres-${APP}").is_match("postgres-${APP}"));

        // A name of plain characters matches only itself; any other
        // character keeps its regular-expression meaning.
        let plain = re("my-app_2");
        assert!(plain.is_match("my-app_2") && !plain.is_match("my-app_23"));
        assert!(re("app.v1").is_match("app-v1") && re("a|b").is_match("b"));
    }

    #[test]
    fn label_selector_terms_are_read_in_order_and_fail_only_when_reached() {
        let labels =
            crate::yaml::parse_documents("app: web\ntier: front\n", FileId(0), &Limits::default())
                .unwrap()
                .remove(0);
        let matches = |sel: &str| label_selector_matches(&terms(sel), Some(&labels));
        assert_eq!(matches("app=web, tier in (front,back)"), Ok(true));
        assert_eq!(matches("app==web,!gone,tier notin (back)"), Ok(true));
        assert_eq!(matches("tier,app!=web"), Ok(false));
        // A term that does not parse is an error only once a match
        // reaches it, for every object the target is matched against.
        assert_eq!(matches("app=db,a b"), Ok(false));
        let parsed = terms("app=web,a b");
        for _ in 0..2 {
            let err = label_selector_matches(&parsed, Some(&labels)).unwrap_err();
            assert!(err.contains("'a b'"), "{err}");
        }
    }

    #[test]
    fn failed_flux_patches_leave_every_object_as_it_was() {
        let failing_test_op = "- target: {kind: ConfigMap}\n  patch: '[{\"op\": \"test\", \"path\": \"/data/k\", \"value\": \"other\"}]'\n";
        let deleting = "- target: {kind: ConfigMap}\n  patch: |\n    $patch: delete\n    apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: cm}\n";
        for second in [failing_test_op, deleting] {
            let patches = format!("{SET_TIMEOUT}{second}");
            let (mut files, mut objects, list, _dir) = objects_and_patches(&patches);
            let before = objects.clone();
            let err = apply_patches(&mut objects, &list, &mut files, Path::new("")).unwrap_err();
            assert_eq!(objects, before, "{err}");
            assert_eq!(
                objects.iter().map(|o| o.root.to_json()).collect::<Vec<_>>(),
                before.iter().map(|o| o.root.to_json()).collect::<Vec<_>>()
            );
        }
    }
}
