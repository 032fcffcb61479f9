//! `GET /v1/approvals`, `GET /v1/approvals/{id}`, `POST /v1/approvals/{id}/decision`
//! (operators only). The JSON of a request is the CLI's (`toolgate approvals show`), plus the
//! raw millisecond times.
//!
//! A decision is refused with 404 for an unknown id, 410 `approval_expired` for a request
//! that expired, 409 for one already decided or abandoned, and 400 `invalid_arguments` for a malformed
//! decision (no typed confirmation for a dangerous tool, a pattern that is not an object).

use std::time::{Duration, UNIX_EPOCH};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_gateway::approve::{Ask, Decider, Refusal, Via};
use toolgate_protocol::ErrorCode;
use toolgate_store::approvals::{
    ApprovalRequest, ApprovalStatus, DecisionScope, hides_value, visible_value,
};

use super::extract::{ApiJson, ApiPath, ApiQuery};
use crate::auth::{Caller, Operator, not_operator};
use crate::error::ApiError;
use crate::state::AppState;

/// Listing size when `limit` is not given, and the most one listing returns.
const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 1000;

/// Milliseconds since the Unix epoch as RFC 3339 UTC to the second: the one time format of
/// the API's objects (approvals, tokens) and of the CLI's listings of them.
pub fn time(ms: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

/// The Approval object of the API. `arguments` is the call's whole arguments (redacted,
/// never shortened); `arguments_view` the same with whitespace runs and invisible characters
/// made visible ([`visible_value`]), and `arguments_hidden` whether the two differ — an
/// approver must read the view when it does.
pub fn approval_json(r: &ApprovalRequest) -> Value {
    json!({
        "id": r.id, "status": r.status, "tool": r.tool, "risk": r.risk,
        "principal": r.principal, "session": r.session, "role": r.role,
        "arguments": r.arguments, "arguments_view": visible_value(&r.arguments),
        "arguments_hidden": hides_value(&r.arguments),
        "requires_confirmation": r.requires_confirmation,
        "created_at": time(r.created_at_ms), "expires_at": time(r.expires_at_ms),
        "created_at_ms": r.created_at_ms, "expires_at_ms": r.expires_at_ms,
        "decided_by": r.decided_by, "decided_at": r.decided_at_ms.map(time),
        "decided_via": r.decided_via,
        "scope": r.scope, "reason": r.reason, "consumed": r.consumed,
        "issuer": r.issuer, "subject": r.subject,
    })
}

fn unknown(id: &str) -> ApiError {
    ApiError::not_found(format!("no approval request {id}"))
        .with_hint("GET /v1/approvals?status=all lists recent requests")
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    /// `pending` (default), `all`, or one status.
    status: Option<String>,
    limit: Option<usize>,
}

pub async fn list(
    State(state): State<AppState>,
    _op: Operator,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let filter = match params.status.as_deref().unwrap_or("pending") {
        "all" => None,
        s => Some(s.parse::<ApprovalStatus>().map_err(|e| {
            ApiError::new(ErrorCode::InvalidArguments, e)
                .with_hint("status is pending, all, approved, denied, expired or abandoned")
        })?),
    };
    let limit = super::extract::bounded_limit(params.limit, DEFAULT_LIMIT, MAX_LIMIT)?;
    let list = state.approvals.list(filter, limit).await?;
    Ok(Json(list.iter().map(approval_json).collect()))
}

pub async fn get(
    State(state): State<AppState>,
    _op: Operator,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Value>, ApiError> {
    let found = state.approvals.get(&id).await?;
    found
        .map(|r| Json(approval_json(&r)))
        .ok_or_else(|| unknown(&id))
}

/// The decision body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionParams {
    pub approve: bool,
    #[serde(default)]
    pub scope: Option<String>,
    #[serde(default)]
    pub pattern: Option<Value>,
    #[serde(default)]
    pub confirm: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
}

impl DecisionParams {
    /// What the decider asks for (`scope` defaults to `once`); 400 for an unknown scope.
    pub fn into_ask(self) -> Result<Ask, ApiError> {
        let scope: DecisionScope = self
            .scope
            .as_deref()
            .unwrap_or("once")
            .parse()
            .map_err(|e: String| ApiError::new(ErrorCode::InvalidArguments, e))?;
        Ok(Ask {
            approve: self.approve,
            scope,
            pattern: self.pattern,
            confirm: self.confirm,
            reason: self.reason,
        })
    }
}

pub async fn decide(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(params): ApiJson<DecisionParams>,
) -> Result<Json<Value>, ApiError> {
    let ask = params.into_ask()?;
    // The desk checks the operator right, so a refused decision is recorded too.
    let by = Decider::new(caller.principal.clone(), caller.operator, Via::Api);
    match state.gateway.decisions().decide(&id, ask, &by).await {
        Ok(r) => Ok(Json(approval_json(&r))),
        Err(Refusal::NotFound(_)) => Err(unknown(&id)),
        // Worded as every operator route words it.
        Err(Refusal::Forbidden(_)) => Err(not_operator(&caller.principal)),
        Err(Refusal::Conflict { message, now }) => Err(refusal(message, now.as_deref())),
        Err(Refusal::Store(e)) => Err(ApiError::from(e)),
    }
}

/// 410 for an expired request, 409 for a decided or abandoned one, 400 for a malformed
/// decision.
pub(crate) fn refusal(message: String, now: Option<&ApprovalRequest>) -> ApiError {
    match now.map(|r| r.status) {
        Some(ApprovalStatus::Expired) => ApiError::new(ErrorCode::ApprovalExpired, message)
            .with_retryable(false)
            .with_hint("the caller must retry the call to create a new request"),
        Some(ApprovalStatus::Approved | ApprovalStatus::Denied | ApprovalStatus::Abandoned) => {
            ApiError::new(ErrorCode::InvalidArguments, message).with_status(StatusCode::CONFLICT)
        }
        _ => ApiError::new(ErrorCode::InvalidArguments, message),
    }
}
