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
use toolgate_store::changes::Change;
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
    /// Who vouched for the caller, when a credential did (recorded with the request).
    pub identity: Option<&'a crate::call::Identity>,
}

/// How a wait ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Waited {
    /// Approved, denied or expired (read as expired once past its expiry), or abandoned by
    /// another waiter of the same request.
    Decided(ApprovalRequest),
    /// The waiter gave up (its call was cancelled) before anyone decided.
    Cancelled(ApprovalRequest),
}

/// What becomes of a still-pending request when its waiter gives up (its call is cancelled,
/// its client disconnects or times out, or the wait itself is dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnGiveUp {
    /// Withdraw it ([`ApprovalStatus::Abandoned`]): nobody is left for whom approving
    /// would act, so an operator must not be able to approve it.
    #[default]
    Abandon,
    /// Leave it pending for the next identical call (the caller asked for a request that
    /// outlives its wait).
    Keep,
}

/// Abandons the request it guards when dropped armed: a wait whose future is dropped
/// mid-await (its caller went away) withdraws the request, on a task of its own since a drop
/// cannot wait for the store.
struct AbandonOnDrop {
    store: Arc<ApprovalStore>,
    id: String,
    armed: bool,
}

impl Drop for AbandonOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (store, id) = (Arc::clone(&self.store), std::mem::take(&mut self.id));
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    abandon(&store, &id, "the caller stopped waiting").await;
                });
            }
            Err(_) => {
                tracing::warn!(approval_id = %id, "cannot mark an approval request abandoned: no runtime")
            }
        }
    }
}

/// Withdraws `id` (if still pending), logging what happened.
async fn abandon(store: &ApprovalStore, id: &str, why: &str) {
    match store.abandon(id, why).await {
        Ok(true) => tracing::info!(approval_id = %id, "approval request abandoned: {why}"),
        Ok(false) => {}
        Err(e) => {
            tracing::warn!(approval_id = %id, error = %e, "cannot mark an approval request abandoned");
        }
    }
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
    pub async fn open(&self, question: &Question<'_>) -> StoreResult<ApprovalRequest> {
        self.open_hashed(question, Self::hash(question.arguments))
            .await
    }

    /// [`ApprovalDesk::open`] with the hash already computed by the caller.
    pub(crate) async fn open_hashed(
        &self,
        question: &Question<'_>,
        args_hash: String,
    ) -> StoreResult<ApprovalRequest> {
        toolgate_telemetry::metrics().approval_requests.add(
            1,
            &[opentelemetry::KeyValue::new(
                toolgate_telemetry::names::GEN_AI_TOOL_NAME,
                question.tool.to_owned(),
            )],
        );
        self.store
            .create(NewApproval {
                issuer: question.identity.map(|i| i.issuer.clone()),
                subject: question.identity.map(|i| i.subject.clone()),
                principal: question.principal.into(),
                session: question.session.into(),
                role: question.role.into(),
                tool: question.tool.to_owned(),
                risk: question.risk,
                args_hash,
                arguments: self.redactor.seal(question.arguments),
                requires_confirmation: question.requires_confirmation,
                ttl: self.ttl,
            })
            .await
    }

    /// Waits until `request` is decided or expired, or until `cancel` fires. The store's
    /// change feed wakes the wait as soon as the request changes (on any replica, with
    /// PostgreSQL); it also re-reads every `poll`, which notices expiry and the changes
    /// another process makes to the embedded store. A waiter that gives up — `cancel` fires,
    /// or this future is dropped — leaves the request as `on_give_up` says; a cancelled wait
    /// returns the request as it then stands (abandoned, or decided if a decision won the
    /// race).
    pub async fn wait(
        &self,
        mut request: ApprovalRequest,
        poll: Duration,
        cancel: &CancellationToken,
        on_give_up: OnGiveUp,
    ) -> StoreResult<Waited> {
        let mut guard = AbandonOnDrop {
            store: Arc::clone(&self.store),
            id: request.id.clone(),
            armed: on_give_up == OnGiveUp::Abandon,
        };
        // Subscribed before the first re-read, so no change after it is missed.
        let mut changes = self.store.changes();
        let mut ticker = tokio::time::interval(poll);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticker.tick().await;
        if let Some(now) = self.store.get(&request.id).await? {
            request = now;
        }
        while request.status == ApprovalStatus::Pending {
            tokio::select! {
                () = cancel.cancelled() => {
                    guard.armed = false;
                    if on_give_up == OnGiveUp::Abandon {
                        abandon(&self.store, &request.id, "the call was cancelled or its client went away").await;
                    }
                    let now = self.store.get(&request.id).await?.unwrap_or(request);
                    return Ok(Waited::Cancelled(now));
                }
                change = changes.recv() => match change {
                    Some(Change::Approval(id)) if id == request.id => {}
                    Some(Change::Resync) => {}
                    Some(_) => continue,
                    // No feed any more: the ticker alone.
                    None => { ticker.tick().await; }
                },
                _ = ticker.tick() => {}
            }
            request = self
                .store
                .get(&request.id)
                .await?
                .ok_or_else(|| toolgate_store::StoreError::NotFound(request.id.clone()))?;
        }
        guard.armed = false;
        Ok(Waited::Decided(request))
    }
}
