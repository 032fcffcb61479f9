//! [`PinStore`]: the pins in the embedded database (`tool_pins` in `toolgate.db`), so a
//! quarantine survives restarts and can be approved from another process (`toolgate tools
//! approve-change` beside a running `toolgate serve`). Each change is one `IMMEDIATE`
//! transaction; as a [`PinBook`] every statement runs on the blocking pool.

use std::path::Path;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use toolgate_protocol::ToolSpec;
use toolgate_registry::pins::transition::{approve, observe};
use toolgate_registry::{PinBook, PinError, PinRecord, PinVerdict};

use super::{COLUMNS, RawPin, encode, storage};
use crate::StoreResult;
use crate::clock::{Clock, system_clock};
use crate::db::EmbeddedDb;

/// Pinned tool definitions in SQLite.
#[derive(Clone)]
pub struct PinStore {
    conn: EmbeddedDb,
    clock: Clock,
}

impl std::fmt::Debug for PinStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinStore").finish_non_exhaustive()
    }
}

impl PinStore {
    /// Opens the database at `db` on a pool of its own (creating it and every table if
    /// needed). A process with several stores opens one [`EmbeddedDb`] and uses [`Self::new`].
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(Self::new(EmbeddedDb::open(db)?))
    }

    /// The pins in `db`, whose schema the pool created.
    pub fn new(db: EmbeddedDb) -> Self {
        PinStore {
            conn: db,
            clock: system_clock(),
        }
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Compares `spec` with its pin; see [`PinBook::observe`].
    pub fn observe_spec(&self, spec: &ToolSpec) -> StoreResult<PinVerdict> {
        let now = (self.clock)();
        self.conn.with_conn(|conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let current = load(&tx, &spec.name)?;
            let out = observe(current.as_ref(), spec, now);
            if let Some(record) = &out.write {
                save(&tx, record)?;
            }
            tx.commit()?;
            Ok(out.verdict)
        })
    }

    /// The record for `name`, if it was ever pinned.
    pub fn record(&self, name: &str) -> StoreResult<Option<PinRecord>> {
        self.conn.with_conn(|conn| load(conn, name))
    }

    /// Every record, sorted by name.
    pub fn records(&self) -> StoreResult<Vec<PinRecord>> {
        self.conn.with_conn(|conn| {
            let mut stmt =
                conn.prepare(&format!("SELECT {COLUMNS} FROM tool_pins ORDER BY name"))?;
            let rows = stmt.query_map([], raw_pin)?;
            rows.map(|raw| raw?.into_record()).collect()
        })
    }

    /// Re-pins `name` to its pending change with hash `seen_hash`; see
    /// [`PinBook::approve_change`].
    pub fn approve(&self, name: &str, seen_hash: &str, by: &str) -> Result<PinRecord, PinError> {
        let now = (self.clock)();
        let mut approved = None;
        self.conn
            .with_conn(|conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let current = load(&tx, name)?;
                approved = Some(approve(current, name, seen_hash, by, now));
                if let Some(Ok(record)) = &approved {
                    save(&tx, record)?;
                    tx.commit()?;
                }
                Ok(())
            })
            .map_err(storage)?;
        approved.unwrap_or_else(|| Err(PinError::Storage("no pin decision was taken".into())))
    }
}

/// Runs `work` on a clone of the store, on the blocking pool.
async fn blocking<T: Send + 'static>(
    store: &PinStore,
    work: impl FnOnce(&PinStore) -> Result<T, PinError> + Send + 'static,
) -> Result<T, PinError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || work(&store))
        .await
        .map_err(|e| PinError::Storage(format!("the pin database task failed: {e}")))?
}

#[async_trait]
impl PinBook for PinStore {
    async fn observe(&self, spec: &ToolSpec) -> Result<PinVerdict, PinError> {
        let spec = spec.clone();
        blocking(self, move |s| s.observe_spec(&spec).map_err(storage)).await
    }

    async fn get(&self, name: &str) -> Result<Option<PinRecord>, PinError> {
        let name = name.to_owned();
        blocking(self, move |s| s.record(&name).map_err(storage)).await
    }

    async fn list(&self) -> Result<Vec<PinRecord>, PinError> {
        blocking(self, |s| s.records().map_err(storage)).await
    }

    async fn approve_change(
        &self,
        name: &str,
        seen_hash: &str,
        by: &str,
    ) -> Result<PinRecord, PinError> {
        let (name, seen_hash, by) = (name.to_owned(), seen_hash.to_owned(), by.to_owned());
        blocking(self, move |s| s.approve(&name, &seen_hash, &by)).await
    }
}

fn load(conn: &Connection, name: &str) -> StoreResult<Option<PinRecord>> {
    let raw = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM tool_pins WHERE name = ?1"),
            params![name],
            raw_pin,
        )
        .optional()?;
    raw.map(RawPin::into_record).transpose()
}

fn save(conn: &Connection, r: &PinRecord) -> StoreResult<()> {
    let pinned = encode(&r.pinned_definition)?;
    let seen = r.seen.as_ref().map(|s| encode(&s.definition)).transpose()?;
    conn.execute(
        "INSERT INTO tool_pins (name, pinned_hash, pinned_definition, pinned_at_ms, pinned_by, \
           seen_hash, seen_definition, seen_at_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
         ON CONFLICT (name) DO UPDATE SET pinned_hash = excluded.pinned_hash, \
           pinned_definition = excluded.pinned_definition, pinned_at_ms = excluded.pinned_at_ms, \
           pinned_by = excluded.pinned_by, seen_hash = excluded.seen_hash, \
           seen_definition = excluded.seen_definition, seen_at_ms = excluded.seen_at_ms",
        params![
            r.name,
            r.pinned_hash,
            pinned,
            r.pinned_at_ms,
            r.pinned_by,
            r.seen.as_ref().map(|s| s.hash.as_str()),
            seen,
            r.seen.as_ref().map(|s| s.seen_at_ms),
        ],
    )?;
    Ok(())
}

/// A `tool_pins` row read by SQLite.
fn raw_pin(row: &Row<'_>) -> rusqlite::Result<RawPin> {
    Ok(RawPin {
        name: row.get(0)?,
        pinned_hash: row.get(1)?,
        pinned_definition: row.get(2)?,
        pinned_at_ms: row.get(3)?,
        pinned_by: row.get(4)?,
        seen_hash: row.get(5)?,
        seen_definition: row.get(6)?,
        seen_at_ms: row.get(7)?,
    })
}
