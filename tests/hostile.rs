//! Hostile input: each bad file gives a clear error of its own, within
//! bounded time and memory, and the rest of the repo still loads.

mod support;

use std::path::Path;

use support::limited::inventory;

fn write(root: &Path, rel: &str, bytes: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

const GOOD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: survivor\n  namespace: default\ndata:\n  a: b\n";

fn flux_ks(name: &str, path: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: flux-system\nspec:\n  path: {path}\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
    )
}

fn hostile_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "good/configmap.yaml", GOOD);

    let mut bomb = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for i in 1..12 {
        bomb.push_str(&format!(
            "l{i}: &l{i} [{}]\n",
            vec![format!("*l{}", i - 1); 10].join(", ")
        ));
    }
    write(root, "bad/alias-bomb.yaml", bomb);
    write(
        root,
        "bad/deep.yaml",
        format!("a: {}{}\n", "[".repeat(10_000), "]".repeat(10_000)),
    );
    write(
        root,
        "bad/deep-block.yaml",
        format!("{}x\n", "- ".repeat(10_000)),
    );
    write(
        root,
        "bad/not-utf8.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \xff\xfe\n",
    );

    // Symlink loop: a directory that links back to its parent.
    std::fs::create_dir_all(root.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", root.join("loop/again")).unwrap();

    // Kustomization cycle: a includes b includes a, reached from Flux.
    write(root, "cycle/a/kustomization.yaml", "resources:\n  - ../b\n");
    write(root, "cycle/b/kustomization.yaml", "resources:\n  - ../a\n");
    write(root, "flux/cycle.yaml", flux_ks("cycle", "./cycle/a"));
    write(root, "flux/good.yaml", flux_ks("good", "./good"));
    dir
}

#[test]
fn hostile_inputs_fail_alone_within_bounds() {
    let dir = hostile_repo();
    let inv = inventory(dir.path());
    inv.assert_loaded(&["survivor"]);
    assert!(!inv.issue("bad/alias-bomb.yaml", "alias").contains(":0:0:"));
    inv.issue("bad/deep.yaml", "");
    inv.issue("bad/deep-block.yaml", "nesting");
    assert!(
        inv.issue("bad/not-utf8.yaml", "utf-8")
            .starts_with("bad/not-utf8.yaml:4:")
    );
    inv.issue("loop/again", "loop");
    inv.issue("cycle/", "cycle");
    // Every problem is also on stderr for people.
    assert!(
        inv.run.stderr.contains("bad/alias-bomb.yaml"),
        "{}",
        inv.run.stderr
    );
}

/// The second hostile suite: sizes and shapes rather than YAML tricks.
#[test]
fn huge_binary_unreadable_and_self_referencing_inputs_fail_alone() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "good/configmap.yaml", GOOD);
    // 100 MB: refused by size before it is read.
    let big = std::fs::File::create(root.join("huge.yaml")).unwrap();
    big.set_len(100 * 1024 * 1024).unwrap();
    // Binary content with a .yaml name.
    write(
        root,
        "binary.yaml",
        (0u8..=255).cycle().take(64 * 1024).collect::<Vec<u8>>(),
    );
    // A name that cannot be read: a link to nowhere.
    std::os::unix::fs::symlink("/nonexistent/target.yaml", root.join("dangling.yaml")).unwrap();
    // One line of 2 MB, and 5,000 documents in one file: valid, just big.
    write(
        root,
        "long-line.yaml",
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: long, namespace: default}}\ndata:\n  k: {}\n",
            "x".repeat(2 << 20)
        ),
    );
    let many: String = (0..5000)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{i}, namespace: default}}\n"))
        .collect();
    write(root, "many.yaml", many);
    // Variables that refer to themselves: Flux substitutes once, so
    // neither loops.
    write(
        root,
        "flux/self.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: self, namespace: flux-system}\nspec:\n  path: ./selfref\n  sourceRef: {kind: GitRepository, name: flux-system}\n  postBuild:\n    substitute:\n      A: ${A}\n      B: ${B:=${B}}\n",
    );
    write(
        root,
        "selfref/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: selfref, namespace: default}\ndata:\n  a: ${A}\n  b: ${B}\n",
    );

    let inv = inventory(root);
    inv.assert_loaded(&["survivor", "long", "cm-0", "cm-4999", "selfref"]);
    inv.issue("huge.yaml", "over the limit");
    inv.issue("binary.yaml", "utf-8");
    inv.issue("dangling.yaml", "no such file");
}
