//! The catalog: an immutable [`Snapshot`] behind [`ArcSwap`]. Every change builds a new
//! snapshot and swaps it in with a compare-and-swap, so lookups on the hot path are one
//! atomic load and never wait for a reload (R-REG-3).
//!
//! # Invariants
//! - A quarantine (R-REG-5) is lifted only by the pin book (`reload_source`,
//!   [`Catalog::recheck_quarantined`]), never by [`Catalog::set_availability`]: a server
//!   coming back up does not make a changed definition callable.
//! - Model-facing exports show available tools only.
//!
//! # Layout
//! - this file: the snapshot, registration, lookups, export.
//! - `reload`: replacing one source's tools, consulting the pin book for pinned sources.

mod reload;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use arc_swap::ArcSwap;
use toolgate_core::DynTool;
use toolgate_protocol::{ExportFormat, SpecError, ToolSpec, export};

use crate::{Availability, Entry, PinBook};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    #[error(transparent)]
    InvalidSpec(#[from] SpecError),
    #[error("a tool named `{0}` is already registered")]
    Duplicate(String),
    #[error("unknown tool(s): {}", .0.join(", "))]
    Unknown(Vec<String>),
}

/// One consistent view of the catalog.
#[derive(Debug, Default, Clone)]
pub struct Snapshot {
    entries: BTreeMap<String, Entry>,
    /// Sources whose tools were checked against the pin book when they were loaded.
    pinned_sources: BTreeSet<String>,
}

impl Snapshot {
    pub fn get(&self, name: &str) -> Option<&Entry> {
        self.entries.get(name)
    }

    /// All entries, sorted by name.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `entry`'s tools are pinned (its source was loaded with a pin book).
    pub fn is_pinned(&self, entry: &Entry) -> bool {
        self.pinned_sources.contains(&entry.spec().source)
    }
}

/// The shared, lock-free catalog.
#[derive(Default)]
pub struct Catalog {
    current: ArcSwap<Snapshot>,
    pins: Option<Arc<dyn PinBook>>,
    /// Counts the swaps: whoever tells clients of list changes waits on it instead of
    /// polling the snapshot.
    swaps: tokio::sync::watch::Sender<u64>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.current.load().len())
            .field("pinned", &self.pins.is_some())
            .finish()
    }
}

impl Catalog {
    pub fn new() -> Self {
        Catalog::default()
    }

    /// Pins the definitions of tools from pinned sources ([`crate::ToolSource::pinned`]) in
    /// `pins` (R-REG-5). Without a pin book nothing is pinned.
    pub fn with_pins(mut self, pins: Arc<dyn PinBook>) -> Self {
        self.pins = Some(pins);
        self
    }

    /// The pin book, if one is set.
    pub fn pins(&self) -> Option<&Arc<dyn PinBook>> {
        self.pins.as_ref()
    }

    /// Replaces the snapshot with what `next` makes of it (retried if another swap came
    /// first, as [`ArcSwap::rcu`]), and tells [`Catalog::swaps`] when it changed.
    fn update(&self, next: impl FnMut(&Arc<Snapshot>) -> Arc<Snapshot>) {
        let before = self.current.rcu(next);
        if !Arc::ptr_eq(&before, &self.current.load()) {
            self.swaps.send_modify(|n| *n += 1);
        }
    }

    /// A receiver that wakes after every change of the snapshot (lookups never wait on it).
    pub fn swaps(&self) -> tokio::sync::watch::Receiver<u64> {
        self.swaps.subscribe()
    }

    /// The current snapshot; hold it for a consistent view across several lookups.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    pub fn register(&self, tool: DynTool) -> Result<(), CatalogError> {
        self.register_many(vec![tool])
    }

    /// Registers all tools or none.
    pub fn register_many(&self, tools: Vec<DynTool>) -> Result<(), CatalogError> {
        for tool in &tools {
            tool.spec().validate()?;
        }
        let mut failure = None;
        self.update(|old| {
            failure = None;
            let mut next = Snapshot::clone(old);
            for tool in &tools {
                let name = tool.spec().name.clone();
                if next.entries.contains_key(&name) {
                    failure = Some(CatalogError::Duplicate(name));
                    return Arc::clone(old);
                }
                next.entries.insert(
                    name,
                    Entry {
                        tool: Arc::clone(tool),
                        availability: Availability::Available,
                    },
                );
            }
            Arc::new(next)
        });
        failure.map_or(Ok(()), Err)
    }

    /// Sets a tool's availability; false if there is no such tool. A quarantined tool stays
    /// quarantined (only its reason can be replaced): availability says whether a server is
    /// up, the quarantine whether its definition may be trusted.
    pub fn set_availability(&self, name: &str, availability: Availability) -> bool {
        let mut found = false;
        self.update(|old| {
            found = old.entries.contains_key(name);
            if !found {
                return Arc::clone(old);
            }
            let mut next = Snapshot::clone(old);
            if let Some(e) = next.entries.get_mut(name) {
                let quarantined = matches!(e.availability, Availability::Quarantined(_));
                if !quarantined || matches!(availability, Availability::Quarantined(_)) {
                    e.availability = availability.clone();
                }
            }
            Arc::new(next)
        });
        found
    }

    pub fn get(&self, name: &str) -> Option<Entry> {
        self.current.load().get(name).cloned()
    }

    pub fn has(&self, name: &str) -> bool {
        self.current.load().get(name).is_some()
    }

    /// All entries, sorted by name.
    pub fn all(&self) -> Vec<Entry> {
        self.current.load().entries().cloned().collect()
    }

    /// The entries for `names`, in order; every unknown name is reported at once.
    pub fn resolve<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<Entry>, CatalogError> {
        let snap = self.current.load();
        let mut found = Vec::with_capacity(names.len());
        let mut unknown = Vec::new();
        for n in names {
            match snap.get(n.as_ref()) {
                Some(e) => found.push(e.clone()),
                None => unknown.push(n.as_ref().to_owned()),
            }
        }
        if unknown.is_empty() {
            Ok(found)
        } else {
            Err(CatalogError::Unknown(unknown))
        }
    }

    /// Model-facing export: only available tools that `visible` admits (the caller's role).
    /// Quarantined and unavailable tools are never shown to a model.
    pub fn export(
        &self,
        format: ExportFormat,
        visible: impl Fn(&Entry) -> bool,
    ) -> serde_json::Value {
        let snap = self.current.load();
        let specs: Vec<&ToolSpec> = snap
            .entries()
            .filter(|e| e.is_available() && visible(e))
            .map(Entry::spec)
            .collect();
        export(&specs, format)
    }
}
