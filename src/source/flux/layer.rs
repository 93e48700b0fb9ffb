//! What the renderer builds a directory and runs a Flux Kustomization's
//! own steps through: [`Plain`] does them; a load that reuses an earlier
//! one's work (`--base`, the editor's next lint) passes a layer that hands
//! back that load's build or steps where every input is alike, and keeps
//! its own for a later load. The renderer need not know how.

use crate::source::kustomize::FluxInputs;
use std::path::{Path, PathBuf};

use super::Budget;
use super::tree::Inherited;
use crate::source::kustomize::Built;
use crate::source::{Files, Issue, Object};
use crate::yaml::SourceMap;

/// A look-up of the ConfigMaps and Secrets substitution reads, in the
/// files' source map: kind, namespace, name.
pub(crate) type Lookup<'l, 'p> = &'l dyn Fn(&SourceMap, &str, &str, &str) -> Option<&'p Object>;

/// A Flux Kustomization's steps, run on what they are given with the
/// look-up they are to find substitution's sources through.
pub(crate) type RunSteps<'r, 'p> =
    &'r dyn Fn(&mut Files, Vec<Object>, &RenderInputs, Lookup<'_, 'p>) -> RenderOutputs;

/// How the renderer builds and runs steps (see the module's header).
pub(crate) trait BuildLayer: Sync {
    /// The kustomize build of `dir` with `components`, which `build`
    /// makes here.
    fn build(
        &self,
        files: &mut Files,
        dir: &Path,
        flux: &FluxInputs,
        build: &dyn Fn(&mut Files) -> Result<Built, Issue>,
    ) -> Result<Built, Issue>;

    /// The Flux-level steps `key` names, which `run` runs here on what
    /// `given` holds; `lookup` finds the ConfigMaps and Secrets
    /// substitution reads (kind, namespace, name), and `run` is to look
    /// them up through the one it is given.
    fn steps<'p>(
        &self,
        files: &mut Files,
        key: RenderKey,
        given: RenderInputs,
        lookup: Lookup<'_, 'p>,
        run: RunSteps<'_, 'p>,
    ) -> RenderOutputs;
}

/// Builds and runs steps as they are written, reusing nothing.
pub(crate) struct Plain;

impl BuildLayer for Plain {
    fn build(
        &self,
        files: &mut Files,
        _dir: &Path,
        _flux: &FluxInputs,
        build: &dyn Fn(&mut Files) -> Result<Built, Issue>,
    ) -> Result<Built, Issue> {
        build(files)
    }

    fn steps<'p>(
        &self,
        files: &mut Files,
        _key: RenderKey,
        mut given: RenderInputs,
        lookup: Lookup<'_, 'p>,
        run: RunSteps<'_, 'p>,
    ) -> RenderOutputs {
        let objects = std::mem::take(&mut given.objects);
        run(files, objects, &given, lookup)
    }
}

/// Which steps of a Flux Kustomization a run of them is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Steps {
    /// Those of its render.
    Render,
    /// Those that make the bootstrap inputs of its build as it applies
    /// them (targetNamespace, postBuild substitution), before the renders.
    Bootstrap,
}

/// Which run of a Flux Kustomization's steps: the steps, the Flux
/// Kustomization's file and document, and its identity in the tree
/// (namespace, name).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct RenderKey {
    pub steps: Steps,
    pub path: PathBuf,
    pub doc_index: u32,
    pub id: (String, String),
}

/// What a Flux Kustomization's Flux-level steps (targetNamespace,
/// `spec.patches`, postBuild substitution) are given.
#[derive(Clone, Debug)]
pub(crate) struct RenderInputs {
    /// The Flux Kustomization as rendered.
    pub ks: Object,
    /// What its parent passed on.
    pub inherited: Inherited,
    /// Its build's objects, before the steps.
    pub objects: Vec<Object>,
    /// Whether it has `spec.patches` to apply.
    pub patched: bool,
    /// The substitution budget left before it.
    pub budget: Option<Budget>,
}

/// What the steps give.
#[derive(Clone, Debug)]
pub(crate) struct RenderOutputs {
    pub objects: Vec<Object>,
    /// Problems they found, in order.
    pub issues: Vec<Issue>,
    /// Substitutions that left a value unparsable: the render fails.
    pub unparsed: Vec<Issue>,
    /// What it passes on to the Flux Kustomizations it applies.
    pub passed: Inherited,
    /// The substitution budget left after it.
    pub budget: Option<Budget>,
}
