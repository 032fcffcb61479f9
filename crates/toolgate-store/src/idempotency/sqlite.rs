//! The embedded backend: `idempotency_keys` (unchanged on disk) and
//! `idempotency_reservations` (new, additive) in `toolgate.db`. Each step is one `IMMEDIATE`
//! transaction on the blocking pool, so processes sharing the file cannot both take a key.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{IdempotencyBackend, IdempotentEntry, KeyRef, Reservation, TryClaim, decode};
use crate::db::EmbeddedDb;
use crate::{StoreError, StoreResult};

/// The idempotency tables of one SQLite database.
pub struct SqliteIdempotency {
    conn: EmbeddedDb,
}

impl SqliteIdempotency {
    /// Opens the database at `db` on a pool of its own (creating it and every table if
    /// needed). A process with several stores opens one [`EmbeddedDb`] and uses [`Self::new`].
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(Self::new(EmbeddedDb::open(db)?))
    }

    /// The tables in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        SqliteIdempotency { conn: db }
    }
}

fn load(conn: &Connection, key: &KeyRef) -> StoreResult<Option<IdempotentEntry>> {
    let row = conn
        .query_row(
            "SELECT args_hash, outcome, created_at_ms FROM idempotency_keys \
             WHERE principal = ?1 AND tool = ?2 AND key = ?3",
            params![key.principal.as_str(), key.tool, key.key],
            |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, u64>(2)?,
                ))
            },
        )
        .optional()?;
    row.map(|(hash, outcome, at)| decode(key, hash, &outcome, at))
        .transpose()
}

fn insert_outcome(
    conn: &Connection,
    key: &KeyRef,
    args_hash: &str,
    outcome: &str,
    now_ms: u64,
) -> StoreResult<IdempotentEntry> {
    conn.execute(
        "INSERT INTO idempotency_keys (principal, tool, key, args_hash, outcome, created_at_ms) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING",
        params![
            key.principal.as_str(),
            key.tool,
            key.key,
            args_hash,
            outcome,
            now_ms
        ],
    )?;
    load(conn, key)?.ok_or_else(|| {
        StoreError::Corrupt(format!(
            "idempotency key {} of {}/{} vanished right after insert",
            key.key,
            key.principal.as_str(),
            key.tool
        ))
    })
}

#[async_trait]
impl IdempotencyBackend for SqliteIdempotency {
    async fn get(&self, key: &KeyRef) -> StoreResult<Option<IdempotentEntry>> {
        let key = key.clone();
        self.conn
            .run("idempotency", move |conn| load(conn, &key))
            .await
    }

    async fn put(
        &self,
        key: &KeyRef,
        args_hash: &str,
        outcome: &str,
        now_ms: u64,
    ) -> StoreResult<IdempotentEntry> {
        let (key, args_hash, outcome) = (key.clone(), args_hash.to_owned(), outcome.to_owned());
        self.conn
            .run("idempotency", move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let entry = insert_outcome(&tx, &key, &args_hash, &outcome, now_ms)?;
                tx.commit()?;
                Ok(entry)
            })
            .await
    }

    async fn try_claim(
        &self,
        key: &KeyRef,
        args_hash: &str,
        owner: &str,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> StoreResult<TryClaim> {
        let (key, args_hash, owner) = (key.clone(), args_hash.to_owned(), owner.to_owned());
        self.conn
            .run("idempotency", move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                if let Some(entry) = load(&tx, &key)? {
                    return Ok(TryClaim::Done(entry));
                }
                let held: Option<(String, String, u64)> = tx
                    .query_row(
                        "SELECT owner, args_hash, lease_until_ms FROM idempotency_reservations \
                     WHERE principal = ?1 AND tool = ?2 AND key = ?3",
                        params![key.principal.as_str(), key.tool, key.key],
                        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                    )
                    .optional()?;
                if let Some((holder, hash, until)) = held
                    && holder != owner
                    && until > now_ms
                {
                    return Ok(TryClaim::Held(hash));
                }
                tx.execute(
                    "INSERT OR REPLACE INTO idempotency_reservations \
                 (principal, tool, key, args_hash, owner, lease_until_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![
                        key.principal.as_str(),
                        key.tool,
                        key.key,
                        args_hash,
                        owner,
                        lease_until_ms
                    ],
                )?;
                tx.commit()?;
                Ok(TryClaim::Reserved)
            })
            .await
    }

    async fn complete(
        &self,
        reservation: &Reservation,
        outcome: &str,
        now_ms: u64,
    ) -> StoreResult<IdempotentEntry> {
        let (r, outcome) = (reservation.clone(), outcome.to_owned());
        self.conn
            .run("idempotency", move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let entry = insert_outcome(&tx, &r.key, &r.args_hash, &outcome, now_ms)?;
                delete_reservation(&tx, &r)?;
                tx.commit()?;
                Ok(entry)
            })
            .await
    }

    async fn release(&self, reservation: &Reservation) -> StoreResult<()> {
        let r = reservation.clone();
        self.conn
            .run("idempotency", move |conn| delete_reservation(conn, &r))
            .await
    }

    async fn renew(&self, reservation: &Reservation, lease_until_ms: u64) -> StoreResult<bool> {
        let r = reservation.clone();
        self.conn
            .run("idempotency", move |conn| {
                let changed = conn.execute(
                    "UPDATE idempotency_reservations SET lease_until_ms = ?5 \
                 WHERE principal = ?1 AND tool = ?2 AND key = ?3 AND owner = ?4",
                    params![
                        r.key.principal.as_str(),
                        r.key.tool,
                        r.key.key,
                        r.owner,
                        lease_until_ms
                    ],
                )?;
                Ok(changed == 1)
            })
            .await
    }
}

fn delete_reservation(conn: &Connection, r: &Reservation) -> StoreResult<()> {
    conn.execute(
        "DELETE FROM idempotency_reservations \
         WHERE principal = ?1 AND tool = ?2 AND key = ?3 AND owner = ?4",
        params![r.key.principal.as_str(), r.key.tool, r.key.key, r.owner],
    )?;
    Ok(())
}
