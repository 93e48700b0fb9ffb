//! `fluxBuildFails`: Flux Kustomizations that kustomize-controller fails
//! because a local entry of their build is missing, malformed or of the
//! wrong kind, or text postBuild substitution cannot parse.

use super::{Bindings, Described, Fact, Shape, Step, ValueFact, bind};
use crate::model::{Model, ObjRef};
use crate::rules::engine::Ctx;
use crate::source::{Gap, Listed};

pub struct FluxBuildFails;

impl Step for FluxBuildFails {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        crate::model::flux::failed_builds(cx.model)
            .into_iter()
            .map(|(object, node, gap)| {
                let what = match gap {
                    Some(Gap::Malformed) => "malformed",
                    Some(Gap::WrongKind(_)) => "wrong kind",
                    Some(Gap::Substitution) => "substitution",
                    _ => "missing",
                };
                let fact = BuildFailure {
                    value: ValueFact::at(object, Some(node), what.into()),
                    gap,
                };
                vec![bind("kustomization", fact)]
            })
            .collect()
    }
}

/// The failing entry, with what is wrong with it: the help of an entry of
/// the wrong kind is the one remedy kustomize's error implies, not the
/// rule's list of every cause.
#[derive(Debug)]
struct BuildFailure {
    value: ValueFact,
    gap: Option<Gap>,
}

impl Fact for BuildFailure {
    fn describe(&self, model: &Model) -> Described {
        self.value.describe(model)
    }

    fn object(&self) -> Option<ObjRef> {
        self.value.object()
    }

    fn place(&self) -> Option<(u32, u32)> {
        self.value.place()
    }

    fn shape(&self, finding: &mut Shape) {
        // kustomize's own errors (api/internal/target/kusttarget.go
        // `accumulateDirectory`): "expected kind != 'Component' for path
        // '…'" for a Component under `resources:`, "expected kind
        // 'Component' for path '…' but got '…'" for a kustomization under
        // `components:`. The entry is right; its list is not.
        finding.help = match self.gap {
            Some(Gap::WrongKind(Listed::ComponentAsResource)) => Some(
                "The directory is a kustomize Component (`kind: Component`), which kustomize \
                 applies only to the kustomization that lists it under `components:`: move the \
                 entry from `resources:` to `components:` (a Component changes the objects of \
                 its parent, so it cannot be built on its own as a resource)."
                    .into(),
            ),
            Some(Gap::WrongKind(Listed::KustomizationAsComponent)) => Some(
                "The directory is a kustomization, not a Component: move the entry from \
                 `components:` to `resources:`, or make it a Component (`apiVersion: \
                 kustomize.config.k8s.io/v1alpha1`, `kind: Component`) if it is meant to \
                 change the objects of the kustomization that lists it."
                    .into(),
            ),
            _ => None,
        };
    }
}
