//! [`TokenStore`]: the bearer tokens toolgate issues itself (R-SRV-5), kept in the store so
//! that `toolgate token create|revoke|rotate` — or the console — take effect on a running
//! server (every replica of a cluster) without a restart. The embedded database holds them
//! in `api_tokens`; PostgreSQL in the table of the same name (schema 8).
//!
//! A token is shown once, when made ([`TokenSecret`]); the store keeps only its SHA-256.
//! Each row records who it stands for (principal, role, operator), when it was made and by
//! whom, when it expires, when it was revoked, when it was last used, and — for a rotation —
//! which token it replaced.

mod postgres;
mod sqlite;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use sha2::{Digest, Sha256};
use toolgate_protocol::{Principal, Role};

pub use postgres::PgTokens;
pub use sqlite::SqliteTokens;

use crate::clock::{Clock, system_clock};
use crate::{StoreError, StoreResult};

/// Prefix that makes a toolgate token recognisable (and maskable) in logs.
pub const TOKEN_PREFIX: &str = "tg_";

/// A token as the caller sends it. Shown as `[redacted]`; read it with
/// [`TokenSecret::expose`], once, to hand it over.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenSecret(String);

impl TokenSecret {
    /// `tg_` + 64 hex characters: 32 bytes from the operating system's random source.
    pub fn mint() -> StoreResult<Self> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| {
            StoreError::io(
                "reading the system's random source",
                std::io::Error::other(e.to_string()),
            )
        })?;
        Ok(TokenSecret(format!("{TOKEN_PREFIX}{}", hex::encode(bytes))))
    }

    /// The token itself; never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The form it is stored in.
    pub fn sha256(&self) -> String {
        hash_token(&self.0)
    }
}

impl std::fmt::Debug for TokenSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// What only the principals of OAuth access tokens contain: they are spelled
/// `<issuer URL>#<claim>` (`https://auth.example.com#alice`), and issuer URLs hold `://`.
pub const QUALIFIED_MARK: &str = "://";

/// Whether `principal` may name a token toolgate issues or is configured with (and the
/// `[server.anonymous]` grant): anything not empty that is not spelled like an OAuth
/// principal, so `alice` of a token and `alice` of an authorization server never meet.
pub fn check_own_principal(principal: &str) -> Result<(), OwnPrincipalError> {
    if principal.trim().is_empty() {
        return Err(OwnPrincipalError::Empty);
    }
    if principal.contains(QUALIFIED_MARK) {
        return Err(OwnPrincipalError::Qualified(principal.to_owned()));
    }
    Ok(())
}

/// Why a name cannot be the principal of an own token ([`check_own_principal`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OwnPrincipalError {
    #[error("a token's principal must not be empty")]
    Empty,
    #[error(
        "a token's principal must not contain `{QUALIFIED_MARK}` (`{0}`): that spelling is \
         kept for the principals of OAuth access tokens, `<issuer>#<claim>`"
    )]
    Qualified(String),
}

/// SHA-256 hex of a token, the form it is stored and configured in.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// One issued token (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenRecord {
    /// `tok_` + 12 hex characters; what `list`, `revoke` and `rotate` name it by.
    pub id: String,
    /// SHA-256 hex of the token.
    pub sha256: String,
    pub principal: Principal,
    pub role: Role,
    /// May decide approvals and read the audit.
    pub operator: bool,
    /// What it is for, as its maker wrote it.
    pub note: Option<String>,
    pub created_at_ms: u64,
    pub created_by: String,
    pub expires_at_ms: Option<u64>,
    pub revoked_at_ms: Option<u64>,
    pub last_used_at_ms: Option<u64>,
    /// The id of the token this one replaced (`rotate`).
    pub replaces: Option<String>,
}

/// Why a token does not admit its bearer now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenState {
    Active,
    Revoked,
    Expired,
}

impl TokenRecord {
    /// Whether the token admits its bearer at `now_ms`.
    pub fn state(&self, now_ms: u64) -> TokenState {
        if self.revoked_at_ms.is_some_and(|at| at <= now_ms) {
            TokenState::Revoked
        } else if self.expires_at_ms.is_some_and(|at| at <= now_ms) {
            TokenState::Expired
        } else {
            TokenState::Active
        }
    }
}

/// What a new token stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewToken {
    pub principal: Principal,
    pub role: Role,
    pub operator: bool,
    pub note: Option<String>,
    /// Milliseconds from now until it expires; `None`: never.
    pub expires_in_ms: Option<u64>,
    /// Who made it (an operator's principal, or the local user for the CLI).
    pub created_by: String,
}

/// What a database must do for tokens.
#[async_trait]
pub trait TokenBackend: Send + Sync + 'static {
    async fn insert(&self, record: TokenRecord) -> StoreResult<()>;
    /// Every token, newest first.
    async fn list(&self) -> StoreResult<Vec<TokenRecord>>;
    /// Revokes `id` at `at_ms` unless it already is; whether it changed.
    async fn revoke(&self, id: &str, at_ms: u64) -> StoreResult<bool>;
    /// Inserts `new` and ends `old_id` at `old_ends_at_ms` (as an expiry), in one
    /// transaction; `false` (and nothing written) when `old_id` is unknown or revoked.
    async fn rotate(
        &self,
        old_id: &str,
        new: TokenRecord,
        old_ends_at_ms: u64,
    ) -> StoreResult<bool>;
    /// Records the last use of each token (only moving it forward).
    async fn touch(&self, used: Vec<(String, u64)>) -> StoreResult<()>;
}

/// The issued tokens, over either backend.
#[derive(Clone)]
pub struct TokenStore {
    backend: Arc<dyn TokenBackend>,
    clock: Clock,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore").finish_non_exhaustive()
    }
}

fn new_id() -> StoreResult<String> {
    let mut bytes = [0u8; 6];
    getrandom::fill(&mut bytes).map_err(|e| {
        StoreError::io(
            "reading the system's random source",
            std::io::Error::other(e.to_string()),
        )
    })?;
    Ok(format!("tok_{}", hex::encode(bytes)))
}

impl TokenStore {
    /// The embedded store: `api_tokens` in the database at `db` (created if needed).
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(TokenStore::with_backend(Arc::new(SqliteTokens::open(db)?)))
    }

    pub fn with_backend(backend: Arc<dyn TokenBackend>) -> Self {
        TokenStore {
            backend,
            clock: system_clock(),
        }
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The time the store goes by.
    pub fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    fn record(&self, new: NewToken, secret: &TokenSecret) -> StoreResult<TokenRecord> {
        let now = self.now_ms();
        Ok(TokenRecord {
            id: new_id()?,
            sha256: secret.sha256(),
            principal: new.principal,
            role: new.role,
            operator: new.operator,
            note: new.note,
            created_at_ms: now,
            created_by: new.created_by,
            expires_at_ms: new.expires_in_ms.map(|d| now.saturating_add(d)),
            revoked_at_ms: None,
            last_used_at_ms: None,
            replaces: None,
        })
    }

    /// Issues a token: the record as stored, and the token, to be shown once. Its principal
    /// must be an own name ([`check_own_principal`]).
    pub async fn create(&self, new: NewToken) -> StoreResult<(TokenRecord, TokenSecret)> {
        check_own_principal(&new.principal)
            .map_err(|e| crate::StoreError::Config(e.to_string()))?;
        let secret = TokenSecret::mint()?;
        let record = self.record(new, &secret)?;
        self.backend.insert(record.clone()).await?;
        Ok((record, secret))
    }

    /// Every token, newest first.
    pub async fn list(&self) -> StoreResult<Vec<TokenRecord>> {
        self.backend.list().await
    }

    /// The token `id`, if there is one.
    pub async fn get(&self, id: &str) -> StoreResult<Option<TokenRecord>> {
        Ok(self.list().await?.into_iter().find(|t| t.id == id))
    }

    /// Revokes `id` now; whether it changed (false: unknown or already revoked).
    pub async fn revoke(&self, id: &str) -> StoreResult<bool> {
        self.backend.revoke(id, self.now_ms()).await
    }

    /// A new token for what `id` stands for; `id` keeps working for `grace_ms` more (0: it
    /// stops now). `None` when `id` is unknown or revoked.
    pub async fn rotate(
        &self,
        id: &str,
        grace_ms: u64,
        by: &str,
    ) -> StoreResult<Option<(TokenRecord, TokenSecret)>> {
        let Some(old) = self.get(id).await? else {
            return Ok(None);
        };
        let now = self.now_ms();
        let secret = TokenSecret::mint()?;
        let mut record = self.record(
            NewToken {
                principal: old.principal.clone(),
                role: old.role.clone(),
                operator: old.operator,
                note: old.note.clone(),
                expires_in_ms: old.expires_at_ms.map(|at| at.saturating_sub(now)),
                created_by: by.to_owned(),
            },
            &secret,
        )?;
        record.replaces = Some(old.id.clone());
        let ends = old
            .expires_at_ms
            .map_or(now.saturating_add(grace_ms), |at| {
                at.min(now.saturating_add(grace_ms))
            });
        if !self.backend.rotate(id, record.clone(), ends).await? {
            return Ok(None);
        }
        Ok(Some((record, secret)))
    }

    /// Records when tokens were last used.
    pub async fn touch(&self, used: Vec<(String, u64)>) -> StoreResult<()> {
        if used.is_empty() {
            return Ok(());
        }
        self.backend.touch(used).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An own principal never takes an OAuth principal's spelling (`<issuer>#<claim>`).
    #[test]
    fn own_principals_cannot_be_spelled_like_oauth_ones() {
        for ok in [
            "alice",
            "cli:me",
            "telegram:42",
            "a#b",
            "ci-bot@example.com",
        ] {
            assert_eq!(check_own_principal(ok), Ok(()), "{ok}");
        }
        for bad in ["https://idp.example.com#alice", "http://x", " ", ""] {
            assert!(check_own_principal(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_are_fresh_and_well_formed() {
        let a = TokenSecret::mint().unwrap();
        let b = TokenSecret::mint().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.expose().len(), TOKEN_PREFIX.len() + 64);
        assert_eq!(format!("{a:?}"), "[redacted]");
        assert_eq!(
            hash_token("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn state_follows_revocation_then_expiry() {
        let mut t = TokenRecord {
            id: "tok_1".into(),
            sha256: String::new(),
            principal: "p".into(),
            role: "r".into(),
            operator: false,
            note: None,
            created_at_ms: 0,
            created_by: "x".into(),
            expires_at_ms: Some(100),
            revoked_at_ms: None,
            last_used_at_ms: None,
            replaces: None,
        };
        assert_eq!(t.state(99), TokenState::Active);
        assert_eq!(t.state(100), TokenState::Expired);
        t.revoked_at_ms = Some(50);
        assert_eq!(t.state(60), TokenState::Revoked);
    }
}
