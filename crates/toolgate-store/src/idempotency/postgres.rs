//! The cluster backend: `idempotency_keys` and `idempotency_reservations` in PostgreSQL
//! (schema 1). Taking a key is one `INSERT … ON CONFLICT DO UPDATE … WHERE` the lease lapsed,
//! so of two replicas exactly one gets the row; letting it go deletes the row, whose trigger
//! notifies `toolgate_idempotency` with the key's digest.

use async_trait::async_trait;

use super::{IdempotencyBackend, IdempotentEntry, KeyRef, Reservation, TryClaim, decode};
use crate::pg::{PgPool, from_ms, ms, pg_error};
use crate::{StoreError, StoreResult};

/// The idempotency tables of one PostgreSQL database.
#[derive(Debug, Clone)]
pub struct PgIdempotency {
    pool: PgPool,
}

impl PgIdempotency {
    pub fn new(pool: PgPool) -> Self {
        PgIdempotency { pool }
    }
}

async fn load(
    client: &impl deadpool_postgres::GenericClient,
    key: &KeyRef,
) -> StoreResult<Option<IdempotentEntry>> {
    let row = client
        .query_opt(
            "SELECT args_hash, outcome, created_at_ms FROM idempotency_keys \
             WHERE principal = $1 AND tool = $2 AND key = $3",
            &[&key.principal.as_str(), &key.tool, &key.key],
        )
        .await
        .map_err(pg_error)?;
    row.map(|r| decode(key, r.get(0), r.get::<_, &str>(1), from_ms(r.get(2))))
        .transpose()
}

async fn insert_outcome(
    client: &impl deadpool_postgres::GenericClient,
    key: &KeyRef,
    args_hash: &str,
    outcome: &str,
    now_ms: u64,
) -> StoreResult<IdempotentEntry> {
    client
        .execute(
            "INSERT INTO idempotency_keys (principal, tool, key, args_hash, outcome, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
            &[&key.principal.as_str(), &key.tool, &key.key, &args_hash, &outcome, &ms(now_ms)],
        )
        .await
        .map_err(pg_error)?;
    load(client, key).await?.ok_or_else(|| {
        StoreError::Corrupt(format!(
            "idempotency key {} of {}/{} vanished right after insert",
            key.key, key.principal, key.tool
        ))
    })
}

async fn delete_reservation(
    client: &impl deadpool_postgres::GenericClient,
    r: &Reservation,
) -> StoreResult<()> {
    client
        .execute(
            "DELETE FROM idempotency_reservations \
             WHERE principal = $1 AND tool = $2 AND key = $3 AND owner = $4",
            &[&r.key.principal.as_str(), &r.key.tool, &r.key.key, &r.owner],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

#[async_trait]
impl IdempotencyBackend for PgIdempotency {
    async fn get(&self, key: &KeyRef) -> StoreResult<Option<IdempotentEntry>> {
        let client = self.pool.get().await?;
        load(&client, key).await
    }

    async fn put(
        &self,
        key: &KeyRef,
        args_hash: &str,
        outcome: &str,
        now_ms: u64,
    ) -> StoreResult<IdempotentEntry> {
        let client = self.pool.get().await?;
        insert_outcome(&client, key, args_hash, outcome, now_ms).await
    }

    async fn try_claim(
        &self,
        key: &KeyRef,
        args_hash: &str,
        owner: &str,
        now_ms: u64,
        lease_until_ms: u64,
    ) -> StoreResult<TryClaim> {
        let client = self.pool.get().await?;
        if let Some(entry) = load(&client, key).await? {
            return Ok(TryClaim::Done(entry));
        }
        let taken = client
            .query_opt(
                "INSERT INTO idempotency_reservations \
                 (principal, tool, key, args_hash, owner, lease_until_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (principal, tool, key) DO UPDATE \
                   SET args_hash = EXCLUDED.args_hash, owner = EXCLUDED.owner, \
                       lease_until_ms = EXCLUDED.lease_until_ms \
                   WHERE idempotency_reservations.lease_until_ms <= $7 \
                      OR idempotency_reservations.owner = EXCLUDED.owner \
                 RETURNING owner",
                &[
                    &key.principal.as_str(),
                    &key.tool,
                    &key.key,
                    &args_hash,
                    &owner,
                    &ms(lease_until_ms),
                    &ms(now_ms),
                ],
            )
            .await
            .map_err(pg_error)?;
        if taken.is_some() {
            // A holder may have completed between the look above and the insert: its outcome
            // is committed before its reservation went, so look once more.
            if let Some(entry) = load(&client, key).await? {
                let r = Reservation {
                    key: key.clone(),
                    args_hash: args_hash.to_owned(),
                    owner: owner.to_owned(),
                };
                delete_reservation(&client, &r).await?;
                return Ok(TryClaim::Done(entry));
            }
            return Ok(TryClaim::Reserved);
        }
        let held = client
            .query_opt(
                "SELECT args_hash FROM idempotency_reservations \
                 WHERE principal = $1 AND tool = $2 AND key = $3",
                &[&key.principal.as_str(), &key.tool, &key.key],
            )
            .await
            .map_err(pg_error)?;
        // Gone meanwhile: report it held by these arguments, and the claimant looks again.
        Ok(TryClaim::Held(
            held.map_or_else(|| args_hash.to_owned(), |r| r.get(0)),
        ))
    }

    async fn complete(
        &self,
        reservation: &Reservation,
        outcome: &str,
        now_ms: u64,
    ) -> StoreResult<IdempotentEntry> {
        let mut client = self.pool.get().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let entry = insert_outcome(
            &tx,
            &reservation.key,
            &reservation.args_hash,
            outcome,
            now_ms,
        )
        .await?;
        delete_reservation(&tx, reservation).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok(entry)
    }

    async fn release(&self, reservation: &Reservation) -> StoreResult<()> {
        let client = self.pool.get().await?;
        delete_reservation(&client, reservation).await
    }

    async fn renew(&self, reservation: &Reservation, lease_until_ms: u64) -> StoreResult<bool> {
        let client = self.pool.get().await?;
        let r = reservation;
        let changed = client
            .execute(
                "UPDATE idempotency_reservations SET lease_until_ms = $5 \
                 WHERE principal = $1 AND tool = $2 AND key = $3 AND owner = $4",
                &[
                    &r.key.principal.as_str(),
                    &r.key.tool,
                    &r.key.key,
                    &r.owner,
                    &ms(lease_until_ms),
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(changed == 1)
    }
}
