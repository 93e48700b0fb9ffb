//! A Kubernetes object as loaded from the repo, with the chain of steps
//! (Flux Kustomization, kustomization.yaml, patch, ...) that produced it.

use std::sync::Arc;

use crate::yaml::{FileId, Node, Span};

/// One step in the making of an object, outermost first.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub kind: StepKind,
    /// Human text: the directory built, the patch applied, the variable set.
    /// Shared: every object of a build has the same steps, and at 100k
    /// objects a copy each was tens of megabytes.
    pub detail: Arc<str>,
    /// Where the step is written (the Flux Kustomization object, the
    /// `patches:` entry, ...).
    pub at: Option<Span>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    FluxKustomization,
    Kustomization,
    Component,
    Patch,
    Generator,
    Transformer,
    Substitution,
    /// The object was read from a cluster (live, or a `kubectl get`
    /// snapshot), not from the repository.
    Live,
    /// The object stands in for one of the remote entries in `detail`,
    /// which were not read: it holds only its identity and what local
    /// patches set (`source::kustomize::standin`).
    RemoteStandIn,
}

impl StepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            StepKind::FluxKustomization => "flux-kustomization",
            StepKind::Kustomization => "kustomization",
            StepKind::Component => "component",
            StepKind::Patch => "patch",
            StepKind::Generator => "generator",
            StepKind::Transformer => "transformer",
            StepKind::Substitution => "substitution",
            StepKind::Live => "live",
            StepKind::RemoteStandIn => "remote-stand-in",
        }
    }
}

/// A value only the cluster holds (a key of a Secret read with
/// `--snapshot`): rules may decide with it, reports never print it. It
/// has no `Display`, its `Debug` hides it, and it lives outside the
/// object's tree, which the inventory prints.
#[derive(Clone, PartialEq, Eq)]
pub struct Concealed(String);

impl Concealed {
    pub fn new(value: String) -> Concealed {
        Concealed(value)
    }

    /// The value, for a decision that prints nothing of it.
    pub fn reveal(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Concealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Concealed(..)")
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// Shared with the parse of its file and with every copy made before a
    /// step changes it (`Arc::make_mut`): rendering looks objects up in
    /// pools and lists that would otherwise each hold a whole copy.
    pub root: Arc<Node>,
    /// The file the object's document is in (for generated objects, the
    /// kustomization.yaml that generated it).
    pub file: FileId,
    /// Index of the document within that file, counting non-empty ones.
    pub doc_index: u32,
    pub chain: Vec<Step>,
    /// The Flux tree (one per cluster in a repo of several clusters) that
    /// applies the object; `None` for files no Flux Kustomization reaches.
    pub tree: Option<u32>,
    /// For a declaration that stands for a live object (a repository
    /// linted with the cluster), the object as the cluster returned it:
    /// what drift is judged against.
    pub live: Option<Box<Node>>,
    /// For a Secret read from the cluster: its keys' values, which the
    /// tree holds as nulls (see [`Concealed`]).
    pub concealed: Box<[(String, Concealed)]>,
}

impl Object {
    pub fn new(root: impl Into<Arc<Node>>, file: FileId, doc_index: usize) -> Object {
        Object {
            root: root.into(),
            file,
            // A file's size budget keeps its documents far below `u32`.
            doc_index: u32::try_from(doc_index).unwrap_or(u32::MAX),
            chain: Vec::new(),
            tree: None,
            live: None,
            concealed: Box::default(),
        }
    }

    pub fn api_version(&self) -> &str {
        self.root.str_at(&["apiVersion"]).unwrap_or("")
    }

    /// The API group: `""` for core objects.
    pub fn group(&self) -> &str {
        match self.api_version().rsplit_once('/') {
            Some((g, _)) => g,
            None => "",
        }
    }

    pub fn kind(&self) -> &str {
        self.root.str_at(&["kind"]).unwrap_or("")
    }

    pub fn name(&self) -> &str {
        self.root.str_at(&["metadata", "name"]).unwrap_or("")
    }

    pub fn namespace(&self) -> Option<&str> {
        self.root.str_at(&["metadata", "namespace"])
    }

    pub fn is(&self, group: &str, kind: &str) -> bool {
        // Kind first: it is what differs for almost every object asked,
        // and the group needs `apiVersion` looked up and split.
        self.kind() == kind && self.group() == group
    }

    /// `Kind/namespace/name`, for messages. Joined at its size: `format!`
    /// of only arguments and `/` starts from an empty buffer and grows it
    /// (an allocation and two reallocations for each such text).
    pub fn id(&self) -> String {
        match self.namespace() {
            Some(ns) => [self.kind(), ns, self.name()].join("/"),
            None => [self.kind(), self.name()].join("/"),
        }
    }

    pub fn push_step(&mut self, kind: StepKind, detail: impl Into<Arc<str>>, at: Option<Span>) {
        self.chain.push(Step {
            kind,
            detail: detail.into(),
            at,
        });
    }

    /// The root to change: copied first if another holder shares it.
    pub fn root_mut(&mut self) -> &mut Node {
        Arc::make_mut(&mut self.root)
    }

    /// Whether the object was read from a cluster or a snapshot of one.
    pub fn is_live(&self) -> bool {
        self.chain.first().is_some_and(|s| s.kind == StepKind::Live)
    }

    /// Whether two objects can see each other: they are applied to the
    /// same cluster, or one of them is not placed in any Flux tree.
    pub fn same_tree(&self, other: &Object) -> bool {
        match (self.tree, other.tree) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }

    /// A document is a Kubernetes object when it is a mapping with string
    /// `apiVersion` and `kind`.
    pub fn looks_like_object(node: &Node) -> bool {
        node.str_at(&["apiVersion"]).is_some() && node.str_at(&["kind"]).is_some()
    }
}

/// Containers (and init containers) of a workload's pod template.
pub fn workload_containers(obj: &Object) -> Option<Vec<&Node>> {
    let pod_spec = pod_spec(obj)?;
    Some(
        ["initContainers", "containers"]
            .iter()
            .filter_map(|k| pod_spec.get(k).and_then(Node::as_seq))
            .flatten()
            .collect(),
    )
}

/// The pod spec of a workload (its pod template's, for controllers).
pub fn pod_spec(obj: &Object) -> Option<&Node> {
    let kind = obj.kind();
    // Kind first: most objects are no workload, and the group needs
    // `apiVersion` looked up and split.
    if !matches!(
        kind,
        "Pod" | "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" | "Job" | "CronJob"
    ) {
        return None;
    }
    match (obj.group(), kind) {
        ("", "Pod") => obj.root.get("spec"),
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") | ("batch", "Job") => {
            obj.root.path(&["spec", "template", "spec"])
        }
        ("batch", "CronJob") => obj
            .root
            .path(&["spec", "jobTemplate", "spec", "template", "spec"]),
        _ => None,
    }
}

/// The objects of one YAML text, as file 0: for unit tests.
#[cfg(test)]
pub(crate) fn objects_of(text: &str) -> Vec<Object> {
    crate::yaml::parse_documents(text, FileId(0), &crate::yaml::Limits::default())
        .unwrap()
        .into_iter()
        .enumerate()
        .map(|(i, d)| Object::new(d, FileId(0), i))
        .collect()
}
