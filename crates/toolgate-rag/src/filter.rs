//! The filter chain (R-RAG-1): role allowlist → availability → risk policy, applied to every
//! candidate BEFORE the ranking is cut to top-K. A filtered tool therefore never takes a
//! permitted tool's place, and a search never returns (or scores, or counts by name) a tool
//! the caller may not see.
//!
//! The stages reuse the gateway's own decisions: [`RolePolicy::allows`] (the same check
//! the `authorize` layer makes), the catalog [`Snapshot`]'s availability (the `lookup`
//! layer), and [`RolePolicy::decide`] (the `policy` layer): a tool the role's policy denies
//! is hidden; `ask` stays visible because it can be approved.

use toolgate_gateway::policy::{Decision, RolePolicy};
use toolgate_registry::Snapshot;

/// The stage that hid a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    Role,
    Availability,
    Risk,
}

/// The chain for one caller over one catalog snapshot.
#[derive(Debug, Clone, Copy)]
pub struct FilterChain<'a> {
    role: &'a RolePolicy,
    snapshot: &'a Snapshot,
}

/// How many indexed tools each stage removed (counts only, never names).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct FilterTally {
    pub role: usize,
    pub availability: usize,
    pub risk: usize,
    pub admitted: usize,
}

impl<'a> FilterChain<'a> {
    pub fn new(role: &'a RolePolicy, snapshot: &'a Snapshot) -> Self {
        FilterChain { role, snapshot }
    }

    /// `Ok` when the caller may see `name`; otherwise the first stage that hides it.
    /// A tool missing from the snapshot (the index is behind the catalog) is unavailable.
    pub fn check(&self, name: &str) -> Result<(), Stage> {
        if !self.role.allows(name) {
            return Err(Stage::Role);
        }
        let Some(entry) = self.snapshot.get(name) else {
            return Err(Stage::Availability);
        };
        if !entry.is_available() {
            return Err(Stage::Availability);
        }
        if self.role.decide(name, entry.spec().risk) == Decision::Deny {
            return Err(Stage::Risk);
        }
        Ok(())
    }

    pub fn admits(&self, name: &str) -> bool {
        self.check(name).is_ok()
    }

    /// Counts per stage over `names`.
    pub fn tally<'n>(&self, names: impl IntoIterator<Item = &'n str>) -> FilterTally {
        let mut t = FilterTally::default();
        for n in names {
            match self.check(n) {
                Ok(()) => t.admitted += 1,
                Err(Stage::Role) => t.role += 1,
                Err(Stage::Availability) => t.availability += 1,
                Err(Stage::Risk) => t.risk += 1,
            }
        }
        t
    }
}
