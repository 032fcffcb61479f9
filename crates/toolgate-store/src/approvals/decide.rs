//! The decision transaction: check that the request is still open and the decision well
//! formed, record it, and insert the grant a `session` or `always` approval creates. All in
//! one `IMMEDIATE` transaction, so of two operators deciding at once exactly one succeeds and
//! a grant never exists without its approved request.

use std::time::{Duration, UNIX_EPOCH};

use rusqlite::{TransactionBehavior, params};
use serde_json::Value;

use super::store::{ApprovalStore, load, not_found};
use super::{ApprovalRequest, ApprovalStatus, Decision, DecisionScope};
use crate::{StoreError, StoreResult};

impl ApprovalStore {
    /// Approves or denies a pending request.
    ///
    /// Errors: unknown id ([`StoreError::NotFound`]); a request already decided or expired,
    /// an approval of a `requires_confirmation` request without the tool name typed in
    /// `confirm`, or a pattern that is not a JSON object ([`StoreError::Conflict`]). Denying
    /// never needs confirmation and creates no grant.
    pub fn decide(&self, id: &str, decision: Decision) -> StoreResult<ApprovalRequest> {
        let now = self.now_ms();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let request = load(&tx, id, now)?.ok_or_else(|| not_found(id))?;
        check_open(&request)?;
        if decision.approve {
            check_approval(&request, &decision)?;
        }
        let pattern = decision
            .pattern
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(|e| StoreError::Conflict(format!("{id}: the pattern is not JSON: {e}")))?;
        let status = if decision.approve {
            ApprovalStatus::Approved
        } else {
            ApprovalStatus::Denied
        };
        tx.execute(
            "UPDATE approvals SET status = ?2, decided_by = ?3, decided_at_ms = ?4, scope = ?5, \
             pattern = ?6, reason = ?7 WHERE id = ?1",
            params![
                id,
                status.as_str(),
                decision.decided_by,
                now,
                decision.scope.as_str(),
                pattern,
                decision.reason,
            ],
        )?;
        if decision.approve && decision.scope != DecisionScope::Once {
            // A session grant covers the whole tool in that session; an always grant covers
            // the pattern, or without one exactly the requested arguments.
            let (session, args_hash, pattern) = match decision.scope {
                DecisionScope::Session => (Some(request.session.as_str()), None, None),
                _ => match pattern.as_deref() {
                    Some(p) => (None, None, Some(p)),
                    None => (None, Some(request.args_hash.as_str()), None),
                },
            };
            tx.execute(
                "INSERT INTO approval_grants (scope, principal, session, tool, args_hash, \
                 pattern, created_by, created_at_ms, approval_id) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    decision.scope.as_str(),
                    request.principal,
                    session,
                    request.tool,
                    args_hash,
                    pattern,
                    decision.decided_by,
                    now,
                    id,
                ],
            )?;
        }
        let decided = load(&tx, id, now)?.ok_or_else(|| not_found(id))?;
        tx.commit()?;
        Ok(decided)
    }
}

/// A request can be decided once, and only before it expires.
fn check_open(request: &ApprovalRequest) -> StoreResult<()> {
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
fn check_approval(request: &ApprovalRequest, decision: &Decision) -> StoreResult<()> {
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
