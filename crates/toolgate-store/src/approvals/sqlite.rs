//! The embedded backend: the approval tables in `toolgate.db` (SQLite, WAL). One connection
//! behind a mutex; every statement runs on the blocking pool (`spawn_blocking`), never on a
//! tokio worker. Every state change is a single statement or one `IMMEDIATE` transaction, so
//! two processes on one file cannot both win.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::backend::ApprovalBackend;
use super::decide::{check_approval, check_open, grant_row, not_found};
use super::schema::{APPROVAL_COLUMNS, GRANT_COLUMNS, RawApproval, RawGrant};
use super::{ApprovalRequest, ApprovalStatus, Decision, Grant, NewApproval};
use crate::db::EmbeddedDb;
use crate::{StoreError, StoreResult};

/// The approval tables of one SQLite database.
#[derive(Clone)]
pub struct SqliteApprovals {
    conn: EmbeddedDb,
}

impl SqliteApprovals {
    /// Opens the database at `db` on a pool of its own (creating it and every table if
    /// needed). A process with several stores opens one [`EmbeddedDb`] and uses [`Self::new`].
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(Self::new(EmbeddedDb::open(db)?))
    }

    /// The tables in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        SqliteApprovals { conn: db }
    }
}

#[async_trait]
impl ApprovalBackend for SqliteApprovals {
    async fn insert(&self, id: &str, new: &NewApproval, now_ms: u64) -> StoreResult<bool> {
        let ttl_ms = u64::try_from(new.ttl.as_millis()).unwrap_or(u64::MAX);
        let expires = now_ms.saturating_add(ttl_ms).min(i64::MAX as u64);
        let arguments = serde_json::to_string(new.arguments.as_value())
            .map_err(|e| StoreError::Corrupt(format!("approval arguments are not JSON: {e}")))?;
        let (id, new) = (id.to_owned(), new.clone());
        self.conn
            .run("approval", move |conn| {
                let inserted = conn.execute(
                    "INSERT INTO approvals (id, created_at_ms, expires_at_ms, status, principal, \
                 session, role, tool, risk, args_hash, arguments, requires_confirmation, \
                 issuer, subject) \
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) \
                 ON CONFLICT (id) DO NOTHING",
                    params![
                        id,
                        now_ms,
                        expires,
                        new.principal.as_str(),
                        new.session.as_str(),
                        new.role.as_str(),
                        new.tool,
                        new.risk.as_str(),
                        new.args_hash,
                        arguments,
                        new.requires_confirmation,
                        new.issuer,
                        new.subject,
                    ],
                )?;
                Ok(inserted == 1)
            })
            .await
    }

    async fn get(&self, id: &str, now_ms: u64) -> StoreResult<Option<ApprovalRequest>> {
        let id = id.to_owned();
        self.conn
            .run("approval", move |conn| load(conn, &id, now_ms))
            .await
    }

    async fn find_latest(
        &self,
        principal: &str,
        tool: &str,
        args_hash: &str,
        now_ms: u64,
    ) -> StoreResult<Option<ApprovalRequest>> {
        let key = (principal.to_owned(), tool.to_owned(), args_hash.to_owned());
        self.conn
            .run("approval", move |conn| {
                let raw = conn
                    .query_row(
                        &format!(
                            "SELECT {APPROVAL_COLUMNS} FROM approvals \
                         WHERE principal = ?1 AND tool = ?2 AND args_hash = ?3 AND consumed = 0 \
                         ORDER BY created_at_ms DESC, rowid DESC LIMIT 1"
                        ),
                        params![key.0, key.1, key.2],
                        RawApproval::from_row,
                    )
                    .optional()?;
                raw.map(|r| r.into_request(now_ms)).transpose()
            })
            .await
    }

    async fn list(
        &self,
        status: Option<ApprovalStatus>,
        limit: usize,
        now_ms: u64,
    ) -> StoreResult<Vec<ApprovalRequest>> {
        let filter = status_filter(status);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.conn
            .run("approval", move |conn| {
                let mut stmt = conn.prepare(&format!(
                    "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE {filter} \
                 ORDER BY created_at_ms DESC, rowid DESC LIMIT ?2"
                ))?;
                let rows = stmt.query_map(params![now_ms, limit], RawApproval::from_row)?;
                rows.map(|raw| raw?.into_request(now_ms)).collect()
            })
            .await
    }

    async fn consume(&self, id: &str, now_ms: u64) -> StoreResult<bool> {
        let id = id.to_owned();
        self.conn
            .run("approval", move |conn| {
                let changed = conn.execute(
                    "UPDATE approvals SET consumed = 1 \
                 WHERE id = ?1 AND status = 'approved' AND consumed = 0",
                    params![id],
                )?;
                if changed == 1 {
                    return Ok(true);
                }
                super::decide::consumed_or_why(&id, load(conn, &id, now_ms)?)
            })
            .await
    }

    async fn retire(&self, id: &str, now_ms: u64) -> StoreResult<bool> {
        let id = id.to_owned();
        self.conn
            .run("approval", move |conn| {
                let changed = conn.execute(
                    "UPDATE approvals SET consumed = 1, \
                   status = CASE WHEN status = 'pending' THEN 'expired' ELSE status END \
                 WHERE id = ?1 AND consumed = 0 AND (status IN ('denied', 'expired') \
                   OR (status = 'pending' AND expires_at_ms <= ?2))",
                    params![id, now_ms],
                )?;
                Ok(changed == 1)
            })
            .await
    }

    async fn abandon(&self, id: &str, why: &str, now_ms: u64) -> StoreResult<bool> {
        let (id, why) = (id.to_owned(), why.to_owned());
        self.conn
            .run("approval", move |conn| {
                let changed = conn.execute(
                    "UPDATE approvals SET status = 'abandoned', consumed = 1, decided_at_ms = ?2, \
                   reason = ?3 \
                 WHERE id = ?1 AND status = 'pending' AND consumed = 0 AND expires_at_ms > ?2",
                    params![id, now_ms, why],
                )?;
                Ok(changed == 1)
            })
            .await
    }

    async fn expire_due(&self, now_ms: u64) -> StoreResult<usize> {
        self.conn
            .run("approval", move |conn| {
                Ok(conn.execute(
                    "UPDATE approvals SET status = 'expired' \
                 WHERE status = 'pending' AND expires_at_ms <= ?1",
                    params![now_ms],
                )?)
            })
            .await
    }

    async fn decide(
        &self,
        id: &str,
        decision: &Decision,
        now_ms: u64,
    ) -> StoreResult<ApprovalRequest> {
        let (id, decision) = (id.to_owned(), decision.clone());
        self.conn
            .run("approval", move |conn| decide(conn, &id, &decision, now_ms))
            .await
    }

    async fn candidate_grants(
        &self,
        principal: &str,
        session: &str,
        tool: &str,
    ) -> StoreResult<Vec<Grant>> {
        let key = (principal.to_owned(), tool.to_owned(), session.to_owned());
        self.conn
            .run("approval", move |conn| {
                let mut stmt = conn.prepare(&format!(
                    "SELECT {GRANT_COLUMNS} FROM approval_grants \
                 WHERE principal = ?1 AND tool = ?2 \
                   AND ((scope = 'session' AND session = ?3) OR scope = 'always') \
                 ORDER BY scope = 'session' DESC, id"
                ))?;
                let rows = stmt.query_map(params![key.0, key.1, key.2], RawGrant::from_row)?;
                rows.map(|raw| raw?.into_grant()).collect()
            })
            .await
    }

    async fn list_grants(&self) -> StoreResult<Vec<Grant>> {
        self.conn
            .run("approval", |conn| {
                let mut stmt = conn.prepare(&format!(
                    "SELECT {GRANT_COLUMNS} FROM approval_grants ORDER BY id"
                ))?;
                let rows = stmt.query_map([], RawGrant::from_row)?;
                rows.map(|raw| raw?.into_grant()).collect()
            })
            .await
    }

    async fn revoke_grant(&self, id: i64) -> StoreResult<bool> {
        self.conn
            .run("approval", move |conn| {
                let changed =
                    conn.execute("DELETE FROM approval_grants WHERE id = ?1", params![id])?;
                Ok(changed == 1)
            })
            .await
    }
}

/// The `WHERE` clause of a listing by reported status (`?1` is now).
pub(super) fn status_filter(status: Option<ApprovalStatus>) -> &'static str {
    match status {
        None => "1 = 1",
        Some(ApprovalStatus::Pending) => "status = 'pending' AND expires_at_ms > ?1",
        Some(ApprovalStatus::Expired) => {
            "(status = 'expired' OR (status = 'pending' AND expires_at_ms <= ?1))"
        }
        Some(ApprovalStatus::Approved) => "status = 'approved'",
        Some(ApprovalStatus::Denied) => "status = 'denied'",
        Some(ApprovalStatus::Abandoned) => "status = 'abandoned'",
    }
}

/// Reads one request, reporting expiry as of `now_ms`.
fn load(conn: &Connection, id: &str, now_ms: u64) -> StoreResult<Option<ApprovalRequest>> {
    let raw = conn
        .query_row(
            &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"),
            params![id],
            RawApproval::from_row,
        )
        .optional()?;
    raw.map(|r| r.into_request(now_ms)).transpose()
}

/// The decision transaction: check, record, and insert the grant in one `IMMEDIATE`
/// transaction, so of two operators deciding at once exactly one succeeds and a grant never
/// exists without its approved request.
fn decide(
    conn: &mut Connection,
    id: &str,
    decision: &Decision,
    now: u64,
) -> StoreResult<ApprovalRequest> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let request = load(&tx, id, now)?.ok_or_else(|| not_found(id))?;
    check_open(&request)?;
    if decision.approve {
        check_approval(&request, decision)?;
    }
    let pattern = super::decide::pattern_text(id, decision)?;
    let status = if decision.approve {
        ApprovalStatus::Approved
    } else {
        ApprovalStatus::Denied
    };
    tx.execute(
        "UPDATE approvals SET status = ?2, decided_by = ?3, decided_at_ms = ?4, scope = ?5, \
         pattern = ?6, reason = ?7, decided_via = ?8 WHERE id = ?1",
        params![
            id,
            status.as_str(),
            decision.decided_by,
            now,
            decision.scope.as_str(),
            pattern,
            decision.reason,
            decision.via,
        ],
    )?;
    if let Some(g) = grant_row(&request, decision, pattern.as_deref()) {
        tx.execute(
            "INSERT INTO approval_grants (scope, principal, session, tool, args_hash, \
             pattern, created_by, created_at_ms, approval_id) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                g.scope.as_str(),
                request.principal.as_str(),
                g.session,
                request.tool,
                g.args_hash,
                g.pattern,
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
