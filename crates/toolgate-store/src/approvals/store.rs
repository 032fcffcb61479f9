//! [`ApprovalStore`]: one SQLite connection behind a mutex; creating, reading, listing,
//! consuming and expiring requests. Every state change is a single SQL statement or one
//! `IMMEDIATE` transaction, so two stores (or two processes) on one file cannot both win.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};

use super::schema::{self, APPROVAL_COLUMNS, RawApproval};
use super::{ApprovalRequest, ApprovalStatus, Clock, NewApproval, system_clock};
use crate::db::open_db;
use crate::{StoreError, StoreResult};

/// Pending approvals and standing grants, shared by every front end through one database.
pub struct ApprovalStore {
    conn: Mutex<Connection>,
    clock: Clock,
}

impl ApprovalStore {
    /// Opens the database at `db`, creating the approval tables if they do not exist.
    pub fn open(db: &Path) -> StoreResult<Self> {
        let conn = open_db(db)?;
        schema::create_tables(&conn)?;
        Ok(ApprovalStore {
            conn: Mutex::new(conn),
            clock: system_clock(),
        })
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch); tests move time with it.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    pub(super) fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    /// A poisoned lock only means another thread panicked mid-call; SQLite rolled back its
    /// unfinished transaction, so the connection is still usable.
    pub(super) fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Persists a new pending request expiring `new.ttl` from now.
    pub fn create(&self, new: NewApproval) -> StoreResult<ApprovalRequest> {
        let now = self.now_ms();
        let ttl_ms = u64::try_from(new.ttl.as_millis()).unwrap_or(u64::MAX);
        let expires = now.saturating_add(ttl_ms).min(i64::MAX as u64);
        let arguments = serde_json::to_string(new.arguments.as_value())
            .map_err(|e| StoreError::Corrupt(format!("approval arguments are not JSON: {e}")))?;
        let conn = self.conn();
        // 48 random bits: a collision is unlikely but is retried rather than reported.
        for _ in 0..8 {
            let id = new_approval_id();
            let inserted = conn.execute(
                "INSERT INTO approvals (id, created_at_ms, expires_at_ms, status, principal, \
                 session, role, tool, risk, args_hash, arguments, requires_confirmation) \
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11) \
                 ON CONFLICT (id) DO NOTHING",
                params![
                    id,
                    now,
                    expires,
                    new.principal,
                    new.session,
                    new.role,
                    new.tool,
                    new.risk.as_str(),
                    new.args_hash,
                    arguments,
                    new.requires_confirmation,
                ],
            )?;
            if inserted == 1 {
                return load(&conn, &id, now)?.ok_or_else(|| {
                    StoreError::Corrupt(format!("approval {id} vanished right after insert"))
                });
            }
        }
        Err(StoreError::Conflict(
            "could not allocate a unique approval id after 8 attempts".into(),
        ))
    }

    /// The request with this id, if any.
    pub fn get(&self, id: &str) -> StoreResult<Option<ApprovalRequest>> {
        load(&self.conn(), id, self.now_ms())
    }

    /// Newest request for this exact call identity that is not consumed (any status).
    pub fn find_latest(
        &self,
        principal: &str,
        tool: &str,
        args_hash: &str,
    ) -> StoreResult<Option<ApprovalRequest>> {
        let now = self.now_ms();
        let conn = self.conn();
        let raw = conn
            .query_row(
                &format!(
                    "SELECT {APPROVAL_COLUMNS} FROM approvals \
                     WHERE principal = ?1 AND tool = ?2 AND args_hash = ?3 AND consumed = 0 \
                     ORDER BY created_at_ms DESC, rowid DESC LIMIT 1"
                ),
                params![principal, tool, args_hash],
                RawApproval::from_row,
            )
            .optional()?;
        raw.map(|r| r.into_request(now)).transpose()
    }

    /// Requests newest first, at most `limit`, optionally only those with `status` (as
    /// reported: `Pending` excludes and `Expired` includes pending requests past expiry).
    pub fn list(
        &self,
        status: Option<ApprovalStatus>,
        limit: usize,
    ) -> StoreResult<Vec<ApprovalRequest>> {
        let now = self.now_ms();
        let filter = match status {
            None => "1 = 1",
            Some(ApprovalStatus::Pending) => "status = 'pending' AND expires_at_ms > ?1",
            Some(ApprovalStatus::Expired) => {
                "(status = 'expired' OR (status = 'pending' AND expires_at_ms <= ?1))"
            }
            Some(ApprovalStatus::Approved) => "status = 'approved'",
            Some(ApprovalStatus::Denied) => "status = 'denied'",
            Some(ApprovalStatus::Abandoned) => "status = 'abandoned'",
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let conn = self.conn();
        let mut stmt = conn.prepare(&format!(
            "SELECT {APPROVAL_COLUMNS} FROM approvals WHERE {filter} \
             ORDER BY created_at_ms DESC, rowid DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![now, limit], RawApproval::from_row)?;
        rows.map(|raw| raw?.into_request(now)).collect()
    }

    /// Marks an approved request consumed. Returns `false` if it already was: of two racing
    /// identical calls exactly one gets `true`. Unknown ids are `NotFound`; requests that are
    /// not approved are a `Conflict`.
    pub fn consume(&self, id: &str) -> StoreResult<bool> {
        let now = self.now_ms();
        let conn = self.conn();
        let changed = conn.execute(
            "UPDATE approvals SET consumed = 1 \
             WHERE id = ?1 AND status = 'approved' AND consumed = 0",
            params![id],
        )?;
        if changed == 1 {
            return Ok(true);
        }
        match load(&conn, id, now)? {
            None => Err(not_found(id)),
            Some(request) if request.status == ApprovalStatus::Approved => Ok(false),
            Some(request) => Err(StoreError::Conflict(format!(
                "{id} is {}; only an approved request can be consumed",
                request.status
            ))),
        }
    }

    /// Retires a denied or expired request once its outcome was reported to the caller, so
    /// the next identical call asks afresh. Returns false when there was nothing to retire
    /// (already retired, still pending, or approved).
    pub fn retire(&self, id: &str) -> StoreResult<bool> {
        let now = self.now_ms();
        let changed = self.conn().execute(
            "UPDATE approvals SET consumed = 1, \
               status = CASE WHEN status = 'pending' THEN 'expired' ELSE status END \
             WHERE id = ?1 AND consumed = 0 AND (status IN ('denied', 'expired') \
               OR (status = 'pending' AND expires_at_ms <= ?2))",
            params![id, now],
        )?;
        Ok(changed == 1)
    }

    /// Withdraws a pending request whose waiting call stopped waiting, saying `why` (kept as
    /// the request's reason). Returns `false` when it was no longer pending — decided or
    /// expired meanwhile — and leaves it as it is: of an operator's decision and an
    /// abandonment racing, exactly one takes effect. An abandoned request is consumed, so
    /// the next identical call asks afresh.
    pub fn abandon(&self, id: &str, why: &str) -> StoreResult<bool> {
        let now = self.now_ms();
        let changed = self.conn().execute(
            "UPDATE approvals SET status = 'abandoned', consumed = 1, decided_at_ms = ?2, \
               reason = ?3 \
             WHERE id = ?1 AND status = 'pending' AND consumed = 0 AND expires_at_ms > ?2",
            params![id, now, why],
        )?;
        Ok(changed == 1)
    }

    /// Marks pending requests past their expiry as expired in the table; returns how many.
    pub fn expire_due(&self) -> StoreResult<usize> {
        let now = self.now_ms();
        let changed = self.conn().execute(
            "UPDATE approvals SET status = 'expired' \
             WHERE status = 'pending' AND expires_at_ms <= ?1",
            params![now],
        )?;
        Ok(changed)
    }
}

/// Reads one request, reporting expiry as of `now_ms`.
pub(super) fn load(
    conn: &Connection,
    id: &str,
    now_ms: u64,
) -> StoreResult<Option<ApprovalRequest>> {
    let raw = conn
        .query_row(
            &format!("SELECT {APPROVAL_COLUMNS} FROM approvals WHERE id = ?1"),
            params![id],
            RawApproval::from_row,
        )
        .optional()?;
    raw.map(|r| r.into_request(now_ms)).transpose()
}

pub(super) fn not_found(id: &str) -> StoreError {
    StoreError::NotFound(format!("approval request {id} does not exist"))
}

/// `apr_` + 12 lowercase hex characters from a random UUID.
fn new_approval_id() -> String {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    format!("apr_{}", hex::encode(&bytes[..6]))
}
