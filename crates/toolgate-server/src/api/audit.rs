//! `GET /v1/audit` and `POST /v1/audit/verify` (operators only). Records are those of
//! `toolgate audit query --json`: the stored record plus its `seq` and `hash`. Queries catch
//! the index up with the file first, so records other processes appended are included.

use std::time::SystemTime;

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_protocol::ErrorCode;
use toolgate_store::audit::{AuditQuery, StoredRecord, verify};

use super::approvals::blocking;
use super::extract::ApiQuery;
use crate::auth::Operator;
use crate::error::ApiError;
use crate::state::AppState;

const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 10_000;

fn record_json(r: &StoredRecord) -> Value {
    let mut v = serde_json::to_value(&r.record).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("seq".into(), json!(r.seq));
        m.insert("hash".into(), json!(r.hash));
    }
    v
}

/// `10m`, `2h`, `1d` ago, or an RFC 3339 time.
fn parse_time(name: &str, s: &str) -> Result<SystemTime, ApiError> {
    if let Ok(d) = humantime::parse_duration(s) {
        return Ok(SystemTime::now()
            .checked_sub(d)
            .unwrap_or(SystemTime::UNIX_EPOCH));
    }
    humantime::parse_rfc3339_weak(s).map_err(|_| {
        ApiError::new(
            ErrorCode::InvalidArguments,
            format!(
                "`{name}={s}` is neither a duration like 10m nor a time like 2026-12-02T10:00:00Z"
            ),
        )
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryParams {
    since: Option<String>,
    until: Option<String>,
    tool: Option<String>,
    principal: Option<String>,
    session: Option<String>,
    outcome: Option<String>,
    call_id: Option<String>,
    limit: Option<usize>,
    newest_first: Option<bool>,
}

pub async fn query(
    State(state): State<AppState>,
    _op: Operator,
    ApiQuery(p): ApiQuery<QueryParams>,
) -> Result<Json<Vec<Value>>, ApiError> {
    let q = AuditQuery {
        since: p
            .since
            .as_deref()
            .map(|s| parse_time("since", s))
            .transpose()?,
        until: p
            .until
            .as_deref()
            .map(|s| parse_time("until", s))
            .transpose()?,
        tool: p.tool,
        principal: p.principal,
        session: p.session,
        outcome: p.outcome,
        call_id: p.call_id,
        kind: None,
        limit: Some(p.limit.unwrap_or(DEFAULT_LIMIT).min(MAX_LIMIT)),
        newest_first: p.newest_first.unwrap_or(false),
    };
    let log = state.gateway.audit().clone();
    let records = blocking(move || log.query(&q)).await?;
    Ok(Json(records.iter().map(record_json).collect()))
}

/// Walks the chain (and compares the index) after flushing what this server appended.
pub async fn verify_chain(
    State(state): State<AppState>,
    _op: Operator,
) -> Result<Json<Value>, ApiError> {
    state
        .gateway
        .audit()
        .flush()
        .await
        .map_err(ApiError::from)?;
    let jsonl = state.audit_jsonl.clone();
    let db = state.audit_db.clone();
    let report = blocking(move || verify(&jsonl, db.exists().then_some(db.as_path()))).await?;
    Ok(Json(json!({
        "ok": report.ok(),
        "records": report.records,
        "head": report.head,
        "first_bad": report.first_bad.as_ref().map(|b| json!({
            "line": b.line, "seq": b.seq, "reason": b.reason})),
    })))
}
