//! Liveness, readiness, who-am-I and the OAuth protected-resource metadata.
//!
//! Readiness checks what a call needs beyond the process being up: the audit log can be
//! opened for appending and its writer answers a flush (no evidence, no action), and the
//! approvals database answers a query. Operators also see the federated MCP servers
//! (`mcp_servers`: name, transport, state, error, tool count); a server that is down makes
//! its tools unavailable, never the gateway unready, so it is shown, not checked.

use std::time::Duration;

use axum::extract::State;
use axum::{Extension, Json};
use serde_json::{Value, json};
use toolgate_protocol::ErrorCode;
use toolgate_store::approvals::ApprovalStatus;

use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// How long a readiness check may take before it counts as failed.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);

pub async fn health(State(state): State<AppState>) -> Json<Value> {
    Json(json!({"status": "ok", "uptime_secs": state.started.elapsed().as_secs()}))
}

async fn check_audit(state: &AppState) -> Result<(), String> {
    // The cluster's log has no file: its writer's flush is the check.
    let path = state.audit_jsonl.clone();
    if state.gateway.audit().is_cluster() {
        return match tokio::time::timeout(CHECK_TIMEOUT, state.gateway.audit().flush()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "the audit writer did not answer within {CHECK_TIMEOUT:?}"
            )),
        };
    }
    let opened = tokio::task::spawn_blocking(move || {
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map(drop)
            .map_err(|e| format!("cannot open {} for appending: {e}", path.display()))
    })
    .await
    .map_err(|e| format!("the check's task died: {e}"))?;
    opened?;
    match tokio::time::timeout(CHECK_TIMEOUT, state.gateway.audit().flush()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "the audit writer did not answer within {CHECK_TIMEOUT:?}"
        )),
    }
}

async fn check_approvals(state: &AppState) -> Result<(), String> {
    let listed = state.approvals.list(Some(ApprovalStatus::Pending), 1);
    match tokio::time::timeout(CHECK_TIMEOUT, listed).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "the approvals store did not answer within {CHECK_TIMEOUT:?}"
        )),
    }
}

/// 200 `{ready: true, checks}`, or 503 `unavailable` with the checks in `details`; for an
/// operator, both also carry `mcp_servers`. The route is public: the caller is known only
/// when the request authenticates (or the anonymous grant applies).
pub async fn ready(
    State(state): State<AppState>,
    caller: Option<Extension<toolgate_gateway::Caller>>,
) -> Result<Json<Value>, ApiError> {
    let (audit, approvals) = tokio::join!(check_audit(&state), check_approvals(&state));
    let shown = |r: &Result<(), String>| match r {
        Ok(()) => "ok".to_owned(),
        Err(e) => e.clone(),
    };
    let checks = json!({"audit": shown(&audit), "approvals": shown(&approvals)});
    let body = |ready: bool| {
        let mut body = json!({"ready": ready, "checks": checks});
        if caller.as_ref().is_some_and(|c| c.operator) {
            body["mcp_servers"] = Value::Array(state.mcp_servers());
        }
        body
    };
    if state.is_shutting_down() {
        return Err(
            ApiError::new(ErrorCode::Unavailable, "the server is shutting down")
                .with_details(body(false)),
        );
    }
    if audit.is_err() || approvals.is_err() {
        return Err(
            ApiError::new(ErrorCode::Unavailable, "the server is not ready")
                .with_details(body(false)),
        );
    }
    Ok(Json(body(true)))
}

pub async fn me(caller: Caller) -> Json<Value> {
    Json(json!({
        "principal": caller.principal,
        "role": caller.role,
        "operator": caller.operator,
    }))
}

/// RFC 9728 protected-resource metadata, so remote MCP clients can discover how to
/// authenticate.
pub async fn protected_resource(State(state): State<AppState>) -> Json<Value> {
    Json(json!({
        "resource": state.resource_url(),
        "authorization_servers": state.config.oauth.authorization_servers,
        "scopes_supported": state.config.oauth.scopes_supported,
        "bearer_methods_supported": ["header"],
        "resource_name": "toolgate",
    }))
}
