//! Definition pinning (R-REG-5): the first time a tool of a pinned source is seen, the hash
//! of its definition is pinned; a later definition with another hash is a possible "rug
//! pull" and the tool is quarantined until an operator approves the change.
//!
//! # Invariants
//! - A pin only moves by [`PinBook::approve_change`], and only to the exact definition the
//!   operator was shown (its hash is passed back), never by observing.
//! - Observing the pinned definition again clears a pending change (the server reverted).
//! - [`PinRecord::seen`] is `Some` exactly while the tool is quarantined for a change.
//!
//! # Layout
//! - `definition`: what a pin covers, [`definition_hash`], [`changed_parts`].
//! - [`transition`]: observing and approving as pure functions every pin book shares.
//! - `memory`: [`MemoryPinBook`], a pin book in memory (tests, embedders without a database).
//!   The durable one is `toolgate_store::pins::PinStore`.

mod definition;
mod memory;
pub mod transition;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;
use toolgate_protocol::ToolSpec;

pub use definition::{
    DefinitionPart, changed_parts, definition_hash, hash_definition, pinned_definition,
};
pub use memory::MemoryPinBook;

/// Who pinned a definition that was pinned on first sight.
pub const FIRST_SIGHT: &str = "first sight";

/// Milliseconds since the Unix epoch; injected so tests control time.
pub type PinClock = Arc<dyn Fn() -> u64 + Send + Sync>;

/// The wall clock in milliseconds since the Unix epoch.
pub fn system_pin_clock() -> PinClock {
    Arc::new(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    })
}

/// A definition seen after the pin that differs from it: what the operator reviews.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeenDefinition {
    pub hash: String,
    /// The [`pinned_definition`] form.
    pub definition: Value,
    /// When this exact definition was first seen.
    pub seen_at_ms: u64,
}

/// Everything the pin book holds for one tool (by catalog name).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PinRecord {
    pub name: String,
    pub pinned_hash: String,
    /// The [`pinned_definition`] form of the pinned definition.
    pub pinned_definition: Value,
    pub pinned_at_ms: u64,
    /// [`FIRST_SIGHT`], or the operator who approved the change that was pinned.
    pub pinned_by: String,
    /// The latest definition that differs from the pin; `Some` while quarantined.
    pub seen: Option<SeenDefinition>,
}

impl PinRecord {
    /// A record pinning `definition` (with `hash`) as first seen at `now_ms`.
    pub fn first_sight(name: &str, hash: String, definition: Value, now_ms: u64) -> Self {
        PinRecord {
            name: name.to_owned(),
            pinned_hash: hash,
            pinned_definition: definition,
            pinned_at_ms: now_ms,
            pinned_by: FIRST_SIGHT.to_owned(),
            seen: None,
        }
    }

    /// The parts that differ between the pin and the pending change (empty without one).
    pub fn changed_parts(&self) -> Vec<DefinitionPart> {
        self.seen.as_ref().map_or_else(Vec::new, |s| {
            changed_parts(&self.pinned_definition, &s.definition)
        })
    }

    /// The change this record holds, as observing it would report.
    pub fn change(&self) -> Option<PinChange> {
        self.seen.as_ref().map(|s| PinChange {
            pinned_hash: self.pinned_hash.clone(),
            seen_hash: s.hash.clone(),
            pinned_at_ms: self.pinned_at_ms,
            parts: self.changed_parts(),
        })
    }
}

/// A definition that differs from its pin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PinChange {
    pub pinned_hash: String,
    pub seen_hash: String,
    pub pinned_at_ms: u64,
    /// Which covered parts differ, in [`DefinitionPart::ALL`] order.
    pub parts: Vec<DefinitionPart>,
}

impl PinChange {
    /// Why `name` is quarantined, naming the parts that changed and what to run.
    pub fn quarantine_reason(&self, name: &str) -> String {
        let parts: Vec<&str> = self.parts.iter().map(|p| p.key()).collect();
        let what = match parts.as_slice() {
            [] => "the definition differs".to_owned(),
            [one] if *one != "annotations" => format!("{one} differs"),
            _ => format!("{} differ", parts.join(", ")),
        };
        format!(
            "definition changed since pinned {}: {what}; run `toolgate tools approve-change {name}`",
            format_time(self.pinned_at_ms)
        )
    }
}

/// What observing a definition found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum PinVerdict {
    /// First sight: the definition is now pinned.
    New,
    /// Same hash as the pin.
    Unchanged,
    /// Another hash: quarantine until approved.
    Changed(PinChange),
}

/// Why the pin book could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PinError {
    #[error(
        "no definition of `{0}` is pinned (only tools of pinned sources, such as MCP servers, are)"
    )]
    NotPinned(String),
    #[error(
        "`{0}` is not quarantined: its definition matches the pin, so there is no change to approve"
    )]
    NoChange(String),
    #[error(
        "the definition of `{name}` changed again while it was being reviewed (now {seen_hash}); review the new diff"
    )]
    Stale { name: String, seen_hash: String },
    #[error("the pin book failed: {0}")]
    Storage(String),
}

/// Persistent pins of tool definitions, by catalog name.
#[async_trait::async_trait]
pub trait PinBook: Send + Sync {
    /// Compares `spec` with its pin: pins it on first sight, records it as the pending change
    /// when it differs, clears a pending change when it matches again.
    async fn observe(&self, spec: &ToolSpec) -> Result<PinVerdict, PinError>;

    /// The record for `name`, if it was ever pinned.
    async fn get(&self, name: &str) -> Result<Option<PinRecord>, PinError>;

    /// Every record, sorted by name.
    async fn list(&self) -> Result<Vec<PinRecord>, PinError>;

    /// Re-pins `name` to its pending change, which must have hash `seen_hash` (the one the
    /// operator reviewed); `by` is recorded as [`PinRecord::pinned_by`].
    async fn approve_change(
        &self,
        name: &str,
        seen_hash: &str,
        by: &str,
    ) -> Result<PinRecord, PinError>;
}

/// `ms` since the epoch as RFC 3339 UTC, to the second.
pub fn format_time(ms: u64) -> String {
    humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(parts: Vec<DefinitionPart>) -> PinChange {
        PinChange {
            pinned_hash: "a".repeat(64),
            seen_hash: "b".repeat(64),
            pinned_at_ms: 1_764_700_000_000,
            parts,
        }
    }

    #[test]
    fn the_reason_names_the_date_the_parts_and_the_command() {
        assert_eq!(
            change(vec![
                DefinitionPart::Description,
                DefinitionPart::InputSchema
            ])
            .quarantine_reason("mcp__calc__add"),
            "definition changed since pinned 2025-12-02T18:26:40Z: description, input_schema \
             differ; run `toolgate tools approve-change mcp__calc__add`"
        );
        assert_eq!(
            change(vec![DefinitionPart::Annotations]).quarantine_reason("t"),
            "definition changed since pinned 2025-12-02T18:26:40Z: annotations differ; run \
             `toolgate tools approve-change t`"
        );
        assert_eq!(
            change(vec![DefinitionPart::Description]).quarantine_reason("t"),
            "definition changed since pinned 2025-12-02T18:26:40Z: description differs; run \
             `toolgate tools approve-change t`"
        );
    }
}
