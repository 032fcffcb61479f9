//! `POST /v1/calls`: one call through the gateway. The answer is 200 with the call's envelope
//! whether the call succeeded or not (the envelope's `error.code` says why); non-200 answers
//! are about the HTTP request itself — unreadable body (400), too large (413), not JSON
//! (415), server shutting down (503).
//!
//! The principal and role are the caller's (from its token), never from the body. The call
//! runs on a tracked task ([`AppState::run_call`]): a client that disconnects cancels it, and
//! it is audited either way.

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::Value;
use toolgate_gateway::approve::OnGiveUp;
use toolgate_gateway::{Arguments, CallRequest};
use toolgate_protocol::{Envelope, ErrorCode};

use super::extract::json_body;
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

/// Session of calls that name none.
pub const DEFAULT_SESSION: &str = "http";

/// The request body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallParams {
    pub tool: String,
    /// A JSON object, or a string holding one (as a model produced it; parsed and size-checked
    /// by the gateway, so malformed text is an audited `invalid_arguments`). Default `{}`.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub idempotency_key: Option<String>,
    /// Wait for a human decision instead of answering `approval_required` at once; absent:
    /// the server's `[approvals] wait`.
    #[serde(default)]
    pub wait_for_approval: Option<bool>,
    /// Keep the approval request pending if this call stops waiting for it (cancelled,
    /// disconnected), for the next identical call; by default it is abandoned.
    #[serde(default)]
    pub keep_approval: bool,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl CallParams {
    /// The gateway request for `caller`.
    pub fn into_request(self, caller: &Caller) -> CallRequest {
        let arguments = match self.arguments {
            Value::String(text) => Arguments::Text(text),
            other => Arguments::Json(other),
        };
        let mut request = CallRequest::new(self.tool, arguments)
            .with_principal(caller.principal.clone())
            .with_role(caller.role.clone())
            .with_session(self.session.unwrap_or_else(|| DEFAULT_SESSION.to_owned()));
        request.idempotency_key = self.idempotency_key;
        request.wait_for_approval = self.wait_for_approval;
        request.identity = caller.identity.clone();
        if self.keep_approval {
            request.on_give_up = OnGiveUp::Keep;
        }
        request
    }
}

const BODY_SHAPE: &str = "the body is {\"tool\": NAME, \"arguments\": {…}, \"session\"?, \"idempotency_key\"?, \"wait_for_approval\"?, \"keep_approval\"?}";

pub async fn call(
    State(state): State<AppState>,
    caller: Caller,
    req: Request,
) -> Result<Response, ApiError> {
    if state.is_shutting_down() {
        return Err(
            ApiError::new(ErrorCode::Unavailable, "the server is shutting down")
                .with_hint("retry against the restarted server"),
        );
    }
    let (parts, body) = req.into_parts();
    let params: CallParams = json_body(
        parts.headers.get(header::CONTENT_TYPE),
        body,
        state.call_body_limit(),
    )
    .await
    .map_err(|e| match e.error.hint {
        Some(_) => e,
        None => e.with_hint(BODY_SHAPE),
    })?;
    let mut request = params.into_request(&caller);
    request.trace = crate::trace::from_headers(&parts.headers);
    Ok(answer(state.run_call(request).await))
}

/// The envelope, with 200 — except a call over a quota: 429 and `Retry-After` (whole seconds,
/// rounded up), so HTTP clients and proxies back off without reading the body.
fn answer(envelope: Envelope) -> Response {
    let retry_after_ms = match &envelope.error {
        Some(error) if error.code == ErrorCode::RateLimited => error
            .details
            .as_ref()
            .and_then(|d| d["retry_after_ms"].as_u64())
            .unwrap_or(1000),
        _ => return Json(envelope).into_response(),
    };
    let secs = retry_after_ms.div_ceil(1000).max(1);
    (
        StatusCode::TOO_MANY_REQUESTS,
        [(header::RETRY_AFTER, secs.to_string())],
        Json(envelope),
    )
        .into_response()
}
