//! Idempotency keys of write calls (R-EXE-3): the outcome of a call is recorded under
//! (principal, tool, key), so a retried call with the same key gets the recorded outcome
//! instead of acting twice.
//!
//! # Invariants
//! - Keys are scoped by principal and tool: one principal cannot read or shadow another's.
//! - First writer wins: once an entry exists, later puts for the same triple leave it
//!   unchanged and return it (an `INSERT … ON CONFLICT DO NOTHING`, so this holds across
//!   processes too). The stored `args_hash` lets the caller detect a key reused with
//!   different arguments.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approvals::{Clock, system_clock};
use crate::db::open_db;
use crate::{StoreError, StoreResult};

const CREATE_TABLES: &str = "
CREATE TABLE IF NOT EXISTS idempotency_keys (
    principal     TEXT NOT NULL,
    tool          TEXT NOT NULL,
    key           TEXT NOT NULL,
    args_hash     TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    created_at_ms INTEGER NOT NULL,
    PRIMARY KEY (principal, tool, key)
);
";

/// The recorded outcome of the first call made with a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdempotentEntry {
    /// `canonical_hash` of the arguments of the call that recorded the outcome.
    pub args_hash: String,
    pub outcome: Value,
    pub created_at_ms: u64,
}

/// Outcomes of write calls by idempotency key.
pub struct IdempotencyStore {
    conn: Mutex<Connection>,
    clock: Clock,
}

impl IdempotencyStore {
    /// Opens the database at `db`, creating the table if it does not exist.
    pub fn open(db: &Path) -> StoreResult<Self> {
        let conn = open_db(db)?;
        conn.execute_batch(CREATE_TABLES)?;
        Ok(IdempotencyStore {
            conn: Mutex::new(conn),
            clock: system_clock(),
        })
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The entry recorded for (principal, tool, key), if any.
    pub fn get(
        &self,
        principal: &str,
        tool: &str,
        key: &str,
    ) -> StoreResult<Option<IdempotentEntry>> {
        load(&self.conn(), principal, tool, key)
    }

    /// Records `outcome` for (principal, tool, key) unless an entry exists; returns the entry
    /// that is stored afterwards (the first writer's).
    pub fn put(
        &self,
        principal: &str,
        tool: &str,
        key: &str,
        args_hash: &str,
        outcome: &Value,
    ) -> StoreResult<IdempotentEntry> {
        let outcome = serde_json::to_string(outcome)
            .map_err(|e| StoreError::Corrupt(format!("idempotent outcome is not JSON: {e}")))?;
        let now = (self.clock)();
        let mut conn = self.conn();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute(
            "INSERT INTO idempotency_keys (principal, tool, key, args_hash, outcome, created_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
            params![principal, tool, key, args_hash, outcome, now],
        )?;
        let entry = load(&tx, principal, tool, key)?.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "idempotency key {key} of {principal}/{tool} vanished right after insert"
            ))
        })?;
        tx.commit()?;
        Ok(entry)
    }

    /// See `ApprovalStore::conn`: a poisoned lock leaves a usable connection.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn load(
    conn: &Connection,
    principal: &str,
    tool: &str,
    key: &str,
) -> StoreResult<Option<IdempotentEntry>> {
    let row = conn
        .query_row(
            "SELECT args_hash, outcome, created_at_ms FROM idempotency_keys \
             WHERE principal = ?1 AND tool = ?2 AND key = ?3",
            params![principal, tool, key],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, u64>(2)?,
                ))
            },
        )
        .optional()?;
    row.map(|(args_hash, outcome, created_at_ms)| {
        let outcome = serde_json::from_str(&outcome).map_err(|e| {
            StoreError::Corrupt(format!(
                "idempotency key {key} of {principal}/{tool} has an unreadable outcome: {e}"
            ))
        })?;
        Ok(IdempotentEntry {
            args_hash,
            outcome,
            created_at_ms,
        })
    })
    .transpose()
}
