//! The accept loop: every TCP connection served by hyper's HTTP/1 with a header read timeout,
//! and at most `max_connections` at once.
//!
//! - **Header read timeout** (`[server] header_read_timeout_ms`): a connection must deliver a
//!   request's whole header within it — counted from when the server starts waiting for one
//!   (the connection opened, or the previous answer ended) — or it is closed. A client
//!   trickling one byte at a time (slowloris), or one that connects and says nothing, cannot
//!   hold a connection. Bodies and answers are not timed here: a call may run long, an event
//!   stream stays open.
//! - **Connection cap** (`[server] max_connections`): each connection holds a permit of a
//!   semaphore for its whole life; a connection accepted when none is free is closed at once,
//!   before anything is read, so a flood cannot exhaust file descriptors or memory and the
//!   connections already served keep working.
//! - **Shutdown**: when `stop` fires the listener is closed, each connection finishes the
//!   answer it is writing and closes (hyper's graceful shutdown), and [`run`] returns when
//!   the last one has.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The per-connection limits of the accept loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
}

impl ConnectionLimits {
    /// The limits `[server]` configures (a 0 cap is taken as 1: the server must serve).
    pub fn from_config(config: &crate::config::ServerConfig) -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_millis(config.header_read_timeout_ms.max(1)),
            max_connections: config.max_connections.max(1),
        }
    }
}

/// Errors of `accept` that concern one connection, not the listener.
fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

/// Serves `app` on `listener` until `stop` fires, then waits for the open connections to
/// finish their answers.
pub async fn run(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    let connections = TaskTracker::new();
    let mut refused: u64 = 0;
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let tcp = match accepted {
            Ok((tcp, _peer)) => tcp,
            Err(e) if is_connection_error(&e) => continue,
            Err(e) => {
                // Out of file descriptors and the like: wait rather than spin.
                tracing::error!(error = %e, "accepting a connection failed; retrying in 1 s");
                tokio::select! {
                    () = stop.cancelled() => break,
                    () = tokio::time::sleep(Duration::from_secs(1)) => continue,
                }
            }
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(
                    max_connections = limits.max_connections,
                    refused,
                    "connection limit reached: closing new connections"
                );
            }
            drop(tcp);
            continue;
        };
        // Answers go out as several writes (an SSE stream's events, a chunked body's end):
        // with Nagle on, each later write waits for the client's delayed ACK (~40 ms).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "cannot set TCP_NODELAY on a connection");
        }
        let service = TowerToHyperService::new(app.clone());
        let stop = stop.clone();
        connections.spawn(async move {
            let _permit = permit;
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout);
            let conn = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(conn);
            let ended = tokio::select! {
                ended = conn.as_mut() => ended,
                () = stop.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}
