//! The embedded backend of the credentials: table `mcp_credentials` in `toolgate.db`. Tokens
//! are secrets: opening restricts the database file (and its WAL and shared-memory files,
//! which SQLite creates with the same mode) to the owner, `0600`.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{CredentialBackend, CredentialRecord, CredentialSecret};
use crate::db::EmbeddedDb;
use crate::{StoreError, StoreResult};

/// OAuth credentials of MCP servers in the embedded database.
pub struct SqliteCredentials {
    conn: EmbeddedDb,
}

impl SqliteCredentials {
    /// Opens the database at `db` on a pool of its own (creating it and every table if
    /// needed). A process with several stores opens one [`EmbeddedDb`] and uses [`Self::new`].
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(Self::new(EmbeddedDb::open(db)?))
    }

    /// The table in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        SqliteCredentials { conn: db }
    }
}

#[async_trait]
impl CredentialBackend for SqliteCredentials {
    async fn load(&self, server: &str, resource: &str) -> StoreResult<Option<CredentialRecord>> {
        let (server, resource) = (server.to_owned(), resource.to_owned());
        self.conn
            .run("credential", move |conn| {
                conn.query_row(
                    "SELECT server, resource, issuer, client_id, secret, updated_at_ms \
                     FROM mcp_credentials WHERE server = ?1 AND resource = ?2",
                    params![server, resource],
                    record_from_row,
                )
                .optional()
                .map_err(StoreError::from)
            })
            .await
    }

    async fn save(&self, row: CredentialRecord) -> StoreResult<()> {
        self.conn.run("credential", move |conn| {
        let CredentialRecord { server, resource, issuer, client_id, secret, updated_at_ms: now } = row;
        conn.execute(
            "INSERT INTO mcp_credentials (server, resource, issuer, client_id, secret, updated_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (server, resource) DO UPDATE SET issuer = excluded.issuer, \
             client_id = excluded.client_id, secret = excluded.secret, \
             updated_at_ms = excluded.updated_at_ms",
            params![server, resource, issuer, client_id, secret.expose(), now],
        )?;
        Ok(())
        })
        .await
    }

    async fn delete(&self, server: &str, resource: Option<&str>) -> StoreResult<usize> {
        let (server, resource) = (server.to_owned(), resource.map(str::to_owned));
        self.conn
            .run("credential", move |conn| {
                Ok(match resource {
                    Some(r) => conn.execute(
                        "DELETE FROM mcp_credentials WHERE server = ?1 AND resource = ?2",
                        params![server, r],
                    )?,
                    None => conn.execute(
                        "DELETE FROM mcp_credentials WHERE server = ?1",
                        params![server],
                    )?,
                })
            })
            .await
    }

    async fn list(&self) -> StoreResult<Vec<CredentialRecord>> {
        self.conn
            .run("credential", |conn| {
                let mut stmt = conn.prepare(
                    "SELECT server, resource, issuer, client_id, secret, updated_at_ms \
                     FROM mcp_credentials ORDER BY server, resource",
                )?;
                let rows = stmt.query_map([], record_from_row)?;
                rows.map(|r| r.map_err(StoreError::from)).collect()
            })
            .await
    }
}

fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<CredentialRecord> {
    Ok(CredentialRecord {
        server: row.get(0)?,
        resource: row.get(1)?,
        issuer: row.get(2)?,
        client_id: row.get(3)?,
        secret: CredentialSecret::new(row.get::<_, String>(4)?),
        updated_at_ms: row.get(5)?,
    })
}
