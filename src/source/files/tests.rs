use super::*;
use crate::source::join_within;

#[test]
fn jobs_on_forks_leave_what_jobs_in_order_leave() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("a.yaml", "a: 1\n"), ("b.env", "B=1\n"), ("c.env", "C=1\n")] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let mut files = Files::new(dir.path(), Limits::default());
    files.preload(&[PathBuf::from("a.yaml")]);
    let jobs = ["a.yaml", "c.env", "a.yaml", "b.env", "c.env", "a.yaml"];
    let ids = files.each_in_order(
        &jobs,
        |_| true,
        |files, path| {
            let by = PathBuf::from(format!("by-{path}-{}", files.sources.len()));
            files.note_input(PathBuf::from("shared"), Input::Patch, by);
            files.text(Path::new(path)).map(|(id, _)| id.0)
        },
    );
    // Files read late are registered in the order of the jobs, not
    // of the threads: c.env by the second job, b.env by the fourth.
    let ids: Vec<u32> = ids.into_iter().map(Result::unwrap).collect();
    assert_eq!(ids, [0, 1, 0, 2, 1, 0]);
    assert_eq!(files.sources.len(), 3);
    // The first job's note is kept.
    assert_eq!(
        files.inputs[Path::new("shared")].1,
        Path::new("by-a.yaml-1")
    );
}

#[test]
fn forks_take_the_shared_parse_and_the_files_drop_it_in_order() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.yaml", "b.yaml"] {
        std::fs::write(dir.path().join(name), "k: v\n").unwrap();
    }
    let mut files = Files::new(dir.path(), Limits::default());
    let rels = [PathBuf::from("a.yaml"), PathBuf::from("b.yaml")];
    files.preload(&rels);
    // As in a repository too large for takes to copy.
    files.parsed.keep_taken = false;
    let cached: Vec<Arc<Node>> = rels
        .iter()
        .map(|rel| files.documents(rel).unwrap().docs[0].clone())
        .collect();
    // Each file is taken twice, by jobs on whichever fork (or here).
    let jobs = [0, 1, 0, 1];
    let taken = files.each_in_order(
        &jobs,
        |_| true,
        |files, &i| files.take_documents(&rels[i]).unwrap().docs[0].clone(),
    );
    let shared: Vec<bool> = taken
        .iter()
        .zip(jobs)
        .map(|(node, i)| Arc::ptr_eq(node, &cached[i]))
        .collect();
    // The first take of each is the parse the files hold, not a copy,
    // and the files drop it once the forks are done (and gone).
    assert!(shared[0] && shared[1], "{shared:?}");
    assert!(held_for(&files, &rels[0]).is_none());
    assert!(held_for(&files, &rels[1]).is_none());
    assert!(Arc::get_mut(&mut files.parsed.shared).is_some());
}

/// What the files' cache holds for `rel`.
fn held_for<'a>(files: &'a Files, rel: &Path) -> Option<&'a Cached> {
    files.parsed.get(files.id_of(rel)?)
}

/// Files of a directory holding one YAML file, preloaded.
fn one_file_loaded() -> (tempfile::TempDir, Files, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), "k: v\n").unwrap();
    let mut files = Files::new(dir.path(), Limits::default());
    let rel = PathBuf::from("a.yaml");
    files.preload(std::slice::from_ref(&rel));
    (dir, files, rel)
}

#[test]
fn each_chunk_of_jobs_on_forks_is_taken_before_the_next_is_forked() {
    let (_dir, mut files, rel) = one_file_loaded();
    // As in a repository too large for takes to copy.
    files.parsed.keep_taken = false;
    let cached = files.documents(&rel).unwrap().docs[0].clone();
    let jobs = vec![(); fork::JOBS_PER_FORK + 1];
    let taken = files.each_in_order(
        &jobs,
        |_| true,
        |files, _| files.take_documents(&rel).unwrap().docs[0].clone(),
    );
    // The first job takes the parse the files hold. The files drop it
    // once the first chunk is taken, so the job past that chunk parses
    // the text again instead of sharing a parse the files still hold
    // (which a build that changes it would have to copy).
    let last = &taken[fork::JOBS_PER_FORK];
    assert!(Arc::ptr_eq(&taken[0], &cached));
    assert!(!Arc::ptr_eq(last, &cached));
    assert_eq!(**last, *cached);
    assert!(held_for(&files, &rel).is_none());
}

/// In a small repository every take copies the parse the files hold,
/// on a fork or here, and the files keep it: a file several builds take
/// is parsed once.
#[test]
fn in_a_small_repository_takes_copy_the_parse_and_the_files_keep_it() {
    let (_dir, mut files, rel) = one_file_loaded();
    assert!(files.parsed.keep_taken);
    let cached = files.documents(&rel).unwrap().docs[0].clone();
    let jobs = [(), ()];
    let taken = files.each_in_order(
        &jobs,
        |_| true,
        |files, _| files.take_documents(&rel).unwrap().docs[0].clone(),
    );
    let here = files.take_documents(&rel).unwrap().docs[0].clone();
    for node in taken.iter().chain([&here]) {
        assert_eq!(**node, *cached);
    }
    let held = held_for(&files, &rel).unwrap().as_ref().unwrap();
    assert!(Arc::ptr_eq(&held.docs[0], &cached));
}

/// In a large one the first take moves the parse out, and a file taken
/// again is parsed once more and then kept for the takes after.
#[test]
fn in_a_large_repository_a_file_taken_twice_is_kept_after() {
    let (_dir, mut files, rel) = one_file_loaded();
    // As in a repository too large for takes to copy.
    files.parsed.keep_taken = false;
    files.take_documents(&rel).unwrap();
    assert!(held_for(&files, &rel).is_none());
    let second = files.take_documents(&rel).unwrap().docs[0].clone();
    let held = held_for(&files, &rel).unwrap().as_ref().unwrap();
    assert_eq!(*held.docs[0], *second);
    let third = files.take_documents(&rel).unwrap().docs[0].clone();
    assert!(held_for(&files, &rel).is_some());
    assert_eq!(*third, *second);
}

#[test]
fn join_within_folds_dots_and_refuses_escape() {
    assert_eq!(
        join_within(Path::new("apps/auth"), "../../components/db").unwrap(),
        PathBuf::from("components/db")
    );
    assert_eq!(
        join_within(Path::new("a"), "./b/./c").unwrap(),
        PathBuf::from("a/b/c")
    );
    assert!(join_within(Path::new("a"), "../../x").is_none());
    assert!(join_within(Path::new("a"), "/etc/passwd").is_none());
}

/// A reused build's check of a text ([`Files::text_is`]) answers as
/// asking [`Files::text`] again and comparing would, whether or not the
/// file is looked up by its path.
#[test]
fn a_text_is_checked_as_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("a.yaml", "a: 1\n"), ("b.env", "B=1\n")] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let mut files = Files::new(dir.path(), Limits::default());
    files.preload(&[PathBuf::from("a.yaml")]);
    let (a, text) = files.text(Path::new("a.yaml")).unwrap();
    let same: Arc<str> = Arc::from("a: 1\n");
    let other: Arc<str> = Arc::from("a: 2\n");
    assert!(files.text_is(Path::new("a.yaml"), a, &text));
    assert!(
        files.text_is(Path::new("a.yaml"), a, &same),
        "equal text, other Arc"
    );
    assert!(!files.text_is(Path::new("a.yaml"), a, &other));
    assert!(
        !files.text_is(Path::new("a.yaml"), FileId(1), &text),
        "another id"
    );
    // Not registered yet: read and registered, as a read would.
    let env: Arc<str> = Arc::from("B=1\n");
    assert!(files.text_is(Path::new("b.env"), FileId(1), &env));
    assert_eq!(files.sources.find(Path::new("b.env")), Some(FileId(1)));
    // A path registered twice is looked up, not taken from the id.
    files.sources.add(PathBuf::from("a.yaml"), other.clone());
    assert!(!files.text_is(Path::new("a.yaml"), a, &text));
    assert!(files.text_is(Path::new("a.yaml"), FileId(2), &other));
}

/// The documents' vector holds no room past them: the parse's own vector
/// grows by doubling, and a large repository keeps one per file.
#[test]
fn a_files_documents_take_only_their_room() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), "a: 1\n").unwrap();
    std::fs::write(dir.path().join("b.yaml"), "a: 1\n---\nb: 2\n---\nc: 3\n").unwrap();
    let mut files = Files::new(dir.path(), Limits::default());
    for (rel, len) in [("a.yaml", 1), ("b.yaml", 3)] {
        let parsed = files.documents(Path::new(rel)).unwrap();
        assert_eq!((parsed.docs.len(), parsed.docs.capacity()), (len, len));
    }
}

#[test]
fn one_lookup_answers_as_the_three_questions_do() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("x.yaml"), "k: v\n").unwrap();
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    std::fs::create_dir_all(root.join("app/base")).unwrap();
    std::fs::create_dir_all(root.join("two")).unwrap();
    for file in [
        "app/kustomization.yaml",
        "app/base/a.yaml",
        "app/skipped.yaml",
        "two/kustomization.yaml",
        "two/Kustomization",
    ] {
        std::fs::write(root.join(file), "k: v\n").unwrap();
    }
    std::os::unix::fs::symlink(outside.path(), root.join("out")).unwrap();
    std::os::unix::fs::symlink(root.join("app"), root.join("inside")).unwrap();
    let ignored = crate::source::ignored::Ignored::new(vec!["app/skipped.yaml".into()]);
    let files = Files::new(root, Limits::default()).ignoring(ignored);
    let three = |rel: &Path| match files.outside(rel) {
        Some(reason) => Err(reason),
        None if files.is_file(rel) => Ok(EntryKind::File),
        None if files.is_dir(rel) => Ok(EntryKind::Dir),
        None => Ok(EntryKind::Neither),
    };
    let asked = [
        ("app", Some(EntryKind::Dir)),
        ("app/kustomization.yaml", Some(EntryKind::File)),
        ("app/base/a.yaml", Some(EntryKind::File)),
        ("app/skipped.yaml", Some(EntryKind::Neither)),
        ("app/missing", Some(EntryKind::Neither)),
        ("missing/a.yaml", Some(EntryKind::Neither)),
        ("inside", Some(EntryKind::Dir)),
        ("inside/base/a.yaml", Some(EntryKind::File)),
        ("out", None),
        ("out/x.yaml", None),
    ];
    for (rel, expected) in asked {
        let rel = Path::new(rel);
        let answer = files.entry_kind(rel);
        assert_eq!(answer, three(rel), "{rel:?}");
        assert_eq!(answer.ok(), expected, "{rel:?}");
    }
    let names = [
        "kustomization.yaml",
        "kustomization.yml",
        "Kustomization",
        "skipped.yaml",
    ];
    for dir in ["app", "two", "inside", "out", "missing", ""] {
        let dir = Path::new(dir);
        let each: Vec<PathBuf> = names
            .iter()
            .map(|name| dir.join(name))
            .filter(|path| files.is_file(path))
            .collect();
        assert_eq!(files.files_in(dir, &names), each, "{dir:?}");
    }
    assert_eq!(
        files.files_in(Path::new("two"), &names),
        [
            Path::new("two/kustomization.yaml"),
            Path::new("two/Kustomization")
        ]
    );
}

/// A load that read less than [`crate::cores::SMALL_RUN_BYTES`] of YAML
/// keeps the rest of its thread's run on that thread; one that read more
/// uses every core.
#[test]
fn a_load_decides_by_the_yaml_it_read() {
    std::thread::spawn(|| {
        let dir = tempfile::tempdir().unwrap();
        let config_map = |name: &str, value: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata:\n  k: {value}\n"
            )
        };
        let load = || {
            let mut files = Files::new(dir.path(), Limits::default());
            files.load_yaml_files().paths.len()
        };
        std::fs::write(dir.path().join("a.yaml"), config_map("a", "v")).unwrap();
        assert_eq!(load(), 1);
        assert_eq!(
            crate::cores::count(),
            1,
            "a small repository's run stays here"
        );
        let large = "x".repeat(crate::cores::SMALL_RUN_BYTES);
        std::fs::write(dir.path().join("b.yaml"), config_map("b", &large)).unwrap();
        assert_eq!(load(), 2);
        assert_eq!(crate::cores::count(), rayon::current_num_threads());
    })
    .join()
    .unwrap();
}

/// A parse holds no `$` when its file's text past the comments and
/// markers it starts with has neither a `$` nor a `\` (an escape makes
/// one); a `#` line after content may be a block scalar's.
#[test]
fn a_parse_is_dollar_free_by_its_text_past_the_leading_comments() {
    let free = |text: &str| Parsed::of(FileId(0), Vec::new(), text).dollar_free;
    assert!(free(
        "---\n# yaml-language-server: $schema=x\n\n  # $y\na: b\n"
    ));
    assert!(free(""));
    assert!(!free("a: ${B}\n"));
    assert!(!free("a: \"\\x24{B}\"\n"));
    assert!(!free("--- # $c\na: b\n"));
    assert!(!free("a: |\n  # ${B}\n"));
}
