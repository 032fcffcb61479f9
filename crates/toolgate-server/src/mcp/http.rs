//! `/mcp`, Streamable HTTP (rmcp's service behind our guards). Sessions (2025-11-25:
//! `initialize`, `Mcp-Session-Id`, SSE or JSON responses, the GET stream, DELETE) and the
//! 2026-07-28 era (`server/discover`, stateless requests, header validation) are rmcp's;
//! this module only decides:
//! - Host and Origin: already checked by `auth::check_host_and_origin` before any MCP code
//!   runs (with the operator's `allowed_hosts`), so rmcp's own loopback-only Host check is
//!   off instead of contradicting ours;
//! - shutdown: when the server starts stopping, calls waiting for a human are cancelled, the
//!   others finish and answer, then every session and stream is closed;
//! - which requests bypass rmcp: a plain `tools/call` in a live session (no progress token,
//!   a session-era protocol version, no standard headers) is answered here with one
//!   `application/json` response by [`super::fast`]; everything else, including every call
//!   that wants progress, is rmcp's (SSE for requests in a session).

use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

use super::fast::{FastCalls, Route};
use crate::state::AppState;
use toolgate_mcp_server::handler::{Identity, Lifecycle, McpHandler, McpOptions};

type McpService = StreamableHttpService<McpHandler, LocalSessionManager>;

/// What one `/mcp` route serves with: rmcp's service and, in front of it, the JSON answers.
#[derive(Clone)]
struct Endpoint {
    rmcp: McpService,
    fast: Arc<FastCalls>,
}

/// The `/mcp` route with tools only.
pub fn routes() -> Router<AppState> {
    routes_with(McpOptions::default())
}

/// The `/mcp` route with `options` (resources, prompts, … for embeddings and tests).
pub fn routes_with(options: McpOptions) -> Router<AppState> {
    // Built on the first request, when the state is at hand; one per router, so each
    // server keeps its own sessions.
    let endpoint: Arc<OnceLock<Endpoint>> = Arc::new(OnceLock::new());
    Router::new().route(
        "/mcp",
        any(move |State(state): State<AppState>, request: Request| {
            let endpoint = endpoint
                .get_or_init(|| http_endpoint(&state, options.clone()))
                .clone();
            serve_request(endpoint, request)
        }),
    )
}

async fn serve_request(endpoint: Endpoint, request: Request) -> Response {
    let request = match endpoint.fast.handle(request).await {
        Route::Answered(response) => return response,
        Route::Rmcp(request) => request,
    };
    let deleting = request.method() == http::Method::DELETE;
    let session = deleting
        .then(|| request.headers().get("mcp-session-id").cloned())
        .flatten();
    let mut response = match endpoint.rmcp.oneshot(request).await {
        Ok(response) => response.map(axum::body::Body::new).into_response(),
        Err(never) => match never {},
    };
    // rmcp acknowledges a session's DELETE with 202; clients expect 200/204.
    if deleting && response.status() == http::StatusCode::ACCEPTED {
        *response.status_mut() = http::StatusCode::NO_CONTENT;
        if let Some(session) = session
            && let Ok(session) = session.to_str()
        {
            endpoint.fast.end_session(session);
        }
    }
    response
}

fn http_endpoint(state: &AppState, options: McpOptions) -> Endpoint {
    let lifecycle = Lifecycle {
        shutdown: state.shutdown.clone(),
        calls: TaskTracker::new(),
    };
    let sessions_end = CancellationToken::new();
    tokio::spawn(close_after_calls(lifecycle.clone(), sessions_end.clone()));
    let mut config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_cancellation_token(sessions_end);
    // With the cluster store, a session opened on another replica continues here.
    config.session_store = options.sessions.clone();
    let sessions = Arc::new(LocalSessionManager::default());
    let fast = Arc::new(FastCalls::new(
        state.clone(),
        Arc::clone(&sessions),
        lifecycle.clone(),
        config.max_request_body_bytes,
        Arc::clone(&options.listening),
    ));
    let gateway = Arc::clone(&state.gateway);
    let rmcp = StreamableHttpService::new(
        move || {
            Ok(McpHandler::new(
                Arc::clone(&gateway),
                Identity::Http,
                options.clone(),
                lifecycle.clone(),
            ))
        },
        sessions,
        config,
    );
    Endpoint { rmcp, fast }
}

/// Once shutdown begins and the calls in flight have answered, ends every session.
async fn close_after_calls(lifecycle: Lifecycle, sessions_end: CancellationToken) {
    lifecycle.shutdown.cancelled().await;
    lifecycle.calls.close();
    lifecycle.calls.wait().await;
    sessions_end.cancel();
}
