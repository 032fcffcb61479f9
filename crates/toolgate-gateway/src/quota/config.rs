//! `[[quotas]]` in toolgate.toml: how fast and how much a caller may call (R-SRV-5).
//!
//! ```toml
//! [[quotas]]
//! id = "agents"            # named in the error and the audit
//! principal = "agent-*"    # glob over the caller (default: everyone)
//! tool = "*"               # glob over the tool (default: every tool)
//! per = "principal"        # one bucket per principal | tool | principal_tool | all
//! calls = 100              # calls per interval (a token bucket) …
//! interval = "1m"
//! burst = 20               # … of which this many back to back (default: calls)
//! max_in_flight = 4        # calls at once per bucket (optional)
//! ```

use std::time::Duration;

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};
use toolgate_store::quotas::Rate;

/// What one bucket counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QuotaKey {
    /// Each principal has its own bucket.
    #[default]
    Principal,
    /// Each tool has one bucket, shared by every caller.
    Tool,
    /// Each principal has a bucket per tool.
    PrincipalTool,
    /// One bucket for every matching call.
    All,
}

/// One `[[quotas]]` entry, as written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QuotaConfig {
    pub id: String,
    #[serde(default = "any")]
    pub principal: String,
    #[serde(default = "any")]
    pub tool: String,
    #[serde(default)]
    pub per: QuotaKey,
    /// Calls per `interval`; absent: no rate limit (only `max_in_flight`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<u32>,
    /// `1s`, `1m`, `1h`, … (humantime); default one minute.
    #[serde(default = "one_minute")]
    pub interval: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_in_flight: Option<u32>,
}

impl QuotaConfig {
    /// `calls` per `interval` for each principal, on every tool (refine with struct update).
    pub fn per_principal(id: &str, calls: u32, interval: &str) -> Self {
        QuotaConfig {
            id: id.to_owned(),
            principal: any(),
            tool: any(),
            per: QuotaKey::Principal,
            calls: Some(calls),
            interval: interval.to_owned(),
            burst: None,
            max_in_flight: None,
        }
    }
}

fn any() -> String {
    "*".to_owned()
}

fn one_minute() -> String {
    "1m".to_owned()
}

/// A `[[quotas]]` entry that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("[[quotas]] \"{id}\": {problem}")]
pub struct QuotaError {
    pub id: String,
    pub problem: String,
}

/// A compiled entry.
#[derive(Debug, Clone)]
pub struct Quota {
    pub id: String,
    principal: GlobMatcher,
    tool: GlobMatcher,
    pub per: QuotaKey,
    pub rate: Option<Rate>,
    /// As written, for messages: `100 calls per 1m`.
    pub rate_text: Option<String>,
    pub max_in_flight: Option<u32>,
}

impl Quota {
    pub fn compile(c: &QuotaConfig) -> Result<Quota, QuotaError> {
        let fail = |problem: String| QuotaError {
            id: c.id.clone(),
            problem,
        };
        if c.id.trim().is_empty() {
            return Err(fail("id must not be empty".into()));
        }
        let glob = |what: &str, pattern: &str| {
            Glob::new(pattern)
                .map(|g| g.compile_matcher())
                .map_err(|e| fail(format!("{what} pattern `{pattern}`: {e}")))
        };
        let interval: Duration = humantime::parse_duration(&c.interval).map_err(|e| {
            fail(format!(
                "interval `{}`: {e} (write e.g. `1s`, `1m`, `1h`)",
                c.interval
            ))
        })?;
        if interval.is_zero() {
            return Err(fail("interval must be longer than zero".into()));
        }
        if c.calls.is_none() && c.max_in_flight.is_none() {
            return Err(fail(
                "give `calls` (per `interval`), `max_in_flight`, or both".into(),
            ));
        }
        if c.calls == Some(0) || c.max_in_flight == Some(0) || c.burst == Some(0) {
            return Err(fail(
                "calls, burst and max_in_flight must be at least 1".into(),
            ));
        }
        if c.burst.is_some() && c.calls.is_none() {
            return Err(fail("burst needs `calls`".into()));
        }
        Ok(Quota {
            id: c.id.clone(),
            principal: glob("principal", &c.principal)?,
            tool: glob("tool", &c.tool)?,
            per: c.per,
            rate: c
                .calls
                .map(|calls| Rate::new(calls, interval, c.burst.unwrap_or(calls))),
            rate_text: c
                .calls
                .map(|calls| format!("{calls} calls per {}", c.interval)),
            max_in_flight: c.max_in_flight,
        })
    }

    /// Whether a call of `principal` to `tool` counts against this quota.
    pub fn applies(&self, principal: &str, tool: &str) -> bool {
        self.principal.is_match(principal) && self.tool.is_match(tool)
    }

    /// The bucket the call draws from (the quota id keeps quotas apart; a unit separator
    /// keeps the parts apart).
    pub fn key(&self, principal: &str, tool: &str) -> String {
        let sep = '\u{1f}';
        match self.per {
            QuotaKey::Principal => format!("{}{sep}p{sep}{principal}", self.id),
            QuotaKey::Tool => format!("{}{sep}t{sep}{tool}", self.id),
            QuotaKey::PrincipalTool => format!("{}{sep}pt{sep}{principal}{sep}{tool}", self.id),
            QuotaKey::All => format!("{}{sep}all", self.id),
        }
    }
}

/// Compiles every entry; ids must be unique.
pub fn compile_all(configs: &[QuotaConfig]) -> Result<Vec<Quota>, QuotaError> {
    let mut out: Vec<Quota> = Vec::with_capacity(configs.len());
    for c in configs {
        if out.iter().any(|q| q.id == c.id) {
            return Err(QuotaError {
                id: c.id.clone(),
                problem: "two entries have this id".into(),
            });
        }
        out.push(Quota::compile(c)?);
    }
    Ok(out)
}
