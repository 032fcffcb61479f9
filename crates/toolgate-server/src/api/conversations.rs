//! `/v1/conversations`: the agent over HTTP, for the console's Chat page and any front end.
//! A caller talks as itself (its token's principal and role); it sees its own conversations
//! (an operator: everyone's, with `all=true`). Posting a message answers at once (202) with
//! its place in the journal; the turn runs by itself, and its events are read with
//! `GET …/{id}` or streamed with `GET …/{id}/events` ([`super::conversation_events`]).
//!
//! An approval a turn waits for is an `approval` event in the journal; the conversation's own
//! user (unless `[conversations] approvals = "operators"`) or an operator reads it with
//! `GET …/{id}/approvals/{approval_id}` and decides it with `POST …/decision`.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_conversations::{
    ConversationError, ConversationRow, Conversations, Entry, Event, Posted,
};
use toolgate_gateway::approve::Refusal;
use toolgate_protocol::ErrorCode;

use super::approvals::{DecisionParams, approval_json, time};
use super::extract::{ApiJson, ApiPath, ApiQuery, bounded_limit};
use crate::auth::Caller;
use crate::error::ApiError;
use crate::state::AppState;

const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = 500;
/// The most journal entries one read returns.
const MAX_ENTRIES: usize = 1000;

/// A journal position from a query: at most what the store numbers (signed 64-bit).
pub(crate) fn journal_after(after: Option<u64>) -> Result<u64, ApiError> {
    match after {
        Some(n) if i64::try_from(n).is_err() => Err(ApiError::new(
            ErrorCode::InvalidArguments,
            format!("`after` is at most {}", i64::MAX),
        )),
        other => Ok(other.unwrap_or(0)),
    }
}

/// The conversations, or 503 saying why there are none.
pub(crate) fn desk(state: &AppState) -> Result<&Conversations, ApiError> {
    state.conversations().map_err(|why| {
        ApiError::new(ErrorCode::Unavailable, why.to_owned())
            .with_status(StatusCode::SERVICE_UNAVAILABLE)
            .with_retryable(false)
    })
}

/// A conversation refusal as an API error.
pub(crate) fn refused(e: ConversationError) -> ApiError {
    match e {
        ConversationError::NotFound(id) | ConversationError::NotYours(id) => {
            ApiError::not_found(format!("no conversation {id}"))
                .with_hint("GET /v1/conversations lists yours")
        }
        ConversationError::Busy { .. } | ConversationError::TooManyBusy { .. } => {
            ApiError::new(ErrorCode::RateLimited, e.to_string())
                .with_status(StatusCode::TOO_MANY_REQUESTS)
        }
        ConversationError::Closed(_) => ApiError::new(ErrorCode::InvalidArguments, e.to_string())
            .with_status(StatusCode::CONFLICT)
            .with_hint("POST /v1/conversations starts a new one"),
        ConversationError::Empty | ConversationError::TooLong { .. } => {
            ApiError::new(ErrorCode::InvalidArguments, e.to_string())
        }
        ConversationError::Store(e) => ApiError::from(e),
    }
}

/// The Conversation object of the API.
pub fn conversation_json(c: &ConversationRow) -> Value {
    json!({
        "id": c.id, "entry": c.entry, "title": c.title,
        "principal": c.principal, "role": c.role,
        "created_at": time(c.created_at_ms), "updated_at": time(c.updated_at_ms),
        "closed": c.closed_at_ms.is_some(), "last_seq": c.last_seq,
        "busy": c.pending,
    })
}

/// One journal entry as the API shows it: the event's own fields, its `seq` and time.
pub fn entry_json(e: &Entry) -> Value {
    let mut v = serde_json::to_value(&e.event).unwrap_or_else(|_| json!({"kind": "notice"}));
    if let Some(o) = v.as_object_mut() {
        o.insert("seq".into(), json!(e.seq));
        o.insert("at".into(), json!(time(e.at_ms)));
        // The model's own items (reasoning, provider blocks) stay in the journal.
        if let Some(turn) = o.get_mut("turn").and_then(Value::as_object_mut) {
            turn.remove("native");
        }
    }
    v
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListParams {
    limit: Option<usize>,
    /// Operators: everyone's conversations.
    #[serde(default)]
    all: bool,
}

pub async fn list(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(params): ApiQuery<ListParams>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let desk = desk(&state)?;
    let limit = bounded_limit(params.limit, DEFAULT_LIMIT, MAX_LIMIT)?;
    if params.all && !caller.operator {
        return Err(crate::auth::not_operator(&caller.principal));
    }
    let whose = (!params.all).then_some(&caller.principal);
    let rows = desk.list(whose, limit).await.map_err(refused)?;
    Ok(Json(rows.iter().map(conversation_json).collect()))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateParams {
    /// A first message, posted at once.
    #[serde(default)]
    text: Option<String>,
}

pub async fn create(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(params): ApiJson<CreateParams>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let desk = desk(&state)?;
    let row = desk
        .create("web", &caller.principal, &caller.role)
        .await
        .map_err(refused)?;
    let mut answer = conversation_json(&row);
    if let Some(text) = params.text {
        answer["posted"] = posted_json(
            &desk
                .post(&row, &caller.principal, &caller.role, &text)
                .await
                .map_err(refused)?,
        );
    }
    Ok((StatusCode::CREATED, Json(answer)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadParams {
    /// Only entries after this `seq`.
    after: Option<u64>,
    limit: Option<usize>,
}

pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiQuery(params): ApiQuery<ReadParams>,
) -> Result<Json<Value>, ApiError> {
    let desk = desk(&state)?;
    let row = desk
        .get(&id, &caller.principal, caller.operator)
        .await
        .map_err(refused)?;
    let limit = bounded_limit(params.limit, MAX_ENTRIES, MAX_ENTRIES)?;
    let entries = desk
        .entries(&id, journal_after(params.after)?, limit)
        .await
        .map_err(refused)?;
    let mut answer = conversation_json(&row);
    answer["events"] = entries.iter().map(entry_json).collect();
    Ok(Json(answer))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageParams {
    text: String,
}

fn posted_json(p: &Posted) -> Value {
    match p {
        Posted::Queued { seq, ahead } => json!({"queued": true, "seq": seq, "ahead": ahead}),
        Posted::Command { reply, seq, opened } => json!({
            "queued": false, "reply": reply, "seq": seq,
            "opened": opened.as_ref().map(|c| c.id.clone()),
        }),
    }
}

pub async fn post_message(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath(id): ApiPath<String>,
    ApiJson(params): ApiJson<MessageParams>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let desk = desk(&state)?;
    // Only the conversation's own user talks in it (an operator reads, never speaks for
    // someone else: the turn would run as them).
    let row = desk
        .get(&id, &caller.principal, false)
        .await
        .map_err(refused)?;
    let posted = desk
        .post(&row, &caller.principal, &caller.role, &params.text)
        .await
        .map_err(refused)?;
    Ok((StatusCode::ACCEPTED, Json(posted_json(&posted))))
}

pub async fn approval(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, approval_id)): ApiPath<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let desk = desk(&state)?;
    let row = desk
        .get(&id, &caller.principal, caller.operator)
        .await
        .map_err(refused)?;
    let entries = desk.entries(&id, 0, usize::MAX).await.map_err(refused)?;
    let carded = entries
        .iter()
        .any(|e| matches!(&e.event, Event::Approval { approval_id: a, .. } if *a == approval_id));
    let found = if carded {
        state.approvals.get(&approval_id).await?
    } else {
        None
    };
    match found {
        Some(r) if r.session.as_str() == row.id => Ok(Json(approval_json(&r))),
        _ => Err(ApiError::not_found(format!(
            "no approval request {approval_id} in conversation {id}"
        ))),
    }
}

pub async fn decide(
    State(state): State<AppState>,
    caller: Caller,
    ApiPath((id, approval_id)): ApiPath<(String, String)>,
    ApiJson(params): ApiJson<DecisionParams>,
) -> Result<Json<Value>, ApiError> {
    let desk = desk(&state)?;
    let row = desk
        .get(&id, &caller.principal, caller.operator)
        .await
        .map_err(refused)?;
    let ask = params.into_ask()?;
    match desk
        .decide(&row, &approval_id, ask, &caller.principal, caller.operator)
        .await
    {
        Ok(r) => Ok(Json(approval_json(&r))),
        Err(Refusal::NotFound(_)) => Err(ApiError::not_found(format!(
            "no approval request {approval_id} in conversation {id}"
        ))),
        Err(Refusal::Forbidden(why)) => Err(ApiError::new(ErrorCode::Forbidden, why)),
        Err(Refusal::Conflict { message, now }) => {
            Err(super::approvals::refusal(message, now.as_deref()))
        }
        Err(Refusal::Store(e)) => Err(ApiError::from(e)),
    }
}
