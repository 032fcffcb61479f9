//! [`ApprovalBackend`]: what a database must do for approvals. Every state change is one
//! atomic step (a single statement or one transaction) that checks the state it changes, so
//! two replicas, two processes or two operators racing cannot both win. Times are passed in
//! (`now_ms`, from the store's clock), so both backends report expiry alike.

use async_trait::async_trait;
use serde_json::Value;

use super::{ApprovalRequest, ApprovalStatus, Decision, Grant, NewApproval};
use crate::StoreResult;

#[async_trait]
pub trait ApprovalBackend: Send + Sync + 'static {
    /// Inserts a new pending request under `id`; `false` when the id is taken.
    async fn insert(&self, id: &str, new: &NewApproval, now_ms: u64) -> StoreResult<bool>;
    async fn get(&self, id: &str, now_ms: u64) -> StoreResult<Option<ApprovalRequest>>;
    /// Newest unconsumed request for this call identity.
    async fn find_latest(
        &self,
        principal: &str,
        tool: &str,
        args_hash: &str,
        now_ms: u64,
    ) -> StoreResult<Option<ApprovalRequest>>;
    async fn list(
        &self,
        status: Option<ApprovalStatus>,
        limit: usize,
        now_ms: u64,
    ) -> StoreResult<Vec<ApprovalRequest>>;
    /// Approved and unconsumed → consumed; `false` when it already was; other states are an
    /// error.
    async fn consume(&self, id: &str, now_ms: u64) -> StoreResult<bool>;
    async fn retire(&self, id: &str, now_ms: u64) -> StoreResult<bool>;
    async fn abandon(&self, id: &str, why: &str, now_ms: u64) -> StoreResult<bool>;
    async fn expire_due(&self, now_ms: u64) -> StoreResult<usize>;
    async fn decide(
        &self,
        id: &str,
        decision: &Decision,
        now_ms: u64,
    ) -> StoreResult<ApprovalRequest>;
    /// The standing grants that may cover a call of `tool` by `principal` in `session`
    /// (session grants first, then oldest first); the caller checks arguments.
    async fn candidate_grants(
        &self,
        principal: &str,
        session: &str,
        tool: &str,
    ) -> StoreResult<Vec<Grant>>;
    async fn list_grants(&self) -> StoreResult<Vec<Grant>>;
    async fn revoke_grant(&self, id: i64) -> StoreResult<bool>;
}

/// Whether `grant` (a candidate of [`ApprovalBackend::candidate_grants`]) covers a call with
/// these arguments.
pub(super) fn covers(grant: &Grant, args: &Value, args_hash: &str) -> bool {
    use super::DecisionScope;
    match grant.scope {
        DecisionScope::Session => true,
        DecisionScope::Always => {
            grant.args_hash.as_deref() == Some(args_hash)
                || grant
                    .pattern
                    .as_ref()
                    .is_some_and(|p| super::pattern_matches(p, args))
        }
        DecisionScope::Once => false,
    }
}
