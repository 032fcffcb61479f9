//! The cluster backend of the credentials: `mcp_credentials` in PostgreSQL (schema 5), the
//! secret encrypted with AES-256-GCM under [`CredentialKey`] — `TOOLGATE_CREDENTIALS_KEY`, 32
//! random bytes as 64 hex digits, the same on every replica, never in the configuration file
//! or the database. The server and resource are the additional data, so a ciphertext copied
//! into another row does not decrypt. Stored as `nonce ‖ ciphertext ‖ tag`.

use async_trait::async_trait;
use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};

use super::{CredentialBackend, CredentialRecord, CredentialSecret};
use crate::pg::{PgPool, from_ms, ms, pg_error};
use crate::{StoreError, StoreResult};

/// The environment variable holding the key.
pub const KEY_VAR: &str = "TOOLGATE_CREDENTIALS_KEY";

/// The key that encrypts credentials at rest in PostgreSQL.
#[derive(Clone)]
pub struct CredentialKey([u8; 32]);

impl std::fmt::Debug for CredentialKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CredentialKey([redacted])")
    }
}

impl CredentialKey {
    /// The key in `value`: 64 hex digits.
    pub fn parse(value: &str) -> StoreResult<Self> {
        let bytes = hex::decode(value.trim()).ok().filter(|b| b.len() == 32).ok_or_else(|| {
            StoreError::Config(format!(
                "{KEY_VAR} must be 32 random bytes as 64 hex digits (e.g. `openssl rand -hex 32`)"
            ))
        })?;
        let mut key = [0u8; 32];
        key.copy_from_slice(&bytes);
        Ok(CredentialKey(key))
    }

    /// The key in `TOOLGATE_CREDENTIALS_KEY`, if set.
    pub fn from_env() -> StoreResult<Option<Self>> {
        match std::env::var(KEY_VAR) {
            Ok(v) if !v.trim().is_empty() => CredentialKey::parse(&v).map(Some),
            _ => Ok(None),
        }
    }

    fn aead(&self) -> StoreResult<LessSafeKey> {
        let unbound = UnboundKey::new(&AES_256_GCM, &self.0)
            .map_err(|_| StoreError::Config("the credentials key is unusable".into()))?;
        Ok(LessSafeKey::new(unbound))
    }

    fn seal(&self, server: &str, resource: &str, secret: &str) -> StoreResult<Vec<u8>> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce)
            .map_err(|e| StoreError::Unavailable(format!("no random source: {e}")))?;
        let mut data = secret.as_bytes().to_vec();
        self.aead()?
            .seal_in_place_append_tag(
                Nonce::assume_unique_for_key(nonce),
                Aad::from(aad(server, resource)),
                &mut data,
            )
            .map_err(|_| StoreError::Encode("credentials (encryption failed)".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        Ok(out)
    }

    fn open(&self, server: &str, resource: &str, sealed: &[u8]) -> StoreResult<String> {
        let unreadable = || {
            StoreError::Corrupt(format!(
                "the stored credentials of {server} ({resource}) do not decrypt with {KEY_VAR}: \
                 another key wrote them, or the row was altered; run `toolgate mcp login {server}` again"
            ))
        };
        if sealed.len() < NONCE_LEN {
            return Err(unreadable());
        }
        let (nonce, cipher) = sealed.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| unreadable())?;
        let mut data = cipher.to_vec();
        let plain = self
            .aead()?
            .open_in_place(nonce, Aad::from(aad(server, resource)), &mut data)
            .map_err(|_| unreadable())?;
        String::from_utf8(plain.to_vec()).map_err(|_| unreadable())
    }
}

fn aad(server: &str, resource: &str) -> Vec<u8> {
    format!("toolgate-mcp-credentials\n{server}\n{resource}").into_bytes()
}

/// Credentials in one PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgCredentials {
    pool: PgPool,
    key: Option<CredentialKey>,
}

impl PgCredentials {
    /// Over `pool`; without a key, listing works but storing or reading a secret is refused
    /// with what to set.
    pub fn new(pool: PgPool, key: Option<CredentialKey>) -> Self {
        PgCredentials { pool, key }
    }

    fn key(&self) -> StoreResult<&CredentialKey> {
        self.key.as_ref().ok_or_else(|| {
            StoreError::Config(format!(
                "MCP credentials in PostgreSQL are encrypted: set {KEY_VAR} (32 random bytes as \
                 64 hex digits, the same on every replica)"
            ))
        })
    }
}

#[async_trait]
impl CredentialBackend for PgCredentials {
    async fn load(&self, server: &str, resource: &str) -> StoreResult<Option<CredentialRecord>> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt(
                "SELECT issuer, client_id, secret, updated_at_ms FROM mcp_credentials \
                 WHERE server = $1 AND resource = $2",
                &[&server, &resource],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else {
            return Ok(None);
        };
        let sealed: Vec<u8> = row.get(2);
        let secret = self.key()?.open(server, resource, &sealed)?;
        Ok(Some(CredentialRecord {
            server: server.to_owned(),
            resource: resource.to_owned(),
            issuer: row.get(0),
            client_id: row.get(1),
            secret: CredentialSecret::new(secret),
            updated_at_ms: from_ms(row.get(3)),
        }))
    }

    async fn save(&self, row: CredentialRecord) -> StoreResult<()> {
        let sealed = self
            .key()?
            .seal(&row.server, &row.resource, row.secret.expose())?;
        let client = self.pool.get().await?;
        client
            .execute(
                "INSERT INTO mcp_credentials (server, resource, issuer, client_id, secret, updated_at_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (server, resource) DO UPDATE SET issuer = EXCLUDED.issuer, \
                 client_id = EXCLUDED.client_id, secret = EXCLUDED.secret, \
                 updated_at_ms = EXCLUDED.updated_at_ms",
                &[
                    &row.server,
                    &row.resource,
                    &row.issuer,
                    &row.client_id,
                    &sealed,
                    &ms(row.updated_at_ms),
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(())
    }

    async fn delete(&self, server: &str, resource: Option<&str>) -> StoreResult<usize> {
        let client = self.pool.get().await?;
        let n = match resource {
            Some(r) => {
                client
                    .execute(
                        "DELETE FROM mcp_credentials WHERE server = $1 AND resource = $2",
                        &[&server, &r],
                    )
                    .await
            }
            None => {
                client
                    .execute("DELETE FROM mcp_credentials WHERE server = $1", &[&server])
                    .await
            }
        }
        .map_err(pg_error)?;
        Ok(usize::try_from(n).unwrap_or(usize::MAX))
    }

    /// Every row; the secrets are decrypted only when a key is set (without one the listing
    /// still names what is stored, with empty secrets).
    async fn list(&self) -> StoreResult<Vec<CredentialRecord>> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                "SELECT server, resource, issuer, client_id, secret, updated_at_ms \
                 FROM mcp_credentials ORDER BY server, resource",
                &[],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|r| {
                let (server, resource): (String, String) = (r.get(0), r.get(1));
                let sealed: Vec<u8> = r.get(4);
                let secret = match &self.key {
                    Some(key) => key.open(&server, &resource, &sealed)?,
                    None => String::new(),
                };
                Ok(CredentialRecord {
                    issuer: r.get(2),
                    client_id: r.get(3),
                    secret: CredentialSecret::new(secret),
                    updated_at_ms: from_ms(r.get(5)),
                    server,
                    resource,
                })
            })
            .collect()
    }
}
