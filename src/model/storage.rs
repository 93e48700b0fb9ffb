//! The storage under a database: the class it asks for (or the default
//! class), the provisioner behind that class, and whether that provisioner
//! replicates every write over the network.

use super::database::Database;
use super::index::Index;
use super::postgres::OPERATORS;
use super::{Model, ObjRef, Unknown, is_helm_release};
use crate::yaml::{Node, Origin, PathSeg, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Category {
    /// Block storage that acknowledges a write after replicating it over
    /// the network (Ceph RBD, Longhorn, Mayastor, LINSTOR, ...).
    NetworkReplicatedBlock,
    /// Block storage over the network that keeps a single copy: iSCSI or
    /// NVMe-oF from one storage server, a Longhorn class with
    /// `numberOfReplicas: "1"`, a Ceph pool of size 1. A write waits for
    /// that copy only: nothing is replicated.
    NetworkBlock,
    /// NFS, CephFS and the like.
    NetworkFilesystem,
    /// Disks of the node itself.
    Local,
    Unknown,
}

impl Category {
    pub fn as_str(self) -> &'static str {
        match self {
            Category::NetworkReplicatedBlock => "network-replicated-block",
            Category::NetworkBlock => "network-block",
            Category::NetworkFilesystem => "network-filesystem",
            Category::Local => "local",
            Category::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        [
            Category::NetworkReplicatedBlock,
            Category::NetworkBlock,
            Category::NetworkFilesystem,
            Category::Local,
            Category::Unknown,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// Category of a CSI driver or in-tree provisioner, from the list in
/// the project notes.
pub fn categorize(provisioner: &str) -> Category {
    let p = provisioner;
    // democratic-csi's CSI driver name is the user's choice; its chart
    // examples name it `org.democratic-csi.<driver>`, and only then does
    // the name tell the storage.
    if let Some(driver) = p.strip_prefix("org.democratic-csi.") {
        return democratic_csi(driver);
    }
    if p.ends_with("rbd.csi.ceph.com")
        || p == "kubernetes.io/rbd"
        || p == "driver.longhorn.io"
        || p == "io.openebs.csi-mayastor"
        || p == "linstor.csi.linbit.com"
        || p == "pxd.portworx.com"
        || p == "cstor.csi.openebs.io"
    {
        Category::NetworkReplicatedBlock
    } else if p.ends_with("cephfs.csi.ceph.com")
        || p == "nfs.csi.k8s.io"
        || p == "k8s-sigs.io/nfs-subdir-external-provisioner"
        || p.contains("nfs")
    {
        Category::NetworkFilesystem
    } else if p == "rancher.io/local-path"
        || p == "openebs.io/local"
        || p == "topolvm.io"
        || p == "kubernetes.io/no-provisioner"
        || p == "local.csi.openebs.io"
        || p == "lvm.csi.metal-stack.io"
        || p.contains("hostpath")
    {
        Category::Local
    } else {
        Category::Unknown
    }
}

/// What a democratic-csi driver gives, by the driver list of
/// democratic-csi's `src/driver/factory.js`: the `zfs-local-*` and
/// `local-hostpath` drivers provision on the node itself; the NFS, SMB,
/// Lustre and ObjectiveFS ones share a filesystem; iSCSI and NVMe-oF export
/// a volume of one storage server (FreeNAS/TrueNAS, Synology, any ZFS
/// host), which keeps a single copy; `node-manual` connects volumes made by
/// hand, of any kind. `name` is a driver (`driver.config.driver`) or the
/// CSI driver name's tail, which the chart examples and most repositories
/// set to the protocol (`iscsi`, `nfs`, `nfs-truenas`) or the driver.
pub fn democratic_csi(name: &str) -> Category {
    let has = |words: &[&str]| name.split('-').any(|w| words.contains(&w));
    if name == "local-hostpath" || name.starts_with("zfs-local-") {
        Category::Local
    } else if has(&["iscsi", "nvmeof"]) {
        Category::NetworkBlock
    } else if has(&["nfs", "smb", "lustre", "objectivefs"]) {
        Category::NetworkFilesystem
    } else {
        Category::Unknown
    }
}

/// How many copies of each block a replicated class keeps, where the
/// repository says it.
#[derive(Clone, Debug)]
pub struct Copies {
    pub count: i64,
    /// The setting, for messages (`numberOfReplicas`, `replicated.size`).
    pub key: &'static str,
    pub span: Span,
}

impl Copies {
    fn of(node: Option<&Node>, key: &'static str) -> Option<Copies> {
        let node = node?;
        let count = node.scalar_text()?.trim().parse().ok()?;
        Some(Copies {
            count,
            key,
            span: node.span(),
        })
    }
}

/// A storage class as the repo declares it: a StorageClass object, or a
/// class a chart creates from its values.
#[derive(Clone, Debug)]
pub struct ClassDecl {
    pub name: String,
    pub provisioner: String,
    /// What kind of storage the provisioner gives (from the provisioner's
    /// name, or from chart values where the name is the user's choice).
    pub category: Category,
    /// Where the class (or its provisioner) is declared.
    pub span: Span,
    pub is_default: bool,
    pub object: ObjRef,
    /// Copies kept of each block, when declared.
    pub copies: Option<Copies>,
}

#[derive(Clone, Debug)]
pub struct Storage {
    pub class: String,
    /// Where the database asks for the class; `None` when it relies on
    /// the default class.
    pub requested_at: Option<Node>,
    pub decl: ClassDecl,
    pub category: Category,
}

/// The mount options of a StorageClass or PersistentVolume, without
/// values (`nfsvers=4.1` is `nfsvers`); none for classes charts create.
pub fn mount_options(model: &Model, decl: &ClassDecl) -> Vec<String> {
    let obj = model.object(decl.object);
    let list = match (obj.group(), obj.kind()) {
        ("storage.k8s.io", "StorageClass") => obj.root.get("mountOptions"),
        ("", "PersistentVolume") => obj.root.path(&["spec", "mountOptions"]),
        _ => None,
    };
    list.and_then(Node::as_seq)
        .into_iter()
        .flatten()
        .filter_map(Node::scalar_text)
        .flat_map(|o| {
            o.split(',')
                .map(|one| one.split('=').next().unwrap_or("").trim().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Fills a declaration's category from its provisioner and the copies it
/// keeps: a replicated provisioner told to keep one copy replicates
/// nothing.
pub(crate) fn with_category(mut decl: ClassDecl) -> ClassDecl {
    decl.category = categorize(&decl.provisioner);
    if decl.category == Category::NetworkReplicatedBlock
        && decl.copies.as_ref().is_some_and(|c| c.count == 1)
    {
        decl.category = Category::NetworkBlock;
    }
    decl
}

/// The copies a StorageClass object asks its provisioner for.
fn class_copies(model: &Model, class: ObjRef, provisioner: &str) -> Option<Copies> {
    let root = &model.object(class).root;
    let param = |key: &str| root.path(&["parameters", key]);
    if provisioner == "driver.longhorn.io" {
        // Longhorn "Storage Class Parameters": numberOfReplicas (a string,
        // "3" in the sample); without it the volume gets the
        // default-replica-count setting (3 unless changed).
        return Copies::of(param("numberOfReplicas"), "numberOfReplicas");
    }
    if provisioner.ends_with("rbd.csi.ceph.com") {
        // Ceph CSI RBD classes name their pool (`pool`) and the Rook
        // cluster's namespace (`clusterID`); the CephBlockPool keeps
        // `spec.replicated.size` copies (Rook docs, "CephBlockPool CRD").
        let pool = param("pool")?.as_str()?;
        let ns = param("clusterID")
            .and_then(Node::as_str)
            .unwrap_or_else(|| model.namespace_of(class));
        let obj = model.find(class, "ceph.rook.io", "CephBlockPool", ns, pool)?;
        return Copies::of(
            model.object(obj).root.path(&["spec", "replicated", "size"]),
            "replicated.size",
        );
    }
    None
}

/// The copies the volume of a static PersistentVolume keeps, where the
/// repository declares that volume: Longhorn binds a PV to the Longhorn
/// `Volume` (`longhorn.io`) named by its `csi.volumeHandle`, which keeps
/// `spec.numberOfReplicas` replicas (Longhorn docs, "Use an existing
/// Longhorn volume" and the Volume CRD).
pub(crate) fn csi_volume_copies(model: &Model, pv: ObjRef) -> Option<Copies> {
    let csi = model.object(pv).root.path(&["spec", "csi"])?;
    if csi.str_at(&["driver"]) != Some("driver.longhorn.io") {
        return None;
    }
    let handle = csi.str_at(&["volumeHandle"])?;
    let volume = model.of_kind("longhorn.io", "Volume").find(|&r| {
        let o = model.object(r);
        o.name() == handle && o.same_tree(model.object(pv))
    })?;
    Copies::of(
        model
            .object(volume)
            .root
            .path(&["spec", "numberOfReplicas"]),
        "numberOfReplicas",
    )
}

/// The storage classes of a model, by name and the defaults apart: each
/// claim and database asks for its class, and a copy of every class per
/// question made many classes (a PV of its own class each) and many
/// claims quadratic.
pub(crate) struct Classes {
    all: Vec<ClassDecl>,
    /// Positions in `all` by class name.
    by_name: Index<String>,
    /// Positions in `all` of the classes marked default.
    defaults: Vec<usize>,
}

fn declared<'m>(model: &'m Model) -> &'m Classes {
    model.classes.get_or_init(|| {
        let all = all_classes(model);
        let by_name = Index::new(
            all.iter()
                .enumerate()
                .map(|(i, c)| (c.name.clone(), i))
                .collect(),
        );
        let defaults = (0..all.len()).filter(|&i| all[i].is_default).collect();
        Classes {
            all,
            by_name,
            defaults,
        }
    })
}

/// Every storage class the repo declares (in `near`'s cluster, if given).
pub fn classes(model: &Model, near: Option<ObjRef>) -> Vec<ClassDecl> {
    declared(model)
        .all
        .iter()
        .filter(|c| near.is_none_or(|n| model.object(c.object).same_tree(model.object(n))))
        .cloned()
        .collect()
}

/// The classes named `name` (in `near`'s cluster, if given), in the order
/// [`classes`] gives them.
fn named<'m>(
    model: &'m Model,
    near: Option<ObjRef>,
    name: &str,
) -> impl Iterator<Item = &'m ClassDecl> {
    let classes = declared(model);
    classes
        .by_name
        .get(&name.to_string())
        .map(|i| &classes.all[i])
        .filter(move |c| near.is_none_or(|n| model.object(c.object).same_tree(model.object(n))))
}

/// The classes marked default (in `near`'s cluster, if given).
fn defaults<'m>(model: &'m Model, near: Option<ObjRef>) -> impl Iterator<Item = &'m ClassDecl> {
    let classes = declared(model);
    classes
        .defaults
        .iter()
        .map(|&i| &classes.all[i])
        .filter(move |c| near.is_none_or(|n| model.object(c.object).same_tree(model.object(n))))
}

fn all_classes(model: &Model) -> Vec<ClassDecl> {
    let mut out = Vec::new();
    for (i, obj) in model.objects.iter().enumerate() {
        if obj.is("storage.k8s.io", "StorageClass") {
            let annotations = obj.root.path(&["metadata", "annotations"]);
            let is_default = annotations
                .and_then(|a| a.get("storageclass.kubernetes.io/is-default-class"))
                .and_then(Node::as_bool_lenient)
                .unwrap_or(false);
            let prov = obj.root.get("provisioner");
            let provisioner = prov.and_then(Node::as_str).unwrap_or("").to_string();
            out.push(with_category(ClassDecl {
                category: Category::Unknown,
                name: obj.name().to_string(),
                copies: class_copies(model, i, &provisioner),
                provisioner,
                span: prov.map_or(obj.root.span(), |p| p.span()),
                is_default,
                object: i,
            }));
        } else if is_helm_release(obj) {
            chart_classes(model, i, &mut out);
        }
    }
    static_volume_classes(model, &mut out);
    out
}

/// Class names that only statically provisioned PersistentVolumes carry:
/// no StorageClass object is needed for them, as Kubernetes binds a claim
/// to a PV of the same `storageClassName` (NOTES: the bound volume is the
/// ground truth). An NFS or CSI volume says what storage it is; the first
/// PV of a name in each cluster's Flux tree stands for the class there: a
/// component rendered into several clusters declares the class in each,
/// and [`classes`] gives a claim only its own cluster's classes.
fn static_volume_classes(model: &Model, out: &mut Vec<ClassDecl>) {
    for (i, obj) in model.objects.iter().enumerate() {
        if !obj.is("", "PersistentVolume") {
            continue;
        }
        let Some(name) = obj.root.str_at(&["spec", "storageClassName"]) else {
            continue;
        };
        let declared_here =
            |c: &ClassDecl| c.name == name && model.object(c.object).tree == obj.tree;
        if name.is_empty() || out.iter().any(declared_here) {
            continue;
        }
        let spec = obj.root.get("spec");
        let (provisioner, span) = if let Some(nfs) = spec.and_then(|s| s.get("nfs")) {
            (
                format!("nfs (static PersistentVolume {})", obj.name()),
                nfs.span(),
            )
        } else if let Some(driver) = spec.and_then(|s| s.path(&["csi", "driver"])) {
            let Some(d) = driver.as_str() else { continue };
            (d.to_string(), driver.span())
        } else {
            continue;
        };
        out.push(with_category(ClassDecl {
            category: Category::Unknown,
            name: name.to_string(),
            provisioner,
            span,
            is_default: false,
            object: i,
            copies: None,
        }));
    }
}

/// Classes created by storage charts from their values.
fn chart_classes(model: &Model, r: ObjRef, out: &mut Vec<ClassDecl>) {
    let Some(release) = model.release(r) else {
        return;
    };
    let chart = release.chart.as_ref().and_then(Node::as_str).unwrap_or("");
    let values = &release.values;
    let span = release
        .chart
        .as_ref()
        .map_or(model.object(r).root.span(), |c| c.span());
    match chart {
        "rook-ceph-cluster" => {
            let operator_ns = values
                .str_at(&["operatorNamespace"])
                .unwrap_or_else(|| model.namespace_of(r));
            for (list, driver) in [("cephBlockPools", "rbd"), ("cephFileSystems", "cephfs")] {
                let Some(pools) = values.get(list).and_then(Node::as_seq) else {
                    // Chart defaults: ceph-block (default class) and ceph-filesystem.
                    let (name, is_default) = if driver == "rbd" {
                        ("ceph-block", true)
                    } else {
                        ("ceph-filesystem", false)
                    };
                    out.push(with_category(ClassDecl {
                        category: Category::Unknown,
                        copies: None,
                        name: name.into(),
                        provisioner: format!("{operator_ns}.{driver}.csi.ceph.com"),
                        span,
                        is_default,
                        object: r,
                    }));
                    continue;
                };
                for pool in pools {
                    let Some(sc) = pool.get("storageClass") else {
                        continue;
                    };
                    if sc.get("enabled").and_then(Node::as_bool_lenient) == Some(false) {
                        continue;
                    }
                    let Some(name) = sc.get("name") else { continue };
                    out.push(with_category(ClassDecl {
                        category: Category::Unknown,
                        // rook-ceph-cluster values.yaml: each pool's `spec`
                        // is a CephBlockPool spec (`replicated.size: 3` in
                        // the chart's default pool); filesystems keep
                        // theirs under `spec.dataPools[]`.
                        copies: Copies::of(
                            pool.path(&["spec", "replicated", "size"]),
                            "replicated.size",
                        ),
                        name: name.scalar_text().unwrap_or_default(),
                        provisioner: format!("{operator_ns}.{driver}.csi.ceph.com"),
                        span: name.span(),
                        is_default: sc
                            .get("isDefault")
                            .and_then(Node::as_bool_lenient)
                            .unwrap_or(false),
                        object: r,
                    }));
                }
            }
        }
        "longhorn" => out.push(with_category(ClassDecl {
            category: Category::Unknown,
            // longhorn chart values.yaml: the class the chart creates keeps
            // `persistence.defaultClassReplicaCount` replicas (3).
            copies: Copies::of(
                values.path(&["persistence", "defaultClassReplicaCount"]),
                "defaultClassReplicaCount",
            ),
            name: "longhorn".into(),
            provisioner: "driver.longhorn.io".into(),
            span,
            is_default: values
                .path(&["persistence", "defaultClass"])
                .and_then(Node::as_bool_lenient)
                .unwrap_or(true),
            object: r,
        })),
        // democratic-csi: the CSI driver's name is the user's choice; the
        // storage behind it is told by `driver.config.driver`.
        "democratic-csi" => {
            let provisioner = values
                .str_at(&["csiDriver", "name"])
                .unwrap_or("org.democratic-csi");
            let driver = values.str_at(&["driver", "config", "driver"]).unwrap_or("");
            let category = democratic_csi(driver);
            for sc in values
                .get("storageClasses")
                .and_then(Node::as_seq)
                .into_iter()
                .flatten()
            {
                let Some(name) = sc.get("name") else { continue };
                out.push(ClassDecl {
                    name: name.scalar_text().unwrap_or_default(),
                    provisioner: provisioner.to_string(),
                    category,
                    copies: None,
                    span: name.span(),
                    is_default: sc
                        .get("defaultClass")
                        .and_then(Node::as_bool_lenient)
                        .unwrap_or(false),
                    object: r,
                });
            }
        }
        // OpenEBS LocalPV hostpath: the umbrella chart nests the
        // provisioner chart's values under `localpv-provisioner`.
        "openebs" | "localpv-provisioner" => {
            let hostpath = if chart == "openebs" {
                values.path(&["localpv-provisioner", "hostpathClass"])
            } else {
                values.get("hostpathClass")
            };
            let flag = |key: &str, default: bool| {
                hostpath
                    .and_then(|h| h.get(key))
                    .and_then(Node::as_bool_lenient)
                    .unwrap_or(default)
            };
            if flag("enabled", true) {
                let name = hostpath.and_then(|h| h.get("name"));
                out.push(with_category(ClassDecl {
                    category: Category::Unknown,
                    copies: None,
                    name: name
                        .and_then(Node::as_str)
                        .unwrap_or("openebs-hostpath")
                        .into(),
                    provisioner: "openebs.io/local".into(),
                    span: name.map_or(span, |n| n.span()),
                    is_default: flag("isDefaultClass", false),
                    object: r,
                }));
            }
        }
        "local-path-provisioner" => out.push(with_category(ClassDecl {
            category: Category::Unknown,
            copies: None,
            name: values
                .str_at(&["storageClass", "name"])
                .unwrap_or("local-path")
                .into(),
            provisioner: "rancher.io/local-path".into(),
            span,
            is_default: values
                .path(&["storageClass", "defaultClass"])
                .and_then(Node::as_bool_lenient)
                .unwrap_or(false),
            object: r,
        })),
        _ => {}
    }
}

/// The class of claim `claim` in `ns`, as `near` sees it.
pub(crate) fn pvc_class(
    model: &Model,
    near: ObjRef,
    ns: &str,
    claim: &str,
) -> Result<Option<Node>, Unknown> {
    let pvc = model
        .find(near, "", "PersistentVolumeClaim", ns, claim)
        .ok_or_else(|| {
            Unknown(model.not_found(
                near,
                "PersistentVolumeClaim",
                ns,
                &format!("existing claim {claim}"),
            ))
        })?;
    Ok(model
        .object(pvc)
        .root
        .path(&["spec", "storageClassName"])
        .cloned())
}

/// The storage under `db`.
pub fn of_database(model: &Model, db: &Database) -> Result<Storage, Unknown> {
    match declared_storage(model, db) {
        Ok(st) => Ok(st),
        // The cluster's ground truth, when the declarations do not say:
        // the PV bound to the database's claim and its CSI driver.
        Err(unknown) => bound_volume(model, db).ok_or(unknown),
    }
}

/// The bound claims (`spec.volumeName` set) by namespace and each name
/// of a database they may be for: the value of a label Postgres
/// operators put on their claims naming the cluster, and the NAME of a
/// claim named `pgdata-NAME-…`, `data-NAME-…` or `NAME-…`. A claim's
/// name past Kubernetes's 253 bytes (a DNS subdomain) is no claim a
/// cluster holds, and is not split.
fn claims_for<'r>(model: &Model<'r>) -> Index<(&'r str, &'r str)> {
    const MAX_NAME: usize = 253;
    // Labels Postgres operators put on their volume claims, naming the
    // cluster.
    let labels: Vec<&str> = OPERATORS.iter().filter_map(|o| o.claim_label()).collect();
    let mut entries = Vec::new();
    for r in model.of_kind("", "PersistentVolumeClaim") {
        let pvc: &'r crate::source::Object = &model.objects[r];
        let Some(ns) = pvc.namespace() else { continue };
        if pvc.root.str_at(&["spec", "volumeName"]).is_none() {
            continue;
        }
        let named = pvc.root.path(&["metadata", "labels"]);
        for l in &labels {
            if let Some(v) = named.and_then(|ls| ls.get(l)).and_then(Node::as_str) {
                entries.push(((ns, v), r));
            }
        }
        let name = pvc.name();
        if name.len() > MAX_NAME {
            continue;
        }
        for rest in [
            Some(name),
            name.strip_prefix("pgdata-"),
            name.strip_prefix("data-"),
        ]
        .into_iter()
        .flatten()
        {
            for (i, _) in rest.match_indices('-') {
                entries.push(((ns, &rest[..i]), r));
            }
        }
    }
    Index::new(entries)
}

/// The storage of a database as a live cluster shows it: a claim in its
/// namespace labelled with (or named after) the cluster, bound to a PV
/// whose CSI driver says what the storage is.
fn bound_volume(model: &Model, db: &Database) -> Option<Storage> {
    let name = db.name(model);
    let ns = model.namespace_of(db.object);
    let claim = model
        .claims_for
        .get_or_init(|| claims_for(model))
        .get(&(ns, name))
        .next()?;
    let claim_obj = model.object(claim);
    let volume = claim_obj.root.str_at(&["spec", "volumeName"])?;
    let pv = model.named("", "PersistentVolume", volume).next()?;
    let pv_obj = model.object(pv);
    let driver = pv_obj.root.path(&["spec", "csi", "driver"]).or_else(|| {
        pv_obj
            .root
            .path(&["metadata", "annotations", "pv.kubernetes.io/provisioned-by"])
    })?;
    let class = claim_obj
        .root
        .str_at(&["spec", "storageClassName"])
        .or_else(|| pv_obj.root.str_at(&["spec", "storageClassName"]))
        .unwrap_or("")
        .to_string();
    let provisioner = driver.as_str()?.to_string();
    // The copies the PV's class keeps, when that class is known.
    let copies = named(model, Some(db.object), &class)
        .find(|c| c.provisioner == provisioner)
        .and_then(|c| c.copies.clone());
    let decl = with_category(ClassDecl {
        name: class.clone(),
        provisioner,
        category: Category::Unknown,
        span: driver.span(),
        is_default: false,
        object: pv,
        copies,
    });
    Some(Storage {
        class,
        category: decl.category,
        requested_at: claim_obj.root.path(&["spec", "storageClassName"]).cloned(),
        decl,
    })
}

fn declared_storage(model: &Model, db: &Database) -> Result<Storage, Unknown> {
    db.provider.storage(model, db)
}

/// Why a class name matches no declared class: it is not declared, it is
/// declared only in another cluster's Flux tree, or it is a Flux variable
/// whose value the repository does not show (the name is then still as
/// written, `${VAR:=default}`).
fn undeclared_class(model: &Model, near: ObjRef, node: &Node, name: &str) -> String {
    let (class, name) = (name, &model.sources.shown_value(node, name.to_string()));
    match node.origin() {
        Some(Origin::Substituted {
            variable,
            defined_at,
            unknown: true,
            ..
        }) => match defined_at {
            Some(_) => format!(
                "storage class {name} is Flux variable {variable}, whose value the repository holds encrypted"
            ),
            None => {
                let applier = super::applier(model.object(near));
                format!(
                    "storage class {name} is Flux variable {variable}, which the variables of {applier} may set where the repository does not show (a substituteFrom source it does not hold in full, a name its parent substitutes from encrypted values, or variables a deployed kustomize-mutating-webhook adds)"
                )
            }
        },
        _ if let Some(c) = named(model, None, class).next() => format!(
            "storage class {name} is declared only under {}, which another Flux root applies, so \
             it is taken for another cluster than {}'s",
            super::applier(model.object(c.object)),
            model.object(near).id()
        ),
        _ => match declared_in_values(model, class) {
            Some(release) => format!(
                "storage class {name} is declared only in the values of {release}, a chart \
                 whose storage classes the tool does not know how to read"
            ),
            None => format!("storage class {name} is not declared in the repository"),
        },
    }
}

/// A HelmRelease whose values name `class` at a `name` under a key about
/// storage classes (`storageClasses[].name`, `storageClass.name`): a CSI
/// or storage chart the tool has no model of declares it there.
fn declared_in_values(model: &Model, class: &str) -> Option<String> {
    (0..model.objects.len()).find_map(|i| {
        let release = model.release(i)?;
        let mut found = false;
        release.values.walk(&mut |path, node| {
            found |= node.as_str() == Some(class)
                && matches!(path.last(), Some(PathSeg::Key("name")))
                && path.iter().any(|seg| {
                    matches!(seg, PathSeg::Key(k) if k.to_ascii_lowercase().contains("storageclass"))
                });
        });
        found.then(|| {
            let chart = release.chart.as_ref().and_then(Node::as_str).unwrap_or("?");
            format!("{} (chart {chart})", model.object(i).id())
        })
    })
}

/// The storage a claim made by `near` gets: the class it names, or the
/// default class of `near`'s cluster when it names none.
pub fn of_request(
    model: &Model,
    near: ObjRef,
    requested: Option<Node>,
) -> Result<Storage, Unknown> {
    let decl = match &requested {
        Some(node) => {
            let name = node.scalar_text().unwrap_or_default();
            named(model, Some(near), &name)
                .next()
                .cloned()
                .ok_or_else(|| Unknown(undeclared_class(model, near, node, &name)))?
        }
        None => {
            let marked: Vec<&ClassDecl> = defaults(model, Some(near)).collect();
            match marked.as_slice() {
                [one] => (*one).clone(),
                [] => {
                    let elsewhere = defaults(model, None).next();
                    return Err(Unknown(match elsewhere {
                        Some(c) => format!(
                            "no storage class is set, and the default class {} is declared only under {}, which another Flux root applies, so it is taken for another cluster than {}'s",
                            c.name,
                            super::applier(model.object(c.object)),
                            model.object(near).id()
                        ),
                        None => "no storage class is set and no default class is declared".into(),
                    }));
                }
                many => {
                    return Err(Unknown(format!(
                        "no storage class is set and {} classes are marked default",
                        many.len()
                    )));
                }
            }
        }
    };
    Ok(Storage {
        class: decl.name.clone(),
        category: decl.category,
        requested_at: requested,
        decl,
    })
}

#[cfg(test)]
mod tests;
