use super::*;
use crate::yaml::FileId;
use std::path::PathBuf;

use crate::source::test_repo::TestRepo as Repo;

/// [`substitute`] of an object no parse in the cache says is free of `$`.
fn parsed_nowhere(
    sources: &SourceMap,
    obj: &mut Object,
    vars: &Vars,
    budget: &mut Budget,
    origins: &mut Origins,
) -> Vec<Issue> {
    substitute(sources, obj, vars, budget, origins, None)
}

fn test_budget() -> Budget {
    budget(&super::super::Limits::default())
}

impl Repo {
    fn vars(&self) -> (Vars, Vec<Issue>) {
        let ks = self.find("Kustomization", "flux-system", "apps").unwrap();
        collect_vars(&self.sources, ks, &|k, ns, n| self.find(k, ns, n))
    }

    /// Substitutes into the object named `name` with the vars of
    /// Kustomization `apps`.
    fn render(&self, name: &str) -> (Object, Vec<Issue>) {
        let (vars, issues) = self.vars();
        assert!(issues.is_empty(), "{issues:?}");
        let mut obj = self
            .objects
            .iter()
            .find(|o| o.name() == name)
            .unwrap()
            .clone();
        let issues = substitute(
            &self.sources,
            &mut obj,
            &vars,
            &mut test_budget(),
            &mut Origins::default(),
            None,
        );
        (obj, issues)
    }
}

const KS: &str = "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  postBuild:
    substitute:
      DOMAIN: example.org
      REPLICAS: \"3\"
    substituteFrom:
      - kind: ConfigMap
        name: settings
      - kind: Secret
        name: secrets
      - kind: ConfigMap
        name: maybe
        optional: true
";

const SETTINGS: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: flux-system
data:
  DOMAIN: from-configmap.org
  TZ: Europe/Berlin
  MULTI: |
    a
    b
";

const SECRETS: &str = "\
apiVersion: v1
kind: Secret
metadata:
  name: secrets
  namespace: flux-system
data:
  TZ: VVRD
stringData:
  PASSWORD: hunter2
";

#[test]
fn inline_and_sources_in_order_inline_wins() {
    let repo = Repo::new(&[
        ("ks.yaml", KS),
        ("settings.yaml", SETTINGS),
        ("secrets.yaml", SECRETS),
    ]);
    let (vars, issues) = repo.vars();
    assert!(issues.is_empty(), "{issues:?}");
    // The optional `maybe` is not in the repo but may be in the cluster.
    assert!(vars.incomplete);
    // Inline beats the ConfigMap.
    assert_eq!(vars.get("DOMAIN").unwrap().value, "example.org");
    // The Secret (later) beats the ConfigMap (earlier); data is base64.
    assert_eq!(vars.get("TZ").unwrap().value, "UTC");
    assert_eq!(vars.get("PASSWORD").unwrap().value, "hunter2");
    // Newlines are removed, as Flux does.
    assert_eq!(vars.get("MULTI").unwrap().value, "ab");
    // Definition spans point at the values.
    let domain = vars.get("DOMAIN").unwrap().defined_at.unwrap();
    assert_eq!((domain.line, domain.col), (9, 15));
    let tz = vars.get("TZ").unwrap().defined_at.unwrap();
    assert_eq!(repo.sources.path(tz.file), PathBuf::from("secrets.yaml"));
    assert_eq!((tz.line, tz.col), (7, 7));
    let pw = vars.get("PASSWORD").unwrap().defined_at.unwrap();
    assert_eq!((pw.line, pw.col), (9, 13));
}

#[test]
fn missing_sources_optional_or_not() {
    let repo = Repo::new(&[("ks.yaml", KS), ("settings.yaml", SETTINGS)]);
    let (vars, issues) = repo.vars();
    // `secrets` is missing and required; `maybe` is optional, so no
    // issue, but either may exist in the cluster only.
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(
        issues[0].message.contains("Secret flux-system/secrets"),
        "{issues:?}"
    );
    assert_eq!((issues[0].path.as_str(), issues[0].line), ("ks.yaml", 14));
    assert!(vars.incomplete);
    assert_eq!(vars.get("TZ").unwrap().value, "Europe/Berlin");
}

#[test]
fn sops_values_are_unknown_not_errors() {
    let sops_secret = "\
apiVersion: v1
kind: Secret
metadata:
  name: secrets
  namespace: flux-system
stringData:
  PASSWORD: ENC[AES256_GCM,data:abc,type:str]
sops:
  version: 3.8.1
";
    let ks = KS.to_string();
    let repo = Repo::new(&[
        ("ks.yaml", &ks),
        ("settings.yaml", SETTINGS),
        ("secrets.yaml", sops_secret),
    ]);
    let (vars, issues) = repo.vars();
    assert!(issues.is_empty(), "{issues:?}");
    let pw = vars.get("PASSWORD").unwrap();
    assert!(pw.unknown);
    assert_eq!(pw.value, "");

    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: app
data:
  password: ${PASSWORD:=default}
";
    let repo = Repo::new(&[
        ("ks.yaml", &ks),
        ("settings.yaml", SETTINGS),
        ("secrets.yaml", sops_secret),
        ("app.yaml", app),
    ]);
    let mut obj = repo.find("ConfigMap", "", "app").unwrap().clone();
    let (vars, _) = repo.vars();
    assert!(
        substitute(
            &repo.sources,
            &mut obj,
            &vars,
            &mut test_budget(),
            &mut Origins::default(),
            None,
        )
        .is_empty()
    );
    let node = obj.root.path(&["data", "password"]).unwrap();
    match node.origin() {
        Some(Origin::Substituted {
            variable, unknown, ..
        }) => {
            assert_eq!(variable, "PASSWORD");
            assert!(unknown);
        }
        other => panic!("{other:?}"),
    }
}

const APP: &str = "\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    ${DOMAIN}: yes
spec:
  replicas: ${REPLICAS}
  template:
    spec:
      containers:
        - name: web
          image: \"nginx:${TAG:=1.27}\"
          args: [\"--tz=${TZ}\", '$${KEEP}', \"--x=${UNSET}\"]
          env:
            - name: QUOTED
              value: \"${REPLICAS}\"
            - name: EMPTY
              value: ${UNSET}
            - name: BLOCK
              value: |
                ${REPLICAS}
";

#[test]
fn substitutes_with_retyping_and_provenance() {
    let repo = Repo::new(&[
        ("ks.yaml", KS),
        ("settings.yaml", SETTINGS),
        ("secrets.yaml", SECRETS),
        ("app.yaml", APP),
    ]);
    let (obj, issues) = repo.render("web");
    assert!(issues.is_empty(), "{issues:?}");
    let j = obj.root.to_json();
    assert_eq!(j["spec"]["replicas"], serde_json::json!(3));
    assert_eq!(j["metadata"]["labels"]["example.org"], "yes");
    let c = &j["spec"]["template"]["spec"]["containers"][0];
    // The optional `maybe` source is not in the repo, so the cluster
    // may define TAG and UNSET: what reads them stays as written,
    // defaults too.
    assert_eq!(c["image"], "nginx:${TAG:=1.27}");
    assert_eq!(
        c["args"],
        serde_json::json!(["--tz=UTC", "${KEEP}", "--x=${UNSET}"])
    );
    // Quoting is lost in Flux's YAML round trip: the API server gets
    // the number 3 here (Flux's docs: quote with a `${quote}` variable).
    assert_eq!(c["env"][0]["value"], serde_json::json!(3));
    assert_eq!(c["env"][1]["value"], "${UNSET}");
    assert_eq!(c["env"][2]["value"], "3\n");
    let step = obj.chain.last().unwrap();
    assert_eq!(step.kind, StepKind::Substitution);
    assert_eq!(step.at.map(|s| (s.file, s.line)), Some((FileId(0), 8)));

    // Use site keeps its span; the origin points at the definition.
    let replicas = obj.root.path(&["spec", "replicas"]).unwrap();
    assert_eq!((replicas.span().line, replicas.span().col), (8, 13));
    assert_eq!(
        repo.sources.path(replicas.span().file),
        PathBuf::from("app.yaml")
    );
    let Some(Origin::Substituted {
        variable,
        defined_at: Some(def),
        unknown: false,
        ..
    }) = replicas.origin()
    else {
        panic!("{:?}", replicas.origin());
    };
    assert_eq!(variable, "REPLICAS");
    assert_eq!(repo.sources.path(def.file), PathBuf::from("ks.yaml"));
    assert_eq!((def.line, def.col), (10, 17));

    // A default: the variable is named, nothing in the repository
    // defines it, and the optional source missing from it might.
    let image = obj
        .root
        .path(&["spec", "template", "spec", "containers"])
        .and_then(|c| c.as_seq())
        .map(|c| c[0].get("image").unwrap().clone())
        .unwrap();
    assert_eq!(
        image.origin(),
        Some(&Origin::Substituted {
            variable: "TAG".into(),
            defined_at: None,
            unknown: true,
            undefined: Vec::new(),
            secret: false,
            // What it reads unless the missing source sets TAG.
            if_unset: Some("nginx:1.27".into()),
        })
    );
    assert_eq!(image.style(), Style::Quoted);
}

#[test]
fn opt_out_by_label_or_annotation() {
    for meta in [
        "labels:\n    kustomize.toolkit.fluxcd.io/substitute: disabled",
        "annotations:\n    kustomize.toolkit.fluxcd.io/substitute: disabled",
    ] {
        let app = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  {meta}\ndata:\n  a: ${{DOMAIN}}\n"
        );
        let repo = Repo::new(&[
            ("ks.yaml", KS),
            ("settings.yaml", SETTINGS),
            ("secrets.yaml", SECRETS),
            ("app.yaml", &app),
        ]);
        let (obj, issues) = repo.render("x");
        assert!(issues.is_empty());
        assert_eq!(obj.root.str_at(&["data", "a"]), Some("${DOMAIN}"));
    }
}

#[test]
fn no_variables_means_no_substitution() {
    let ks = &ks_with("    substitute: {}\n");
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: ${A:=d}\n";
    let repo = Repo::new(&[("ks.yaml", ks), ("app.yaml", app)]);
    let (obj, _) = repo.render("x");
    assert_eq!(obj.root.str_at(&["data", "a"]), Some("${A:=d}"));
}

#[test]
fn bad_syntax_is_reported_and_others_still_substituted() {
    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  bad: \"${DOMAIN\"
  good: ${DOMAIN}
";
    let repo = Repo::new(&[
        ("ks.yaml", KS),
        ("settings.yaml", SETTINGS),
        ("secrets.yaml", SECRETS),
        ("app.yaml", app),
    ]);
    let (obj, issues) = repo.render("x");
    assert_eq!(issues.len(), 1);
    // At the `${` that does not parse, inside the quotes.
    assert_eq!(
        (issues[0].path.as_str(), issues[0].line, issues[0].col),
        ("app.yaml", 6, 9)
    );
    assert_eq!(obj.root.str_at(&["data", "bad"]), Some("${DOMAIN"));
    assert_eq!(obj.root.str_at(&["data", "good"]), Some("example.org"));
}

#[test]
fn invalid_inline_values_and_names_are_reported() {
    let ks = "\
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: apps
  namespace: flux-system
spec:
  postBuild:
    substitute:
      N: 3
      bad-name: x
";
    let repo = Repo::new(&[("ks.yaml", ks)]);
    let (vars, issues) = repo.vars();
    assert_eq!(issues.len(), 2, "{issues:?}");
    assert_eq!(vars.get("N").unwrap().value, "3");
    assert!(vars.get("bad-name").is_none());
}

/// Kustomization `apps` with `post_build` (indented) under postBuild.
fn ks_with(post_build: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: apps\n  namespace: flux-system\nspec:\n  postBuild:\n{post_build}"
    )
}

fn render_one(ks: &str, app: &str) -> (Object, Vec<Issue>) {
    Repo::new(&[("ks.yaml", ks), ("app.yaml", app)]).render("x")
}

fn typed_ks() -> String {
    ks_with(concat!(
        "    substitute:\n",
        "      ID: \"123\"\n",
        "      ON: \"yes\"\n",
        "      quote: '\"'\n",
        "      LIST: \"[a, b]\"\n",
        "      KEY: app\n",
        "      PAIR: \"a: b\"\n",
        "      V: aa\n",
    ))
}

/// Types as Flux's go-yaml v2 round trip gives them,
/// whatever the quoting in the repository.
#[test]
fn typed_substitution_follows_the_yaml_round_trip() {
    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
  labels:
    ${KEY}: \"1\"
    app: \"2\"
data:
  gid: \"${N:-568}\"
  flag: \"${B:=true}\"
  quoted: ${quote}${ID}${quote}
  yaml11: '${ON}'
  word: \"x-${ID}\"
  spaced: \"${ID} \"
  list: ${LIST}
  keyword: \"${KEY}: ${ID}\"
";
    let (obj, issues) = render_one(&typed_ks(), app);
    let j = obj.root.to_json();
    assert_eq!(j["data"]["gid"], serde_json::json!(568));
    assert_eq!(j["data"]["flag"], serde_json::json!(true));
    assert_eq!(j["data"]["quoted"], "123");
    assert_eq!(j["data"]["yaml11"], serde_json::json!(true));
    assert_eq!(j["data"]["word"], "x-123");
    // A string with a trailing space is written single-quoted.
    assert_eq!(j["data"]["spaced"], "123 ");
    assert_eq!(j["data"]["list"], serde_json::json!(["a", "b"]));
    assert_eq!(j["data"]["keyword"], "app: 123");
    // `${KEY}` became `app`, which is written twice: go-yaml keeps the
    // one it wrote later, and it wrote `${KEY}` first.
    assert_eq!(j["metadata"]["labels"], serde_json::json!({"app": "2"}));
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].message.contains("written twice"), "{issues:?}");
    assert_eq!((issues[0].line, issues[0].col), (6, 5));
    // The typed value keeps its use site and its variable.
    let gid = obj.root.path(&["data", "gid"]).unwrap();
    assert_eq!((gid.span().line, gid.span().col), (9, 8));
    assert!(matches!(
        gid.origin(),
        Some(Origin::Substituted { variable, defined_at: None, .. }) if variable == "N"
    ));
}

#[test]
fn text_that_no_longer_reads_as_one_value_is_an_issue() {
    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  pair: ${PAIR}
  fine: ${ID}
";
    let (obj, issues) = render_one(&typed_ks(), app);
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!((issues[0].line, issues[0].col), (6, 9));
    assert!(
        issues[0]
            .message
            .contains("no longer reads as one YAML value")
    );
    assert_eq!(obj.root.str_at(&["data", "pair"]), Some("${PAIR}"));
    assert_eq!(obj.root.to_json()["data"]["fine"], serde_json::json!(123));
}

#[test]
fn strategy_always_substitutes_defaults_without_variables() {
    let ks = ks_with("    substituteStrategy: Always\n");
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: ${A:=d}\n";
    let (obj, _) = render_one(&ks, app);
    assert_eq!(obj.root.str_at(&["data", "a"]), Some("d"));
}

/// The Secret Flux reads may be one a SealedSecret or
/// an ExternalSecret makes: its keys are known, its values are not.
#[test]
fn sealed_and_external_secrets_are_sources_with_unknown_values() {
    let ks = ks_with(
        "    substituteFrom:\n      - kind: Secret\n        name: sealed\n      - kind: Secret\n        name: external-target\n",
    );
    let sealed = "\
apiVersion: bitnami.com/v1alpha1
kind: SealedSecret
metadata:
  name: sealed
  namespace: flux-system
spec:
  encryptedData:
    DOMAIN: AgBy8hCi
";
    let external = "\
apiVersion: external-secrets.io/v1
kind: ExternalSecret
metadata:
  name: es
  namespace: flux-system
spec:
  target:
    name: external-target
    template:
      data:
        TZ: Europe/Berlin
        TOKEN: '{{ .token }}'
";
    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  host: app.${DOMAIN}
  tz: ${TZ}
  token: ${TOKEN}
  typo: ${DOMAN}
";
    let repo = Repo::new(&[
        ("ks.yaml", &ks),
        ("sealed.yaml", sealed),
        ("es.yaml", external),
        ("app.yaml", app),
    ]);
    let ks_obj = repo.find("Kustomization", "flux-system", "apps").unwrap();
    let lookup = |kind: &str, ns: &str, name: &str| {
        repo.objects
            .iter()
            .find(|o| data::provides(o) == Some((kind, name)) && data::provided_in(o, ns))
    };
    let (vars, issues) = collect_vars(&repo.sources, ks_obj, &lookup);
    assert!(issues.is_empty(), "{issues:?}");
    assert!(!vars.incomplete);
    assert!(vars.get("DOMAIN").unwrap().unknown);
    assert_eq!(vars.get("TZ").unwrap().value, "Europe/Berlin");
    let mut obj = repo.find("ConfigMap", "", "x").unwrap().clone();
    substitute(
        &repo.sources,
        &mut obj,
        &vars,
        &mut test_budget(),
        &mut Origins::default(),
        None,
    );
    let j = obj.root.to_json();
    assert_eq!(j["data"]["host"], "app.${DOMAIN}");
    assert_eq!(j["data"]["tz"], "Europe/Berlin");
    assert_eq!(j["data"]["token"], "${TOKEN}");
    // Every key is known, so a typo is undefined, not unknown.
    assert_eq!(j["data"]["typo"], serde_json::Value::Null);
    let typo = obj.root.path(&["data", "typo"]).unwrap();
    assert!(matches!(
        typo.origin(),
        Some(Origin::Substituted { undefined, unknown: false, .. }) if undefined == &["DOMAN"]
    ));
}

/// Strict substitution: a variable defined nowhere inside the unused
/// default of a set one is an issue; the value still renders.
#[test]
fn undefined_variable_in_an_unused_default_fails_strict_substitution() {
    let ks = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec:\n  postBuild:\n    substitute: {A: a}\n";
    let app = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n  v: ${A:=${B}}\n  w: ${A:=b}\n";
    let repo = Repo::new(&[("ks.yaml", ks), ("app.yaml", app)]);
    let (obj, issues) = repo.render("x");
    assert_eq!(obj.root.to_json()["data"]["v"], "a");
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!((issues[0].path.as_str(), issues[0].line), ("app.yaml", 5));
    assert!(
        issues[0].message.contains("B in \"${A:=${B}}\""),
        "{}",
        issues[0]
    );
}

#[test]
fn budget_hits_are_issues_at_the_scalar_and_the_rest_goes_on() {
    let mut nested = "aa".to_string();
    for _ in 0..12 {
        nested = format!("${{V//a/{nested}}}");
    }
    let app = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  big: '{nested}'\n  ok: ${{ID}}\n"
    );
    let ks = typed_ks();
    let repo = Repo::new(&[("ks.yaml", &ks), ("app.yaml", &app)]);
    let (vars, _) = repo.vars();
    let mut obj = repo.find("ConfigMap", "", "x").unwrap().clone();
    let limits = super::super::Limits {
        max_subst_value_bytes: 1000,
        ..Default::default()
    };
    let issues = substitute(
        &repo.sources,
        &mut obj,
        &vars,
        &mut budget(&limits),
        &mut Origins::default(),
        None,
    );
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert_eq!((issues[0].line, issues[0].col), (6, 8));
    assert!(issues[0].message.starts_with(BUDGET), "{issues:?}");
    assert_eq!(obj.root.str_at(&["data", "big"]), Some(nested.as_str()));
    assert_eq!(obj.root.to_json()["data"]["ok"], serde_json::json!(123));
}

#[test]
fn holds_dollar_agrees_with_contains() {
    // Every length up to three words, a `$` (or a byte one bit away from
    // it) at each place, and text outside ASCII around it.
    for len in 0..24 {
        for at in 0..=len {
            for mark in ["$", "%", "\u{a4}", "é"] {
                let text: String = (0..len).map(|i| if i == at { mark } else { "a" }).collect();
                assert_eq!(holds_dollar(&text), text.contains('$'), "{text:?}");
            }
        }
    }
}

/// What holds no `$` stays shared with the object substituted into: only
/// the collections on the way to a substituted scalar are copied.
#[test]
fn substitution_copies_only_the_way_to_a_dollar() {
    let app =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  url: https://${DOMAIN}\n";
    let ks = ks_with("    substitute:\n      DOMAIN: example.org\n");
    let repo = Repo::new(&[("ks.yaml", ks.as_str()), ("app.yaml", app)]);
    let (obj, issues) = repo.render("x");
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(
        obj.root.str_at(&["data", "url"]),
        Some("https://example.org")
    );
    let before = repo.objects.iter().find(|o| o.name() == "x").unwrap();
    assert_eq!(
        before.root.str_at(&["data", "url"]),
        Some("https://${DOMAIN}")
    );
    let entries = |root: &Node, key: &str| match &root.get(key).unwrap().value {
        Value::Map(entries) => entries.clone(),
        _ => panic!("{key} is a mapping"),
    };
    assert!(Arc::ptr_eq(
        &entries(&obj.root, "metadata"),
        &entries(&before.root, "metadata")
    ));
    assert!(!Arc::ptr_eq(
        &entries(&obj.root, "data"),
        &entries(&before.root, "data")
    ));
}

/// The way to the first `$` names its place at each level, the innermost
/// first; each `$` after it (a later item, a later entry, a key) is still
/// found and substituted, and what comes before it is left alone.
#[test]
fn every_dollar_after_the_first_is_substituted() {
    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  plain: a
  list:
    - b
    - [c, \"${DOMAIN}\", \"${DOMAIN}/2\"]
    - ${DOMAIN}
  ${DOMAIN}: key
  last: ${DOMAIN}
";
    let ks = ks_with("    substitute:\n      DOMAIN: example.org\n");
    let repo = Repo::new(&[("ks.yaml", ks.as_str()), ("app.yaml", app)]);
    let before = repo.objects.iter().find(|o| o.name() == "x").unwrap();
    let mut way = Vec::new();
    assert!(first_dollar(&before.root, None, &mut way));
    // data (entry 3, its value), list (entry 1), item 1, item 1.
    assert_eq!(way, [1, 1, 3, 7]);
    let (obj, issues) = repo.render("x");
    assert!(issues.is_empty(), "{issues:?}");
    assert_eq!(
        obj.root.to_json()["data"],
        serde_json::json!({
            "plain": "a",
            "list": ["b", ["c", "example.org", "example.org/2"], "example.org"],
            "example.org": "key",
            "last": "example.org",
        })
    );
}

/// A text seen before in the same Kustomization's objects gives the same
/// value and origin at its own place, pays the budget again (a budget
/// that covers one expansion stops the next), and what reports an issue
/// reports it at every place.
#[test]
fn a_repeated_text_is_substituted_at_each_place_and_paid_each_time() {
    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  a: ${ID}
  b: ${ID}
  c: ${PAIR}
  d: ${PAIR}
  ${KEY}: ${ID}
  e: ${V#a}
";
    let repo = Repo::new(&[("ks.yaml", &typed_ks()), ("app.yaml", app)]);
    let (vars, _) = repo.vars();
    let object = || repo.find("ConfigMap", "", "x").unwrap().clone();
    let mut budget = test_budget();
    let mut origins = Origins::default();
    let (mut first, mut second) = (object(), object());
    let issues = parsed_nowhere(&repo.sources, &mut first, &vars, &mut budget, &mut origins);
    assert_eq!(issues.iter().map(|i| i.line).collect::<Vec<_>>(), [8, 9]);
    let again = parsed_nowhere(&repo.sources, &mut second, &vars, &mut budget, &mut origins);
    assert_eq!(again.iter().map(|i| i.line).collect::<Vec<_>>(), [8, 9]);
    for obj in [&first, &second] {
        let j = obj.root.to_json();
        assert_eq!(j["data"]["b"], serde_json::json!(123));
        assert_eq!(j["data"]["app"], serde_json::json!(123));
        let b = obj.root.path(&["data", "b"]).unwrap();
        assert_eq!(b.span().line, 7);
        assert!(
            matches!(b.origin(), Some(Origin::Substituted { variable, .. }) if variable == "ID")
        );
    }
    // The trim of `${V#a}` costs 6 steps: room for the first only.
    let mut budget = Budget {
        steps_left: 8,
        ..test_budget()
    };
    let (mut first, mut second) = (object(), object());
    let mut origins = Origins::default();
    parsed_nowhere(&repo.sources, &mut first, &vars, &mut budget, &mut origins);
    let issues = parsed_nowhere(&repo.sources, &mut second, &vars, &mut budget, &mut origins);
    assert_eq!(first.root.str_at(&["data", "e"]), Some("a"));
    assert_eq!(second.root.str_at(&["data", "e"]), Some("${V#a}"));
    assert!(
        issues
            .iter()
            .any(|i| i.line == 11 && i.message.starts_with(BUDGET)),
        "{issues:?}"
    );
}

/// Given the parse an object was made of, substitution passes over the
/// collections the object still shares with it (the parse is given as
/// one without a `$`, here wrongly, so that passing over shows) and
/// expands what a step changed or added, wherever it sits.
#[test]
fn what_is_still_the_parse_is_passed_over_and_changes_are_expanded() {
    let app = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: x
data:
  a: x
kept:
  v: ${ID}
  list:
  - ${ID}
";
    let repo = Repo::new(&[("ks.yaml", &typed_ks()), ("app.yaml", app)]);
    let (vars, _) = repo.vars();
    let mut obj = repo.find("ConfigMap", "", "x").unwrap().clone();
    let parsed = obj.root.clone();
    let added = Node::new(Value::Str("${ID}".into()), Span::default());
    let data = obj.root_mut().get_mut("data").unwrap();
    data.insert("c", added.clone());
    let issues = substitute(
        &repo.sources,
        &mut obj,
        &vars,
        &mut test_budget(),
        &mut Origins::default(),
        Some(&parsed),
    );
    assert!(issues.is_empty(), "{issues:?}");
    let j = obj.root.to_json();
    assert_eq!(j["data"], serde_json::json!({"a": "x", "c": 123}));
    assert_eq!(
        j["kept"],
        serde_json::json!({"v": "${ID}", "list": ["${ID}"]})
    );
    // A collection changed where the parse had one is looked into, and
    // so is every collection on the way to it.
    let mut obj = repo.find("ConfigMap", "", "x").unwrap().clone();
    let kept = obj.root_mut().get_mut("kept").unwrap();
    let list = kept.get_mut("list").unwrap();
    list.as_seq_mut().unwrap().push(added);
    substitute(
        &repo.sources,
        &mut obj,
        &vars,
        &mut test_budget(),
        &mut Origins::default(),
        Some(&parsed),
    );
    let j = obj.root.to_json();
    assert_eq!(j["kept"], serde_json::json!({"v": 123, "list": [123, 123]}));
}

/// A variable name is `[_a-zA-Z][_a-zA-Z0-9]*`: a letter outside ASCII
/// is none.
#[test]
fn variable_names_are_ascii_letters_digits_and_underscores() {
    for name in ["_", "a", "Z_9", "_1a"] {
        assert!(valid_name(name), "{name}");
    }
    for name in ["", "1a", "é", "aé", "a-b", "a.b", "a b"] {
        assert!(!valid_name(name), "{name}");
    }
}
