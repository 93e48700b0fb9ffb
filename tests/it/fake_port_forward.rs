//! The fake API server's pod port-forward, driven by kube-rs's own
//! client (`Api::portforward`) against a TCP echo server standing in for
//! the pod.

use crate::fake_api;

use std::future::Future;
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use fake_api::{FakeApi, Faults, Fixture, Forward};
use k8s_openapi::api::core::v1::Pod;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const NS: &str = "security";
const POD: &str = "auth-postgres-0";
/// Bound on every step, so that a broken fake fails the test instead of
/// hanging it.
const STEP: Duration = Duration::from_secs(10);

fn fixture() -> Fixture {
    Fixture::from_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cluster"))
}

async fn within<T>(what: &str, step: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, step)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {STEP:?}"))
}

/// A port-forward to port 5432 of POD, and the message of its error
/// channel.
async fn refused(api: &FakeApi) -> (kube::api::Portforwarder, String) {
    let pods = pods(api).await;
    let mut pf = within("portforward", pods.portforward(POD, &[5432]))
        .await
        .unwrap();
    let error = within("error channel", pf.take_error(5432).unwrap()).await;
    let error = error.expect("an error message on the error channel");
    (pf, error)
}

async fn pods(api: &FakeApi) -> kube::Api<Pod> {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = kube::config::Kubeconfig::read_from(api.kubeconfig(dir.path())).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    kube::Api::namespaced(kube::Client::try_from(config).unwrap(), NS)
}

/// A TCP echo server; the end of each connection it accepted, whoever
/// ended it, is reported on the receiver.
async fn echo_server() -> (SocketAddr, mpsc::UnboundedReceiver<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (ended, ends) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let ended = ended.clone();
            tokio::spawn(async move {
                let (mut read, mut write) = stream.into_split();
                let _ = tokio::io::copy(&mut read, &mut write).await;
                let _ = ended.send(());
            });
        }
    });
    (addr, ends)
}

/// An address nothing listens on.
async fn closed_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
}

fn forwarding(target: SocketAddr, drop_after: Option<Duration>) -> Faults {
    Faults {
        port_forward: [(format!("{NS}/{POD}"), Forward { target, drop_after })].into(),
        ..Faults::default()
    }
}

async fn round_trip(stream: &mut tokio::io::DuplexStream, payload: &[u8]) {
    let mut back = vec![0; payload.len()];
    let (mut read_half, mut write_half) = tokio::io::split(stream);
    let (written, read) = tokio::join!(
        write_half.write_all(payload),
        read_half.read_exact(&mut back)
    );
    written.unwrap();
    read.unwrap();
    assert!(back == payload, "the echo differs from what was sent");
}

fn api_error(result: kube::Result<kube::api::Portforwarder>) -> kube::core::Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        Err(other) => panic!("expected an API error, got {other}"),
        Ok(_) => panic!("expected an API error, the port-forward opened"),
    }
}

#[tokio::test]
async fn bytes_round_trip_on_every_forwarded_port() {
    let (target, mut ends) = echo_server().await;
    let api = FakeApi::start(fixture(), forwarding(target, None));
    let pods = pods(&api).await;
    let mut pf = within("portforward", pods.portforward(POD, &[5432, 8008]))
        .await
        .unwrap();
    let mut db = pf.take_stream(5432).unwrap();
    let mut patroni = pf.take_stream(8008).unwrap();
    // Larger than one websocket message of the fake, so frames are split
    // and reassembled on the way.
    let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    within("echo on 5432", round_trip(&mut db, b"SELECT 1;")).await;
    within("echo on 8008", round_trip(&mut patroni, b"GET /health")).await;
    within("large echo on 5432", round_trip(&mut db, &big)).await;
    let reqs = api.requests();
    assert!(
        reqs.iter().any(|r| r.starts_with(&format!(
            "GET /api/v1/namespaces/{NS}/pods/{POD}/portforward?"
        )) && r.contains("ports=5432%2C8008")),
        "{reqs:?}"
    );
    // The client closing ends the forward cleanly, and the fake lets go
    // of both target connections.
    drop((db, patroni));
    within("join", pf.join()).await.unwrap();
    for _ in 0..2 {
        within("target connection closed", ends.recv())
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn drop_after_cuts_the_forward_mid_stream() {
    let (target, mut ends) = echo_server().await;
    let drop_after = Duration::from_secs(1);
    let api = FakeApi::start(fixture(), forwarding(target, Some(drop_after)));
    let pods = pods(&api).await;
    let opened = Instant::now();
    let mut pf = within("portforward", pods.portforward(POD, &[5432]))
        .await
        .unwrap();
    let mut db = pf.take_stream(5432).unwrap();
    within("echo before the cut", round_trip(&mut db, b"SELECT 1;")).await;
    assert!(
        opened.elapsed() < drop_after,
        "the echo came after the cut was due; the test proves nothing"
    );
    let mut buf = [0; 16];
    match within("read across the cut", db.read(&mut buf)).await {
        Ok(0) | Err(_) => {}
        Ok(n) => panic!("read {n} bytes after the cut"),
    }
    // No close handshake: the client's websocket ends in an error.
    assert!(within("join", pf.join()).await.is_err());
    within("target connection closed", ends.recv())
        .await
        .unwrap();
}

#[tokio::test]
async fn forbidden_port_forward_is_403_while_pods_stay_readable() {
    let (target, _ends) = echo_server().await;
    let api = FakeApi::start(
        fixture(),
        Faults {
            forbidden: vec!["pods/portforward".into()],
            ..forwarding(target, None)
        },
    );
    let pods = pods(&api).await;
    let status = api_error(within("portforward", pods.portforward(POD, &[5432])).await);
    assert_eq!(status.code, 403);
    assert_eq!(status.reason, "Forbidden");
    assert!(
        status
            .message
            .contains("cannot create resource \"pods/portforward\""),
        "{}",
        status.message
    );
    within("get pod", pods.get(POD)).await.unwrap();
}

#[tokio::test]
async fn unknown_pod_is_404() {
    let api = FakeApi::start(fixture(), Faults::default());
    let pods = pods(&api).await;
    let status = api_error(within("portforward", pods.portforward("nope-0", &[5432])).await);
    assert_eq!(status.code, 404);
    assert_eq!(status.message, "pods \"nope-0\" not found");
}

#[tokio::test]
async fn unreachable_target_is_reported_on_the_error_channel() {
    let target = closed_port().await;
    let api = FakeApi::start(fixture(), forwarding(target, None));
    let (mut pf, error) = refused(&api).await;
    assert_eq!(
        error,
        format!(
            "error forwarding port 5432 to pod {POD}: dial tcp {target}: connect: connection refused"
        )
    );
    let mut db = pf.take_stream(5432).unwrap();
    let mut buf = [0; 16];
    assert_eq!(within("read", db.read(&mut buf)).await.unwrap(), 0);
}

#[tokio::test]
async fn pod_without_a_forward_refuses_the_port() {
    let api = FakeApi::start(fixture(), Faults::default());
    let (_pf, error) = refused(&api).await;
    assert!(
        error.starts_with(&format!("error forwarding port 5432 to pod {POD}: "))
            && error.ends_with("connection refused"),
        "{error}"
    );
}

#[tokio::test]
async fn latency_delays_the_upgrade_too() {
    let (target, _ends) = echo_server().await;
    let latency = Duration::from_millis(400);
    let api = FakeApi::start(
        fixture(),
        Faults {
            latency,
            ..forwarding(target, None)
        },
    );
    let pods = pods(&api).await;
    let started = Instant::now();
    let mut pf = within("portforward", pods.portforward(POD, &[5432]))
        .await
        .unwrap();
    assert!(started.elapsed() >= latency, "{:?}", started.elapsed());
    let mut db = pf.take_stream(5432).unwrap();
    within("echo", round_trip(&mut db, b"SELECT 1;")).await;
}
