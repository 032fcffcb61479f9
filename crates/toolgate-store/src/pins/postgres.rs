//! [`PgPins`]: the pins in PostgreSQL (`tool_pins`, schema 6), shared by every replica: a
//! definition first seen on one replica is the pin on all, a changed one is quarantined on
//! all, and `toolgate tools approve-change` through any replica releases it everywhere. A
//! change is one transaction holding a transaction-scoped advisory lock on the tool's name
//! (there may be no row yet to lock on first sight), so replicas observing or approving one
//! tool at once are serialised and cannot lose an update or pin two definitions.

use async_trait::async_trait;
use tokio_postgres::Row;
use toolgate_protocol::ToolSpec;
use toolgate_registry::pins::transition::{approve, observe};
use toolgate_registry::{PinBook, PinError, PinRecord, PinVerdict};

use super::{COLUMNS, RawPin, encode, storage};
use crate::StoreResult;
use crate::clock::{Clock, system_clock};
use crate::pg::{PgPool, from_ms, ms, pg_error};

/// Pinned tool definitions in one PostgreSQL database.
#[derive(Clone)]
pub struct PgPins {
    pool: PgPool,
    clock: Clock,
}

impl std::fmt::Debug for PgPins {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgPins").finish_non_exhaustive()
    }
}

impl PgPins {
    pub fn new(pool: PgPool) -> Self {
        PgPins {
            pool,
            clock: system_clock(),
        }
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Reads, decides with `decide`, writes — in one transaction holding the name's lock.
    async fn change<T>(
        &self,
        name: &str,
        decide: impl FnOnce(Option<PinRecord>) -> Result<(T, Option<PinRecord>), PinError>,
    ) -> Result<T, PinError> {
        let mut client = self.pool.get().await.map_err(storage)?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| storage(pg_error(e)))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtext('toolgate-pin:' || $1))",
            &[&name],
        )
        .await
        .map_err(|e| storage(pg_error(e)))?;
        let current = load(&tx, name).await.map_err(storage)?;
        let (out, write) = decide(current)?;
        if let Some(record) = write {
            save(&tx, &record).await.map_err(storage)?;
        }
        tx.commit().await.map_err(|e| storage(pg_error(e)))?;
        Ok(out)
    }
}

fn raw_pin(row: &Row) -> RawPin {
    RawPin {
        name: row.get(0),
        pinned_hash: row.get(1),
        pinned_definition: row.get(2),
        pinned_at_ms: from_ms(row.get(3)),
        pinned_by: row.get(4),
        seen_hash: row.get(5),
        seen_definition: row.get(6),
        seen_at_ms: row.get::<_, Option<i64>>(7).map(from_ms),
    }
}

async fn load(
    client: &impl deadpool_postgres::GenericClient,
    name: &str,
) -> StoreResult<Option<PinRecord>> {
    let row = client
        .query_opt(
            &format!("SELECT {COLUMNS} FROM tool_pins WHERE name = $1"),
            &[&name],
        )
        .await
        .map_err(pg_error)?;
    row.map(|r| raw_pin(&r).into_record()).transpose()
}

async fn save(client: &impl deadpool_postgres::GenericClient, r: &PinRecord) -> StoreResult<()> {
    let pinned = encode(&r.pinned_definition)?;
    let seen = r.seen.as_ref().map(|s| encode(&s.definition)).transpose()?;
    client
        .execute(
            "INSERT INTO tool_pins (name, pinned_hash, pinned_definition, pinned_at_ms, pinned_by, \
               seen_hash, seen_definition, seen_at_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
             ON CONFLICT (name) DO UPDATE SET pinned_hash = EXCLUDED.pinned_hash, \
               pinned_definition = EXCLUDED.pinned_definition, pinned_at_ms = EXCLUDED.pinned_at_ms, \
               pinned_by = EXCLUDED.pinned_by, seen_hash = EXCLUDED.seen_hash, \
               seen_definition = EXCLUDED.seen_definition, seen_at_ms = EXCLUDED.seen_at_ms",
            &[
                &r.name,
                &r.pinned_hash,
                &pinned,
                &ms(r.pinned_at_ms),
                &r.pinned_by,
                &r.seen.as_ref().map(|s| s.hash.as_str()),
                &seen,
                &r.seen.as_ref().map(|s| ms(s.seen_at_ms)),
            ],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

#[async_trait]
impl PinBook for PgPins {
    async fn observe(&self, spec: &ToolSpec) -> Result<PinVerdict, PinError> {
        let now = (self.clock)();
        self.change(&spec.name, |current| {
            let out = observe(current.as_ref(), spec, now);
            Ok((out.verdict, out.write))
        })
        .await
    }

    async fn get(&self, name: &str) -> Result<Option<PinRecord>, PinError> {
        let client = self.pool.get().await.map_err(storage)?;
        load(&client, name).await.map_err(storage)
    }

    async fn list(&self) -> Result<Vec<PinRecord>, PinError> {
        let client = self.pool.get().await.map_err(storage)?;
        let rows = client
            .query(
                &format!("SELECT {COLUMNS} FROM tool_pins ORDER BY name"),
                &[],
            )
            .await
            .map_err(|e| storage(pg_error(e)))?;
        rows.iter()
            .map(|r| raw_pin(r).into_record().map_err(storage))
            .collect()
    }

    async fn approve_change(
        &self,
        name: &str,
        seen_hash: &str,
        by: &str,
    ) -> Result<PinRecord, PinError> {
        let now = (self.clock)();
        self.change(name, |current| {
            let record = approve(current, name, seen_hash, by, now)?;
            Ok((record.clone(), Some(record)))
        })
        .await
    }
}
