//! Servers and tool builders shared by the tests.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;
use tokio::net::TcpListener;
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_net::{EgressPolicy, StaticLookup};
use toolgate_web::{UrlReadConfig, UrlReadTool};

pub fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// Plain http allowed to every host, so that what a test sees refused is the address.
pub fn http_everywhere() -> EgressPolicy {
    ["0.0.0.0/0", "::/0", "*.test", "localhost"]
        .iter()
        .fold(EgressPolicy::default(), |p, e| {
            p.allow_plain_http(e).unwrap()
        })
}

/// `site.test`, `public.test` and `evil.test` all resolve to 127.0.0.1; only the first
/// two are allowlisted.
pub fn lookup() -> Arc<StaticLookup> {
    Arc::new(
        StaticLookup::new()
            .with("site.test", &[ip("127.0.0.1")])
            .with("public.test", &[ip("127.0.0.1")])
            .with("evil.test", &[ip("127.0.0.1")]),
    )
}

pub fn dev_policy() -> EgressPolicy {
    http_everywhere()
        .allow_host("site.test")
        .unwrap()
        .allow_host("public.test")
        .unwrap()
}

pub fn url_read(config: UrlReadConfig, policy: &EgressPolicy) -> UrlReadTool {
    UrlReadTool::with_lookup(config, policy, lookup()).unwrap()
}

pub async fn call(tool: &dyn Tool, args: Value) -> Result<Value, ToolError> {
    let ctx = ToolContext::for_test();
    tool.check(&args, &ctx)?;
    tool.call(args, ctx).await.map(|out| out.data)
}

/// Serves `router` on 127.0.0.1; returns the port.
pub async fn serve(router: Router) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, router).await });
    port
}

pub fn body(content_type: &str, bytes: impl Into<Vec<u8>>) -> Response {
    (
        [(header::CONTENT_TYPE, content_type.to_owned())],
        bytes.into(),
    )
        .into_response()
}

pub fn redirect(to: &str) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to.to_owned())]).into_response()
}

/// A server whose every route answers with `reply(path, headers)`.
pub async fn serve_fn(
    reply: impl Fn(&str, &HeaderMap) -> Response + Clone + Send + Sync + 'static,
) -> u16 {
    let router = Router::new().fallback(get(move |uri: axum::http::Uri, headers: HeaderMap| {
        let reply = reply.clone();
        async move { reply(uri.path(), &headers) }
    }));
    serve(router).await
}

/// A listener that only counts the connections made to it.
pub struct CountingListener {
    pub addr: SocketAddr,
    connections: Arc<AtomicUsize>,
}

impl CountingListener {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let counting = CountingListener {
            addr: listener.local_addr().unwrap(),
            connections: Arc::default(),
        };
        let connections = Arc::clone(&counting.connections);
        tokio::spawn(async move {
            while let Ok((_stream, _)) = listener.accept().await {
                connections.fetch_add(1, Ordering::SeqCst);
            }
        });
        counting
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}
