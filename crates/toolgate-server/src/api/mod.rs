//! The HTTP API under `/v1`, the OpenAPI document and the discovery documents.
//! (Skeleton: the full API is being built here.)

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new().route("/v1/health", get(health)).route(
        "/.well-known/oauth-protected-resource",
        get(protected_resource),
    )
}

/// The base URL clients reach this server at.
pub fn public_url(state: &AppState) -> String {
    match &state.config.public_url {
        Some(u) => u.trim_end_matches('/').to_owned(),
        None => format!("http://{}", state.local_addr),
    }
}

async fn health(State(state): State<AppState>) -> Json<Value> {
    Json(json!({"status": "ok", "uptime_secs": state.started.elapsed().as_secs()}))
}

/// RFC 9728 protected-resource metadata, so remote MCP clients can discover how to
/// authenticate.
async fn protected_resource(State(state): State<AppState>) -> Json<Value> {
    let base = public_url(&state);
    Json(json!({
        "resource": format!("{base}/mcp"),
        "authorization_servers": state.config.oauth.authorization_servers,
        "scopes_supported": state.config.oauth.scopes_supported,
        "bearer_methods_supported": ["header"],
        "resource_name": "toolgate",
    }))
}
