//! What both backends check and write when a request is decided: the request must still be
//! open and the decision well formed; a `session` or `always` approval creates a grant in the
//! same transaction, so a grant never exists without its approved request.

use std::time::{Duration, UNIX_EPOCH};

use serde_json::Value;

use super::{ApprovalRequest, ApprovalStatus, Decision, DecisionScope};
use crate::{StoreError, StoreResult};

pub(super) fn not_found(id: &str) -> StoreError {
    StoreError::NotFound(format!("approval request {id} does not exist"))
}

/// The decision's pattern as stored text.
pub(super) fn pattern_text(id: &str, decision: &Decision) -> StoreResult<Option<String>> {
    decision
        .pattern
        .as_ref()
        .map(serde_json::to_string)
        .transpose()
        .map_err(|e| StoreError::Conflict(format!("{id}: the pattern is not JSON: {e}")))
}

/// The grant an approval creates, if any.
pub(super) struct GrantRow<'a> {
    pub(super) scope: DecisionScope,
    pub(super) session: Option<&'a str>,
    pub(super) args_hash: Option<&'a str>,
    pub(super) pattern: Option<&'a str>,
}

/// A session grant covers the whole tool in that session; an always grant covers the
/// pattern, or without one exactly the requested arguments. Denials and `once` create none.
pub(super) fn grant_row<'a>(
    request: &'a ApprovalRequest,
    decision: &Decision,
    pattern: Option<&'a str>,
) -> Option<GrantRow<'a>> {
    if !decision.approve || decision.scope == DecisionScope::Once {
        return None;
    }
    let (session, args_hash, pattern) = match decision.scope {
        DecisionScope::Session => (Some(request.session.as_str()), None, None),
        _ => match pattern {
            Some(p) => (None, None, Some(p)),
            None => (None, Some(request.args_hash.as_str()), None),
        },
    };
    Some(GrantRow {
        scope: decision.scope,
        session,
        args_hash,
        pattern,
    })
}

/// After a consume changed nothing: `false` if the request was approved (already consumed),
/// else why it cannot be consumed.
pub(super) fn consumed_or_why(id: &str, request: Option<ApprovalRequest>) -> StoreResult<bool> {
    match request {
        None => Err(not_found(id)),
        Some(request) if request.status == ApprovalStatus::Approved => Ok(false),
        Some(request) => Err(StoreError::Conflict(format!(
            "{id} is {}; only an approved request can be consumed",
            request.status
        ))),
    }
}

/// A request can be decided once, and only before it expires.
pub(super) fn check_open(request: &ApprovalRequest) -> StoreResult<()> {
    let id = &request.id;
    match request.status {
        ApprovalStatus::Pending => Ok(()),
        ApprovalStatus::Expired => Err(StoreError::Conflict(format!(
            "{id} expired at {}; the caller must retry to create a new request",
            format_ms(request.expires_at_ms)
        ))),
        ApprovalStatus::Abandoned => Err(StoreError::Conflict(format!(
            "{id} was abandoned: the call waiting for it stopped waiting{} at {}, so approving \
             it would run nothing; the caller must retry to create a new request",
            request
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default(),
            request
                .decided_at_ms
                .map(format_ms)
                .unwrap_or_else(|| "an unknown time".into())
        ))),
        decided @ (ApprovalStatus::Approved | ApprovalStatus::Denied) => {
            Err(StoreError::Conflict(format!(
                "{id} was already {decided} by {} at {}",
                request
                    .decided_by
                    .as_deref()
                    .unwrap_or("an unknown approver"),
                request
                    .decided_at_ms
                    .map(format_ms)
                    .unwrap_or_else(|| "an unknown time".into())
            )))
        }
    }
}

/// An approval must type the tool name for dangerous tools and give an object pattern.
pub(super) fn check_approval(request: &ApprovalRequest, decision: &Decision) -> StoreResult<()> {
    let id = &request.id;
    let tool = &request.tool;
    if request.requires_confirmation && decision.confirm.as_deref().map(str::trim) != Some(tool) {
        return Err(StoreError::Conflict(format!(
            "{id}: this is a dangerous tool: type its name `{tool}` to confirm"
        )));
    }
    match &decision.pattern {
        None | Some(Value::Object(_)) => Ok(()),
        Some(other) => Err(StoreError::Conflict(format!(
            "{id}: an argument pattern must be a JSON object of argument names to globs or \
             values, like {{\"path\": \"src/*\"}}; got {other}"
        ))),
    }
}

/// RFC 3339 UTC with milliseconds, for error messages.
fn format_ms(ms: u64) -> String {
    humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}
