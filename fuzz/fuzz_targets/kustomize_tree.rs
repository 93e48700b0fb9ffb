//! kustomize rendering of a generated tree of kustomizations: the input
//! bytes choose up to eight directories and what each lists (other
//! directories, often twice, as resources or components; generators;
//! patches; parent-relative and escaping paths), so that DAGs, cycles,
//! diamonds and missing entries are built. The bytes after the tree are
//! a resource file shared by every directory.
#![no_main]

use std::fmt::Write;
use std::path::Path;

use homelab_lint::source::Limits;
use homelab_lint::source::{Files, kustomize};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.iter().copied();
    let mut next = || bytes.next().unwrap_or(0);
    let dirs = 1 + usize::from(next() % 8);
    let mut texts = Vec::new();
    for _ in 0..dirs {
        let mut resources = String::from("resources:\n  - res.yaml\n");
        let mut components = String::new();
        let mut extra = String::new();
        for _ in 0..next() % 6 {
            let choice = next();
            let target = usize::from(next()) % dirs;
            match choice % 7 {
                0 | 1 => writeln!(resources, "  - ../d{target}").unwrap(),
                2 => writeln!(components, "  - ../d{target}").unwrap(),
                3 => writeln!(resources, "  - ../../outside").unwrap(),
                4 => writeln!(
                    extra,
                    "configMapGenerator:\n  - name: gen{target}\n    files: [res.yaml]\n    literals: [k=v{target}]"
                )
                .unwrap(),
                5 => writeln!(
                    extra,
                    "patches:\n  - target: {{kind: ConfigMap}}\n    patch: |\n      - op: copy\n        from: /data\n        path: /metadata/annotations"
                )
                .unwrap(),
                _ => writeln!(resources, "  - ../d{target}/res.yaml").unwrap(),
            }
        }
        let kind = if next() % 5 == 0 {
            "Component"
        } else {
            "Kustomization"
        };
        let api = if kind == "Component" {
            "v1alpha1"
        } else {
            "v1beta1"
        };
        let mut text =
            format!("apiVersion: kustomize.config.k8s.io/{api}\nkind: {kind}\n{resources}");
        if !components.is_empty() {
            text.push_str("components:\n");
            text.push_str(&components);
        }
        text.push_str(&extra);
        texts.push(text);
    }
    let resource: Vec<u8> = bytes.collect();
    let Ok(dir) = tempfile::tempdir() else { return };
    for (i, text) in texts.iter().enumerate() {
        let d = dir.path().join(format!("d{i}"));
        if std::fs::create_dir_all(&d).is_err()
            || std::fs::write(d.join("kustomization.yaml"), text).is_err()
            || std::fs::write(d.join("res.yaml"), &resource).is_err()
        {
            return;
        }
    }
    let mut files = Files::new(dir.path(), Limits::default());
    let _ = kustomize::build(&mut files, Path::new("d0"));
    let _ = kustomize::build_flux_path(
        &mut files,
        Path::new("d0"),
        &kustomize::FluxInputs::default(),
    );
});
