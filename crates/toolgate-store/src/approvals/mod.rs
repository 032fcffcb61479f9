//! Human approval of tool calls (R-APR-2): pending requests and standing grants, persisted in
//! SQLite so that a request survives a restart or a dropped client and can be answered from
//! any front end (another process may hold the same database open).
//!
//! # Life of a request
//! 1. The gateway finds no [`Grant`] covering a call and [`ApprovalStore::create`]s a request
//!    (status `pending`, an expiry, the call's whole arguments, redacted but never digested:
//!    the approver must see everything that will run, see [`visible_text`]).
//! 2. An operator [`ApprovalStore::decide`]s it: approve or deny, once / for this session /
//!    always (for a tool and an argument pattern). Approving with scope `session` or `always`
//!    also inserts a grant, in the same transaction.
//! 3. The waiting (or retried) call finds it with [`ApprovalStore::find_latest`] and, if it was
//!    approved, [`ApprovalStore::consume`]s it: an approved request lets exactly one call
//!    through, even when two identical calls race.
//!
//! # Invariants
//! - A decision is final: deciding twice, or after expiry, is a [`StoreError::Conflict`].
//! - A request whose waiting call gave up is [`ApprovalStore::abandon`]ed (compare-and-set
//!   from pending): it cannot be approved afterwards, so an operator never approves a call
//!   nobody is waiting for. Of an approval and an abandonment racing, exactly one wins.
//! - Expiry needs no background job: a pending request past `expires_at_ms` is reported as
//!   [`ApprovalStatus::Expired`] on every read; [`ApprovalStore::expire_due`] only makes the
//!   table agree.
//! - Approving a request that `requires_confirmation` needs the tool name typed back.
//!
//! # Layout
//! - `store`: [`ApprovalStore`], the handle: clock, change feed, the backend chosen.
//! - `backend`: [`ApprovalBackend`], what a database must do; which grants cover a call.
//! - `sqlite`: the embedded backend (`toolgate.db`). `postgres`: the cluster backend.
//! - `decide`: what both backends check and write when a request is decided.
//! - `schema`: the SQLite tables and the mapping of rows to values.
//! - `pattern`: [`canonical_hash`] and [`pattern_matches`].
//! - `view`: [`visible_text`] / [`visible_value`], the arguments as an approver must read
//!   them (whitespace runs and invisible characters made visible).
//!
//! [`StoreError::Conflict`]: crate::StoreError::Conflict

mod backend;
mod decide;
mod pattern;
mod postgres;
mod schema;
mod sqlite;
mod store;
mod view;

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_protocol::{Principal, Risk, Role, SessionId};

pub use backend::ApprovalBackend;
pub use pattern::{canonical_hash, pattern_matches};
pub use postgres::PgApprovals;
pub use sqlite::SqliteApprovals;
pub use store::ApprovalStore;
pub use view::{MAX_VISIBLE_RUN, hides_text, hides_value, invisible, visible_text, visible_value};

pub use crate::clock::{Clock, system_clock};

/// Where a request stands. `Expired` is also reported for a pending request read after its
/// expiry, before [`ApprovalStore::expire_due`] has marked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Denied,
    Expired,
    /// Withdrawn because the call waiting for it stopped waiting (cancelled, disconnected,
    /// timed out) before anyone decided: nobody is left for whom approving would act, so it
    /// can no longer be approved; the next identical call asks afresh.
    Abandoned,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalStatus::Pending => "pending",
            ApprovalStatus::Approved => "approved",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Expired => "expired",
            ApprovalStatus::Abandoned => "abandoned",
        }
    }
}

impl fmt::Display for ApprovalStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ApprovalStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(ApprovalStatus::Pending),
            "approved" => Ok(ApprovalStatus::Approved),
            "denied" => Ok(ApprovalStatus::Denied),
            "expired" => Ok(ApprovalStatus::Expired),
            "abandoned" => Ok(ApprovalStatus::Abandoned),
            other => Err(format!(
                "unknown approval status `{other}` (expected pending, approved, denied, expired \
                 or abandoned)"
            )),
        }
    }
}

/// How far an approval reaches: this one call, every call of the tool in this session, or
/// every call of the tool whose arguments match a pattern (or equal these arguments).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DecisionScope {
    Once,
    Session,
    Always,
}

impl DecisionScope {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionScope::Once => "once",
            DecisionScope::Session => "session",
            DecisionScope::Always => "always",
        }
    }
}

impl fmt::Display for DecisionScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DecisionScope {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "once" => Ok(DecisionScope::Once),
            "session" => Ok(DecisionScope::Session),
            "always" => Ok(DecisionScope::Always),
            _ => Err(format!(
                "unknown decision scope `{s}` (expected once, session or always)"
            )),
        }
    }
}

/// A request for a human decision on one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// `apr_` followed by 12 lowercase hex characters.
    pub id: String,
    pub created_at_ms: u64,
    pub expires_at_ms: u64,
    pub status: ApprovalStatus,
    pub principal: Principal,
    pub session: SessionId,
    pub role: Role,
    pub tool: String,
    pub risk: Risk,
    /// [`canonical_hash`] of the call's arguments: the identity of the call.
    pub args_hash: String,
    /// The call's whole arguments, redacted (secrets masked) by the caller before they
    /// reached the store, never shortened or digested: what the operator approves is what
    /// runs. Show them through [`visible_value`].
    pub arguments: Value,
    /// Dangerous tools: approving requires typing the tool name.
    pub requires_confirmation: bool,
    pub decided_by: Option<String>,
    pub decided_at_ms: Option<u64>,
    pub scope: Option<DecisionScope>,
    pub pattern: Option<Value>,
    pub reason: Option<String>,
    /// An approved request lets exactly one call through; this marks that it did.
    pub consumed: bool,
    /// Who vouched for the caller (an access token's `iss`, or `toolgate`), when known.
    pub issuer: Option<String>,
    /// The caller as the issuer names it (`sub`, or toolgate's token id).
    pub subject: Option<String>,
    /// The channel the decision came through (`slack:ops`, `telegram:oncall`); `None` for
    /// the console, the API or the CLI.
    pub decided_via: Option<String>,
}

/// What the gateway knows when it asks for a decision.
#[derive(Debug, Clone, PartialEq)]
pub struct NewApproval {
    pub principal: Principal,
    pub session: SessionId,
    pub role: Role,
    pub tool: String,
    pub risk: Risk,
    pub args_hash: String,
    /// Redacted (the type says so) and whole: not the audit's digested form.
    pub arguments: crate::redact::Redacted,
    pub requires_confirmation: bool,
    pub ttl: Duration,
    /// Who vouched for the caller, when known (recorded with the request).
    pub issuer: Option<String>,
    pub subject: Option<String>,
}

/// An operator's answer to a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub approve: bool,
    pub scope: DecisionScope,
    /// Argument pattern of an `always` approval (a JSON object, see [`pattern_matches`]);
    /// `None` limits the grant to exactly the requested arguments.
    pub pattern: Option<Value>,
    pub decided_by: String,
    pub reason: Option<String>,
    /// The tool name typed back, required to approve a `requires_confirmation` request.
    pub confirm: Option<String>,
    /// Where the decision was taken: a chat channel and chat (`slack:ops`,
    /// `telegram:oncall`); `None` for the console, the API or the CLI.
    pub via: Option<String>,
}

/// A standing permission created by a `session` or `always` approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub id: i64,
    pub scope: DecisionScope,
    pub principal: Principal,
    /// Set for `session` grants.
    pub session: Option<SessionId>,
    pub tool: String,
    /// Set for `always` grants without a pattern: only these exact arguments.
    pub args_hash: Option<String>,
    pub pattern: Option<Value>,
    pub created_by: String,
    pub created_at_ms: u64,
    /// The request whose approval created this grant.
    pub approval_id: String,
}
