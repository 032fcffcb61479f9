//! Pinned tool definitions (R-REG-5), the durable [`PinBook`]s: [`PinStore`] in the embedded
//! database, [`PgPins`] in PostgreSQL, where a quarantine decided on one replica — and the
//! operator's approval of the change — holds on every replica.
//!
//! Each change is one transaction (read, decide with the shared pure functions in
//! [`toolgate_registry::pins::transition`], write), so two processes or replicas observing or
//! approving at once cannot lose an update. Definitions are stored whole (they are what the
//! operator diffs); they are public metadata, so redaction does not apply, and no call
//! arguments are ever stored here.
//!
//! [`PinBook`]: toolgate_registry::PinBook

mod postgres;
mod sqlite;

use serde_json::Value;
use toolgate_registry::{PinError, PinRecord, SeenDefinition};

pub use postgres::PgPins;
pub use sqlite::PinStore;

use crate::{StoreError, StoreResult};

/// The columns every backend reads, in [`RawPin`]'s order.
pub(crate) const COLUMNS: &str = "name, pinned_hash, pinned_definition, pinned_at_ms, pinned_by, \
     seen_hash, seen_definition, seen_at_ms";

pub(crate) fn storage(e: impl Into<StoreError>) -> PinError {
    PinError::Storage(e.into().to_string())
}

pub(crate) fn encode(v: &Value) -> StoreResult<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Encode(format!("a tool definition: {e}")))
}

/// One `tool_pins` row as stored.
pub(crate) struct RawPin {
    pub(crate) name: String,
    pub(crate) pinned_hash: String,
    pub(crate) pinned_definition: String,
    pub(crate) pinned_at_ms: u64,
    pub(crate) pinned_by: String,
    pub(crate) seen_hash: Option<String>,
    pub(crate) seen_definition: Option<String>,
    pub(crate) seen_at_ms: Option<u64>,
}

impl RawPin {
    /// Checks the row: unreadable JSON or a half-written pending change is corruption.
    pub(crate) fn into_record(self) -> StoreResult<PinRecord> {
        let corrupt = |what: &str| {
            StoreError::Corrupt(format!(
                "the pin of tool `{}` in the database is unreadable: {what}",
                self.name
            ))
        };
        let parse =
            |text: &str| serde_json::from_str::<Value>(text).map_err(|e| corrupt(&e.to_string()));
        let pinned_definition = parse(self.pinned_definition.as_str())?;
        let seen = match (&self.seen_hash, &self.seen_definition, self.seen_at_ms) {
            (None, None, None) => None,
            (Some(hash), Some(definition), Some(seen_at_ms)) => Some(SeenDefinition {
                hash: hash.clone(),
                definition: parse(definition.as_str())?,
                seen_at_ms,
            }),
            _ => return Err(corrupt("the pending change is incomplete")),
        };
        Ok(PinRecord {
            name: self.name,
            pinned_hash: self.pinned_hash,
            pinned_definition,
            pinned_at_ms: self.pinned_at_ms,
            pinned_by: self.pinned_by,
            seen,
        })
    }
}
