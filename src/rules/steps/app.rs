//! `app`: apps identified by Helm chart or container image, optionally
//! with a version constraint.

use semver::VersionReq;
use serde::{Deserialize, Serialize};

use super::{Bindings, Described, Fact, Step, bind, object_span, shown, variable_label};
use crate::model::app::{self, App, AppQuery};
use crate::model::env::ValuesPrefix;
use crate::model::version::Pin;
use crate::model::{Model, ObjRef, Unknown};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AppStep {
    /// Helm chart names.
    #[serde(default)]
    pub charts: Vec<String>,
    /// Image repositories (registry optional for Docker Hub).
    #[serde(default)]
    pub images: Vec<String>,
    /// Semver constraint on the app version (`>=2025.10`). An app whose
    /// version cannot be read (a digest alone, `latest`), or whose
    /// floating tag or range allows releases on both sides of it, does
    /// not match a constrained step and is listed as undecided.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub version: Option<VersionConstraint>,
    /// Chart values subtrees the chart turns into environment variables:
    /// `{authentik: AUTHENTIK}` makes `authentik.postgresql.host`
    /// `AUTHENTIK_POSTGRESQL__HOST`.
    #[serde(default)]
    pub values_env_prefixes: std::collections::BTreeMap<String, String>,
}

/// A semver constraint, parsed when the rule file is read: one that does
/// not parse is an error at its line and column, never a constraint that
/// every version meets.
#[derive(Clone, Debug)]
pub struct VersionConstraint {
    text: String,
    req: VersionReq,
}

impl Serialize for VersionConstraint {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for VersionConstraint {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        match VersionReq::parse(&text) {
            Ok(req) => Ok(VersionConstraint { text, req }),
            Err(e) => Err(serde::de::Error::custom(format!(
                "version {text:?} is not a semver constraint: {e}"
            ))),
        }
    }
}

/// An app, with the chart conventions its step named.
#[derive(Clone, Debug)]
pub(crate) struct AppFact {
    pub app: App,
    pub prefixes: Vec<ValuesPrefix>,
}

impl AppFact {
    pub fn new(app: App) -> AppFact {
        AppFact {
            app,
            prefixes: Vec::new(),
        }
    }
}

impl AppStep {
    /// The apps the step names, whatever their version, each with the
    /// chart conventions the step gives.
    pub(crate) fn apps(&self, model: &Model) -> Vec<AppFact> {
        let prefixes: Vec<ValuesPrefix> = self
            .values_env_prefixes
            .iter()
            .map(|(k, v)| ValuesPrefix {
                key: k.clone(),
                prefix: v.clone(),
            })
            .collect();
        let query = AppQuery {
            charts: &self.charts,
            images: &self.images,
        };
        app::find(model, &query)
            .into_iter()
            .map(|app| AppFact {
                app,
                prefixes: prefixes.clone(),
            })
            .collect()
    }
}

impl Step for AppStep {
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        self.apps(cx.model)
            .into_iter()
            .filter(|a| match &self.version {
                None => true,
                Some(constraint) => meets(cx, &a.app, constraint),
            })
            .map(|fact| vec![bind("app", fact)])
            .collect()
    }
}

/// Whether `app` runs a release within `constraint`; when its version
/// text cannot tell (a digest alone, `latest`, a floating tag or range on
/// both sides), no, and the undecided line says why.
fn meets(cx: &mut Ctx, app: &App, constraint: &VersionConstraint) -> bool {
    let why = match app.releases() {
        Ok(releases) => match releases.meet(&constraint.req) {
            Some(meets) => return meets,
            None => format!(
                "{} allows releases both inside and outside {}",
                releases.describe(),
                constraint.text
            ),
        },
        Err(why) => format!("{why}, so whether it runs {} is unknown", constraint.text),
    };
    cx.note_unknown(
        cx.model.object(app.object).id(),
        Unknown(format!("{} {why}", app.identity)),
    );
    false
}

/// `appVersion`: the app bound before runs a release within a semver
/// constraint (`<2024.10`), for a premise that holds only on some
/// releases. Binds nothing.
#[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct AppVersionStep(#[schemars(with = "String")] pub VersionConstraint);

impl Step for AppVersionStep {
    fn eval(&self, cx: &mut Ctx, bound: &Bindings) -> Vec<Bindings> {
        let Some(fact) = super::find::<AppFact>(bound, "app") else {
            return Vec::new();
        };
        let app = fact.app.clone();
        match meets(cx, &app, &self.0) {
            true => vec![Vec::new()],
            false => Vec::new(),
        }
    }
}

impl Fact for AppFact {
    fn describe(&self, model: &Model) -> Described {
        let app = &self.app;
        // A floating tag or a range reads as written: `2025.10.0` would
        // claim one release where it allows several.
        let written = match app.releases() {
            Ok(r) if r.kind != Pin::Exact => Some(r.text),
            _ => app.version.as_ref().map(|v| v.to_string()),
        };
        // A tag that names no release (`develop@sha256:…`, a digest) is
        // on the labelled line already.
        let version = written
            .map(|v| shown(model, app.version_node.as_ref(), v))
            .unwrap_or_else(|| "(version unknown)".into());
        let span = app
            .version_node
            .as_ref()
            .map_or_else(|| object_span(model, app.object), |n| n.span());
        let mut labels = vec![Label {
            span,
            text: format!("{} {version}", app.identity),
        }];
        labels.extend(app.version_node.as_ref().and_then(variable_label));
        Described {
            labels,
            evidence: vec![
                ("name".into(), app.identity.clone()),
                ("version".into(), version),
                ("object".into(), model.object(app.object).id()),
            ],
            identity: model.object(app.object).id(),
        }
    }

    fn object(&self) -> Option<ObjRef> {
        Some(self.app.object)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_constraint_that_does_not_parse_is_an_error_not_a_match_all() {
        let parsed: Result<AppStep, _> = serde_saphyr::from_str("version: \">=2025.10 junk\"\n");
        let err = parsed.expect_err("a broken constraint must not load");
        assert!(
            err.to_string().contains("is not a semver constraint"),
            "{err}"
        );
    }

    #[test]
    fn a_constraint_keeps_its_meaning() {
        let step: AppStep = serde_saphyr::from_str("version: \">=2025.10\"\n").unwrap();
        let req = step.version.unwrap().req;
        let meet = |v| crate::model::version::releases(v).unwrap().meet(&req);
        assert_eq!(meet("2025.10.1"), Some(true));
        assert_eq!(meet("2025.8.3"), Some(false));
    }
}
