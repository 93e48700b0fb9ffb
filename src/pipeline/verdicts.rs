//! The verdicts stage: probe verdicts on a lint's findings. A finding whose rule names a
//! probe is measured on the target the user pointed at: the
//! `--probe-dsn`, or with `--live` its database's primary pod through a
//! port-forward. Each target is probed once, whatever number of findings
//! it judges; every such finding ends confirmed, not confirmed,
//! inconclusive or skipped, with the reason.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::model::{Model, ObjRef};
use crate::probe::postgres::{self, Target};
use crate::probe::tunnel::{self, Cluster};
use crate::probe::verdict::{self, Outcome};
use crate::rules::{Finding, ProbeSpec, Rule};
use crate::source::{Object, cluster};

use super::{Log, Request};

/// How findings that name a probe are measured.
#[derive(Debug, Clone, Default)]
pub struct ProbeRequest {
    /// Run no probe: such findings say it was skipped.
    pub no_probe: bool,
    /// The Postgres server to measure (never printed); else, with the live
    /// cluster read, each finding's database pod through a port-forward.
    pub dsn: Option<String>,
    /// Wall-clock limit of each probe.
    pub budget: Duration,
    /// PEM file of the CA of the Postgres probed by `dsn`.
    pub ca_file: Option<PathBuf>,
    /// Do not verify the TLS certificate of the Postgres probed.
    pub insecure: bool,
}

/// Measures and records a verdict on each finding whose rule has a probe.
pub(super) fn attach(
    findings: &mut [Finding],
    rules: &[Rule],
    model: &Model,
    req: &Request,
    log: &mut Log,
) {
    let args = &req.probe;
    let probed: Vec<(usize, ProbeSpec)> = findings
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let spec = rules.iter().find(|r| r.id == f.rule)?.probe.clone()?;
            Some((i, spec))
        })
        .collect();
    if probed.is_empty() {
        return;
    }
    let options = |target| postgres::Options {
        target,
        budget: args.budget,
        ca_file: args.ca_file.clone(),
        insecure: args.insecure,
        ..Default::default()
    };
    let outcomes: Vec<Outcome> = if args.no_probe {
        probed
            .iter()
            .map(|_| Outcome::skipped("--no-probe was given"))
            .collect()
    } else if let Some(dsn) = &args.dsn {
        let result = postgres::run_blocking(&options(Target::Dsn(dsn.clone())));
        probed
            .iter()
            .map(|(_, spec)| judged(spec, &result))
            .collect()
    } else if let Some(live) = &req.cluster.live {
        // A finding that binds no database (the keepalive rule binds only
        // the app) is measured on the database another finding of the
        // same app names. Objects are told apart by id: an app rendered
        // into two clusters' trees is one app, its database one target.
        let id = |r: ObjRef| model.object(r).id();
        let app_databases: BTreeMap<String, ObjRef> = findings
            .iter()
            .filter_map(|f| Some((id(f.subjects.app?), f.subjects.database?)))
            .collect();
        let databases: Vec<Option<ObjRef>> = probed
            .iter()
            .map(|(i, _)| {
                let f = &findings[*i];
                f.subjects.database.or_else(|| {
                    let app = id(f.subjects.app?);
                    app_databases.get(&app).copied()
                })
            })
            .collect();
        let by_database = through_cluster(&databases, model, live, log, options);
        probed
            .iter()
            .zip(&databases)
            .map(|((_, spec), db)| match db {
                None => Outcome::skipped(
                    "no database of this app is known to probe in the cluster; give --probe-dsn",
                ),
                Some(db) => match &by_database[&id(*db)] {
                    Ok(result) => judged(spec, result),
                    Err(outcome) => outcome.clone(),
                },
            })
            .collect()
    } else {
        probed
            .iter()
            .map(|_| {
                Outcome::skipped(
                    "no target given (lint with --live to measure the database pod \
                     through a port-forward, or give --probe-dsn)",
                )
            })
            .collect()
    };
    // A run that named no target (nor --no-probe) asked for no probe: the
    // verdict stays in the data, and the reader is spared a note on every
    // finding.
    let asked = args.no_probe || args.dsn.is_some() || req.cluster.live.is_some();
    for ((i, spec), outcome) in probed.iter().zip(&outcomes) {
        if asked {
            verdict::record(&mut findings[*i], spec, outcome);
        } else {
            verdict::record_evidence(&mut findings[*i], outcome);
        }
    }
}

type Probed = Result<postgres::Report, postgres::ProbeError>;

/// A failed probe says why; it neither confirms nor refutes.
fn judged(spec: &ProbeSpec, result: &Probed) -> Outcome {
    match result {
        Ok(report) => verdict::judge(spec, report),
        Err(e) => Outcome::inconclusive(format!("the probe failed: {e}")),
    }
}

/// Probes each database (by object id) once through the live cluster:
/// its report, or the outcome to record when it could not be probed.
fn through_cluster(
    databases: &[Option<ObjRef>],
    model: &Model,
    cluster_options: &cluster::Options,
    log: &mut Log,
    options: impl Fn(Target) -> postgres::Options,
) -> BTreeMap<String, Result<Probed, Outcome>> {
    let wanted: Vec<(String, ObjRef)> = {
        let mut ids: Vec<(String, ObjRef)> = databases
            .iter()
            .flatten()
            .map(|r| (model.object(*r).id(), *r))
            .collect();
        ids.sort_by(|a, b| a.0.cmp(&b.0));
        ids.dedup_by(|a, b| a.0 == b.0);
        ids
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let why = Outcome::inconclusive(format!("cannot start the async runtime: {e}"));
            return wanted
                .into_iter()
                .map(|(id, _)| (id, Err(why.clone())))
                .collect();
        }
    };
    runtime.block_on(async {
        let client = cluster::client(cluster_options).await;
        let mut out = BTreeMap::new();
        for (id, object) in wanted {
            let result = match &client {
                Err(e) => Err(Outcome::skipped(format!("cannot reach the cluster: {e}"))),
                Ok((client, _, _)) => {
                    let object = model.object(object);
                    probe_database(object, client, cluster_options, &options, log).await
                }
            };
            out.insert(id, result);
        }
        out
    })
}

async fn probe_database(
    object: &Object,
    client: &kube::Client,
    cluster_options: &cluster::Options,
    options: &impl Fn(Target) -> postgres::Options,
    log: &mut Log<'_>,
) -> Result<Probed, Outcome> {
    let id = object.id();
    let skipped = |e: tunnel::TunnelError| Outcome::skipped(e.to_string());
    let cluster = Cluster::of(object).map_err(skipped)?;
    let route = tokio::time::timeout(cluster_options.timeout, tunnel::resolve(client, &cluster))
        .await
        .map_err(|_| {
            Outcome::skipped(format!(
                "the cluster did not answer within {} s while finding the primary of {id}",
                cluster_options.timeout.as_secs()
            ))
        })?
        .map_err(skipped)?;
    if cluster_options.verbose > 0 {
        log(&format!(
            "probe: {id}: {} (credentials from Secret {})",
            route.describe(),
            route.secret
        ));
    }
    Ok(postgres::run(&options(Target::Pod(Box::new(route)))).await)
}
