//! [`CredentialStore`]: OAuth credentials of MCP servers (R-MCP-3), one row per server and
//! protected resource — in the embedded database (`sqlite`), or in PostgreSQL (`postgres`)
//! where every replica of a cluster finds the login made on any of them.
//!
//! What is stored is opaque to this crate: a JSON document (the MCP client's token
//! response, client id and granted scopes) kept as [`CredentialSecret`], whose `Debug` and
//! `Display` never show the value. The issuer and client id are kept beside it in clear so
//! `toolgate mcp` can list what is stored without reading a token. In PostgreSQL the secret
//! is encrypted (AES-256-GCM) with a key from the environment ([`CredentialKey`]), bound to
//! its row: a database dump holds no usable token.
//!
//! Nothing here logs, and nothing from this table goes to the audit log.

mod postgres;
mod sqlite;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

pub use postgres::{CredentialKey, PgCredentials};
pub use sqlite::SqliteCredentials;

use crate::StoreResult;
use crate::clock::{Clock, system_clock};

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

/// What a database must do for credentials.
#[async_trait]
pub trait CredentialBackend: Send + Sync + 'static {
    async fn load(&self, server: &str, resource: &str) -> StoreResult<Option<CredentialRecord>>;
    /// Stores (or replaces) the row of `row.server` and `row.resource`.
    async fn save(&self, row: CredentialRecord) -> StoreResult<()>;
    async fn delete(&self, server: &str, resource: Option<&str>) -> StoreResult<usize>;
    async fn list(&self) -> StoreResult<Vec<CredentialRecord>>;
}

/// OAuth credentials of MCP servers, over either backend.
#[derive(Clone)]
pub struct CredentialStore {
    backend: Arc<dyn CredentialBackend>,
    clock: Clock,
}

impl std::fmt::Debug for CredentialStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialStore").finish_non_exhaustive()
    }
}

impl CredentialStore {
    /// The embedded store: the database at `db` (created if needed), restricted to the
    /// owner.
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(CredentialStore::with_backend(Arc::new(
            SqliteCredentials::open(db)?,
        )))
    }

    pub fn with_backend(backend: Arc<dyn CredentialBackend>) -> Self {
        CredentialStore {
            backend,
            clock: system_clock(),
        }
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The credentials of `server` for `resource`, if any are stored.
    pub async fn load(
        &self,
        server: &str,
        resource: &str,
    ) -> StoreResult<Option<CredentialRecord>> {
        self.backend.load(server, resource).await
    }

    /// Stores (or replaces) the credentials of `server` for `resource`.
    pub async fn save(
        &self,
        server: &str,
        resource: &str,
        issuer: Option<&str>,
        client_id: &str,
        secret: &CredentialSecret,
    ) -> StoreResult<()> {
        self.backend
            .save(CredentialRecord {
                server: server.to_owned(),
                resource: resource.to_owned(),
                issuer: issuer.map(str::to_owned),
                client_id: client_id.to_owned(),
                secret: secret.clone(),
                updated_at_ms: (self.clock)(),
            })
            .await
    }

    /// Deletes the credentials of `server` — for one `resource`, or all of them when
    /// `resource` is `None` — and returns how many rows went. This is how a login is
    /// revoked (`toolgate mcp logout NAME`).
    pub async fn delete(&self, server: &str, resource: Option<&str>) -> StoreResult<usize> {
        self.backend.delete(server, resource).await
    }

    /// Every stored row, sorted by server and resource (secrets stay redacted in `Debug`).
    pub async fn list(&self) -> StoreResult<Vec<CredentialRecord>> {
        self.backend.list().await
    }
}
