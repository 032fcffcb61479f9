//! [`MemoryPinBook`]: pins in a map, for tests and for embedders that need no persistence.
//! Pins die with the process, so a quarantine does not survive a restart: production uses
//! the SQLite pin store.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use toolgate_protocol::ToolSpec;

use super::transition::{approve, observe};
use super::{PinBook, PinClock, PinError, PinRecord, PinVerdict, system_pin_clock};

pub struct MemoryPinBook {
    records: Mutex<BTreeMap<String, PinRecord>>,
    clock: PinClock,
}

impl Default for MemoryPinBook {
    fn default() -> Self {
        MemoryPinBook {
            records: Mutex::default(),
            clock: system_pin_clock(),
        }
    }
}

impl std::fmt::Debug for MemoryPinBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryPinBook").finish_non_exhaustive()
    }
}

impl MemoryPinBook {
    pub fn new() -> Self {
        MemoryPinBook::default()
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch).
    pub fn with_clock(mut self, clock: PinClock) -> Self {
        self.clock = clock;
        self
    }

    /// A poisoned lock only means another thread panicked between two map operations; each
    /// operation leaves the map consistent.
    fn records(&self) -> MutexGuard<'_, BTreeMap<String, PinRecord>> {
        self.records.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait::async_trait]
impl PinBook for MemoryPinBook {
    async fn observe(&self, spec: &ToolSpec) -> Result<PinVerdict, PinError> {
        let now = (self.clock)();
        let mut records = self.records();
        let out = observe(records.get(&spec.name), spec, now);
        if let Some(record) = out.write {
            records.insert(spec.name.clone(), record);
        }
        Ok(out.verdict)
    }

    async fn get(&self, name: &str) -> Result<Option<PinRecord>, PinError> {
        Ok(self.records().get(name).cloned())
    }

    async fn list(&self) -> Result<Vec<PinRecord>, PinError> {
        Ok(self.records().values().cloned().collect())
    }

    async fn approve_change(
        &self,
        name: &str,
        seen_hash: &str,
        by: &str,
    ) -> Result<PinRecord, PinError> {
        let now = (self.clock)();
        let mut records = self.records();
        let record = approve(records.get(name).cloned(), name, seen_hash, by, now)?;
        records.insert(name.to_owned(), record.clone());
        Ok(record)
    }
}
