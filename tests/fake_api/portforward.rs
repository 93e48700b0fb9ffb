//! The pod port-forward subresource over websockets, as the API server
//! and kubelet speak it to kube-rs: `v4.channel.k8s.io`, where port `i`
//! of the request has data channel `2i` and error channel `2i + 1`, each
//! binary message starts with its channel byte, and the server opens
//! every channel with the port number (2 bytes, little-endian). Instead
//! of a pod's network namespace, the bytes go to a TCP address the test
//! chose, so a probe can reach a real Postgres or HTTP server "in" a pod.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

use futures_util::stream::{BoxStream, SelectAll};
use futures_util::{SinkExt, StreamExt};
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{
    CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL, UPGRADE,
};
use hyper::upgrade::Upgraded;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role;

use super::{Resp, State, forbidden, status};

/// The only subprotocol the kubelet offers for port-forward over
/// websockets that kube-rs also speaks (it asks for v5 first, which
/// port-forward does not have).
const PROTOCOL: &str = "v4.channel.k8s.io";

/// Where the fake forwards a pod's ports, and how it fails.
#[derive(Clone, Debug)]
pub struct Forward {
    /// Every requested port of the pod is connected here.
    pub target: SocketAddr,
    /// Close the websocket (as a dropped port-forward) this long after
    /// it opens.
    pub drop_after: Option<Duration>,
}

/// `GET .../namespaces/{ns}/pods/{pod}/portforward?ports=...`: checks
/// as the API server does (RBAC, the pod, the ports, the upgrade), then
/// answers 101 and serves the websocket once hyper hands it over.
pub(super) fn open(
    state: &State,
    req: &mut Request<Incoming>,
    ns: &str,
    pod: &str,
    params: &HashMap<String, String>,
) -> Resp {
    if state.faults.forbids("", "pods/portforward") {
        return forbidden(
            &format!("pods \"{pod}\""),
            "create",
            "pods/portforward",
            "",
            Some(ns),
        );
    }
    if state.fixture.object("", "Pod", Some(ns), pod).is_none() {
        return status(404, "NotFound", format!("pods \"{pod}\" not found"));
    }
    let ports: Option<Vec<u16>> = params.get("ports").and_then(|p| {
        p.split(',')
            .map(|p| p.trim().parse().ok().filter(|p| *p != 0))
            .collect()
    });
    let Some(ports) = ports else {
        return status(
            400,
            "BadRequest",
            format!(
                "invalid port list {:?}",
                params.get("ports").map_or("", String::as_str)
            ),
        );
    };
    let headers = req.headers();
    let is_websocket = headers
        .get(UPGRADE)
        .and_then(|u| u.to_str().ok())
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket"));
    let Some(key) = headers.get(SEC_WEBSOCKET_KEY).filter(|_| is_websocket) else {
        return status(400, "BadRequest", "Upgrade request required".into());
    };
    let offered = headers
        .get(SEC_WEBSOCKET_PROTOCOL)
        .and_then(|p| p.to_str().ok())
        .unwrap_or("");
    if !offered.split(',').any(|p| p.trim() == PROTOCOL) {
        return status(
            400,
            "BadRequest",
            format!("none of the requested websocket protocols {offered:?} is supported"),
        );
    }
    let accept = derive_accept_key(key.as_bytes());
    let upgrade = hyper::upgrade::on(req);
    let forward = state
        .faults
        .port_forward
        .get(&format!("{ns}/{pod}"))
        .cloned();
    let pod = pod.to_string();
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrade.await {
            serve(upgraded, &pod, &ports, forward).await;
        }
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(CONNECTION, "Upgrade")
        .header(UPGRADE, "websocket")
        .header(SEC_WEBSOCKET_ACCEPT, accept)
        .header(SEC_WEBSOCKET_PROTOCOL, PROTOCOL)
        .body(Full::new(Bytes::new()))
        .unwrap()
}

type Ws = WebSocketStream<TokioIo<Upgraded>>;

async fn serve(upgraded: Upgraded, pod: &str, ports: &[u16], forward: Option<Forward>) {
    let mut ws = WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None).await;
    let target = forward.as_ref().map(|f| f.target);
    let forwarding = pipe(&mut ws, pod, ports, target);
    match forward.and_then(|f| f.drop_after) {
        // Dropping the pipe drops the target connections with it, and
        // returning drops the websocket without a close frame: both
        // peers see the connection cut, as when a node or the API
        // server goes away.
        Some(after) => {
            let _ = tokio::time::timeout(after, forwarding).await;
        }
        None => {
            let _ = forwarding.await;
        }
    }
}

/// Opens the channels, dials the target once per port, then copies
/// until the client closes or every target has closed its side.
async fn pipe(
    ws: &mut Ws,
    pod: &str,
    ports: &[u16],
    target: Option<SocketAddr>,
) -> Result<(), tokio_tungstenite::tungstenite::Error> {
    for (data, port) in (0u8..).step_by(2).zip(ports) {
        let [lo, hi] = port.to_le_bytes();
        ws.send(Message::binary(vec![data, lo, hi])).await?;
        ws.send(Message::binary(vec![data + 1, lo, hi])).await?;
    }
    let mut writers: Vec<Option<OwnedWriteHalf>> = Vec::new();
    let mut from_targets = SelectAll::new();
    for (data, port) in (0u8..).step_by(2).zip(ports) {
        match dial(target, *port).await {
            Ok(stream) => {
                let (read, write) = stream.into_split();
                writers.push(Some(write));
                from_targets.push(frames(data, read));
            }
            Err(reason) => {
                writers.push(None);
                let mut message = vec![data + 1];
                message.extend_from_slice(
                    format!("error forwarding port {port} to pod {pod}: {reason}").as_bytes(),
                );
                ws.send(Message::binary(message)).await?;
            }
        }
    }
    loop {
        tokio::select! {
            from_client = ws.next() => match from_client {
                Some(Ok(Message::Binary(frame))) if frame.len() > 1 => {
                    let data = usize::from(frame[0]);
                    if data % 2 == 0
                        && let Some(slot) = writers.get_mut(data / 2)
                        && let Some(writer) = slot.as_mut()
                        && writer.write_all(&frame[1..]).await.is_err()
                    {
                        *slot = None;
                    }
                }
                // tungstenite queued the close reply; reading on sends it
                // and then ends, which completes the handshake.
                Some(Ok(Message::Close(_))) => {
                    while let Some(Ok(_)) = ws.next().await {}
                    return Ok(());
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            },
            from_target = from_targets.next() => match from_target {
                Some(frame) => ws.send(frame).await?,
                // v4 cannot close one port's stream; like the API server,
                // close the websocket once no port is left.
                None => return ws.close(None).await,
            },
        }
    }
}

/// What the kubelet reports: Go's dial error.
async fn dial(target: Option<SocketAddr>, port: u16) -> Result<TcpStream, String> {
    let Some(target) = target else {
        return Err(format!(
            "dial tcp4 127.0.0.1:{port}: connect: connection refused"
        ));
    };
    TcpStream::connect(target)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::ConnectionRefused => {
                format!("dial tcp {target}: connect: connection refused")
            }
            _ => format!("dial tcp {target}: {e}"),
        })
}

/// The target's bytes as binary messages on data channel `data`, ending
/// at its EOF.
fn frames(data: u8, read: OwnedReadHalf) -> BoxStream<'static, Message> {
    futures_util::stream::unfold(read, move |mut read| async move {
        let mut buf = vec![0; 32 * 1024];
        buf[0] = data;
        match read.read(&mut buf[1..]).await {
            Ok(0) | Err(_) => None,
            Ok(n) => {
                buf.truncate(n + 1);
                Some((Message::binary(buf), read))
            }
        }
    })
    .boxed()
}
