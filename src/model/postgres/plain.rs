//! Postgres run as a plain workload: a Deployment or StatefulSet whose
//! container runs a Postgres server image (the official `postgres` and
//! the images built on it: postgis, timescaledb, pgvecto-rs, pgvector,
//! CloudNativePG's; Bitnami's `postgresql`), reached through a Service
//! that selects its pods. Its settings are the server's command line
//! (`-c name=value` in `args` or `command`) and a postgresql.conf from a
//! ConfigMap that `config_file` names, else the defaults; its data is on
//! the volume mounted over its data directory.

use super::{ParameterForm, ParameterHome, ParameterMap, PostgresOperator, int_at};
use crate::model::app::{App, pod_spec, split_image};
use crate::model::database::Database;
use crate::model::settings;
use crate::model::storage::{self, Storage};
use crate::model::{Model, ObjRef, Unknown, volume};
use crate::source::Object;
use crate::yaml::Node;

pub struct Plain;

const REPLICAS: &[&str] = &["spec", "replicas"];

impl PostgresOperator for Plain {
    fn name(&self) -> &'static str {
        "plain Postgres"
    }

    fn declared_kinds(&self) -> &'static [(&'static str, &'static str)] {
        &[("apps", "Deployment"), ("apps", "StatefulSet")]
    }

    fn declares(&self, model: &Model, r: ObjRef) -> bool {
        server(model.object(r)).is_some()
    }

    /// Each replica of a plain workload is a server of its own.
    fn instances(&self, model: &Model, object: ObjRef, _values_key: &str) -> i64 {
        int_at(&model.object(object).root, REPLICAS).unwrap_or(1)
    }

    fn instances_written<'m>(&self, model: &Model<'m>, object: ObjRef) -> Vec<&'m Node> {
        model.object(object).root.path(REPLICAS).into_iter().collect()
    }

    /// The workload whose pods the Service selects; without such a
    /// Service, a StatefulSet named like the host (its governing Service
    /// usually is).
    fn by_service(&self, model: &Model, near: ObjRef, service: &str, ns: &str) -> Option<ObjRef> {
        let in_ns = |o: &Object| o.namespace().is_none_or(|n| n == ns);
        let near_obj = model.object(near);
        if let Some(svc) = model.find(near, "", "Service", ns, service) {
            let selector = model
                .object(svc)
                .root
                .path(&["spec", "selector"])
                .and_then(Node::as_map)
                .filter(|m| !m.is_empty())?;
            return model.selected_by(selector).find(|&i| {
                let o = model.object(i);
                in_ns(o) && o.same_tree(near_obj) && server(o).is_some()
            });
        }
        model
            .find(near, "apps", "StatefulSet", ns, service)
            .filter(|r| server(model.object(*r)).is_some())
    }

    /// `args` before `command`: the server reads its command line in
    /// order and the last value wins, and `args` come after `command`.
    /// Then the file `config_file` names, when a ConfigMap is mounted
    /// there.
    fn parameter_maps(&self, model: &Model, db: &Database) -> Vec<ParameterMap> {
        let Some(c) = server(model.object(db.object)) else {
            return Vec::new();
        };
        let line: Vec<ParameterMap> = ["args", "command"]
            .iter()
            .filter_map(|k| {
                c.get(k)
                    .cloned()
                    .map(|n| ParameterMap::new(n, *k, ParameterForm::Args))
            })
            .collect();
        let config_file = line
            .iter()
            .find_map(|m| settings::lookup(&m.node, "config_file"));
        let mut maps = line;
        // Bitnami's entrypoint appends POSTGRESQL_EXTRA_FLAGS to the
        // server's command line (`postgresql_start_bg` in
        // opt/bitnami/scripts/libpostgresql.sh).
        if is_bitnami(c) {
            maps.extend(env_flags(c, "POSTGRESQL_EXTRA_FLAGS"));
        }
        match config_file {
            Some((path, _)) => maps.extend(mounted_config(model, db.object, c, &path)),
            // The official entrypoint hands POSTGRES_INITDB_ARGS to initdb,
            // whose `-c`/`--set name=value` (PostgreSQL 16) writes the
            // data directory's postgresql.conf, the file read when no
            // config_file points elsewhere: in effect only if it was set
            // when the data directory was created.
            None if !is_bitnami(c) => maps.extend(env_flags(c, "POSTGRES_INITDB_ARGS")),
            None => {}
        }
        maps
    }

    /// The official image's entrypoint passes arguments that start with
    /// `-` to postgres (`docker-entrypoint.sh`); Bitnami's runs its
    /// arguments as the command (`exec "$@"` in
    /// `opt/bitnami/scripts/postgresql/entrypoint.sh`), so `-c` there
    /// would replace the server.
    fn parameter_home<'m>(&self, model: &Model<'m>, db: &Database) -> Option<ParameterHome<'m>> {
        let c = server(model.object(db.object));
        Some(ParameterHome::Args(match c {
            None => Err("the workload runs no Postgres server container".into()),
            Some(c) if is_bitnami(c) => Err(
                "the bitnami/postgresql image runs its arguments as a command: pass the \
                 setting in POSTGRESQL_EXTRA_FLAGS (-c name=value) instead"
                    .into(),
            ),
            Some(c) => Ok(c),
        }))
    }

    fn init_sql_home(&self) -> Option<&'static str> {
        Some(
            "put the statement into a script in /docker-entrypoint-initdb.d (runs once, on an empty data directory)",
        )
    }

    /// The volume mounted over the data directory: a claim (and the
    /// static volume it binds), a claim template, or a volume of the pod.
    fn storage(&self, model: &Model, db: &Database) -> Result<Storage, Unknown> {
        let obj = model.object(db.object);
        let c = server(obj).ok_or_else(|| Unknown(format!("{} runs no Postgres server", obj.id())))?;
        let image = c.str_at(&["image"]).unwrap_or_default();
        let data = data_directory(c, image);
        let app = App {
            object: db.object,
            identity: String::new(),
            version: None,
            version_node: None,
        };
        let repository = split_image(image).repository.to_string();
        let Some(mount) = volume::at(model, &app, &[repository], &data)? else {
            // The data directory may be set where the repository does not
            // show it (`envFrom`); a StatefulSet's claims then still say
            // where its data is.
            let templates = obj.root.path(&["spec", "volumeClaimTemplates"]);
            return match templates.and_then(Node::as_seq).and_then(|t| t.first()) {
                Some(t) => storage::of_request(
                    model,
                    db.object,
                    super::nonempty(t.path(&["spec", "storageClassName"])),
                ),
                None => Err(Unknown(format!(
                    "no volume of {} is mounted over its data directory {data}: the data lives in the container's own writable layer",
                    obj.id()
                ))),
            };
        };
        volume::storage(model, &mount)?.ok_or_else(|| {
            Unknown(format!(
                "volume {} over the data directory {data} of {} holds no data of its own",
                mount.volume,
                obj.id()
            ))
        })
    }
}

/// Image names (the repository's last part) of Postgres servers.
const SERVER_IMAGES: &[&str] = &[
    "postgres",
    "postgresql",
    "postgis",
    "timescaledb",
    "timescaledb-ha",
    "pgvecto-rs",
    "pgvector",
];

/// Whether an image repository (`library/postgres`, without tag) is the
/// official `postgres` image or one built on it, whose entrypoint is
/// docker-library's `docker-entrypoint.sh`, not Bitnami's scripts.
pub(super) fn official_based(repository: &str) -> bool {
    let mut parts = repository.rsplit('/');
    let name = parts.next().unwrap_or_default();
    let owner = parts.next().unwrap_or_default();
    SERVER_IMAGES.contains(&name)
        && !owner.starts_with("bitnami")
        && (name != "postgresql" || owner == "cloudnative-pg")
}

/// The container of a Deployment or StatefulSet that runs a Postgres
/// server. Init containers are not servers, nor is a container of a
/// server image that runs another program (`psql`, `pg_dump`, a shell).
fn server(obj: &Object) -> Option<&Node> {
    if !(obj.is("apps", "Deployment") || obj.is("apps", "StatefulSet")) {
        return None;
    }
    let containers = pod_spec(obj)?.get("containers")?.as_seq()?;
    containers.iter().find(|c| {
        let image = c.str_at(&["image"]).unwrap_or_default();
        let name = split_image(image).repository.rsplit('/').next();
        name.is_some_and(|n| SERVER_IMAGES.contains(&n)) && runs_server(c)
    })
}

/// Whether the container starts the image's server: no command of its
/// own, or one that is `postgres` or an entrypoint of the images, whose
/// first argument is a flag (the official entrypoint then runs postgres
/// with it) or one of those.
fn runs_server(c: &Node) -> bool {
    let first = |key: &str| {
        c.get(key)
            .and_then(Node::as_seq)
            .and_then(|s| s.first())
            .and_then(Node::scalar_text)
    };
    let starts = |word: &str| {
        let program = word.rsplit('/').next().unwrap_or(word);
        matches!(
            program,
            "postgres" | "docker-entrypoint.sh" | "entrypoint.sh" | "run.sh"
        )
    };
    match (first("command"), first("args")) {
        (Some(command), _) => starts(&command),
        (None, Some(arg)) => arg.starts_with('-') || starts(&arg),
        (None, None) => true,
    }
}

/// A literal env value of the container read as command-line words
/// (`-c synchronous_commit=off --set fsync=on`), each word keeping the
/// value's place, for [`settings::lookup`].
fn env_flags(c: &Node, var: &str) -> Option<ParameterMap> {
    let value = c
        .get("env")?
        .as_seq()?
        .iter()
        .find(|e| e.str_at(&["name"]) == Some(var))?
        .get("value")?;
    let words: Vec<Node> = value
        .as_str()?
        .split_whitespace()
        .map(|w| {
            let w = if w == "--set" { "-c" } else { w };
            Node::new(crate::yaml::Value::Str(w.into()), value.span())
        })
        .collect();
    let seq = Node::new(crate::yaml::Value::Seq(words.into()), value.span());
    Some(ParameterMap::new(seq, format!("env {var}"), ParameterForm::Args))
}

fn is_bitnami(c: &Node) -> bool {
    let image = c.str_at(&["image"]).unwrap_or_default();
    split_image(image)
        .repository
        .rsplit('/')
        .nth(1)
        .is_some_and(|owner| owner.starts_with("bitnami"))
}

/// `PGDATA` as the container sets it, else the image's: Bitnami's
/// `/bitnami/postgresql/data`, the official image's
/// `/var/lib/postgresql/data` (`/var/lib/postgresql/<major>/docker` from
/// 18 on).
fn data_directory(c: &Node, image: &str) -> String {
    let env = c.get("env").and_then(Node::as_seq).into_iter().flatten();
    let set = env
        .filter(|e| e.str_at(&["name"]) == Some("PGDATA"))
        .find_map(|e| e.get("value").and_then(Node::scalar_text));
    if let Some(dir) = set.filter(|d| d.starts_with('/')) {
        return dir;
    }
    if is_bitnami(c) {
        return "/bitnami/postgresql/data".into();
    }
    let major = split_image(image)
        .tag
        .and_then(|t| t.split(['.', '-']).next())
        .and_then(|m| m.parse::<u32>().ok());
    match major {
        Some(m) if (18..100).contains(&m) => format!("/var/lib/postgresql/{m}/docker"),
        _ => "/var/lib/postgresql/data".into(),
    }
}

/// The text of the ConfigMap key mounted at `path` in container `c`: a
/// `subPath` mount of the file itself, or the ConfigMap's directory with
/// the key (or an `items` entry) named like the file.
fn mounted_config(model: &Model, r: ObjRef, c: &Node, path: &str) -> Option<ParameterMap> {
    let (dir, file) = path.rsplit_once('/')?;
    let volumes = pod_spec(model.object(r))?.get("volumes")?.as_seq()?;
    c.get("volumeMounts")?.as_seq()?.iter().find_map(|m| {
        let mount_path = m.str_at(&["mountPath"])?.trim_end_matches('/');
        let volume = volumes
            .iter()
            .find(|v| v.str_at(&["name"]) == m.str_at(&["name"]))?;
        let cm = volume.get("configMap")?;
        let name = cm.str_at(&["name"])?;
        let key = match m.str_at(&["subPath"]) {
            Some(sub) if mount_path == path => sub.to_string(),
            // Listed `items` are the only keys projected, each at its path.
            None if mount_path == dir => match cm.get("items").and_then(Node::as_seq) {
                Some(items) => items
                    .iter()
                    .find(|i| i.str_at(&["path"]) == Some(file))?
                    .str_at(&["key"])?
                    .to_string(),
                None => file.to_string(),
            },
            _ => return None,
        };
        let found = model.find(r, "", "ConfigMap", model.namespace_of(r), name)?;
        let text = model.object(found).root.path(&["data", &key])?;
        Some(ParameterMap::new(
            text.clone(),
            format!("ConfigMap {name} key {key}"),
            ParameterForm::ConfBlock,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(text: &str) -> Node {
        crate::yaml::parse_documents(
            text,
            crate::yaml::FileId(0),
            &crate::yaml::Limits::default(),
        )
        .unwrap()
        .remove(0)
    }

    #[test]
    fn a_server_image_running_a_client_is_no_server() {
        assert!(runs_server(&container("image: postgres:16\n")));
        assert!(runs_server(&container(
            "image: postgres:16\nargs: [-c, synchronous_commit=off]\n"
        )));
        assert!(runs_server(&container(
            "image: postgres:16\ncommand: [postgres, -c, fsync=on]\n"
        )));
        assert!(!runs_server(&container(
            "image: postgres:16\ncommand: [psql, -h, db]\n"
        )));
        assert!(!runs_server(&container(
            "image: postgres:16\ncommand: [sh, -c, 'pg_dump -h db > /backup/db.sql']\n"
        )));
        assert!(!runs_server(&container(
            "image: postgres:16\nargs: [pg_isready, -h, db]\n"
        )));
    }

    #[test]
    fn images_on_the_official_entrypoint_are_told_from_bitnamis() {
        for official in [
            "library/postgres",
            "postgres",
            "postgis/postgis",
            "ghcr.io/cloudnative-pg/postgresql",
            "tensorchord/pgvecto-rs",
        ] {
            assert!(official_based(official), "{official}");
        }
        for bitnami in [
            "bitnami/postgresql",
            "bitnamilegacy/postgresql",
            "mirror.local/postgresql",
            "library/redis",
        ] {
            assert!(!official_based(bitnami), "{bitnami}");
        }
    }

    #[test]
    fn data_directories_by_image() {
        let dir = |text: &str| {
            let c = container(text);
            let image = c.str_at(&["image"]).unwrap_or_default().to_string();
            data_directory(&c, &image)
        };
        assert_eq!(dir("image: postgres:16.4\n"), "/var/lib/postgresql/data");
        assert_eq!(dir("image: postgres:18\n"), "/var/lib/postgresql/18/docker");
        assert_eq!(
            dir("image: docker.io/bitnami/postgresql:17\n"),
            "/bitnami/postgresql/data"
        );
        assert_eq!(
            dir("image: postgres:16\nenv: [{name: PGDATA, value: /data/pg}]\n"),
            "/data/pg"
        );
    }
}
