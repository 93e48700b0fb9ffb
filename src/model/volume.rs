//! The volume under a path of an app's container, and the storage behind
//! it: the join workload -> volume -> claim -> storage class that a rule
//! about where an app keeps its database files needs. Plain workloads
//! (`volumes` and `volumeMounts`, StatefulSet `volumeClaimTemplates`) and
//! bjw-s app-template values (`persistence`, controller
//! `statefulset.volumeClaimTemplates`) and the k8s-at-home charts'
//! `persistence` are read; other charts' volume values are not (the step
//! then says so).

use super::app::{App, pod_spec, same_repository, split_image, workload_containers};
use super::env::{release_name, with_release_name};
use super::storage::{self, Category, ClassDecl, Storage};
use super::{Model, ObjRef, Unknown};
use crate::yaml::Node;

/// The volume mounted over an app's data path.
#[derive(Clone, Debug)]
pub struct Mount {
    /// The workload or HelmRelease.
    pub object: ObjRef,
    /// The path the app keeps its data at.
    pub data_path: String,
    /// Where the volume is mounted (`data_path` or a directory above it).
    pub mount_path: String,
    /// The volume (or persistence entry) name.
    pub volume: String,
    /// Where the mount or the volume is written.
    pub node: Node,
    pub backing: Backing,
}

#[derive(Clone, Debug)]
pub enum Backing {
    /// A PersistentVolumeClaim by name (`claimName`, `existingClaim`).
    Claim(String),
    /// A claim made from a template (a StatefulSet's
    /// `volumeClaimTemplates`, an app-template persistence entry without
    /// `existingClaim`): the class it asks for, and whether it asks for
    /// ReadWriteMany.
    Template { class: Option<Node>, shared: bool },
    /// An NFS volume written into the pod (`nfs: {server, path}`).
    Nfs { server: Node, path: String },
    /// A disk of the node (`hostPath`, `emptyDir`).
    Node(&'static str),
    /// Not storage for data (`configMap`, `secret`, ...).
    Other(String),
}

/// The volume whose mount covers `data_path` in the containers running one
/// of `images`; `Ok(None)` when no volume does (the data then lives in the
/// container's own writable layer).
pub fn at(
    model: &Model,
    app: &App,
    images: &[String],
    data_path: &str,
) -> Result<Option<Mount>, Unknown> {
    let obj = model.object(app.object);
    let candidates = match model.release(app.object) {
        Some(release) if release.values.get("controllers").is_some() => {
            app_template_mounts(model, app.object, &release.values, images)?
        }
        Some(release) if is_k8s_at_home(release) => {
            k8s_at_home_mounts(model, app.object, &release.values)?
        }
        Some(release) => {
            let chart = release
                .chart
                .as_ref()
                .and_then(Node::scalar_text)
                .unwrap_or_default();
            return Err(Unknown(format!(
                "the volumes of chart {chart} are not read (only bjw-s app-template, k8s-at-home charts and plain workloads are)"
            )));
        }
        None => workload_mounts(obj, images),
    };
    let mut best: Option<Mount> = None;
    for (mount_path, volume, node, backing) in candidates {
        let longer = best
            .as_ref()
            .is_none_or(|b| mount_path.len() > b.mount_path.len());
        if covers(&mount_path, data_path) && longer {
            best = Some(Mount {
                object: app.object,
                data_path: data_path.to_string(),
                mount_path,
                volume,
                node,
                backing,
            });
        }
    }
    Ok(best)
}

/// Whether a mount at `mount` holds `path` (whole path segments).
fn covers(mount: &str, path: &str) -> bool {
    let mount = mount.trim_end_matches('/');
    path == mount
        || path
            .strip_prefix(mount)
            .is_some_and(|rest| rest.starts_with('/'))
        || mount.is_empty()
}

type Candidate = (String, String, Node, Backing);

fn image_matches(image: &Node, images: &[String]) -> bool {
    let repo = match image.get("repository") {
        Some(r) => r.scalar_text(),
        None => image
            .as_str()
            .map(|s| split_image(s).repository.to_string()),
    };
    repo.is_some_and(|r| images.iter().any(|want| same_repository(want, &r)))
}

/// Mounts of a plain workload's containers that run one of `images`.
fn workload_mounts(obj: &crate::source::Object, images: &[String]) -> Vec<Candidate> {
    let containers = workload_containers(obj).unwrap_or_default();
    let volumes = pod_spec(obj)
        .and_then(|p| p.get("volumes"))
        .and_then(Node::as_seq);
    let templates = obj
        .root
        .path(&["spec", "volumeClaimTemplates"])
        .and_then(Node::as_seq);
    let mut out = Vec::new();
    for c in containers
        .iter()
        .filter(|c| c.get("image").is_some_and(|i| image_matches(i, images)))
    {
        for m in c
            .get("volumeMounts")
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
        {
            let (Some(name), Some(path)) = (m.str_at(&["name"]), m.get("mountPath")) else {
                continue;
            };
            let volume = volumes
                .into_iter()
                .flatten()
                .find(|v| v.str_at(&["name"]) == Some(name));
            let backing = match volume {
                Some(v) => pod_volume(v),
                None => match templates
                    .into_iter()
                    .flatten()
                    .find(|t| t.str_at(&["metadata", "name"]) == Some(name))
                {
                    Some(t) => Backing::Template {
                        class: t.path(&["spec", "storageClassName"]).cloned(),
                        shared: asks_shared(t.path(&["spec", "accessModes"])),
                    },
                    None => continue,
                },
            };
            out.push((
                path.scalar_text().unwrap_or_default(),
                name.to_string(),
                path.clone(),
                backing,
            ));
        }
    }
    out
}

/// What a pod `volumes[]` entry is.
fn pod_volume(v: &Node) -> Backing {
    if let Some(claim) = v.str_at(&["persistentVolumeClaim", "claimName"]) {
        Backing::Claim(claim.to_string())
    } else if let Some(server) = v.path(&["nfs", "server"]) {
        Backing::Nfs {
            server: server.clone(),
            path: v.str_at(&["nfs", "path"]).unwrap_or("/").to_string(),
        }
    } else if let Some(t) = v.path(&["ephemeral", "volumeClaimTemplate", "spec"]) {
        Backing::Template {
            class: t.get("storageClassName").cloned(),
            shared: asks_shared(t.get("accessModes")),
        }
    } else if v.get("hostPath").is_some() {
        Backing::Node("hostPath")
    } else if v.get("emptyDir").is_some() {
        Backing::Node("emptyDir")
    } else {
        let kind = v
            .as_map()
            .and_then(|m| {
                m.iter()
                    .filter_map(|(k, _)| k.as_str())
                    .find(|k| *k != "name")
            })
            .unwrap_or("unknown");
        Backing::Other(kind.to_string())
    }
}

fn asks_shared(modes: Option<&Node>) -> bool {
    let text = |n: &Node| n.scalar_text().unwrap_or_default();
    match modes {
        Some(n) => match n.as_seq() {
            Some(list) => list.iter().any(|m| text(m) == "ReadWriteMany"),
            None => text(n) == "ReadWriteMany",
        },
        None => false,
    }
}

/// Mounts bjw-s app-template renders for the containers that run one of
/// `images`. A persistence entry without `globalMounts` and
/// `advancedMounts` is mounted at `/<key>` in every container; a mount
/// without `path` too (common library `_volumeMounts.tpl`:
/// `$mountPath := (printf "/%v" $persistenceIndex)`). A `hostPath` entry
/// defaults to its host path.
fn app_template_mounts(
    model: &Model,
    r: ObjRef,
    values: &Node,
    images: &[String],
) -> Result<Vec<Candidate>, Unknown> {
    let release = release_name(model, r);
    // (controller, container) pairs that run the app.
    let mut runs = Vec::new();
    let mut claim_templates = Vec::new();
    for (c, controller) in values
        .get("controllers")
        .and_then(Node::as_map)
        .into_iter()
        .flatten()
    {
        let c = c.scalar_text().unwrap_or_default();
        for list in ["containers", "initContainers"] {
            for (k, container) in controller
                .get(list)
                .and_then(Node::as_map)
                .into_iter()
                .flatten()
            {
                if container
                    .get("image")
                    .is_some_and(|i| image_matches(i, images))
                {
                    runs.push((c.clone(), k.scalar_text().unwrap_or_default()));
                }
            }
        }
        for t in controller
            .path(&["statefulset", "volumeClaimTemplates"])
            .and_then(Node::as_seq)
            .into_iter()
            .flatten()
        {
            claim_templates.push((c.clone(), t));
        }
    }
    let mut out = Vec::new();
    for (key, name, entry, backing) in persistence(values, &release)? {
        for (path, node) in mounts_of(entry, &runs, &default_path(&name, entry), key) {
            out.push((path, name.clone(), node, backing.clone()));
        }
    }
    for (c, t) in claim_templates {
        let Some(name) = t.str_at(&["name"]) else {
            continue;
        };
        let backing = Backing::Template {
            class: t.get("storageClass").cloned(),
            shared: asks_shared(t.get("accessMode")),
        };
        let owned: Vec<(String, String)> =
            runs.iter().filter(|(rc, _)| *rc == c).cloned().collect();
        let key = t.get("name").unwrap_or(t);
        for (path, node) in mounts_of(t, &owned, &format!("/{name}"), key) {
            out.push((path, name.to_string(), node, backing.clone()));
        }
    }
    Ok(out)
}

/// The enabled `persistence` entries of chart values (bjw-s app-template,
/// and the k8s-at-home common library it grew from, share the schema of
/// an entry's volume), each with its key node, name and volume.
fn persistence<'v>(
    values: &'v Node,
    release: &str,
) -> Result<Vec<(&'v Node, String, &'v Node, Backing)>, Unknown> {
    let mut out = Vec::new();
    for (key, entry) in values
        .get("persistence")
        .and_then(Node::as_map)
        .into_iter()
        .flatten()
    {
        if entry.get("enabled").and_then(Node::as_bool_lenient) == Some(false) {
            continue;
        }
        let name = key.scalar_text().unwrap_or_default();
        let backing = match entry.str_at(&["type"]).unwrap_or("persistentVolumeClaim") {
            "persistentVolumeClaim" | "pvc" => match entry.get("existingClaim").and_then(Node::scalar_text) {
                Some(claim) if !claim.is_empty() => Backing::Claim(with_release_name(&claim, release).ok_or_else(|| {
                    Unknown(format!("existingClaim {claim} of persistence.{name} is a template the linter does not render"))
                })?),
                _ => Backing::Template {
                    class: entry.get("storageClass").cloned(),
                    shared: asks_shared(entry.get("accessMode")),
                },
            },
            "nfs" => match entry.get("server") {
                Some(server) => Backing::Nfs {
                    server: server.clone(),
                    path: entry.str_at(&["path"]).unwrap_or("/").to_string(),
                },
                None => continue,
            },
            "hostPath" => Backing::Node("hostPath"),
            "emptyDir" => Backing::Node("emptyDir"),
            "custom" => match entry.get("volumeSpec") {
                Some(spec) => pod_volume(spec),
                None => continue,
            },
            other => Backing::Other(other.to_string()),
        };
        out.push((key, name, entry, backing));
    }
    Ok(out)
}

/// Where an entry is mounted when it names no path: `/<key>`, or its
/// host path for a `hostPath` entry.
fn default_path(name: &str, entry: &Node) -> String {
    match entry.str_at(&["type"]) {
        Some("hostPath") => entry.str_at(&["hostPath"]).map(str::to_string),
        _ => None,
    }
    .unwrap_or_else(|| format!("/{name}"))
}

/// Charts of the k8s-at-home repository (archived, still deployed), built
/// on its common library.
fn is_k8s_at_home(release: &crate::source::helm::Release) -> bool {
    release.source.as_ref().is_some_and(|s| {
        s.name.contains("k8s-at-home")
            || s.url
                .as_ref()
                .and_then(Node::as_str)
                .is_some_and(|u| u.contains("k8s-at-home"))
    })
}

/// Mounts the k8s-at-home common library renders into the main container:
/// `mountPath` (default `/<key>`, `-` for none), or a `subPath` list of
/// `{path, mountPath}` (library `_volumeMounts.tpl`).
fn k8s_at_home_mounts(model: &Model, r: ObjRef, values: &Node) -> Result<Vec<Candidate>, Unknown> {
    let release = release_name(model, r);
    let mut out = Vec::new();
    for (key, name, entry, backing) in persistence(values, &release)? {
        let mut push = |path: String, node: &Node| {
            out.push((path, name.clone(), node.clone(), backing.clone()))
        };
        match entry.get("subPath").and_then(Node::as_seq) {
            Some(list) => list.iter().for_each(|item| {
                if let Some(p) = item.get("mountPath") {
                    push(p.scalar_text().unwrap_or_default(), p);
                }
            }),
            None => match entry.get("mountPath") {
                Some(p) if p.as_str() == Some("-") => {}
                Some(p) => push(p.scalar_text().unwrap_or_default(), p),
                None => push(default_path(&name, entry), key),
            },
        }
    }
    Ok(out)
}

/// The paths an app-template entry is mounted at in the containers of `runs`.
fn mounts_of(
    entry: &Node,
    runs: &[(String, String)],
    default_path: &str,
    key: &Node,
) -> Vec<(String, Node)> {
    if runs.is_empty() {
        return Vec::new();
    }
    let global = entry.get("globalMounts").and_then(Node::as_seq);
    let advanced = entry.get("advancedMounts").and_then(Node::as_map);
    if global.is_none() && advanced.is_none() {
        return vec![(default_path.to_string(), key.clone())];
    }
    let mut items: Vec<&Node> = global.into_iter().flatten().collect();
    for (c, containers) in advanced.into_iter().flatten() {
        for (k, list) in containers.as_map().into_iter().flatten() {
            let pair = (
                c.scalar_text().unwrap_or_default(),
                k.scalar_text().unwrap_or_default(),
            );
            if runs.contains(&pair) {
                items.extend(list.as_seq().into_iter().flatten());
            }
        }
    }
    items
        .into_iter()
        .map(|m| match m.get("path") {
            Some(p) => (p.scalar_text().unwrap_or_default(), p.clone()),
            None => (default_path.to_string(), key.clone()),
        })
        .collect()
}

/// The storage behind a mount; `Ok(None)` for volumes that hold no data
/// of their own (ConfigMaps, Secrets).
pub fn storage(model: &Model, m: &Mount) -> Result<Option<Storage>, Unknown> {
    let ns = model.namespace_of(m.object);
    let st = match &m.backing {
        Backing::Claim(name) => {
            let pvc = model
                .find(m.object, "", "PersistentVolumeClaim", ns, name)
                .ok_or_else(|| {
                    Unknown(model.not_found(
                        m.object,
                        "PersistentVolumeClaim",
                        ns,
                        &format!("claim {name}"),
                    ))
                })?;
            claim_storage(model, pvc)?
        }
        Backing::Template { class, shared } => shared_on(
            storage::of_request(model, m.object, class.clone())?,
            *shared,
        ),
        Backing::Nfs { server, path } => {
            let name = format!(
                "NFS share {}:{path}",
                server.scalar_text().unwrap_or_default()
            );
            inline(
                m.object,
                name,
                "nfs volume",
                Category::NetworkFilesystem,
                server,
            )
        }
        Backing::Node(kind) => inline(
            m.object,
            format!("{kind} volume {}", m.volume),
            kind,
            Category::Local,
            &m.node,
        ),
        Backing::Other(_) => return Ok(None),
    };
    Ok(Some(st))
}

/// The storage of a claim: the static PV it binds (its `nfs` or CSI
/// driver), else its class.
fn claim_storage(model: &Model, pvc: ObjRef) -> Result<Storage, Unknown> {
    let root = &model.object(pvc).root;
    let shared = asks_shared(root.path(&["spec", "accessModes"]));
    let pv = root
        .str_at(&["spec", "volumeName"])
        .and_then(|v| model.find(pvc, "", "PersistentVolume", "", v));
    if let Some(pv) = pv {
        let pv_root = &model.object(pv).root;
        if let Some(server) = pv_root.path(&["spec", "nfs", "server"]) {
            let path = pv_root.str_at(&["spec", "nfs", "path"]).unwrap_or("/");
            let name = format!(
                "NFS share {}:{path}",
                server.scalar_text().unwrap_or_default()
            );
            return Ok(inline(
                pv,
                name,
                "nfs volume",
                Category::NetworkFilesystem,
                server,
            ));
        }
        if let Some(driver) = pv_root.path(&["spec", "csi", "driver"]) {
            let provisioner = driver.scalar_text().unwrap_or_default();
            let category = storage::categorize(&provisioner);
            let name = format!("PersistentVolume {}", model.object(pv).name());
            let mut st = inline(pv, name, &provisioner, category, driver);
            st.decl.copies = storage::csi_volume_copies(model, pv);
            st.decl = storage::with_category(st.decl);
            st.category = st.decl.category;
            return Ok(shared_on(st, shared));
        }
    }
    Ok(shared_on(
        storage::of_request(
            model,
            pvc,
            root.path(&["spec", "storageClassName"]).cloned(),
        )?,
        shared,
    ))
}

/// A ReadWriteMany Longhorn volume is served over NFSv4 by a share-manager
/// pod (Longhorn docs, "ReadWriteMany (RWX) Volume"), a network file system
/// whatever the class says of block volumes.
fn shared_on(mut st: Storage, shared: bool) -> Storage {
    if shared && st.decl.provisioner == "driver.longhorn.io" {
        st.category = Category::NetworkFilesystem;
        st.decl.category = Category::NetworkFilesystem;
        st.decl.provisioner = "driver.longhorn.io (ReadWriteMany, served over NFS)".into();
    }
    st
}

fn inline(
    object: ObjRef,
    name: String,
    provisioner: &str,
    category: Category,
    at: &Node,
) -> Storage {
    Storage {
        class: name.clone(),
        requested_at: None,
        decl: ClassDecl {
            name,
            provisioner: provisioner.to_string(),
            category,
            span: at.span(),
            is_default: false,
            object,
            copies: None,
        },
        category,
    }
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn mounts_cover_whole_segments() {
        assert!(covers("/config", "/config/sonarr.db"));
        assert!(covers("/config/", "/config/sonarr.db"));
        assert!(covers("/config", "/config"));
        assert!(!covers("/conf", "/config/sonarr.db"));
        assert!(covers("/", "/data/db.sqlite3"));
    }
}
