//! A catalog entry: the tool and whether it can be called right now.

use serde::Serialize;
use toolgate_core::DynTool;
use toolgate_protocol::ToolSpec;

/// Whether a tool may be shown to models and executed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum Availability {
    Available,
    /// Its server is down or starting; refused with `unavailable`.
    Unavailable(String),
    /// Its definition changed since it was pinned; refused with `policy_denied` (R-REG-5).
    Quarantined(String),
}

#[derive(Clone)]
pub struct Entry {
    pub tool: DynTool,
    pub availability: Availability,
}

impl Entry {
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    pub fn is_available(&self) -> bool {
        self.availability == Availability::Available
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.spec().name)
            .field("availability", &self.availability)
            .finish()
    }
}
