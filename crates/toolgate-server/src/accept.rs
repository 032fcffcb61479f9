//! The accept loop: every TCP connection served by hyper's HTTP/1 with a header read timeout
//! and a body read deadline, at most `max_connections` at once and at most
//! `max_connections_per_ip` from one address.
//!
//! - **Header read timeout** (`[server] header_read_timeout_ms`): a connection must deliver a
//!   request's whole header within it — counted from when the server starts waiting for one
//!   (the connection opened, or the previous answer ended) — or it is closed. A client
//!   trickling one byte at a time (slowloris), or one that connects and says nothing, cannot
//!   hold a connection.
//! - **Body read deadline** (`[server] body_read_timeout_ms`): a request's body must have
//!   arrived whole within it, counted from when its header was read; otherwise reading it
//!   fails (the handler answers 400) and the connection is closed, since the rest of the body
//!   was never read. Many clients each trickling a body with a valid token cannot hold the
//!   connection cap. Answers are not timed: a call may run long, an event stream stays open.
//! - **Per-address budget** (`[server] max_connections_per_ip`): one peer address holds at
//!   most this many connections; more are closed at once, like those over the cap, so one
//!   host's flood (authenticated or not, reconnecting as fast as it is closed) leaves the
//!   rest of the cap to others.
//! - **Connection cap** (`[server] max_connections`): each connection holds a permit of a
//!   semaphore for its whole life; a connection accepted when none is free is closed at once,
//!   before anything is read, so a flood cannot exhaust file descriptors or memory and the
//!   connections already served keep working.
//! - **Shutdown**: when `stop` fires the listener is closed, each connection finishes the
//!   answer it is writing and closes (hyper's graceful shutdown), and [`run`] returns when
//!   the last one has.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The per-connection limits of the accept loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
    pub max_connections: usize,
    pub max_connections_per_ip: usize,
}

impl ConnectionLimits {
    /// The limits `[server]` configures (a 0 cap is taken as 1: the server must serve).
    pub fn from_config(config: &crate::config::ServerConfig) -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_millis(config.header_read_timeout_ms.max(1)),
            body_read_timeout: Duration::from_millis(config.body_read_timeout_ms.max(1)),
            max_connections: config.max_connections.max(1),
            max_connections_per_ip: config.max_connections_per_ip.max(1),
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
    let per_ip = Arc::new(PeerBudget::default());
    let connections = TaskTracker::new();
    let mut refused: u64 = 0;
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok((tcp, peer)) => (tcp, peer.ip()),
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
        let Some(share) = PeerBudget::take(&per_ip, peer, limits.max_connections_per_ip) else {
            refused += 1;
            if refused.is_power_of_two() {
                tracing::warn!(
                    peer = %peer,
                    max_connections_per_ip = limits.max_connections_per_ip,
                    refused,
                    "per-address connection budget reached: closing its new connections"
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
        let body_deadline = limits.body_read_timeout;
        let service = TowerToHyperService::new(tower::ServiceExt::map_request(
            app.clone(),
            move |req: http::Request<Incoming>| req.map(|b| DeadlineBody::new(b, body_deadline)),
        ));
        let stop = stop.clone();
        connections.spawn(async move {
            let _permit = permit;
            let _share = share;
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

/// How many connections each peer address holds; an entry leaves the map with its last
/// connection.
#[derive(Debug, Default)]
struct PeerBudget {
    held: Mutex<HashMap<IpAddr, usize>>,
}

impl PeerBudget {
    /// One more connection for `peer`, unless it already holds `max`.
    fn take(budget: &Arc<PeerBudget>, peer: IpAddr, max: usize) -> Option<PeerShare> {
        let mut held = budget.held.lock().unwrap_or_else(PoisonError::into_inner);
        let n = held.entry(peer).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(PeerShare {
            budget: Arc::clone(budget),
            peer,
        })
    }
}

/// One connection's place in its peer's budget, given back on drop.
struct PeerShare {
    budget: Arc<PeerBudget>,
    peer: IpAddr,
}

impl Drop for PeerShare {
    fn drop(&mut self) {
        let mut held = self
            .budget
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = held.get_mut(&self.peer) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.peer);
            }
        }
    }
}

/// Reading a request body took longer than `body_read_timeout_ms`.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0:?}")]
pub struct BodyTimeout(Duration);

/// A request body that fails once its deadline passes. The timer is only set when the body
/// is not already there on the first read: most bodies arrive with their header.
struct DeadlineBody {
    inner: Incoming,
    limit: Duration,
    since: Instant,
    timer: Option<Pin<Box<Sleep>>>,
}

impl DeadlineBody {
    fn new(inner: Incoming, limit: Duration) -> Self {
        DeadlineBody {
            inner,
            limit,
            since: Instant::now(),
            timer: None,
        }
    }
}

impl Body for DeadlineBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let (since, limit) = (this.since, this.limit);
        let timer = this
            .timer
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(since + limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout(limit))))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
