//! The hyper accept loop of the tests' HTTP servers.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::{Request, Response};

/// Serves HTTP/1.1 on `listener` for as long as the returned future is
/// polled: every connection on its own task, every request answered by
/// `handler`. Drop the future (e.g. lose a `tokio::select!`) to stop
/// accepting; connections already open run to their end.
pub async fn serve<H, Fut, B>(listener: tokio::net::TcpListener, handler: H)
where
    H: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let handler = Arc::new(handler);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(_) => {
                // Out of file descriptors and the like: retrying at once
                // would spin a core while the condition lasts.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let handler = handler.clone();
        tokio::spawn(serve_connection(stream, move |req| handler(req)));
    }
}

/// Serves `handler` on a free port of 127.0.0.1 from a thread with its
/// own runtime, for tests whose own code blocks; returns the address once
/// it listens. The server lives as long as the test process.
pub fn spawn<H, Fut, B>(handler: H) -> std::net::SocketAddr
where
    H: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("test server runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind 127.0.0.1");
            let _ = tx.send(listener.local_addr().expect("local address"));
            serve(listener, handler).await;
        });
    });
    rx.recv().expect("the test server started")
}

/// Serves one connection (plain TCP, or a TLS stream after the
/// handshake) until the client closes it. Upgrades are enabled so a
/// handler may take over the connection (WebSocket, SPDY). A broken
/// connection is the client's business, not a test failure: errors end
/// the connection silently.
pub async fn serve_connection<I, H, Fut, B>(io: I, handler: H)
where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    H: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<B>> + Send + 'static,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let svc = hyper::service::service_fn(move |req| {
        let answer = handler(req);
        async move { Ok::<_, Infallible>(answer.await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(hyper_util::rt::TokioIo::new(io), svc)
        .with_upgrades()
        .await;
}
