//! The embedded backend of the credentials: table `mcp_credentials` in `toolgate.db`. Tokens
//! are secrets: opening restricts the database file (and its WAL and shared-memory files,
//! which SQLite creates with the same mode) to the owner, `0600`.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{CredentialBackend, CredentialRecord, CredentialSecret};
use crate::db::{SharedConn, open_db};
use crate::{StoreError, StoreResult};

const CREATE_TABLE: &str = "
CREATE TABLE IF NOT EXISTS mcp_credentials (
    server        TEXT NOT NULL,
    resource      TEXT NOT NULL,
    issuer        TEXT,
    client_id     TEXT NOT NULL,
    secret        TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (server, resource)
);
";

/// OAuth credentials of MCP servers in the embedded database.
pub struct SqliteCredentials {
    conn: SharedConn,
}

impl SqliteCredentials {
    /// Opens the database at `db` (creating it and the table if needed) and restricts the
    /// database files to the owner.
    pub fn open(db: &Path) -> StoreResult<Self> {
        let conn = open_db(db)?;
        conn.execute_batch(CREATE_TABLE)?;
        restrict_db_files(db)?;
        Ok(SqliteCredentials {
            conn: SharedConn::new(conn),
        })
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

/// `0600` on the database and, when they exist, its `-wal` and `-shm` files.
#[cfg(unix)]
fn restrict_db_files(db: &Path) -> StoreResult<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut paths = vec![db.to_path_buf()];
    for suffix in ["-wal", "-shm"] {
        let mut p = db.as_os_str().to_owned();
        p.push(suffix);
        paths.push(p.into());
    }
    for path in paths {
        match std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(StoreError::io(
                    format!("restricting permissions of {}", path.display()),
                    e,
                ));
            }
        }
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict_db_files(_db: &Path) -> StoreResult<()> {
    Ok(())
}
