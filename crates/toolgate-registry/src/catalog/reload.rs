//! Reloading one source: its tools replace the ones it had, in one swap. For a pinned source
//! (R-REG-5) every tool that will enter is first observed by the pin book:
//!
//! ```text
//! validate → collision check → pin book (pinned sources only) → one compare-and-swap
//! ```
//!
//! Observing happens before the swap, once per tool, and only for tools that will enter: a
//! tool that collides with another source's name must not pin (or quarantine) that name.
//! A changed definition enters quarantined; a pin-book error quarantines too (fail closed)
//! and never aborts the reload.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use toolgate_core::DynTool;

use super::{Catalog, CatalogError, Snapshot};
use crate::{Availability, Entry, PinBook, PinVerdict, ToolSource};

/// What the pin book said about one entering tool.
enum PinState {
    /// New or unchanged: a quarantine from before is lifted.
    Trusted,
    Quarantine(String),
}

impl Catalog {
    /// Replaces every tool whose `source` is the source's name with the source's current
    /// tools (reload). Availability of tools that stay is kept, except that the pin book
    /// decides quarantine for pinned sources. Invalid or colliding tools are skipped and
    /// returned, never aborting the reload (R-REG-4).
    pub async fn reload_source(&self, source: &dyn ToolSource) -> Vec<CatalogError> {
        let tools = source.tools();
        let source_name = source.name();
        let book = self.pins.as_ref().filter(|_| source.pinned());
        let mut pins: BTreeMap<String, PinState> = BTreeMap::new();
        if let Some(book) = book {
            let snap = self.current.load_full();
            for tool in entering(&snap, source_name, &tools) {
                pins.insert(tool.spec().name.clone(), pin_state(&**book, tool).await);
            }
        }
        let mut skipped = Vec::new();
        self.update(|old| {
            skipped.clear();
            let mut next = Snapshot::clone(old);
            next.entries.retain(|_, e| e.spec().source != source_name);
            if book.is_some() {
                next.pinned_sources.insert(source_name.to_owned());
            } else {
                next.pinned_sources.remove(source_name);
            }
            for tool in &tools {
                if let Err(e) = tool.spec().validate() {
                    skipped.push(e.into());
                    continue;
                }
                let name = tool.spec().name.clone();
                if next.entries.contains_key(&name) {
                    skipped.push(CatalogError::Duplicate(name));
                    continue;
                }
                let before = old.entries.get(&name).map(|e| e.availability.clone());
                let availability = match (book, pins.get(&name)) {
                    (None, _) => before.unwrap_or(Availability::Available),
                    (Some(_), Some(PinState::Quarantine(reason))) => {
                        Availability::Quarantined(reason.clone())
                    }
                    (Some(_), Some(PinState::Trusted)) => match before {
                        None | Some(Availability::Quarantined(_)) => Availability::Available,
                        Some(kept) => kept,
                    },
                    // Collided when observed, free now (a concurrent reload): not checked.
                    (Some(_), None) => Availability::Quarantined(
                        "its definition has not been checked against its pin yet; reload \
                         the source"
                            .to_owned(),
                    ),
                };
                next.entries.insert(
                    name,
                    Entry {
                        tool: Arc::clone(tool),
                        availability,
                    },
                );
            }
            Arc::new(next)
        });
        skipped
    }

    /// Checks every quarantined tool of a pinned source against the pin book again, and
    /// makes available those whose definition now matches their pin (after
    /// `toolgate tools approve-change`, possibly run by another process). Returns the names
    /// released, sorted.
    pub async fn recheck_quarantined(&self) -> Vec<String> {
        let Some(book) = &self.pins else {
            return Vec::new();
        };
        let snap = self.current.load_full();
        let mut trusted: Vec<(String, DynTool)> = Vec::new();
        let quarantined = snap
            .entries()
            .filter(|e| matches!(e.availability, Availability::Quarantined(_)))
            .filter(|e| snap.is_pinned(e));
        for e in quarantined {
            if let PinState::Trusted = pin_state(&**book, &e.tool).await {
                trusted.push((e.spec().name.clone(), Arc::clone(&e.tool)));
            }
        }
        let mut released = Vec::new();
        self.update(|old| {
            released.clear();
            let mut next = Snapshot::clone(old);
            for (name, tool) in &trusted {
                if let Some(e) = next.entries.get_mut(name)
                    && Arc::ptr_eq(&e.tool, tool)
                    && matches!(e.availability, Availability::Quarantined(_))
                {
                    e.availability = Availability::Available;
                    released.push(name.clone());
                }
            }
            Arc::new(next)
        });
        released
    }
}

/// The tools of `source` that a reload would let in, given the current snapshot: valid, not
/// owned by another source, first of their name.
fn entering<'a>(snap: &Snapshot, source: &str, tools: &'a [DynTool]) -> Vec<&'a DynTool> {
    let mut names = BTreeSet::new();
    tools
        .iter()
        .filter(|tool| {
            let spec = tool.spec();
            spec.validate().is_ok()
                && snap
                    .get(&spec.name)
                    .is_none_or(|e| e.spec().source == source)
                && names.insert(spec.name.clone())
        })
        .collect()
}

async fn pin_state(book: &dyn PinBook, tool: &DynTool) -> PinState {
    let spec = tool.spec();
    match book.observe(spec).await {
        Ok(PinVerdict::New | PinVerdict::Unchanged) => PinState::Trusted,
        Ok(PinVerdict::Changed(change)) => {
            PinState::Quarantine(change.quarantine_reason(&spec.name))
        }
        Err(e) => PinState::Quarantine(format!(
            "its definition could not be checked against its pin ({e}); it stays refused \
             until the check succeeds on a reload"
        )),
    }
}
