//! `dataVolume`: apps that keep their database files under a path, with
//! the volume mounted over that path.

use serde::{Deserialize, Serialize};

use super::{AppFact, Bindings, Described, Fact, Step, bind, first_line};
use crate::model::app::{self, AppQuery};
use crate::model::volume::{self, Mount};
use crate::model::{Model, Unknown, env};
use crate::rules::engine::Ctx;
use crate::rules::finding::Label;

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DataVolumeStep {
    /// The apps, each with the images it runs from and where it keeps
    /// its database.
    pub apps: Vec<DataApp>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DataApp {
    /// The app's name, for messages (`{volume.app}`).
    pub name: String,
    /// Image repositories (registry optional for Docker Hub).
    pub images: Vec<String>,
    /// The database file or directory in the container.
    pub path: String,
    /// Variables that move the database elsewhere (`SONARR__POSTGRES__HOST`):
    /// when one is set, or may be set by a Secret the repository does not
    /// show, the app does not match.
    #[serde(default)]
    pub unless_env: Vec<String>,
}

/// The volume over an app's data path, and the app's name.
#[derive(Clone, Debug)]
pub(crate) struct VolumeFact {
    pub mount: Mount,
    pub app: String,
}

impl Step for DataVolumeStep {
    /// Each listed app found, with the volume over its data path, unless
    /// a variable moves its database elsewhere.
    fn eval(&self, cx: &mut Ctx, _bound: &Bindings) -> Vec<Bindings> {
        let model = cx.model;
        let mut out = Vec::new();
        for entry in &self.apps {
            let query = AppQuery {
                charts: &[],
                images: &entry.images,
            };
            for a in app::find(model, &query) {
                let subject = model.object(a.object).id();
                if !entry.unless_env.is_empty() {
                    let vars = env::of_app(model, &a, &[]);
                    if entry
                        .unless_env
                        .iter()
                        .any(|n| env::lookup(&vars, n).is_some())
                    {
                        continue;
                    }
                    if let Some(src) = env::has_hidden_sources(model, &a) {
                        let names = entry.unless_env.join(", ");
                        cx.note_unknown(
                            subject,
                            Unknown(format!(
                                "{src} could set {names}, which moves {}'s database off {}",
                                entry.name, entry.path
                            )),
                        );
                        continue;
                    }
                }
                match volume::at(model, &a, &entry.images, &entry.path) {
                    Ok(Some(mount)) => out.push(vec![
                        bind("app", AppFact::new(a)),
                        bind(
                            "volume",
                            VolumeFact {
                                mount,
                                app: entry.name.clone(),
                            },
                        ),
                    ]),
                    Ok(None) => {}
                    Err(unknown) => cx.note_unknown(subject, unknown),
                }
            }
        }
        out
    }
}

impl Fact for VolumeFact {
    fn describe(&self, model: &Model) -> Described {
        let m = &self.mount;
        Described {
            labels: vec![Label {
                span: first_line(model, m.node.span()),
                text: format!(
                    "{} is on volume {}, mounted at {}",
                    m.data_path, m.volume, m.mount_path
                ),
            }],
            evidence: vec![
                ("app".into(), self.app.clone()),
                ("path".into(), m.data_path.clone()),
                ("mount".into(), m.mount_path.clone()),
                ("name".into(), m.volume.clone()),
            ],
            identity: format!("{}:{}", m.volume, m.data_path),
        }
    }
}
