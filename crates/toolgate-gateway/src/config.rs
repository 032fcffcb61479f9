//! Gateway settings, as they appear in `toolgate.toml` (`[limits]`, `[approvals]`,
//! `[roles.NAME]`, `[policy]`). Unknown keys are errors, so a typo never silently weakens policy.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::policy::{PolicyConfig, RoleConfig};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Deadline of one tool execution.
    pub call_timeout_secs: u64,
    /// Tool executions in flight at once; further calls queue.
    pub max_concurrent: usize,
    /// Size of a call's arguments as text.
    pub max_argument_bytes: usize,
    /// Results above this are offloaded; the caller gets the head and a `result_id`.
    pub result_budget_bytes: usize,
    /// Results above this are refused with `result_too_large`.
    pub result_hard_limit_bytes: usize,
    /// Offloaded results kept on disk, in total bytes (also the largest one kept); beyond
    /// it the oldest are evicted.
    pub result_retention_bytes: u64,
    /// Offloaded results kept on disk, by number; 0: no limit.
    pub result_retention_count: usize,
    /// Offloaded results older than this are evicted; 0: no limit.
    pub result_retention_secs: u64,
    /// How long a write's idempotency reservation holds without renewal (its holder renews
    /// it every third of this while the call runs): after a crash, the same call made again
    /// waits this long at most before it may act.
    pub reservation_lease_secs: u64,
}

impl LimitsConfig {
    /// The result store's retention, from the `result_retention_*` keys.
    pub fn result_retention(&self) -> toolgate_store::results::ResultRetention {
        toolgate_store::results::ResultRetention {
            max_total_bytes: self.result_retention_bytes,
            max_count: self.result_retention_count,
            max_age: Duration::from_secs(self.result_retention_secs),
        }
    }
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            call_timeout_secs: 600,
            max_concurrent: 64,
            max_argument_bytes: 1 << 20,
            result_budget_bytes: 16 * 1024,
            result_hard_limit_bytes: 64 << 20,
            result_retention_bytes: 256 << 20,
            result_retention_count: 1000,
            result_retention_secs: 7 * 24 * 3600,
            reservation_lease_secs: 30,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ApprovalsConfig {
    /// How long a pending approval waits for a decision.
    pub ttl_secs: u64,
    /// Wait for the decision instead of returning `approval_required` at once.
    pub wait: bool,
    /// How often a waiting call checks the store.
    pub poll_millis: u64,
}

impl Default for ApprovalsConfig {
    fn default() -> Self {
        ApprovalsConfig {
            ttl_secs: 600,
            wait: false,
            poll_millis: 250,
        }
    }
}

impl ApprovalsConfig {
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.ttl_secs)
    }
}

/// Everything the gateway needs from configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewayConfig {
    pub limits: LimitsConfig,
    pub approvals: ApprovalsConfig,
    /// Extra roles, or replacements of the built-in `default` and `readonly`.
    pub roles: BTreeMap<String, RoleConfig>,
    /// `[[policy.rules]]`: CEL conditions over the call that decide before the role does.
    pub policy: PolicyConfig,
    /// `[[quotas]]`: calls per interval and calls in flight, per principal and per tool.
    pub quotas: Vec<crate::quota::QuotaConfig>,
}
