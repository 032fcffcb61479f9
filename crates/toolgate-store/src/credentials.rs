//! [`CredentialStore`]: OAuth credentials of MCP servers (R-MCP-3), one row per server and
//! protected resource in the shared SQLite database (table `mcp_credentials`).
//!
//! What is stored is opaque to this crate: a JSON document (the MCP client's token
//! response, client id and granted scopes) kept as [`CredentialSecret`], whose `Debug` and
//! `Display` never show the value. The issuer and client id are kept beside it in clear so
//! `toolgate mcp` can list what is stored without reading a token.
//!
//! Tokens are secrets: opening the store restricts the database file (and its WAL and
//! shared-memory files, which SQLite creates with the same mode) to the owner, `0600`.
//! Nothing here logs, and nothing from this table goes to the audit log.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, OptionalExtension, params};

use crate::approvals::{Clock, system_clock};
use crate::db::open_db;
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

/// A stored credential document. Shown as `[redacted]`; read it with
/// [`CredentialSecret::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct CredentialSecret(String);

impl CredentialSecret {
    pub fn new(value: impl Into<String>) -> Self {
        CredentialSecret(value.into())
    }

    /// The stored document itself; never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for CredentialSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// One row: whose credentials, from which issuer, and the secret document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialRecord {
    /// The `[[mcp.servers]]` name.
    pub server: String,
    /// The protected resource (the server's MCP URL or its RFC 9728 `resource`).
    pub resource: String,
    /// The authorization server that issued the tokens, when known.
    pub issuer: Option<String>,
    pub client_id: String,
    pub secret: CredentialSecret,
    pub updated_at_ms: u64,
}

/// OAuth credentials of MCP servers in SQLite.
pub struct CredentialStore {
    conn: Mutex<Connection>,
    clock: Clock,
}

impl std::fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialStore").finish_non_exhaustive()
    }
}

impl CredentialStore {
    /// Opens the database at `db` (creating it and the table if needed) and restricts the
    /// database files to the owner.
    pub fn open(db: &Path) -> StoreResult<Self> {
        let conn = open_db(db)?;
        conn.execute_batch(CREATE_TABLE)?;
        restrict_db_files(db)?;
        Ok(CredentialStore {
            conn: Mutex::new(conn),
            clock: system_clock(),
        })
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// A poisoned lock only means another thread panicked mid-call; SQLite rolled back its
    /// unfinished statement, so the connection is still usable.
    fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The credentials of `server` for `resource`, if any are stored.
    pub fn load(&self, server: &str, resource: &str) -> StoreResult<Option<CredentialRecord>> {
        self.conn()
            .query_row(
                "SELECT server, resource, issuer, client_id, secret, updated_at_ms \
                 FROM mcp_credentials WHERE server = ?1 AND resource = ?2",
                params![server, resource],
                record_from_row,
            )
            .optional()
            .map_err(StoreError::from)
    }

    /// Stores (or replaces) the credentials of `server` for `resource`.
    pub fn save(
        &self,
        server: &str,
        resource: &str,
        issuer: Option<&str>,
        client_id: &str,
        secret: &CredentialSecret,
    ) -> StoreResult<()> {
        let now = (self.clock)();
        self.conn().execute(
            "INSERT INTO mcp_credentials (server, resource, issuer, client_id, secret, updated_at_ms) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
             ON CONFLICT (server, resource) DO UPDATE SET issuer = excluded.issuer, \
             client_id = excluded.client_id, secret = excluded.secret, \
             updated_at_ms = excluded.updated_at_ms",
            params![server, resource, issuer, client_id, secret.expose(), now],
        )?;
        Ok(())
    }

    /// Deletes the credentials of `server` — for one `resource`, or all of them when
    /// `resource` is `None` — and returns how many rows went. This is how a login is
    /// revoked locally (`toolgate mcp logout NAME`).
    pub fn delete(&self, server: &str, resource: Option<&str>) -> StoreResult<usize> {
        let conn = self.conn();
        let n = match resource {
            Some(r) => conn.execute(
                "DELETE FROM mcp_credentials WHERE server = ?1 AND resource = ?2",
                params![server, r],
            )?,
            None => conn.execute(
                "DELETE FROM mcp_credentials WHERE server = ?1",
                params![server],
            )?,
        };
        Ok(n)
    }

    /// Every stored row, sorted by server and resource (secrets stay redacted in `Debug`).
    pub fn list(&self) -> StoreResult<Vec<CredentialRecord>> {
        let conn = self.conn();
        let mut stmt = conn.prepare(
            "SELECT server, resource, issuer, client_id, secret, updated_at_ms \
             FROM mcp_credentials ORDER BY server, resource",
        )?;
        let rows = stmt.query_map([], record_from_row)?;
        rows.map(|r| r.map_err(StoreError::from)).collect()
    }
}

fn record_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<CredentialRecord> {
    Ok(CredentialRecord {
        server: row.get(0)?,
        resource: row.get(1)?,
        issuer: row.get(2)?,
        client_id: row.get(3)?,
        secret: CredentialSecret(row.get(4)?),
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn open(dir: &Path) -> CredentialStore {
        CredentialStore::open(&dir.join("toolgate.db"))
            .unwrap()
            .with_clock(Arc::new(|| 1_700_000_000_000))
    }

    #[test]
    fn rows_are_keyed_by_server_and_resource_and_replace_in_place() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        let secret = CredentialSecret::new(r#"{"access_token":"at-1"}"#);
        store
            .save(
                "docs",
                "https://a.example/mcp",
                Some("https://as.example"),
                "c1",
                &secret,
            )
            .unwrap();
        store
            .save(
                "docs",
                "https://b.example/mcp",
                None,
                "c2",
                &CredentialSecret::new("{}"),
            )
            .unwrap();
        let newer = CredentialSecret::new(r#"{"access_token":"at-2"}"#);
        store
            .save(
                "docs",
                "https://a.example/mcp",
                Some("https://as.example"),
                "c1",
                &newer,
            )
            .unwrap();
        assert_eq!(
            store.load("docs", "https://a.example/mcp").unwrap(),
            Some(CredentialRecord {
                server: "docs".into(),
                resource: "https://a.example/mcp".into(),
                issuer: Some("https://as.example".into()),
                client_id: "c1".into(),
                secret: newer,
                updated_at_ms: 1_700_000_000_000,
            })
        );
        assert_eq!(store.load("other", "https://a.example/mcp").unwrap(), None);
        assert_eq!(store.list().unwrap().len(), 2);
        assert_eq!(
            store.delete("docs", Some("https://b.example/mcp")).unwrap(),
            1
        );
        assert_eq!(store.delete("docs", None).unwrap(), 1);
        assert_eq!(store.list().unwrap(), Vec::new());
    }

    #[test]
    fn secrets_never_show_in_debug() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path());
        let secret = CredentialSecret::new("at-very-secret");
        store.save("s", "r", None, "c", &secret).unwrap();
        let shown = format!("{:?} {:?}", store.list().unwrap(), secret);
        assert!(!shown.contains("at-very-secret"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }

    #[cfg(unix)]
    #[test]
    fn the_database_files_are_private_to_the_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("toolgate.db");
        std::fs::write(&db, b"").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let store = CredentialStore::open(&db).unwrap();
        store
            .save("s", "r", None, "c", &CredentialSecret::new("{}"))
            .unwrap();
        drop(store);
        let store = CredentialStore::open(&db).unwrap();
        for name in ["toolgate.db", "toolgate.db-wal", "toolgate.db-shm"] {
            let path = dir.path().join(name);
            if path.exists() {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
                assert_eq!(mode, 0o600, "{name}");
            }
        }
        drop(store);
    }
}
