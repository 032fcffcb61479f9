//! The approval tables and the mapping between their rows and [`ApprovalRequest`] / [`Grant`].
//! Rows are read into plain column values first, then checked: a row the store cannot
//! understand (unknown status, broken JSON) is a [`StoreError::Corrupt`], never a panic.
//! The stored `status` is never `expired`-adjusted here; callers pass `now_ms` to report a
//! pending request past its expiry as expired.

use rusqlite::Row;
use serde_json::Value;

use super::{ApprovalRequest, ApprovalStatus, DecisionScope, Grant};
use crate::{StoreError, StoreResult};

/// Column list matching [`RawApproval::from_row`].
pub(super) const APPROVAL_COLUMNS: &str = "id, created_at_ms, expires_at_ms, status, principal, \
     session, role, tool, risk, args_hash, arguments, requires_confirmation, decided_by, \
     decided_at_ms, scope, pattern, reason, consumed, issuer, subject, decided_via";

/// Column list matching [`RawGrant::from_row`].
pub(super) const GRANT_COLUMNS: &str = "id, scope, principal, session, tool, args_hash, pattern, created_by, created_at_ms, approval_id";

/// One `approvals` row as stored.
pub(super) struct RawApproval {
    pub(super) id: String,
    pub(super) created_at_ms: u64,
    pub(super) expires_at_ms: u64,
    pub(super) status: String,
    pub(super) principal: String,
    pub(super) session: String,
    pub(super) role: String,
    pub(super) tool: String,
    pub(super) risk: String,
    pub(super) args_hash: String,
    pub(super) arguments: String,
    pub(super) requires_confirmation: bool,
    pub(super) decided_by: Option<String>,
    pub(super) decided_at_ms: Option<u64>,
    pub(super) scope: Option<String>,
    pub(super) pattern: Option<String>,
    pub(super) reason: Option<String>,
    pub(super) consumed: bool,
    pub(super) issuer: Option<String>,
    pub(super) subject: Option<String>,
    pub(super) decided_via: Option<String>,
}

impl RawApproval {
    pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(RawApproval {
            id: row.get(0)?,
            created_at_ms: row.get(1)?,
            expires_at_ms: row.get(2)?,
            status: row.get(3)?,
            principal: row.get(4)?,
            session: row.get(5)?,
            role: row.get(6)?,
            tool: row.get(7)?,
            risk: row.get(8)?,
            args_hash: row.get(9)?,
            arguments: row.get(10)?,
            requires_confirmation: row.get(11)?,
            decided_by: row.get(12)?,
            decided_at_ms: row.get(13)?,
            scope: row.get(14)?,
            pattern: row.get(15)?,
            reason: row.get(16)?,
            consumed: row.get(17)?,
            issuer: row.get(18)?,
            subject: row.get(19)?,
            decided_via: row.get(20)?,
        })
    }

    /// Checks the row; a pending request past its expiry at `now_ms` is reported expired.
    pub(super) fn into_request(self, now_ms: u64) -> StoreResult<ApprovalRequest> {
        let stored: ApprovalStatus = self
            .status
            .parse()
            .map_err(|e| corrupt_row("approval", &self.id, e))?;
        let status = if stored == ApprovalStatus::Pending && now_ms >= self.expires_at_ms {
            ApprovalStatus::Expired
        } else {
            stored
        };
        let risk: toolgate_protocol::Risk = self
            .risk
            .parse()
            .map_err(|e| corrupt_row("approval", &self.id, e))?;
        let scope = self
            .scope
            .map(|s| s.parse::<DecisionScope>())
            .transpose()
            .map_err(|e| corrupt_row("approval", &self.id, e))?;
        Ok(ApprovalRequest {
            arguments: parse_json("approval", &self.id, &self.arguments)?,
            pattern: parse_optional_json("approval", &self.id, self.pattern.as_deref())?,
            id: self.id,
            created_at_ms: self.created_at_ms,
            expires_at_ms: self.expires_at_ms,
            status,
            principal: self.principal.into(),
            session: self.session.into(),
            role: self.role.into(),
            tool: self.tool,
            risk,
            args_hash: self.args_hash,
            requires_confirmation: self.requires_confirmation,
            decided_by: self.decided_by,
            decided_at_ms: self.decided_at_ms,
            scope,
            reason: self.reason,
            consumed: self.consumed,
            issuer: self.issuer,
            subject: self.subject,
            decided_via: self.decided_via,
        })
    }
}

/// One `approval_grants` row as stored.
pub(super) struct RawGrant {
    pub(super) id: i64,
    pub(super) scope: String,
    pub(super) principal: String,
    pub(super) session: Option<String>,
    pub(super) tool: String,
    pub(super) args_hash: Option<String>,
    pub(super) pattern: Option<String>,
    pub(super) created_by: String,
    pub(super) created_at_ms: u64,
    pub(super) approval_id: String,
}

impl RawGrant {
    pub(super) fn from_row(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(RawGrant {
            id: row.get(0)?,
            scope: row.get(1)?,
            principal: row.get(2)?,
            session: row.get(3)?,
            tool: row.get(4)?,
            args_hash: row.get(5)?,
            pattern: row.get(6)?,
            created_by: row.get(7)?,
            created_at_ms: row.get(8)?,
            approval_id: row.get(9)?,
        })
    }

    pub(super) fn into_grant(self) -> StoreResult<Grant> {
        let id = self.id.to_string();
        Ok(Grant {
            scope: self
                .scope
                .parse()
                .map_err(|e| corrupt_row("grant", &id, e))?,
            pattern: parse_optional_json("grant", &id, self.pattern.as_deref())?,
            id: self.id,
            principal: self.principal.into(),
            session: self.session.map(Into::into),
            tool: self.tool,
            args_hash: self.args_hash,
            created_by: self.created_by,
            created_at_ms: self.created_at_ms,
            approval_id: self.approval_id,
        })
    }
}

fn parse_json(what: &str, id: &str, text: &str) -> StoreResult<Value> {
    serde_json::from_str(text).map_err(|e| corrupt_row(what, id, e))
}

fn parse_optional_json(what: &str, id: &str, text: Option<&str>) -> StoreResult<Option<Value>> {
    text.map(|t| parse_json(what, id, t)).transpose()
}

fn corrupt_row(what: &str, id: &str, err: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("{what} {id} in the database is unreadable: {err}"))
}
