//! Idempotency keys of write calls (R-EXE-3): the outcome of a call is recorded under
//! (principal, tool, key), so a retried call with the same key gets the recorded outcome
//! instead of acting twice — also when the retry arrives while the first is still running,
//! on this replica or another.
//!
//! # The reservation
//! A call [`IdempotencyStore::claim`]s its key before it runs:
//! - an outcome is recorded → [`Claim::Done`]: replay it, do not act;
//! - nobody holds the key → [`Claim::Reserved`]: act, then [`IdempotencyStore::complete`]
//!   with the outcome (or [`IdempotencyStore::release`] when it did not act, e.g. it waits
//!   for an approval), which wakes every waiter;
//! - another call holds it with the same arguments → wait (the change feed, or a re-read
//!   every [`RECHECK`]) and look again; with other arguments → [`Claim::OtherArguments`].
//!
//! A reservation is a lease ([`LEASE`]) its holder renews while it runs
//! ([`IdempotencyStore::renew`]); a holder that died (SIGKILL, lost host) stops renewing and
//! the next claimant takes the key over once the lease lapses.
//!
//! # Invariants
//! - Keys are scoped by principal and tool: one principal cannot read or shadow another's.
//! - First writer wins: once an outcome exists, later writes leave it unchanged.
//! - An outcome is committed before the reservation is let go, and a claimant that obtains
//!   a reservation looks for an outcome once more, so a call that finished in between is
//!   replayed, never repeated.

mod postgres;
mod sqlite;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use postgres::PgIdempotency;
pub use sqlite::SqliteIdempotency;

use crate::StoreResult;
use crate::changes::{Change, ChangeFeed};
use crate::clock::{Clock, system_clock};

/// How long a reservation holds without renewal, unless the store is given another lease.
pub const LEASE: Duration = Duration::from_secs(30);
/// How often a waiting claimant looks again without a change announced (another process on
/// the embedded store, a lapsed lease).
pub const RECHECK: Duration = Duration::from_millis(500);

/// The recorded outcome of the first call made with a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdempotentEntry {
    /// `canonical_hash` of the arguments of the call that recorded the outcome.
    pub args_hash: String,
    pub outcome: Value,
    pub created_at_ms: u64,
}

/// Which key a call holds, and as whom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRef {
    pub principal: toolgate_protocol::Principal,
    pub tool: String,
    pub key: String,
}

impl KeyRef {
    pub fn new(principal: &str, tool: &str, key: &str) -> Self {
        KeyRef {
            principal: principal.into(),
            tool: tool.to_owned(),
            key: key.to_owned(),
        }
    }

    /// The key's name on the change feed ([`key_digest`]).
    pub fn digest(&self) -> String {
        key_digest(&self.principal, &self.tool, &self.key)
    }
}

/// A held key: the call that claimed it must complete or release it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reservation {
    pub key: KeyRef,
    pub args_hash: String,
    /// Random; only its holder can complete, release or renew it.
    pub owner: String,
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    Reserved(Reservation),
    Done(IdempotentEntry),
    /// The key is recorded or held for other arguments (their hash).
    OtherArguments(String),
}

/// One attempt of a backend to take a key.
#[derive(Debug, Clone, PartialEq)]
pub enum TryClaim {
    Reserved,
    Done(IdempotentEntry),
    /// Held by a live reservation for arguments with this hash.
    Held(String),
}

/// What a database must do for idempotency keys; each method is one atomic step.
#[async_trait]
pub trait IdempotencyBackend: Send + Sync + 'static {
    async fn get(&self, key: &KeyRef) -> StoreResult<Option<IdempotentEntry>>;
    /// Records `outcome` unless one exists; returns the stored entry.
    async fn put(
        &self,
        key: &KeyRef,
        args_hash: &str,
        outcome: &str,
        now_ms: u64,
    ) -> StoreResult<IdempotentEntry>;
    /// Takes the key for `owner` when no outcome exists and no live lease holds it.
    async fn try_claim(
        &self,
        key: &KeyRef,
        args_hash: &str,
        owner: &str,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> StoreResult<TryClaim>;
    /// Records `outcome` (first writer wins) and lets `owner`'s reservation go, in one step.
    async fn complete(
        &self,
        reservation: &Reservation,
        outcome: &str,
        now_ms: u64,
    ) -> StoreResult<IdempotentEntry>;
    async fn release(&self, reservation: &Reservation) -> StoreResult<()>;
    /// Extends `owner`'s lease; `false` when it no longer holds the key.
    async fn renew(&self, reservation: &Reservation, lease_until_ms: u64) -> StoreResult<bool>;
}

/// `md5(principal ␟ tool ␟ key)` in hex: how the change feed names a key (the PostgreSQL
/// trigger computes the same).
pub fn key_digest(principal: &str, tool: &str, key: &str) -> String {
    let mut md5 = Md5::new();
    md5.update(principal.as_bytes());
    md5.update([0x1f]);
    md5.update(tool.as_bytes());
    md5.update([0x1f]);
    md5.update(key.as_bytes());
    hex::encode(md5.finalize())
}

/// Outcomes of write calls by idempotency key, over either backend.
#[derive(Clone)]
pub struct IdempotencyStore {
    backend: Arc<dyn IdempotencyBackend>,
    clock: Clock,
    feed: ChangeFeed,
    announced_by_backend: bool,
    lease: Duration,
}

impl std::fmt::Debug for IdempotencyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdempotencyStore").finish_non_exhaustive()
    }
}

impl IdempotencyStore {
    /// The embedded store: the SQLite database at `db`, tables created if missing.
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(IdempotencyStore::with_backend(
            Arc::new(SqliteIdempotency::open(db)?),
            ChangeFeed::new(),
            false,
        ))
    }

    /// A store over `backend`; see `ApprovalStore::with_backend`.
    pub fn with_backend(
        backend: Arc<dyn IdempotencyBackend>,
        feed: ChangeFeed,
        announced_by_backend: bool,
    ) -> Self {
        IdempotencyStore {
            backend,
            clock: system_clock(),
            feed,
            announced_by_backend,
            lease: LEASE,
        }
    }

    /// Replaces the reservation lease (`[limits] reservation_lease_secs`); at least 1 s.
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_secs(1));
        self
    }

    /// How often a holder renews its reservation: a third of the lease.
    pub fn renew_every(&self) -> Duration {
        self.lease / 3
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    fn lease_until(&self) -> u64 {
        self.now_ms()
            .saturating_add(u64::try_from(self.lease.as_millis()).unwrap_or(u64::MAX))
    }

    fn let_go(&self, key: &KeyRef) {
        if !self.announced_by_backend {
            self.feed.announce(Change::Idempotency(key.digest()));
        }
    }

    /// The entry recorded for (principal, tool, key), if any.
    pub async fn get(
        &self,
        principal: &str,
        tool: &str,
        key: &str,
    ) -> StoreResult<Option<IdempotentEntry>> {
        self.backend.get(&KeyRef::new(principal, tool, key)).await
    }

    /// Records `outcome` for (principal, tool, key) unless an entry exists; returns the entry
    /// that is stored afterwards (the first writer's).
    pub async fn put(
        &self,
        principal: &str,
        tool: &str,
        key: &str,
        args_hash: &str,
        outcome: &Value,
    ) -> StoreResult<IdempotentEntry> {
        let outcome = encode(outcome)?;
        let key = KeyRef::new(principal, tool, key);
        self.backend
            .put(&key, args_hash, &outcome, self.now_ms())
            .await
    }

    /// Claims `key` for a call with arguments hashed `args_hash`, waiting while another call
    /// with the same arguments holds it (see the module doc). Dropping the future gives up
    /// the wait; nothing is held until it returns [`Claim::Reserved`].
    pub async fn claim(&self, key: KeyRef, args_hash: &str) -> StoreResult<Claim> {
        let owner = uuid::Uuid::new_v4().simple().to_string();
        let digest = key.digest();
        let mut changes = self.feed.subscribe();
        loop {
            let attempt = self
                .backend
                .try_claim(&key, args_hash, &owner, self.now_ms(), self.lease_until())
                .await?;
            match attempt {
                TryClaim::Reserved => {
                    return Ok(Claim::Reserved(Reservation {
                        key,
                        args_hash: args_hash.to_owned(),
                        owner,
                    }));
                }
                TryClaim::Done(entry) if entry.args_hash == args_hash => {
                    return Ok(Claim::Done(entry));
                }
                TryClaim::Done(entry) => return Ok(Claim::OtherArguments(entry.args_hash)),
                TryClaim::Held(held) if held != args_hash => {
                    return Ok(Claim::OtherArguments(held));
                }
                TryClaim::Held(_) => {}
            }
            let recheck = tokio::time::sleep(RECHECK);
            tokio::pin!(recheck);
            loop {
                tokio::select! {
                    () = &mut recheck => break,
                    change = changes.recv() => match change {
                        Some(Change::Idempotency(d)) if d == digest => break,
                        Some(Change::Resync) => break,
                        Some(_) => {}
                        None => {
                            (&mut recheck).await;
                            break;
                        }
                    },
                }
            }
        }
    }

    /// Records the outcome of the call holding `reservation` (first writer wins) and lets the
    /// key go; returns the stored entry, which waiters replay.
    pub async fn complete(
        &self,
        reservation: &Reservation,
        outcome: &Value,
    ) -> StoreResult<IdempotentEntry> {
        let outcome = encode(outcome)?;
        let entry = self
            .backend
            .complete(reservation, &outcome, self.now_ms())
            .await?;
        self.let_go(&reservation.key);
        Ok(entry)
    }

    /// Lets the key go without an outcome (the call did not act); the next claimant acts.
    pub async fn release(&self, reservation: &Reservation) -> StoreResult<()> {
        self.backend.release(reservation).await?;
        self.let_go(&reservation.key);
        Ok(())
    }

    /// Extends the lease of a call still running; `false` when the key was taken over.
    pub async fn renew(&self, reservation: &Reservation) -> StoreResult<bool> {
        self.backend.renew(reservation, self.lease_until()).await
    }
}

fn encode(outcome: &Value) -> StoreResult<String> {
    serde_json::to_string(outcome)
        .map_err(|e| crate::StoreError::Corrupt(format!("idempotent outcome is not JSON: {e}")))
}

/// Reads a stored outcome.
pub(crate) fn decode(
    key: &KeyRef,
    args_hash: String,
    outcome: &str,
    created_at_ms: u64,
) -> StoreResult<IdempotentEntry> {
    let outcome = serde_json::from_str(outcome).map_err(|e| {
        crate::StoreError::Corrupt(format!(
            "idempotency key {} of {}/{} has an unreadable outcome: {e}",
            key.key, key.principal, key.tool
        ))
    })?;
    Ok(IdempotentEntry {
        args_hash,
        outcome,
        created_at_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_separate_the_parts() {
        assert_ne!(key_digest("a", "bc", "d"), key_digest("ab", "c", "d"));
        // md5("p\x1ft\x1fk"), as PostgreSQL's md5() computes it.
        assert_eq!(key_digest("p", "t", "k").len(), 32);
    }
}
