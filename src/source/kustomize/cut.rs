//! A Flux path's build cut where its Flux Kustomization's target
//! namespace and images first take effect, so that another build of the
//! path with the same components resumes there instead of starting over.
//!
//! A kustomization's resources, `configurations:`, generators,
//! components and patches come first in kustomize's order; only the
//! transformers after the patches (the namespace one first) read the
//! `namespace:` and `images:` that Flux writes into the top-level
//! kustomization (`Builder::accumulate_tail`), and directories below the
//! top never read them. A parent's replacement that sets its children's
//! `targetNamespace` makes every child's render differ from the build of
//! it as written in all but that tail.
//!
//! What the cut part of a build leaves behind is left again by each build
//! resumed from it: what it spent of the load's budget (spent again at
//! once; when that does not fit, the build starts over and stops where a
//! fresh one would), the directories it went through. Inputs it noted
//! (patch files, generator inputs) are kept by their first reader, which
//! is the build that made the cut, in these same files. A load that
//! records the questions its builds ask (for a later load to reuse them)
//! or fetches remote entries neither makes nor resumes cuts: a resumed
//! build asks fewer questions and fetches nothing.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::builder::Head;
use super::kustomization::Kustomization;
use super::{Acc, Builder, Built, FluxInputs, RunBudget};
use crate::source::files::Files;
use crate::source::{Issue, PathSet};

/// A build of a Flux path's kustomization up to and with its own patches
/// (see the module's header).
pub struct Cut {
    /// The top-level kustomization, entered.
    k: Kustomization,
    head: Head,
    /// Its objects so far.
    acc: Acc,
    /// The build's gaps, directories built, objects merged and generator
    /// bytes left so far, as its budgets count them.
    gaps: Vec<Issue>,
    builds: usize,
    merged: usize,
    generator_bytes_left: usize,
    /// What it spent of the load's budget.
    spent: RunBudget,
    /// The kustomization directories it went through.
    dirs: PathSet<PathBuf>,
}

/// What a build of a Flux path does with cuts.
#[derive(Clone, Copy)]
pub enum Cutting<'c> {
    /// Neither makes nor resumes one.
    No,
    /// Resumes from this cut of a build of the same path with the same
    /// components.
    From(&'c Cut),
    /// Keeps its own cut here, for later builds of the path.
    Keep(&'c OnceLock<Box<Cut>>),
}

/// Whether builds in `files` may make and resume cuts (see the module's
/// header).
fn cuts_apply(files: &Files) -> bool {
    !files.records() && files.remote().is_none()
}

/// [`super::build_flux_path`]'s build of a path that has a kustomization
/// of its own, through `cutting`.
pub(super) fn build_kustomization(
    files: &mut Files,
    dir: &Path,
    flux: &FluxInputs,
    cutting: Cutting<'_>,
) -> Result<Built, Issue> {
    match cutting {
        Cutting::From(cut) if cuts_apply(files) && files.budget_left().covers(&cut.spent) => {
            files.spend(cut.spent);
            for d in &cut.dirs {
                files.note_built_dir(d.clone());
            }
            let mut b = builder(files, flux);
            b.gaps = cut.gaps.clone();
            (b.builds, b.merged) = (cut.builds, cut.merged);
            b.generator_bytes_left = cut.generator_bytes_left;
            b.stack.push(dir.to_path_buf());
            resume(&mut b, &cut.k, &cut.head, cut.acc.copy())
        }
        Cutting::Keep(slot) if cuts_apply(files) => {
            let outer = std::mem::take(&mut files.built_dirs);
            let left = files.budget_left();
            let mut b = builder(files, flux);
            let made = b.enter(dir, false, None).and_then(|k| {
                let mut acc = Acc::default();
                let head = b.accumulate_head(&k, &mut acc)?;
                Ok((k, head, acc))
            });
            let dirs = std::mem::replace(&mut b.files.built_dirs, outer);
            b.files.built_dirs.extend(dirs.iter().cloned());
            let (k, head, acc) = made?;
            // A cut past a refused spending would resume a build that
            // stopped.
            if b.files.budget_stopped() {
                return resume(&mut b, &k, &head, acc);
            }
            let cut = Box::new(Cut {
                acc: acc.copy(),
                gaps: b.gaps.clone(),
                builds: b.builds,
                merged: b.merged,
                generator_bytes_left: b.generator_bytes_left,
                spent: left.minus(b.files.budget_left()),
                dirs,
                k,
                head,
            });
            let result = resume(&mut b, &cut.k, &cut.head, acc);
            let _ = slot.set(cut);
            result
        }
        _ => {
            let mut b = builder(files, flux);
            let mut acc = Acc::default();
            b.build_dir(dir, &mut acc, false, None)?;
            b.finish(acc)
        }
    }
}

/// A builder for the top of `flux`'s build.
fn builder<'f>(files: &'f mut Files, flux: &FluxInputs) -> Builder<'f> {
    let mut b = Builder::new(files, false);
    b.flux_components = flux.components.clone();
    b.flux_namespace = flux.namespace.clone();
    b.flux_images = flux.images.clone();
    b
}

/// The build of the top-level kustomization `k`, entered by `b`, from
/// its objects `acc` after [`Builder::accumulate_head`] gave `head`.
fn resume(
    b: &mut Builder<'_>,
    k: &Kustomization,
    head: &Head,
    mut acc: Acc,
) -> Result<Built, Issue> {
    let r = b.accumulate_tail(k, &mut acc, head);
    let mut top = Acc::default();
    let result = b.leave(k, acc, r, head.gaps_before, &mut top, None);
    b.stack.pop();
    result?;
    b.finish(top)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Limits;
    use crate::yaml::Span;

    /// An app whose build goes through every step before the cut (a
    /// kustomization listed below it, a component, a generator, patches)
    /// and some after it (name references to the generated name).
    fn app() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let files = [
            (
                "app/kustomization.yaml",
                "resources: [hr.yaml, base]\ncomponents: [../comp]\n\
                 configMapGenerator:\n- name: values\n  literals: [a=b]\n\
                 patches:\n- patch: '{\"spec\": {\"interval\": 1h}}'\n  target: {kind: HelmRelease}\n\
                 commonLabels: {app: x}\n",
            ),
            (
                "app/hr.yaml",
                "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: app}\n\
                 spec:\n  chart: {spec: {chart: app}}\n  valuesFrom:\n  - kind: ConfigMap\n    name: values\n",
            ),
            (
                "app/base/kustomization.yaml",
                "resources: [sa.yaml, deploy.yaml]\n",
            ),
            (
                "app/base/deploy.yaml",
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: app}\n\
                 spec:\n  template:\n    spec:\n      containers:\n      - {name: app, image: 'app:v1'}\n",
            ),
            (
                "app/base/sa.yaml",
                "apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: app}\n",
            ),
            (
                "comp/kustomization.yaml",
                "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\nresources: [cm.yaml]\n",
            ),
            (
                "comp/cm.yaml",
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n",
            ),
        ];
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    /// What Flux writes besides components: a namespace and an image,
    /// written in a file of their own.
    fn moved(files: &mut Files) -> FluxInputs {
        let (file, _) = files.text(Path::new("app/hr.yaml")).unwrap();
        let at = Span {
            file,
            ..Span::default()
        };
        FluxInputs {
            namespace: Some(("apps".into(), at)),
            images: vec![super::super::Image {
                name: "app".into(),
                new_tag: "v2".into(),
                span: at,
                ..Default::default()
            }],
            ..FluxInputs::default()
        }
    }

    /// The build of `app` as written and then with [`moved`], resumed from
    /// the first one's cut or not; each build's result, what it spent and
    /// the directories it noted.
    fn twice(limits: Limits, resume: bool) -> Vec<String> {
        let dir = app();
        let mut files = Files::new(dir.path(), limits);
        let at = Path::new("app");
        let cut = OnceLock::new();
        let mut seen = Vec::new();
        for pass in 0..2 {
            let flux = match pass {
                0 => FluxInputs::default(),
                _ => moved(&mut files),
            };
            let cutting = match (pass, resume) {
                (0, true) => Cutting::Keep(&cut),
                (_, true) => Cutting::From(cut.get().expect("a cut")),
                _ => Cutting::No,
            };
            let left = files.budget_left();
            files.built_dirs.clear();
            let built = super::super::build_flux_path_cutting(&mut files, at, &flux, cutting);
            let mut dirs: Vec<_> = files.built_dirs.iter().cloned().collect();
            dirs.sort();
            let spent = left.minus(files.budget_left());
            seen.push(format!("{built:?}\n{spent:?}\n{dirs:?}"));
        }
        seen
    }

    /// A build resumed from a cut gives, spends and notes what a fresh
    /// build does, with the target namespace and images its cut never saw.
    #[test]
    fn a_resumed_build_is_a_fresh_build() {
        let fresh = twice(Limits::default(), false);
        assert!(fresh[1].contains("namespace: apps"), "{}", fresh[1]);
        assert!(fresh[1].contains("app:v2"), "{}", fresh[1]);
        assert_eq!(twice(Limits::default(), true), fresh);
    }

    /// When what the cut spent no longer fits in the load's budget, the
    /// build stops where a fresh one stops.
    #[test]
    fn a_cut_that_does_not_fit_stops_as_a_fresh_build() {
        let mut limits = Limits::default();
        // The first build goes through three directories, the second
        // finds two left.
        limits.kustomize.max_run_builds = 5;
        let fresh = twice(limits, false);
        assert!(fresh[1].contains("budget exceeded"), "{}", fresh[1]);
        assert_eq!(twice(limits, true), fresh);
    }
}
