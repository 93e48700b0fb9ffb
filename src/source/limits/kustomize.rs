//! The budgets of kustomize builds, which keep a chain of components or
//! overlays bounded on hostile input: a build over one is an issue at the
//! kustomization, never a hang; and what is left of them while the
//! builds of one load spend them ([`RunBudget`]).

/// What kustomize builds may go through and gather.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Kustomization and component directories one kustomize build may
    /// go through. A kustomization is built once per directory and reused;
    /// a component is applied every time it is listed, so a chain of
    /// components each listing the next twice doubles per level.
    pub max_builds: usize,
    /// Kustomization and component directories all the builds of one
    /// load may go through. Builds are keyed by path, so many Flux
    /// Kustomizations over small directories that each list one costly
    /// component chain would each spend `max_builds`.
    pub max_run_builds: usize,
    /// Kustomizations and components nested in one another (each level
    /// is a frame of the recursive build; real repositories nest a few).
    pub max_depth: usize,
    /// Objects one kustomize build may gather, counted each time a
    /// kustomization's objects are merged into one that lists it: a
    /// directory listed by many overlays is built once, but its objects
    /// are copied into each, so levels of overlays multiply them.
    pub max_objects: usize,
    /// Node visits that the patches, replacements and transformers of
    /// one load may make. A patch or replacement pays for the nodes it
    /// applies and writes and for the keys it searches on its way
    /// (`kustomize::budget::scan_cost`), never for the whole object: measuring and
    /// copying each object whole per application made P patches each
    /// adding a key to N objects cost N·P² (1,000 over 1,000 ConfigMaps,
    /// 244 KB of input, took 92 s). Transformers that rewrite every
    /// field of an object pay for the object. A synthetic repository of
    /// 10,000 objects spends none.
    pub max_run_work: u64,
    /// Bytes that transformers (labels, annotations, name prefixes and
    /// suffixes, namespaces, images) may add to the objects of one load:
    /// a value is copied into every object and field it selects, so a
    /// 1 MB annotation over 2,000 ConfigMaps took 2.1 GB, and a 200 KB
    /// `namePrefix` over 300 objects 446 MB. The steps that record what
    /// patches, replacements and transformers changed count too (one per
    /// object changed, with its text): empty labels, which set no byte,
    /// listed 20,000 times over 10,000 objects made 200 million of them.
    pub max_run_output_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_builds: 10_000,
            max_run_builds: 100_000,
            max_depth: 100,
            max_objects: 500_000,
            max_run_work: 20_000_000,
            max_run_output_bytes: 64 << 20,
        }
    }
}

/// What is left of the budgets of one load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunBudget {
    /// Kustomization and component directories the builds may go through
    /// (`Limits::max_run_builds`).
    pub builds: usize,
    /// Node visits (`Limits::max_run_work`).
    pub work: u64,
    /// Bytes added by transformers (`Limits::max_run_output_bytes`).
    pub bytes: u64,
}

impl RunBudget {
    /// Nothing: the start of a count of what was spent.
    pub const NONE: RunBudget = RunBudget {
        builds: 0,
        work: 0,
        bytes: 0,
    };

    /// The whole of a load's budgets.
    pub fn new(limits: &Limits) -> RunBudget {
        RunBudget {
            builds: limits.max_run_builds,
            work: limits.max_run_work,
            bytes: limits.max_run_output_bytes,
        }
    }

    /// `self` less `other`, field by field and never below zero: what
    /// was spent between two readings, or what is left after a spending.
    pub fn minus(self, other: RunBudget) -> RunBudget {
        RunBudget {
            builds: self.builds.saturating_sub(other.builds),
            work: self.work.saturating_sub(other.work),
            bytes: self.bytes.saturating_sub(other.bytes),
        }
    }

    /// `self` and `other` together (saturating).
    pub fn plus(self, other: RunBudget) -> RunBudget {
        RunBudget {
            builds: self.builds.saturating_add(other.builds),
            work: self.work.saturating_add(other.work),
            bytes: self.bytes.saturating_add(other.bytes),
        }
    }

    /// Whether `spent` fits in what is left.
    pub fn covers(&self, spent: &RunBudget) -> bool {
        spent.builds <= self.builds && spent.work <= self.work && spent.bytes <= self.bytes
    }
}
