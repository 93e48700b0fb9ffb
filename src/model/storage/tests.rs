use super::*;

#[test]
fn a_database_without_declared_storage_takes_the_volume_of_its_bound_claim() {
    let db = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: pg, namespace: db}\nspec:\n  template:\n    spec:\n      containers:\n      - {name: c, image: 'postgres:16', volumeMounts: [{name: data, mountPath: /var/lib/postgresql/data}]}\n      volumes:\n      - {name: data, persistentVolumeClaim: {claimName: missing}}\n";
    let claim = |name: &str, ns: &str, pv: &str| {
        format!(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}, namespace: {ns}}}\nspec: {{volumeName: {pv}}}\n"
        )
    };
    let pv = |name: &str, driver: &str| {
        format!(
            "apiVersion: v1\nkind: PersistentVolume\nmetadata: {{name: {name}}}\nspec: {{csi: {{driver: {driver}}}}}\n"
        )
    };
    let storage = |claims: &[String]| {
        let mut files = vec![("db.yaml".to_string(), db.to_string())];
        for (i, c) in claims.iter().enumerate() {
            files.push((format!("c{i}.yaml"), c.clone()));
        }
        files.push(("right.yaml".into(), pv("pv-right", "driver.right")));
        files.push(("wrong.yaml".into(), pv("pv-wrong", "driver.wrong")));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let repo = crate::source::test_repo::TestRepo::new(&files);
        let model = Model::from_parts(&repo.objects, &repo.sources);
        let db = crate::model::database::all(&model)
            .into_iter()
            .next()
            .expect("the database");
        of_database(&model, &db).ok().map(|s| s.decl.provisioner)
    };
    let right = Some("driver.right".to_string());
    // Claims of other names, of another namespace, or not bound first.
    let others = [
        claim("pgx-0", "db", "pv-wrong"),
        claim("data-pg-0", "other", "pv-wrong"),
        claim("p-0", "db", "pv-wrong"),
    ];
    assert_eq!(storage(&others), None);
    for name in ["pg-0", "data-pg-0", "pgdata-pg-1", "pg-a-b"] {
        let mut claims = others.to_vec();
        claims.push(claim(name, "db", "pv-right"));
        assert_eq!(storage(&claims), right, "{name}");
    }
    let labelled = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x, namespace: db, labels: {cnpg.io/cluster: pg}}\nspec: {volumeName: pv-right}\n";
    assert_eq!(storage(&[labelled.to_string()]), right);
    // The first bound claim that matches, in the repository's order.
    let both = [
        claim("pg-1", "db", "pv-right"),
        claim("data-pg-0", "db", "pv-wrong"),
    ];
    assert_eq!(storage(&both), right);
}

#[test]
fn a_class_only_in_an_unknown_charts_values_is_named_there() {
    let repo = crate::source::test_repo::TestRepo::new(&[(
        "csi.yaml",
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: scale-csi, namespace: scale-csi}\nspec:\n  chart: {spec: {chart: scale-csi}}\n  values:\n    storageClasses:\n      - {name: scale-nfs, protocol: nfs}\n    other: {name: scale-nfs}\n",
    )]);
    let model = Model::from_parts(&repo.objects, &repo.sources);
    assert_eq!(
        declared_in_values(&model, "scale-nfs").as_deref(),
        Some("HelmRelease/scale-csi/scale-csi (chart scale-csi)")
    );
    assert_eq!(declared_in_values(&model, "protocol"), None);
    assert_eq!(declared_in_values(&model, "nfs"), None);
}

#[test]
fn a_static_volume_class_rendered_into_two_clusters_is_declared_in_each() {
    let pv = "apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: app-pv}\nspec:\n  storageClassName: app-class\n  csi: {driver: cephfs.csi.ceph.com, volumeHandle: app}\n";
    let pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: app-pvc, namespace: media}\nspec: {storageClassName: app-class}\n";
    let mut repo = crate::source::test_repo::TestRepo::new(&[
        ("prod/pv.yaml", pv),
        ("prod/pvc.yaml", pvc),
        ("test/pv.yaml", pv),
        ("test/pvc.yaml", pvc),
    ]);
    for (o, tree) in repo.objects.iter_mut().zip([0, 0, 1, 1]) {
        o.tree = Some(tree);
    }
    let model = Model::from_parts(&repo.objects, &repo.sources);
    for (claim, pv) in [(1, 0), (3, 2)] {
        let found = classes(&model, Some(claim));
        assert_eq!(found.len(), 1, "claim {claim}: {found:?}");
        assert_eq!(found[0].name, "app-class");
        assert_eq!(found[0].object, pv);
        assert_eq!(found[0].category, Category::NetworkFilesystem);
    }
}

#[test]
fn a_class_only_another_clusters_chart_declares_is_said_to_be_there() {
    let mut repo = crate::source::test_repo::TestRepo::new(&[
        (
            "cluster-0/rook.yaml",
            "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: rook-ceph-cluster, namespace: rook-ceph}\nspec:\n  chart: {spec: {chart: rook-ceph-cluster}}\n  values:\n    cephBlockPools:\n      - name: pool\n        storageClass: {enabled: true, name: ceph-block}\n",
        ),
        (
            "archive/pvc.yaml",
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: monitoring}\nspec: {storageClassName: ceph-block}\n",
        ),
    ]);
    for (o, tree) in repo.objects.iter_mut().zip([0, 1]) {
        o.tree = Some(tree);
    }
    repo.objects[0].chain.push(crate::source::Step {
        kind: crate::source::StepKind::FluxKustomization,
        detail: "flux-system/cluster-0-apps".into(),
        at: None,
    });
    let model = Model::from_parts(&repo.objects, &repo.sources);
    let requested = model
        .object(1)
        .root
        .path(&["spec", "storageClassName"])
        .cloned();
    let why = of_request(&model, 1, requested).unwrap_err().0;
    assert_eq!(
        why,
        "storage class ceph-block is declared only under Flux Kustomization \
         flux-system/cluster-0-apps, which another \
         Flux root applies, so it is taken for another cluster than \
         PersistentVolumeClaim/monitoring/data's"
    );
}

#[test]
fn provisioners_by_category() {
    assert_eq!(
        categorize("rook-ceph.rbd.csi.ceph.com"),
        Category::NetworkReplicatedBlock
    );
    assert_eq!(
        categorize("driver.longhorn.io"),
        Category::NetworkReplicatedBlock
    );
    assert_eq!(
        categorize("rook-ceph.cephfs.csi.ceph.com"),
        Category::NetworkFilesystem
    );
    assert_eq!(categorize("rancher.io/local-path"), Category::Local);
    assert_eq!(categorize("openebs.io/local"), Category::Local);
    assert_eq!(categorize("example.com/unknown"), Category::Unknown);
    // democratic-csi, named after its driver as the chart examples do.
    assert_eq!(
        categorize("org.democratic-csi.local-hostpath"),
        Category::Local
    );
    assert_eq!(
        categorize("org.democratic-csi.zfs-local-dataset"),
        Category::Local
    );
    assert_eq!(
        categorize("org.democratic-csi.iscsi"),
        Category::NetworkBlock
    );
    assert_eq!(
        categorize("org.democratic-csi.nfs-truenas"),
        Category::NetworkFilesystem
    );
    assert_eq!(categorize("org.democratic-csi.manual"), Category::Unknown);
    assert_eq!(
        categorize("org.democratic-csi.freenas-api-iscsi"),
        Category::NetworkBlock
    );
    assert_eq!(
        categorize("org.democratic-csi.zfs-generic-nfs"),
        Category::NetworkFilesystem
    );
}
