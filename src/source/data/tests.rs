use super::*;
use crate::yaml::{FileId, Limits, parse_documents};

fn object(text: &str) -> Object {
    let mut docs = parse_documents(text, FileId(0), &Limits::default()).unwrap();
    Object::new(docs.remove(0), FileId(0), 0)
}

#[test]
fn base64_round_trips_and_rejects_garbage() {
    assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
    assert_eq!(decode_base64("aGk=").unwrap(), b"hi");
    assert_eq!(decode_base64("YWJj").unwrap(), b"abc");
    assert_eq!(decode_base64("").unwrap(), b"");
    assert!(decode_base64("aGVsbG8").is_none());
    assert!(decode_base64("a=Vs").is_none());
    assert!(decode_base64("****").is_none());
}

#[test]
fn string_data_overrides_data() {
    let obj = object(
        "apiVersion: v1\nkind: Secret\ndata:\n  A: YQ==\n  B: Yg==\nstringData:\n  B: plain\n",
    );
    let e = entries(&obj, &nowhere);
    assert!(matches!(&e[0].1, DataValue::Text { text, .. } if text == "a"));
    assert!(matches!(&e[1].1, DataValue::Text { text, .. } if text == "plain"));
}

#[test]
fn encrypted_values_are_unknown_even_without_sops_metadata() {
    let obj = object(
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  A: ENC[AES256_GCM,data:x,type:str]\n  B: ok\n",
    );
    assert!(matches!(
        entry(&obj, "A", &nowhere),
        Some(DataValue::Unknown { .. })
    ));
    assert!(matches!(
        entry(&obj, "B", &nowhere),
        Some(DataValue::Text { .. })
    ));
    assert!(entry(&obj, "C", &nowhere).is_none());
    let bad = object("apiVersion: v1\nkind: Secret\ndata:\n  A: not-base64!\n");
    assert!(matches!(
        entry(&bad, "A", &nowhere),
        Some(DataValue::Invalid { .. })
    ));
}

#[test]
fn sops_rules_decide_which_values_are_readable() {
    let obj = object(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  HOST: db-rw\n  HOST_unencrypted: db-rw\n  PASSWORD: ENC[AES256_GCM,data:x]\nsops:\n  unencrypted_regex: ^HOST$\n",
    );
    assert!(
        matches!(entry(&obj, "HOST", &nowhere), Some(DataValue::Text { text, .. }) if text == "db-rw")
    );
    assert!(matches!(
        entry(&obj, "PASSWORD", &nowhere),
        Some(DataValue::Unknown { .. })
    ));
    // The default suffix applies only when the file records it.
    assert!(matches!(
        entry(&obj, "HOST_unencrypted", &nowhere),
        Some(DataValue::Unknown { .. })
    ));
    let by_regex = object(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\nstringData:\n  HOST: db-rw\nsops:\n  encrypted_regex: ^(data|stringData)$\n",
    );
    assert!(
        matches!(entry(&by_regex, "HOST", &nowhere), Some(DataValue::Unknown { why, .. }) if why == SOPS_ENCRYPTED)
    );
    let suffix = object(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  HOST_unencrypted: db-rw\n  B: x\nsops:\n  unencrypted_suffix: _unencrypted\n",
    );
    assert!(matches!(
        entry(&suffix, "HOST_unencrypted", &nowhere),
        Some(DataValue::Text { .. })
    ));
    assert!(matches!(
        entry(&suffix, "B", &nowhere),
        Some(DataValue::Unknown { .. })
    ));
}

#[test]
fn sealed_and_external_secrets_hold_their_keys() {
    let sealed = object(
        "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: db\nspec:\n  encryptedData:\n    PASSWORD: AgBy8h\n  template:\n    data:\n      HOST: db-rw.dbms.svc\n      URL: 'postgres://{{ index . \"PASSWORD\" }}@db'\n",
    );
    assert_eq!(secret_name(&sealed), Some("db"));
    assert!(matches!(
        entry(&sealed, "PASSWORD", &nowhere),
        Some(DataValue::Unknown { .. })
    ));
    assert!(
        matches!(entry(&sealed, "HOST", &nowhere), Some(DataValue::Text { text, .. }) if text == "db-rw.dbms.svc")
    );
    assert!(matches!(
        entry(&sealed, "URL", &nowhere),
        Some(DataValue::Template { .. })
    ));
    assert!(keys_complete(&sealed, &nowhere).is_ok());

    let templated = object(
        "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: es\nspec:\n  target:\n    name: app-secret\n    template:\n      data:\n        HOST: postgres-rw.dbms.svc.cluster.local\n        PASSWORD: '{{ .password }}'\n  dataFrom:\n    - extract:\n        key: app\n",
    );
    assert_eq!(secret_name(&templated), Some("app-secret"));
    let keys: Vec<String> = entries(&templated, &nowhere)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["HOST", "PASSWORD"]);
    assert!(
        matches!(entry(&templated, "HOST", &nowhere), Some(DataValue::Text { text, .. }) if text == "postgres-rw.dbms.svc.cluster.local")
    );
    assert!(matches!(
        entry(&templated, "PASSWORD", &nowhere),
        Some(DataValue::Template { template, .. }) if template == "{{ .password }}"
    ));
    // With a template, the provider's keys do not reach the Secret.
    assert!(keys_complete(&templated, &nowhere).is_ok());

    let plain = object(
        "apiVersion: external-secrets.io/v1beta1\nkind: ExternalSecret\nmetadata:\n  name: es\nspec:\n  data:\n    - secretKey: HOST\n      remoteRef: {key: db, property: host}\n  dataFrom:\n    - extract:\n        key: app\n",
    );
    assert_eq!(secret_name(&plain), Some("es"));
    assert!(matches!(
        entry(&plain, "HOST", &nowhere),
        Some(DataValue::Unknown { .. })
    ));
    assert!(
        keys_complete(&plain, &nowhere)
            .unwrap_err()
            .contains("dataFrom")
    );
}

#[test]
fn template_from_renders_config_map_items_before_template_data() {
    let cm = object(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tpl\n  namespace: auth\ndata:\n  HOST: postgres-rw.dbms.svc\n  PASSWORD: '{{ .password }}'\n  env.yaml: |\n    PORT: \"5432\"\n    USER: '{{ .user }}'\n  loop.yaml: |\n    {{ range $k, $v := . }}{{ $k }}: {{ $v }}\n    {{ end }}\n",
    );
    let es = |template: &str| {
        object(&format!(
            "apiVersion: external-secrets.io/v1\nkind: ExternalSecret\nmetadata:\n  name: es\n  namespace: auth\nspec:\n  target:\n    template:\n{template}  dataFrom:\n    - extract:\n        key: app\n"
        ))
    };
    let pool = |kind: &str, ns: &str, name: &str| {
        (kind == "ConfigMap" && ns == "auth" && name == "tpl").then_some(&cm)
    };
    let values = es(
        "      templateFrom:\n        - configMap:\n            name: tpl\n            items:\n              - key: HOST\n              - key: PASSWORD\n              - key: env.yaml\n                templateAs: KeysAndValues\n        - target: Annotations\n          literal: 'note: x'\n        - literal: |\n            LITERAL: '{{ .x }}'\n      data:\n        PASSWORD: fixed\n",
    );
    let keys: Vec<String> = entries(&values, &pool)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(keys, ["HOST", "PASSWORD", "PORT", "USER", "LITERAL"]);
    assert!(
        matches!(entry(&values, "HOST", &pool), Some(DataValue::Text { text, .. }) if text == "postgres-rw.dbms.svc")
    );
    // template.data wins over templateFrom.
    assert!(
        matches!(entry(&values, "PASSWORD", &pool), Some(DataValue::Text { text, .. }) if text == "fixed")
    );
    assert!(
        matches!(entry(&values, "PORT", &pool), Some(DataValue::Text { text, .. }) if text == "5432")
    );
    assert!(
        matches!(entry(&values, "USER", &pool), Some(DataValue::Template { template, .. }) if template == "{{ .user }}")
    );
    assert!(keys_complete(&values, &pool).is_ok());
    // The ConfigMap is read where the ExternalSecret lives.
    let missing = keys_complete(&values, &nowhere).unwrap_err();
    assert!(
        missing.contains("keys HOST, PASSWORD, env.yaml from templateFrom ConfigMap auth/tpl"),
        "{missing}"
    );
    assert_eq!(entries(&values, &nowhere).len(), 2);

    let looped = es(
        "      templateFrom:\n        - configMap:\n            name: tpl\n            items:\n              - key: loop.yaml\n                templateAs: KeysAndValues\n",
    );
    let why = keys_complete(&looped, &pool).unwrap_err();
    assert!(why.contains("made by template actions"), "{why}");
    let no_key = es(
        "      templateFrom:\n        - configMap:\n            name: tpl\n            items:\n              - key: URL\n",
    );
    let why = keys_complete(&no_key, &pool).unwrap_err();
    assert!(why.contains("ConfigMap/auth/tpl has no key URL"), "{why}");
}

#[test]
fn cluster_external_secrets_make_their_secret_in_the_namespaces_they_select() {
    let every = object(
        "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: ces\nspec:\n  externalSecretName: cluster-es\n  namespaceSelectors:\n    - {}\n  externalSecretSpec:\n    target:\n      name: cluster-secrets\n    data:\n      - secretKey: SECRET_DOMAIN\n        remoteRef: {key: secret-domain}\n",
    );
    assert_eq!(provides(&every), Some(("Secret", "cluster-secrets")));
    assert!(provided_in(&every, "flux-system"));
    assert!(namespace_unknown(&every, "flux-system").is_none());
    assert!(matches!(
        entry(&every, "SECRET_DOMAIN", &nowhere),
        Some(DataValue::Unknown { .. })
    ));
    assert!(keys_complete(&every, &nowhere).is_ok());
    // Without target.name: the ExternalSecret's name, then its own.
    let named = object(
        "apiVersion: external-secrets.io/v1beta1\nkind: ClusterExternalSecret\nmetadata:\n  name: ces\nspec:\n  externalSecretName: cluster-es\n  namespaces: [apps]\n  namespaceSelectors:\n    - matchLabels: {kubernetes.io/metadata.name: media}\n  externalSecretSpec:\n    dataFrom:\n      - extract: {key: all}\n",
    );
    assert_eq!(provides(&named), Some(("Secret", "cluster-es")));
    assert!(provided_in(&named, "apps") && provided_in(&named, "media"));
    assert!(!provided_in(&named, "flux-system"));
    assert!(namespace_unknown(&named, "flux-system").is_none());
    assert!(
        keys_complete(&named, &nowhere)
            .unwrap_err()
            .contains("dataFrom")
    );
    let labelled = object(
        "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: ces\nspec:\n  namespaceSelectors:\n    - matchLabels: {secrets: cluster}\n  externalSecretSpec: {}\n",
    );
    assert_eq!(provides(&labelled), Some(("Secret", "ces")));
    assert!(!provided_in(&labelled, "flux-system"));
    assert!(
        namespace_unknown(&labelled, "flux-system")
            .unwrap()
            .contains("ClusterExternalSecret ces")
    );
    // "Every namespace not labelled out" (ahgraber/homelab-gitops-k3s)
    // needs no label the repository hides.
    let opt_out = object(
        "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: cluster-secrets\nspec:\n  namespaceSelectors:\n    - matchExpressions:\n        - {key: clustersecret.external-secrets.io/disable, operator: NotIn, values: [\"true\"]}\n  externalSecretSpec: {}\n",
    );
    assert!(provided_in(&opt_out, "default"));
    assert!(namespace_unknown(&opt_out, "default").is_none());
    // By name: In, NotIn; ANDed with a label the cluster holds.
    let by_name = object(
        "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: ces\nspec:\n  namespaceSelectors:\n    - matchExpressions:\n        - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}\n    - matchExpressions:\n        - {key: kubernetes.io/metadata.name, operator: In, values: [kube-system]}\n        - {key: tier, operator: Exists}\n  externalSecretSpec: {}\n",
    );
    assert!(provided_in(&by_name, "apps"));
    assert!(!provided_in(&by_name, "kube-system"));
    assert!(namespace_unknown(&by_name, "kube-system").is_some());
    let none_by_name = object(
        "apiVersion: external-secrets.io/v1\nkind: ClusterExternalSecret\nmetadata:\n  name: ces\nspec:\n  namespaceSelectors:\n    - matchExpressions:\n        - {key: kubernetes.io/metadata.name, operator: In, values: [media]}\n        - {key: tier, operator: Exists}\n  externalSecretSpec: {}\n",
    );
    assert!(!provided_in(&none_by_name, "apps"));
    assert!(namespace_unknown(&none_by_name, "apps").is_none());
}

#[test]
fn reflector_mirrors_into_the_namespaces_it_lists() {
    let sealed = object(
        "apiVersion: bitnami.com/v1alpha1\nkind: SealedSecret\nmetadata:\n  name: secrets\n  namespace: kube-system\nspec:\n  encryptedData:\n    A: AgB\n  template:\n    metadata:\n      annotations:\n        reflector.v1.k8s.emberstack.com/reflection-allowed: \"true\"\n        reflector.v1.k8s.emberstack.com/reflection-allowed-namespaces: default,mon.*\n        reflector.v1.k8s.emberstack.com/reflection-auto-enabled: \"true\"\n",
    );
    assert_eq!(provides(&sealed), Some(("Secret", "secrets")));
    assert!(provided_in(&sealed, "kube-system"));
    assert!(provided_in(&sealed, "default"));
    assert!(provided_in(&sealed, "monitoring"));
    assert!(!provided_in(&sealed, "apps"));
    // Allowed but not auto-enabled: no mirror is made.
    let manual = object(
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: a\n  annotations:\n    reflector.v1.k8s.emberstack.com/reflection-allowed: \"true\"\n",
    );
    assert!(!provided_in(&manual, "default"));
}
