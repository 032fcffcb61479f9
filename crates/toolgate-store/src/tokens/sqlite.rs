//! The embedded backend of the tokens: table `api_tokens` in `toolgate.db`.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{TokenBackend, TokenRecord};
use crate::db::EmbeddedDb;
use crate::{StoreError, StoreResult};

const COLUMNS: &str = "id, sha256, principal, role, operator, note, created_at_ms, created_by, \
     expires_at_ms, revoked_at_ms, last_used_at_ms, replaces";

/// Issued tokens in the embedded database.
pub struct SqliteTokens {
    conn: EmbeddedDb,
}

impl SqliteTokens {
    /// Opens the database at `db` on a pool of its own (creating it and every table if
    /// needed). A process with several stores opens one [`EmbeddedDb`] and uses [`Self::new`].
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(Self::new(EmbeddedDb::open(db)?))
    }

    /// The tables in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        SqliteTokens { conn: db }
    }
}

fn insert(conn: &rusqlite::Connection, r: &TokenRecord) -> StoreResult<()> {
    conn.execute(
        &format!(
            "INSERT INTO api_tokens ({COLUMNS}) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
        ),
        params![
            r.id,
            r.sha256,
            r.principal.as_str(),
            r.role.as_str(),
            r.operator,
            r.note,
            r.created_at_ms,
            r.created_by,
            r.expires_at_ms,
            r.revoked_at_ms,
            r.last_used_at_ms,
            r.replaces
        ],
    )?;
    Ok(())
}

#[async_trait]
impl TokenBackend for SqliteTokens {
    async fn insert(&self, record: TokenRecord) -> StoreResult<()> {
        self.conn
            .run("tokens", move |conn| insert(conn, &record))
            .await
    }

    async fn list(&self) -> StoreResult<Vec<TokenRecord>> {
        self.conn
            .run("tokens", |conn| {
                let mut stmt = conn.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM api_tokens ORDER BY created_at_ms DESC, id"
                ))?;
                let rows = stmt.query_map([], record_from_row)?;
                rows.map(|r| r.map_err(StoreError::from)).collect()
            })
            .await
    }

    async fn revoke(&self, id: &str, at_ms: u64) -> StoreResult<bool> {
        let id = id.to_owned();
        self.conn
            .run("tokens", move |conn| {
                Ok(conn.execute(
                    "UPDATE api_tokens SET revoked_at_ms = ?2 \
                     WHERE id = ?1 AND revoked_at_ms IS NULL",
                    params![id, at_ms],
                )? == 1)
            })
            .await
    }

    async fn rotate(
        &self,
        old_id: &str,
        new: TokenRecord,
        old_ends_at_ms: u64,
    ) -> StoreResult<bool> {
        let old_id = old_id.to_owned();
        self.conn
            .run("tokens", move |conn| {
                let tx = conn.transaction()?;
                let live: Option<String> = tx
                    .query_row(
                        "SELECT id FROM api_tokens WHERE id = ?1 AND revoked_at_ms IS NULL",
                        params![old_id],
                        |r| r.get(0),
                    )
                    .optional()?;
                if live.is_none() {
                    return Ok(false);
                }
                tx.execute(
                    "UPDATE api_tokens SET expires_at_ms = ?2 WHERE id = ?1",
                    params![old_id, old_ends_at_ms],
                )?;
                insert(&tx, &new)?;
                tx.commit()?;
                Ok(true)
            })
            .await
    }

    async fn touch(&self, used: Vec<(String, u64)>) -> StoreResult<()> {
        self.conn
            .run("tokens", move |conn| {
                let tx = conn.transaction()?;
                {
                    let mut stmt = tx.prepare_cached(
                        "UPDATE api_tokens SET last_used_at_ms = ?2 WHERE id = ?1 \
                         AND (last_used_at_ms IS NULL OR last_used_at_ms < ?2)",
                    )?;
                    for (id, at) in &used {
                        stmt.execute(params![id, at])?;
                    }
                }
                tx.commit()?;
                Ok(())
            })
            .await
    }
}

fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<TokenRecord> {
    Ok(TokenRecord {
        id: row.get(0)?,
        sha256: row.get(1)?,
        principal: row.get::<_, String>(2)?.into(),
        role: row.get::<_, String>(3)?.into(),
        operator: row.get(4)?,
        note: row.get(5)?,
        created_at_ms: row.get(6)?,
        created_by: row.get(7)?,
        expires_at_ms: row.get(8)?,
        revoked_at_ms: row.get(9)?,
        last_used_at_ms: row.get(10)?,
        replaces: row.get(11)?,
    })
}
