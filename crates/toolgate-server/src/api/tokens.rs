//! `GET /v1/tokens`, `POST /v1/tokens`, `POST /v1/tokens/{id}/revoke`,
//! `POST /v1/tokens/{id}/rotate` (operators only): the bearer tokens issued through the store,
//! as `toolgate token` manages them. A token is shown once, in the answer that made it;
//! listings never show a token or its hash. A change takes effect on this server at once and
//! on every other server sharing the store within a second.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_protocol::ErrorCode;
use toolgate_store::tokens::{NewToken, TokenRecord, TokenSecret, TokenState, TokenStore};

use super::approvals::time;
use super::extract::{ApiJson, ApiPath};
use crate::auth::{Operator, TokenBook};
use crate::error::ApiError;
use crate::state::AppState;

/// The longest expiry and rotation grace accepted: ten years, in seconds.
const MAX_SECS: u64 = 10 * 365 * 24 * 3600;

/// `active`, `revoked` or `expired`.
pub fn state_name(state: TokenState) -> &'static str {
    match state {
        TokenState::Active => "active",
        TokenState::Revoked => "revoked",
        TokenState::Expired => "expired",
    }
}

/// The Token object of the API (and of `toolgate token list --json`): never the token or
/// its hash.
pub fn token_json(t: &TokenRecord, now_ms: u64) -> Value {
    json!({
        "id": t.id, "principal": t.principal, "role": t.role, "operator": t.operator,
        "state": state_name(t.state(now_ms)), "note": t.note,
        "created_at": time(t.created_at_ms), "created_by": t.created_by,
        "expires_at": t.expires_at_ms.map(time), "revoked_at": t.revoked_at_ms.map(time),
        "last_used_at": t.last_used_at_ms.map(time), "replaces": t.replaces,
    })
}

/// A freshly issued token: the Token object plus `token`, shown this once.
fn issued_json(t: &TokenRecord, secret: &TokenSecret, now_ms: u64) -> Value {
    let mut v = token_json(t, now_ms);
    v["token"] = json!(secret.expose());
    v
}

fn book(state: &AppState) -> Result<&std::sync::Arc<TokenBook>, ApiError> {
    state.tokens().ok_or_else(|| {
        ApiError::new(
            ErrorCode::Unavailable,
            "this server admits only the tokens of its configuration file",
        )
    })
}

fn store(state: &AppState) -> Result<&TokenStore, ApiError> {
    Ok(book(state)?.store())
}

/// Re-reads the tokens so the change holds on this server before the answer.
async fn refresh(state: &AppState) {
    if let Ok(book) = book(state)
        && let Err(e) = book.reload().await
    {
        tracing::warn!(error = %e, "re-reading the issued tokens after a change failed");
    }
}

fn unknown(id: &str) -> ApiError {
    ApiError::not_found(format!("no token {id}")).with_hint("GET /v1/tokens lists them")
}

pub async fn list(
    State(state): State<AppState>,
    Operator(_): Operator,
) -> Result<Json<Value>, ApiError> {
    let store = store(&state)?;
    let now = store.now_ms();
    let tokens = store.list().await?;
    Ok(Json(Value::Array(
        tokens.iter().map(|t| token_json(t, now)).collect(),
    )))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateParams {
    pub principal: String,
    pub role: String,
    #[serde(default)]
    pub operator: bool,
    #[serde(default)]
    pub note: Option<String>,
    /// Seconds until it expires; absent: never.
    #[serde(default, deserialize_with = "whole_seconds")]
    pub expires_in_secs: Option<u64>,
}

/// A count of seconds as JSON Schema's `integer` has it: `30` or `30.0` (a whole number,
/// however written); anything else is refused.
fn whole_seconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let n: Option<serde_json::Number> = Option::deserialize(d)?;
    let Some(n) = n else { return Ok(None) };
    if let Some(v) = n.as_u64() {
        return Ok(Some(v));
    }
    match n.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= MAX_SECS as f64 => Ok(Some(f as u64)),
        _ => Err(serde::de::Error::custom(format!(
            "{n} is not a whole number of seconds between 0 and {MAX_SECS}"
        ))),
    }
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidArguments, message)
}

pub async fn create(
    State(state): State<AppState>,
    Operator(caller): Operator,
    ApiJson(params): ApiJson<CreateParams>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    if params.principal.trim().is_empty() {
        return Err(bad("principal must not be empty"));
    }
    toolgate_store::tokens::check_own_principal(&params.principal)
        .map_err(|e| bad(e.to_string()))?;
    if state.gateway.roles().get(&params.role).is_none() {
        // 404, like any other name that does not exist here.
        let names: Vec<&str> = state.gateway.roles().names().collect();
        return Err(ApiError::not_found(format!("no role `{}`", params.role))
            .with_hint(format!("configured roles: {}", names.join(", "))));
    }
    if params
        .expires_in_secs
        .is_some_and(|s| s == 0 || s > MAX_SECS)
    {
        return Err(bad(format!(
            "expires_in_secs must be between 1 and {MAX_SECS}"
        )));
    }
    let store = store(&state)?;
    let (record, secret) = store
        .create(NewToken {
            principal: params.principal.into(),
            role: params.role.into(),
            operator: params.operator,
            note: params.note,
            expires_in_ms: params.expires_in_secs.map(|s| s * 1000),
            created_by: caller.principal.to_string(),
        })
        .await?;
    refresh(&state).await;
    Ok((
        StatusCode::CREATED,
        Json(issued_json(&record, &secret, store.now_ms())),
    ))
}

pub async fn revoke(
    State(state): State<AppState>,
    Operator(_): Operator,
    ApiPath(id): ApiPath<String>,
) -> Result<Json<Value>, ApiError> {
    let store = store(&state)?;
    if !store.revoke(&id).await? && store.get(&id).await?.is_none() {
        return Err(unknown(&id));
    }
    refresh(&state).await;
    let record = store.get(&id).await?.ok_or_else(|| unknown(&id))?;
    Ok(Json(token_json(&record, store.now_ms())))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RotateParams {
    /// Seconds the old token keeps working; 0 (default): it stops now.
    #[serde(default, deserialize_with = "whole_seconds")]
    pub grace_secs: Option<u64>,
}

pub async fn rotate(
    State(state): State<AppState>,
    Operator(caller): Operator,
    ApiPath(id): ApiPath<String>,
    ApiJson(params): ApiJson<RotateParams>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let grace_secs = params.grace_secs.unwrap_or(0);
    if grace_secs > MAX_SECS {
        return Err(bad(format!("grace_secs must be at most {MAX_SECS}")));
    }
    let store = store(&state)?;
    let Some((record, secret)) = store
        .rotate(&id, grace_secs * 1000, &caller.principal)
        .await?
    else {
        return Err(match store.get(&id).await? {
            Some(_) => bad(format!("{id} is revoked")).with_status(StatusCode::CONFLICT),
            None => unknown(&id),
        });
    };
    refresh(&state).await;
    Ok((
        StatusCode::CREATED,
        Json(issued_json(&record, &secret, store.now_ms())),
    ))
}
