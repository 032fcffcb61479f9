//! The approval desk: the one way anything in toolgate puts a question to a human and waits
//! for the answer — the approve layer for tool calls, and MCP elicitation (a server asking
//! for input mid-call). One canonical hash names the question, one redactor masks what the
//! human is shown ([`Redacted`] arguments, so no caller can skip it), one wait loop reads
//! the decision from the store that every front end writes to.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_protocol::Risk;
use toolgate_store::StoreResult;
use toolgate_store::approvals::{
    ApprovalRequest, ApprovalStatus, ApprovalStore, NewApproval, canonical_hash,
};
use toolgate_store::redact::Redactor;

/// What is asked: who asks, for what, with which arguments (as the tool would receive
/// them; the desk redacts them for display and hashes them for identity).
#[derive(Debug, Clone)]
pub struct Question<'a> {
    pub principal: &'a str,
    pub session: &'a str,
    pub role: &'a str,
    pub tool: &'a str,
    pub risk: Risk,
    pub arguments: &'a Value,
    /// Dangerous tools: approving requires typing the tool name.
    pub requires_confirmation: bool,
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    /// Approved, denied or expired (read as expired once past its expiry).
    Decided(ApprovalRequest),
    /// The waiter gave up (its call was cancelled) before anyone decided.
    Cancelled(ApprovalRequest),
}

/// Creates approval requests and waits for their decisions.
pub struct ApprovalDesk {
    store: Arc<ApprovalStore>,
    redactor: Arc<Redactor>,
    ttl: Duration,
}

impl std::fmt::Debug for ApprovalDesk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalDesk")
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl ApprovalDesk {
    pub fn new(store: Arc<ApprovalStore>, redactor: Arc<Redactor>, ttl: Duration) -> Self {
        ApprovalDesk {
            store,
            redactor,
            ttl,
        }
    }

    pub fn store(&self) -> &Arc<ApprovalStore> {
        &self.store
    }

    /// The identity of a question: the canonical SHA-256 of its arguments.
    pub fn hash(arguments: &Value) -> String {
        canonical_hash(arguments)
    }

    /// Records a new pending request for `question`, its arguments redacted but whole (an
    /// argument past the audit's 2,000 characters must still be read in full by whoever
    /// approves it).
    pub fn open(&self, question: &Question<'_>) -> StoreResult<ApprovalRequest> {
        self.open_hashed(question, Self::hash(question.arguments))
    }

    /// [`ApprovalDesk::open`] with the hash already computed by the caller.
    pub(crate) fn open_hashed(
        &self,
        question: &Question<'_>,
        args_hash: String,
    ) -> StoreResult<ApprovalRequest> {
        self.store.create(NewApproval {
            principal: question.principal.to_owned(),
            session: question.session.to_owned(),
            role: question.role.to_owned(),
            tool: question.tool.to_owned(),
            risk: question.risk,
            args_hash,
            arguments: self.redactor.seal(question.arguments),
            requires_confirmation: question.requires_confirmation,
            ttl: self.ttl,
        })
    }

    /// Waits until `request` is decided or expired, reading the store every `poll`, or
    /// until `cancel` fires.
    pub async fn wait(
        &self,
        mut request: ApprovalRequest,
        poll: Duration,
        cancel: &CancellationToken,
    ) -> StoreResult<Waited> {
        while request.status == ApprovalStatus::Pending {
            tokio::select! {
                () = cancel.cancelled() => return Ok(Waited::Cancelled(request)),
                () = tokio::time::sleep(poll) => {}
            }
            request = self
                .store
                .get(&request.id)?
                .ok_or_else(|| toolgate_store::StoreError::NotFound(request.id.clone()))?;
        }
        Ok(Waited::Decided(request))
    }
}
