//! Approval channels that answer while the call waits (the terminal prompt; later the web
//! console and webhooks). Channels that answer out of band — `toolgate approvals approve`
//! from another shell, the HTTP API — write to the store, which every waiting call reads.

use async_trait::async_trait;
use toolgate_store::approvals::{ApprovalRequest, DecisionScope};

/// An answer from a human.
#[derive(Debug, Clone, PartialEq)]
pub struct ApproverAnswer {
    pub approve: bool,
    pub scope: DecisionScope,
    /// The typed confirmation (the tool name) for requests that need one.
    pub confirm: Option<String>,
    /// Who answered, recorded in the audit.
    pub approver: String,
    pub reason: Option<String>,
}

/// A channel that can ask a human right now.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Asks about `request`; `None` when this channel cannot answer (no terminal, closed).
    async fn ask(&self, request: &ApprovalRequest) -> Option<ApproverAnswer>;
}

/// How a call that needs approval behaves when no channel answers at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Fail with `approval_required` naming the approval id; the identical call proceeds
    /// once that id is approved.
    Return,
    /// Wait (polling the store) until decided, expired or cancelled.
    Wait { poll: std::time::Duration },
}
