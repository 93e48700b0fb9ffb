//! Cluster state from files: the output of `kubectl get … -o yaml` or
//! `-o json` (single objects or lists), so a support bundle can be linted
//! without a cluster and tests can run without a server.

use std::path::{Path, PathBuf};

use super::live::{self, Unwrapped};
use super::{Issue, Object};
use crate::yaml::{FileId, Limits, SourceMap, parse_documents};

/// What a snapshot held.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub objects: Vec<Object>,
    /// Files that could not be read or parsed; the rest still loaded.
    pub issues: Vec<Issue>,
    pub files: usize,
}

/// Why a snapshot could not be read at all (a file of it that cannot be
/// read is an [`Issue`] of the snapshot instead).
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// Standard input could not be read.
    #[error("snapshot -: cannot read standard input: {0}")]
    Stdin(#[source] std::io::Error),
    /// Standard input held more than the byte budget.
    #[error("snapshot -: standard input is over the limit of {limit} bytes")]
    StdinTooLarge { limit: usize },
    /// The path names nothing.
    #[error("snapshot {}: no such file or directory", path.display())]
    Missing { path: PathBuf },
}

/// The name of standard input as a snapshot path, as kubectl's `-f -`.
pub const STDIN: &str = "-";

/// `kubectl get … -o yaml | kubectl homelab-lint --snapshot -`: the text
/// is registered as `<stdin>`, a page with no file behind it.
fn from_stdin(sources: &mut SourceMap, limits: &Limits) -> Result<Snapshot, SnapshotError> {
    use std::io::Read;
    let mut text = String::new();
    std::io::stdin()
        .take(limits.max_bytes as u64 + 1)
        .read_to_string(&mut text)
        .map_err(SnapshotError::Stdin)?;
    if text.len() > limits.max_bytes {
        return Err(SnapshotError::StdinTooLarge {
            limit: limits.max_bytes,
        });
    }
    let mut snap = Snapshot {
        files: 1,
        ..Default::default()
    };
    match register(
        sources,
        PathBuf::from("<stdin>"),
        &text,
        "snapshot from standard input",
        limits,
    ) {
        Ok(out) => snap.objects = out.objects,
        Err(issue) => snap.issues.push(issue),
    }
    Ok(snap)
}

/// Reads a file, or every `.yaml`, `.yml` and `.json` file below a
/// directory (sorted), registering each in `sources` under its path as
/// given. Secret values are emptied in the objects and blanked in the
/// registered text. Fails only when `path` does not exist.
pub fn load(
    path: &Path,
    sources: &mut SourceMap,
    limits: &Limits,
) -> Result<Snapshot, SnapshotError> {
    if path == Path::new(STDIN) {
        return from_stdin(sources, limits);
    }
    let paths: Vec<PathBuf> = if path.is_dir() {
        walkdir::WalkDir::new(path)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| !e.file_type().is_dir() && is_snapshot_file(e.path()))
            .map(|e| e.into_path())
            .collect()
    } else if path.symlink_metadata().is_ok() {
        // A device, FIFO or socket is refused by type when read, a link
        // to nothing as missing: each with its own reason.
        vec![path.to_path_buf()]
    } else {
        return Err(SnapshotError::Missing {
            path: path.to_path_buf(),
        });
    };
    let mut snap = Snapshot::default();
    for p in paths {
        snap.files += 1;
        match load_file(&p, sources, limits) {
            Ok(objs) => snap.objects.extend(objs),
            Err(issue) => snap.issues.push(issue),
        }
    }
    Ok(snap)
}

fn is_snapshot_file(p: &Path) -> bool {
    matches!(
        p.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

fn load_file(path: &Path, sources: &mut SourceMap, limits: &Limits) -> Result<Vec<Object>, Issue> {
    let bytes = super::confine::read_regular(path, limits.max_bytes)
        .map_err(|e| Issue::file(path, e.to_string()))?;
    let text =
        String::from_utf8(bytes).map_err(|_| Issue::file(path, "file is not valid UTF-8"))?;
    let detail = format!("snapshot {}", path.display());
    // Absolute, so that reports can name it from the repository's top
    // level, or by its full path outside the repository.
    let registered = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    Ok(register(sources, registered, &text, &detail, limits)?.objects)
}

/// Parses cluster output `text`, registers it (Secret values blanked)
/// under `path` and returns its objects. Shared with the cluster reader,
/// which registers each list it reads the same way.
pub fn register(
    sources: &mut SourceMap,
    path: PathBuf,
    text: &str,
    detail: &str,
    limits: &Limits,
) -> Result<Unwrapped, Issue> {
    let file = FileId(sources.len() as u32);
    let docs = parse_documents(text, file, limits).map_err(|e| Issue::yaml(&path, e))?;
    let mut out = Unwrapped::default();
    for doc in &docs {
        live::unwrap_document(doc, file, detail, &mut out);
    }
    let shown = live::redact_text(text, &out.redact);
    let id = sources.add_external(path, shown.into());
    debug_assert_eq!(id, file);
    Ok(out)
}
