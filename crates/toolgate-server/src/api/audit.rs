//! `GET /v1/audit` and `POST /v1/audit/verify` (operators only). Records are those of
//! `toolgate audit query --json`: the stored record plus its `seq` and `hash`. Queries catch
//! the index up with the file first, so records other processes appended are included.

use std::time::{Duration, SystemTime};

use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use serde_json::{Value, json};
use toolgate_audit::{AuditOutcome, AuditQuery, StoredRecord};
use toolgate_protocol::ErrorCode;

use super::extract::blocking;
use super::extract::{ApiQuery, bounded_limit};
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

/// `since`/`until`: a whole number of seconds, minutes, hours, days or weeks ago (`10m`,
/// `2h`; at most nine digits), or an RFC 3339 time with any offset. Exactly the grammar the
/// OpenAPI document declares, so a value the document admits is never refused and one it
/// rejects is never half-understood.
fn parse_time(name: &str, s: &str) -> Result<SystemTime, ApiError> {
    // Times before the epoch are the epoch: the log holds nothing older.
    let epoch = SystemTime::UNIX_EPOCH;
    if let Some(ago) = parse_ago(s) {
        let then = SystemTime::now().checked_sub(ago).unwrap_or(epoch);
        return Ok(then.max(epoch));
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| {
            let ms = u64::try_from(t.timestamp_millis()).unwrap_or(0);
            epoch + Duration::from_millis(ms)
        })
        .ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "`{name}` is neither a duration like 10m (digits, then s, m, h, d or w) nor an RFC 3339 time like 2026-12-02T10:00:00Z"
                ),
            )
        })
}

/// `^[0-9]{1,9}(s|m|h|d|w)$` as a duration.
fn parse_ago(s: &str) -> Option<Duration> {
    let unit = s.chars().last()?;
    let digits = &s[..s.len() - unit.len_utf8()];
    if digits.is_empty() || digits.len() > 9 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3_600,
        'd' => 86_400,
        'w' => 604_800,
        _ => return None,
    };
    Some(Duration::from_secs(n * secs))
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueryParams {
    since: Option<String>,
    until: Option<String>,
    tool: Option<String>,
    principal: Option<String>,
    session: Option<String>,
    outcome: Option<AuditOutcome>,
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
        limit: Some(bounded_limit(p.limit, DEFAULT_LIMIT, MAX_LIMIT)?),
        newest_first: p.newest_first.unwrap_or(false),
    };
    let records = state.gateway.audit().query_async(&q).await?;
    Ok(Json(records.iter().map(record_json).collect()))
}

/// Walks the chain (and compares the index) after flushing what this server appended.
pub async fn verify_chain(
    State(state): State<AppState>,
    _op: Operator,
) -> Result<Json<Value>, ApiError> {
    let log = state.gateway.audit().clone();
    if log.is_cluster() {
        // Every replica's chain, as the database holds it.
        let report = log.verify_cluster().await?;
        return Ok(Json(json!({
            "ok": report.ok(),
            "records": report.records,
            "chains": report.chains,
            "problems": report.problems,
        })));
    }
    // The log's own verify: flushes, and checks MACs and the head anchor when it is keyed.
    let report = blocking(move || log.verify()).await?;
    Ok(Json(json!({
        "ok": report.ok(),
        "records": report.records,
        "head": report.head,
        "first_bad": report.first_bad.as_ref().map(|b| json!({
            "line": b.line, "seq": b.seq, "reason": b.reason})),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_whole_units_ago() {
        assert_eq!(parse_ago("10m"), Some(Duration::from_secs(600)));
        assert_eq!(parse_ago("2w"), Some(Duration::from_secs(1_209_600)));
        assert_eq!(
            parse_ago("999999999w"),
            Some(Duration::from_secs(999_999_999 * 604_800))
        );
        for bad in [
            "",
            "m",
            "10",
            "1h30m",
            "10 m",
            "1234567890s",
            "-1s",
            "10x",
            "١٠m",
        ] {
            assert_eq!(parse_ago(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn times_are_rfc3339_with_any_offset() {
        let z = parse_time("since", "2026-12-04T10:00:00Z").ok();
        let plus = parse_time("since", "2026-12-04T11:00:00+01:00").ok();
        assert_eq!(z, plus);
        assert!(parse_time("since", "1900-01-01T00:00:00Z").is_ok());
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-12-04 10:00:00",
            "yesterday",
        ] {
            assert!(parse_time("since", bad).is_err(), "{bad:?}");
        }
        // A duration far beyond the epoch clamps to it instead of overflowing.
        assert_eq!(
            parse_time("since", "999999999w").ok(),
            Some(SystemTime::UNIX_EPOCH)
        );
    }
}
