//! `releaseCrossed` and `releaseReached`: apps whose version moved across
//! (or has reached) a release listed in `rules/releases/`, where the
//! release's change applies.

use serde::{Deserialize, Serialize};

use super::{AppFact, Bindings, Described, Fact, Step, ValueFact, bind, downcast, find};
use crate::model::app;
use crate::model::{Model, ObjRef, Unknown};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;
use crate::yaml::Node;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReleaseCrossedStep {
    /// The `app` of a release file (`authentik`); default: every file.
    #[serde(default)]
    pub app: Option<String>,
    /// Only releases with one of these change ids (`cache-in-postgres`)
    /// that apply (their `when` steps hold); default: any listed release.
    #[serde(default)]
    pub changes: Vec<String>,
}

// `releaseReached`: the parameters of `releaseCrossed`, judged against
// the current version only. No doc comment: one would make the schema
// describe a type of its own instead of `ReleaseCrossedStep`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct ReleaseReached(pub ReleaseCrossedStep);

/// An app version moved across known releases since the base commit
/// (`from` set), or has reached them (`from` unset).
#[derive(Clone, Debug)]
pub(crate) struct BumpFact {
    pub object: ObjRef,
    pub app: String,
    /// Where `from` comes from: the base commit, or the cluster.
    pub since: String,
    pub from: Option<semver::Version>,
    pub to: semver::Version,
    /// Version and the texts of its changes, per crossed release.
    pub crossed: Vec<(String, Vec<String>)>,
    pub references: Vec<String>,
    /// What the changes' `when` steps matched, one list per match.
    pub context: Vec<Bindings>,
}

impl Step for ReleaseCrossedStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        releases(self, cx, bound, true)
    }
}

impl Step for ReleaseReached {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        releases(&self.0, cx, bound, false)
    }
}

/// `releaseCrossed` (`bump`, against the baseline's version) and
/// `releaseReached` (`release`, the releases the current version has
/// reached). A change counts where its `when` steps hold.
fn releases(
    p: &ReleaseCrossedStep,
    cx: &mut Ctx,
    bound: &Bindings,
    against_baseline: bool,
) -> Vec<Bindings> {
    let model = cx.model;
    let baseline = cx.baseline;
    let mut out = Vec::new();
    if against_baseline && !baseline.is_present() {
        return out;
    }
    let files = baseline
        .releases
        .iter()
        .filter(|f| p.app.as_ref().is_none_or(|a| *a == f.app));
    for file in files {
        // The bound app, or the release file's apps (bound too).
        let (apps, bind_app) = match find::<AppFact>(bound, "app") {
            Some(a) => (vec![a.app.clone()], false),
            None => (app::find(model, &file.query()), true),
        };
        for a in apps {
            let Some(to) = a.version.clone() else {
                // A floating tag (`release`, `latest`) says nothing about
                // which releases it has reached.
                if !against_baseline {
                    let shown = a
                        .version_node
                        .as_ref()
                        .and_then(Node::scalar_text)
                        .unwrap_or_else(|| "no version".into());
                    cx.note_unknown(
                        model.object(a.object).id(),
                        Unknown(format!(
                            "the {} version ({shown}) is not a release number, so the releases it runs are unknown",
                            file.app
                        )),
                    );
                }
                continue;
            };
            // A floating tag or a range reaches a release only if every
            // release it allows does: `2025` may run 2025.8 or 2025.12.
            let straddled = match (against_baseline, a.releases()) {
                (false, Ok(allowed)) => file
                    .releases
                    .iter()
                    .filter(|r| {
                        r.changes
                            .iter()
                            .any(|c| p.changes.is_empty() || p.changes.contains(&c.id))
                    })
                    .filter_map(|r| r.start())
                    .find(|start| {
                        let from_start = semver::VersionReq::parse(&format!(">={start}"));
                        from_start.is_ok_and(|req| allowed.meet(&req).is_none())
                    })
                    .map(|start| (allowed, start)),
                _ => None,
            };
            if let Some((allowed, start)) = straddled {
                cx.note_unknown(
                    model.object(a.object).id(),
                    Unknown(format!(
                        "the {} {} allows releases both before and from {start}, so whether it has reached {start} is unknown",
                        file.app,
                        allowed.describe()
                    )),
                );
                continue;
            }
            let from = if against_baseline {
                let id = model.object(a.object).id();
                let Some(from) = baseline.version(&file.app, &id).cloned() else {
                    continue;
                };
                // A version that is not one release (a floating tag, a
                // range) on either side is read by its lower bound only
                // where every release it allows falls on one side of each
                // release start; otherwise the bump may or may not cross.
                let wanted = file.releases.iter().filter(|r| {
                    r.changes
                        .iter()
                        .any(|c| p.changes.is_empty() || p.changes.contains(&c.id))
                });
                let current = a.releases().ok();
                let of_base = format!(" of {}", baseline.source);
                let sides = [
                    (baseline.allowed(&file.app, &id), of_base.as_str()),
                    (current.as_ref(), ""),
                ];
                let straddled = wanted.filter_map(|r| r.start()).find_map(|start| {
                    let req = semver::VersionReq::parse(&format!(">={start}")).ok()?;
                    sides.iter().find_map(|(allowed, of)| {
                        let allowed = allowed.filter(|r| r.meet(&req).is_none())?;
                        Some(format!(
                            "the {} {}{of} allows releases both before and from {start}, so whether the bump crosses {start} is unknown",
                            file.app,
                            allowed.describe()
                        ))
                    })
                });
                if let Some(why) = straddled {
                    cx.note_unknown(id, Unknown(why));
                    continue;
                }
                Some(from)
            } else {
                None
            };
            let mut scope = bound.clone();
            if bind_app {
                scope.push(bind("app", AppFact::new(a.clone())));
            }
            let mut crossed = Vec::new();
            let mut references = Vec::new();
            let mut context = Vec::new();
            let mut wanted = false;
            for r in file.crossed(from.as_ref(), &to) {
                let mut texts = Vec::new();
                for c in &r.changes {
                    let mut found = Vec::new();
                    if c.when.is_empty() {
                        found.push(scope.clone());
                    } else {
                        cx.run(&c.when, scope.clone(), &mut found);
                    }
                    if found.is_empty() {
                        continue;
                    }
                    texts.push(c.text.clone());
                    if p.changes.is_empty() || p.changes.contains(&c.id) {
                        wanted = true;
                        context.extend(
                            found
                                .into_iter()
                                .map(|b| b[scope.len()..].to_vec())
                                .filter(|b| !b.is_empty()),
                        );
                    }
                }
                if !texts.is_empty() {
                    crossed.push((r.version.clone(), texts));
                    references.extend(r.references.iter().cloned());
                }
            }
            if !wanted {
                continue;
            }
            let fact = BumpFact {
                object: a.object,
                app: file.app.clone(),
                since: if against_baseline {
                    baseline.source.clone()
                } else {
                    String::new()
                },
                from,
                to,
                crossed,
                references,
                context,
            };
            let mut b = Vec::new();
            if bind_app {
                b.push(bind("app", AppFact::new(a)));
            }
            let name = if against_baseline { "bump" } else { "release" };
            b.push(bind(name, fact));
            out.push(b);
        }
    }
    out
}

impl Fact for BumpFact {
    fn describe(&self, model: &Model) -> Described {
        let releases: Vec<&str> = self.crossed.iter().map(|(v, _)| v.as_str()).collect();
        let facts: Vec<String> = self
            .crossed
            .iter()
            .map(|(v, texts)| format!("{v}: {}", texts.join("; ")))
            .collect();
        // The places the changes' `when` steps matched, each once.
        let mut labels: Vec<Label> = Vec::new();
        for (name, f) in self.context.iter().flatten() {
            // A Helm value that is absent (left at its default) is part
            // of the condition, not a place worth pointing at.
            if name == "value" && downcast::<ValueFact>(f).is_some_and(|v| v.node.is_none()) {
                continue;
            }
            for l in f.describe(model).labels {
                if !labels.iter().any(|s| s.span == l.span && s.text == l.text) {
                    labels.push(l);
                }
            }
        }
        let mut evidence = vec![
            ("app".into(), self.app.clone()),
            (
                "from".into(),
                self.from
                    .as_ref()
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
            ),
            ("since".into(), self.since.clone()),
            ("to".into(), self.to.to_string()),
            ("releases".into(), releases.join(", ")),
            ("facts".into(), facts.join("; ")),
            ("references".into(), self.references.join(" ")),
        ];
        // Only changes with `when` steps have places to count.
        if !self.context.is_empty() {
            evidence.push(("count".into(), self.context.len().to_string()));
        }
        Described {
            labels,
            evidence,
            identity: format!(
                "{}@{}:{}",
                model.object(self.object).id(),
                self.app,
                releases.join(",")
            ),
        }
    }

    fn object(&self) -> Option<ObjRef> {
        Some(self.object)
    }
}
