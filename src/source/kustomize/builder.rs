//! One kustomize build: a kustomization directory and everything it
//! lists, built depth first in kustomize's order (see the module above),
//! within the build's budgets of directories, objects and generator bytes.

use std::path::{Path, PathBuf};

use super::remote::ListedIn;
use super::*;
use crate::source::files::EntryKind;
use crate::source::{Budget, PathMap, PathSet};

/// A kustomization built once, for the next entries that list it.
pub(super) struct Memo {
    pub(super) acc: Acc,
    /// The gaps its build recorded, recorded again on every use (so that
    /// each listing kustomization knows a remote entry was left out);
    /// [`Builder::finish`] reports each once.
    pub(super) gaps: Vec<Issue>,
    /// The kustomization file's root, where a duplicate id is reported
    /// when the directory is the build's top.
    pub(super) root: Span,
}

/// A kustomization accumulated up to and with its patches
/// ([`Builder::accumulate_head`]), for the rest
/// ([`Builder::accumulate_tail`]).
#[derive(Clone)]
pub(super) struct Head {
    /// The gaps recorded before it.
    pub(super) gaps_before: usize,
    /// The field specs its transformers use.
    pub(super) config: std::sync::Arc<Config>,
    /// Its `transformers:` entries that are directories or remote, built.
    pub(super) built: PathMap<String, Result<Vec<Node>, Issue>>,
    /// How its patches went: on an error, no other transformer runs.
    pub(super) patched: Result<(), Issue>,
}

pub(crate) struct Builder<'f> {
    pub files: &'f mut Files,
    /// Directories being built, outermost first, to report cycles.
    pub(super) stack: Vec<PathBuf>,
    pub(super) restrict: bool,
    /// A Flux Kustomization's `spec.components`, added to the top-level
    /// kustomization's own.
    pub(super) flux_components: Vec<(String, Span)>,
    /// A Flux Kustomization's `spec.targetNamespace`, the top-level
    /// kustomization's `namespace:` in place of its own.
    pub(super) flux_namespace: Option<(String, Span)>,
    /// A Flux Kustomization's `spec.images`, merged into the top-level
    /// kustomization's own.
    pub(super) flux_images: Vec<super::Image>,
    /// Entries the build went on without.
    pub(super) gaps: Vec<Issue>,
    /// Kustomization directories asked for once in this build, and the
    /// result of those asked for again: a kustomization's objects depend
    /// only on its directory (it starts from an empty accumulator), so a
    /// DAG whose levels each list the next twice is built once per
    /// directory, not once per path. Results are kept only from the
    /// second request on, so the common tree costs no copies.
    pub(super) requested: PathSet<PathBuf>,
    pub(super) memo: PathMap<PathBuf, Memo>,
    /// Directories built so far, against `Limits::max_builds`.
    pub(super) builds: usize,
    /// Objects merged so far, against `Limits::max_objects`.
    pub(super) merged: usize,
    /// Bytes the generators of this build may still read, from
    /// `yaml::Limits::max_object_bytes` (each listing of a file is read
    /// again).
    pub(super) generator_bytes_left: usize,
}

impl<'f> Builder<'f> {
    pub(super) fn new(files: &'f mut Files, restrict: bool) -> Builder<'f> {
        let generator_bytes_left = files.limits().yaml.max_object_bytes;
        Builder {
            files,
            stack: Vec::new(),
            restrict,
            flux_components: Vec::new(),
            flux_namespace: None,
            flux_images: Vec::new(),
            gaps: Vec::new(),
            requested: PathSet::default(),
            memo: PathMap::default(),
            builds: 0,
            merged: 0,
            generator_bytes_left,
        }
    }

    /// Adds a kustomization's objects to those of the one that lists it
    /// (at `span`), counted against `Limits::max_objects`.
    pub(super) fn merge_into(&mut self, sub: Acc, acc: &mut Acc, span: Span) -> Result<(), Issue> {
        let max = self.files.limits().kustomize.max_objects;
        self.merged += sub.res.len();
        if self.merged > max {
            return Err(Issue::at(
                &self.files.sources,
                span,
                format!(
                    "kustomize build budget exceeded: more than {max} objects gathered (a \
                     directory listed by several overlays is copied into each)"
                ),
            )
            .stopped_by(Budget::GatheredObjects(max)));
        }
        acc.config.merge(&sub.config);
        // Room made once: an object is moved up once per level it is
        // built below, and growing one by one copied the objects again.
        acc.reserve(sub.res().len());
        for res in sub.into_res() {
            acc.append(res, self.files, span)?;
        }
        Ok(())
    }

    /// Records a gap and goes on; any other error stops the build.
    pub(super) fn tolerate(&mut self, result: Result<(), Issue>) -> Result<(), Issue> {
        match result {
            Err(issue) if issue.gap.is_some() => {
                self.gaps.push(issue);
                Ok(())
            }
            other => other,
        }
    }

    /// The last steps, done once for the whole build.
    pub(super) fn finish(&mut self, mut acc: Acc) -> Result<Built, Issue> {
        let config = self.config_with(&acc.config)?;
        generators::add_hashes(acc.res_mut());
        namereference::fix(acc.res_mut(), &config.name_reference)
            .map_err(|(span, m)| Issue::at(&self.files.sources, span, m))?;
        let out = acc
            .into_res()
            .into_iter()
            .filter(|r| {
                r.obj
                    .root
                    .path(&[
                        "metadata",
                        "annotations",
                        "config.kubernetes.io/local-config",
                    ])
                    .and_then(Node::scalar_text)
                    .is_none_or(|v| v != "true")
            })
            .map(|r| r.obj)
            .collect();
        Ok(Built {
            objects: out,
            gaps: unique(std::mem::take(&mut self.gaps)),
        })
    }

    /// kustomize's built-in field specs, parsed once per [`Files`]: every
    /// kustomization level of every build needs them.
    pub(super) fn default_config(&mut self) -> Result<std::sync::Arc<Config>, Issue> {
        default_config(self.files)
    }

    /// The built-in field specs plus a kustomization's `configurations:`;
    /// most kustomizations have none, and then nothing is copied.
    pub(super) fn config_with(&mut self, extra: &Config) -> Result<std::sync::Arc<Config>, Issue> {
        let defaults = self.default_config()?;
        if extra.is_empty() {
            return Ok(defaults);
        }
        let mut config = Config::clone(&defaults);
        config.merge(extra);
        Ok(std::sync::Arc::new(config))
    }

    /// Builds `dir` into `acc`: a kustomization into a fresh accumulator
    /// merged afterwards, a component directly into its parent's.
    pub fn build_dir(
        &mut self,
        dir: &Path,
        acc: &mut Acc,
        component: bool,
        from: Option<Span>,
    ) -> Result<(), Issue> {
        if let Some(pos) = self.stack.iter().position(|d| d == dir) {
            let mut cycle: Vec<String> = self.stack[pos..]
                .iter()
                .map(|d| self.files.shown(d))
                .collect();
            cycle.push(self.files.shown(dir));
            let msg = format!("kustomization cycle: {}", cycle.join(" -> "));
            return Err(match from {
                Some(s) => Issue::at(&self.files.sources, s, msg),
                None => Issue::file(Path::new(&self.files.shown(dir)), msg),
            });
        }
        if !component && let Some(memo) = self.memo.get(dir) {
            let (sub, root) = (memo.acc.clone(), memo.root);
            self.gaps.extend(memo.gaps.iter().cloned());
            return self.merge_into(sub, acc, from.unwrap_or(root));
        }
        let k = self.enter(dir, component, from)?;
        let result = if component {
            let before = acc.res().len();
            let r = self.accumulate(&k, acc);
            let detail: std::sync::Arc<str> = self.files.shown(dir).into();
            for res in acc.res_mut().iter_mut().skip(before) {
                res.obj.chain.insert(
                    0,
                    crate::source::Step {
                        kind: StepKind::Component,
                        detail: detail.clone(),
                        at: from,
                    },
                );
            }
            r
        } else {
            let gaps_before = self.gaps.len();
            let mut sub = Acc::default();
            let r = self.accumulate(&k, &mut sub);
            self.leave(&k, sub, r, gaps_before, acc, from)
        };
        self.stack.pop();
        result
    }

    /// Counts `dir` against the build's budgets and enters its
    /// kustomization: loaded, noted as built and pushed on the stack.
    pub(super) fn enter(
        &mut self,
        dir: &Path,
        component: bool,
        from: Option<Span>,
    ) -> Result<kustomization::Kustomization, Issue> {
        let limits = self.files.limits().kustomize;
        self.builds += 1;
        let over = if self.stack.len() >= limits.max_depth {
            Some((
                format!(
                    "kustomizations and components nested more than {} deep",
                    limits.max_depth
                ),
                Budget::Depth(limits.max_depth),
            ))
        } else if self.builds > limits.max_builds {
            Some((
                format!(
                    "more than {} kustomization and component directories built (a component listed twice is applied twice)",
                    limits.max_builds
                ),
                Budget::Builds(limits.max_builds),
            ))
        } else if !self.files.spend_build() {
            Some((
                format!(
                    "the builds of this repository went through more than {} kustomization and component directories in all",
                    limits.max_run_builds
                ),
                Budget::RunBuilds(limits.max_run_builds),
            ))
        } else {
            None
        };
        if let Some((what, budget)) = over {
            let msg = format!("kustomize build budget exceeded: {what}");
            let issue = match from {
                Some(s) => Issue::at(&self.files.sources, s, msg),
                None => Issue::file(Path::new(&self.files.shown(dir)), msg),
            };
            return Err(issue.stopped_by(budget));
        }
        let Some(kfile) = kustomization::find(self.files, dir)? else {
            let msg = if self.files.is_dir(dir) {
                format!(
                    "unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '{}'",
                    self.files.shown(dir)
                )
            } else {
                // kustomize: "must build at directory: not a valid
                // directory"; a file of the same name beside it is the
                // usual cause (a component written as one file).
                let file = ["yaml", "yml"]
                    .map(|ext| PathBuf::from(format!("{}.{ext}", dir.display())))
                    .into_iter()
                    .find(|f| self.files.is_file(f));
                match file {
                    Some(f) => format!(
                        "directory '{}' does not exist; '{}' is a file: a component or a \
                         kustomization listed as a directory must be a directory with a \
                         kustomization.yaml",
                        self.files.shown(dir),
                        self.files.shown(&f)
                    ),
                    None => format!("directory '{}' does not exist", self.files.shown(dir)),
                }
            };
            return Err(match from {
                Some(s) => Issue::at(&self.files.sources, s, msg).gap(Gap::Missing),
                None => Issue::file(Path::new(&self.files.shown(dir)), msg),
            });
        };
        let mut k = kustomization::Kustomization::load(self.files, &kfile, dir)?;
        k.restrict = self.restrict;
        // kubectl renders a Component named directly like a kustomization.
        if from.is_some() && component != k.is_component() {
            // kustomize's errors (api/internal/target/kusttarget.go
            // `accumulateDirectory`); a kustomization without `kind` is
            // a Kustomization (api/types/kustomization.go
            // `FixKustomization`).
            let (msg, listed) = if component {
                let kind = k.root.str_at(&["kind"]).unwrap_or("Kustomization");
                let msg = format!(
                    "expected kind 'Component' for path '{}' but got '{kind}'",
                    self.files.shown(dir)
                );
                (msg, Listed::KustomizationAsComponent)
            } else {
                let msg = format!(
                    "expected kind != 'Component' for path '{}'",
                    self.files.shown(dir)
                );
                (msg, Listed::ComponentAsResource)
            };
            // An entry of a kustomization Flux generates has no line
            // (`Span::default()`): the directory's own `kind` is what to
            // change.
            let at = from
                .filter(|s| *s != Span::default())
                .unwrap_or_else(|| k.root.get("kind").map_or(k.root.span(), |n| n.span()));
            return Err(Issue::at(&self.files.sources, at, msg).gap(Gap::WrongKind(listed)));
        }
        self.files.note_built_dir(dir.to_path_buf());
        self.stack.push(dir.to_path_buf());
        Ok(k)
    }

    /// Adds the objects `sub` of the kustomization `k` (which
    /// [`Self::accumulate`] built, ending with `r`) to `acc`, each with
    /// the kustomization in its chain; a directory asked for again is
    /// kept for the next request ([`Memo`]). `gaps_before`: the gaps
    /// recorded before its build.
    pub(super) fn leave(
        &mut self,
        k: &kustomization::Kustomization,
        mut sub: Acc,
        r: Result<(), Issue>,
        gaps_before: usize,
        acc: &mut Acc,
        from: Option<Span>,
    ) -> Result<(), Issue> {
        let dir = &k.dir;
        let detail: std::sync::Arc<str> = self.files.shown(dir).into();
        for res in sub.res_mut() {
            res.obj.chain.insert(
                0,
                crate::source::Step {
                    kind: StepKind::Kustomization,
                    detail: detail.clone(),
                    at: Some(k.root.span()),
                },
            );
        }
        r.and_then(|()| {
            if !self.requested.insert(dir.to_path_buf()) {
                let memo = Memo {
                    acc: sub.clone(),
                    gaps: unique(self.gaps[gaps_before..].to_vec()),
                    root: k.root.span(),
                };
                self.memo.insert(dir.to_path_buf(), memo);
            }
            self.merge_into(sub, acc, from.unwrap_or(k.root.span()))
        })
    }

    pub(super) fn accumulate(
        &mut self,
        k: &kustomization::Kustomization,
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        let head = self.accumulate_head(k, acc)?;
        self.accumulate_tail(k, acc, &head)
    }

    /// What [`Self::accumulate`] does up to and with the kustomization's
    /// patches ([`transformers::patch`]): none of it reads what a Flux
    /// Kustomization writes besides its components.
    pub(super) fn accumulate_head(
        &mut self,
        k: &kustomization::Kustomization,
        acc: &mut Acc,
    ) -> Result<Head, Issue> {
        let gaps_before = self.gaps.len();
        for (entry, span) in k.strings("resources")? {
            let r = self.load_resource(&entry, span, &k.dir, acc);
            self.tolerate(r)?;
        }
        for (entry, span) in k.strings("configurations")? {
            let input = match k.input(self.files, &entry, span, Input::Configuration) {
                Ok(input) => input,
                Err(e) => {
                    self.tolerate(Err(e))?;
                    continue;
                }
            };
            let parsed = input.documents(self.files)?;
            for d in &parsed.docs {
                let c = Config::parse(d).map_err(|(s, m)| Issue::at(&self.files.sources, s, m))?;
                acc.config.merge(&c);
            }
        }
        generators::run(
            self.files,
            k,
            acc,
            &mut self.gaps,
            &mut self.generator_bytes_left,
        )?;
        let mut components = k.strings("components")?;
        if self.stack.len() == 1 {
            components.extend(self.flux_components.iter().cloned());
        }
        self.add_components(&k.dir, &components, acc)?;
        // A named patch target missing after this kustomization's own
        // remote resources were left out stands in for their object.
        if self.gaps[gaps_before..]
            .iter()
            .any(|g| g.gap == Some(Gap::Remote))
        {
            let left_out: Vec<String> = k
                .strings("resources")?
                .into_iter()
                .map(|(entry, _)| entry)
                .filter(|entry| resources::is_remote(entry))
                .collect();
            if !left_out.is_empty() {
                standin::add(k, acc, &left_out);
            }
        }
        let config = self.config_with(&acc.config)?;
        let built = self.transformer_dirs(k)?;
        let patched = transformers::patch(self.files, k, acc);
        Ok(Head {
            gaps_before,
            config,
            built,
            patched,
        })
    }

    /// The rest of [`Self::accumulate`] after [`Self::accumulate_head`]
    /// gave `head`: the other transformers, and what becomes of an error.
    pub(super) fn accumulate_tail(
        &mut self,
        k: &kustomization::Kustomization,
        acc: &mut Acc,
        head: &Head,
    ) -> Result<(), Issue> {
        let flux_namespace = self
            .flux_namespace
            .as_ref()
            .filter(|_| self.stack.len() == 1);
        let flux_images = match self.stack.len() {
            1 => &self.flux_images[..],
            _ => &[],
        };
        let result = match &head.patched {
            Ok(()) => transformers::run(
                self.files,
                k,
                acc,
                &head.config,
                &head.built,
                flux_namespace,
                flux_images,
            ),
            Err(issue) => Err(issue.clone()),
        };
        // A patch or replacement whose target is missing after a remote
        // entry was left out may well be for an object of that entry.
        let remote_left_out = self.gaps[head.gaps_before..]
            .iter()
            .any(|g| g.gap == Some(Gap::Remote));
        match result {
            Err(mut issue) if remote_left_out && issue.gap.is_none() => {
                issue.message = format!(
                    "{} (its target may be in a remote entry of this kustomization, which is not fetched)",
                    issue.message
                );
                self.tolerate(Err(issue.gap(Gap::Remote)))
            }
            other => self.tolerate(other),
        }
    }

    /// The `transformers:` entries that name a directory or a remote
    /// entry, built: kustomize accumulates the entries that are no inline
    /// YAML like resources, so a kustomization there is built (its
    /// namespace, patches and all) and each object it yields is a
    /// transformer configuration (api/internal/target/kusttarget.go
    /// `configureExternalTransformers`). Seen in real repositories: one
    /// shared NamespaceTransformer that each namespace's overlay gives its
    /// namespace. A remote entry is fetched as a remote resource is, and
    /// why it was not is kept for its turn among the transformers.
    pub(super) fn transformer_dirs(
        &mut self,
        k: &kustomization::Kustomization,
    ) -> Result<PathMap<String, Result<Vec<Node>, Issue>>, Issue> {
        let mut out = PathMap::default();
        for (entry, span) in k.strings("transformers").unwrap_or_default() {
            if transformers::is_remote_entry(&entry) {
                let mut sub = Acc::default();
                let docs = self
                    .load_remote(&entry, span, &mut sub, ListedIn::Transformer)
                    .map(|()| {
                        let objects = sub.into_res().into_iter();
                        objects.map(|r| Node::clone(&r.obj.root)).collect()
                    });
                out.insert(entry, docs);
                continue;
            }
            let dir = crate::source::join_within(&k.dir, &entry);
            let Some(dir) = dir.filter(|d| !entry.contains(':') && self.files.is_dir(d)) else {
                continue;
            };
            let mut sub = Acc::default();
            self.build_dir(&dir, &mut sub, false, Some(span))?;
            let docs = sub
                .into_res()
                .into_iter()
                .map(|r| {
                    let path = self.files.sources.path(r.obj.file).to_path_buf();
                    self.files
                        .note_input(path, Input::Transformer, k.file.clone());
                    Node::clone(&r.obj.root)
                })
                .collect();
            out.insert(entry, Ok(docs));
        }
        Ok(out)
    }

    pub(super) fn add_components(
        &mut self,
        base: &Path,
        components: &[(String, Span)],
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        for (entry, span) in components {
            let span = *span;
            if resources::is_remote(entry) {
                let r = self.load_remote(entry, span, acc, ListedIn::Component);
                self.tolerate(r)?;
                continue;
            }
            let Some(dir) = crate::source::join_within(base, entry) else {
                return Err(Issue::at(
                    &self.files.sources,
                    span,
                    format!("'{entry}' leaves the repository"),
                ));
            };
            let r = self.build_dir(&dir, acc, true, Some(span));
            self.tolerate(r)?;
        }
        Ok(())
    }

    pub(super) fn load_resource(
        &mut self,
        entry: &str,
        span: Span,
        dir: &Path,
        acc: &mut Acc,
    ) -> Result<(), Issue> {
        if resources::is_remote(entry) {
            return self.load_remote(entry, span, acc, ListedIn::Resource);
        }
        let Some(path) = crate::source::join_within(dir, entry) else {
            return Err(Issue::at(
                &self.files.sources,
                span,
                format!("'{entry}' leaves the repository"),
            ));
        };
        self.load_resource_path(&path, dir, acc, span)
    }

    pub(super) fn load_resource_path(
        &mut self,
        path: &Path,
        dir: &Path,
        acc: &mut Acc,
        span: Span,
    ) -> Result<(), Issue> {
        let kind = self
            .files
            .entry_kind(path)
            .map_err(|reason| Issue::at(&self.files.sources, span, reason))?;
        if kind == EntryKind::File {
            if self.restrict && !path.starts_with(dir) {
                return Err(Issue::at(
                    &self.files.sources,
                    span,
                    format!(
                        "security; file '{}' is not in or below '{}'",
                        self.files.shown(path),
                        self.files.shown(dir)
                    ),
                ));
            }
            let loaded =
                resources::load_file(self.files, path).map_err(|issue| match issue.gap {
                    Some(_) => issue,
                    None => issue.gap(Gap::Malformed),
                })?;
            acc.reserve(loaded.len());
            for r in loaded {
                acc.append(r, self.files, span)?;
            }
            Ok(())
        } else if kind == EntryKind::Dir {
            self.build_dir(path, acc, false, Some(span))
        } else {
            Err(Issue::at(
                &self.files.sources,
                span,
                format!("'{}' is neither a file nor a directory", path.display()),
            )
            .gap(Gap::Missing))
        }
    }
}
