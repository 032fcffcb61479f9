//! [`ApprovalStore`]: the handle every front end and the gateway use, over whichever backend
//! the configuration chose ([`ApprovalBackend`]: embedded SQLite or PostgreSQL), with the
//! clock that decides expiry and the change feed that wakes waiters.

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::backend::{ApprovalBackend, covers};
use super::sqlite::SqliteApprovals;
use super::{ApprovalRequest, ApprovalStatus, Clock, Decision, Grant, NewApproval, system_clock};
use crate::changes::{Change, ChangeFeed, Changes};
use crate::{StoreError, StoreResult};

/// Pending approvals and standing grants, shared by every front end through one database.
#[derive(Clone)]
pub struct ApprovalStore {
    backend: Arc<dyn ApprovalBackend>,
    clock: Clock,
    feed: ChangeFeed,
    /// Whether the backend announces other writers' changes itself (PostgreSQL); the
    /// embedded one only knows its own process's, announced here.
    announced_by_backend: bool,
}

impl std::fmt::Debug for ApprovalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApprovalStore").finish_non_exhaustive()
    }
}

impl ApprovalStore {
    /// The embedded store: the SQLite database at `db`, tables created if missing.
    pub fn open(db: &Path) -> StoreResult<Self> {
        Ok(ApprovalStore::with_backend(
            Arc::new(SqliteApprovals::open(db)?),
            ChangeFeed::new(),
            false,
        ))
    }

    /// A store over `backend`; `feed` carries its changes. `announced_by_backend`: the
    /// backend's own notifications already announce every change (PostgreSQL's `NOTIFY`).
    pub fn with_backend(
        backend: Arc<dyn ApprovalBackend>,
        feed: ChangeFeed,
        announced_by_backend: bool,
    ) -> Self {
        ApprovalStore {
            backend,
            clock: system_clock(),
            feed,
            announced_by_backend,
        }
    }

    /// Replaces the wall clock (milliseconds since the Unix epoch); tests move time with it.
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    pub(super) fn now_ms(&self) -> u64 {
        (self.clock)()
    }

    /// Every change of a request from now on (ids; [`Change::Resync`] after a gap).
    pub fn changes(&self) -> Changes {
        self.feed.subscribe()
    }

    fn changed(&self, id: &str) {
        if !self.announced_by_backend {
            self.feed.announce(Change::Approval(id.to_owned()));
        }
    }

    /// Persists a new pending request expiring `new.ttl` from now.
    pub async fn create(&self, new: NewApproval) -> StoreResult<ApprovalRequest> {
        let now = self.now_ms();
        // 48 random bits: a collision is unlikely but is retried rather than reported.
        for _ in 0..8 {
            let id = new_approval_id();
            if self.backend.insert(&id, &new, now).await? {
                self.changed(&id);
                return self.backend.get(&id, now).await?.ok_or_else(|| {
                    StoreError::Corrupt(format!("approval {id} vanished right after insert"))
                });
            }
        }
        Err(StoreError::Conflict(
            "could not allocate a unique approval id after 8 attempts".into(),
        ))
    }

    /// The request with this id, if any.
    pub async fn get(&self, id: &str) -> StoreResult<Option<ApprovalRequest>> {
        self.backend.get(id, self.now_ms()).await
    }

    /// Newest request for this exact call identity that is not consumed (any status).
    pub async fn find_latest(
        &self,
        principal: &str,
        tool: &str,
        args_hash: &str,
    ) -> StoreResult<Option<ApprovalRequest>> {
        self.backend
            .find_latest(principal, tool, args_hash, self.now_ms())
            .await
    }

    /// Requests newest first, at most `limit`, optionally only those with `status` (as
    /// reported: `Pending` excludes and `Expired` includes pending requests past expiry).
    pub async fn list(
        &self,
        status: Option<ApprovalStatus>,
        limit: usize,
    ) -> StoreResult<Vec<ApprovalRequest>> {
        self.backend.list(status, limit, self.now_ms()).await
    }

    /// Marks an approved request consumed. Returns `false` if it already was: of two racing
    /// identical calls exactly one gets `true`. Unknown ids are `NotFound`; requests that are
    /// not approved are a `Conflict`.
    pub async fn consume(&self, id: &str) -> StoreResult<bool> {
        let consumed = self.backend.consume(id, self.now_ms()).await?;
        if consumed {
            self.changed(id);
        }
        Ok(consumed)
    }

    /// Retires a denied or expired request once its outcome was reported to the caller, so
    /// the next identical call asks afresh. Returns false when there was nothing to retire
    /// (already retired, still pending, or approved).
    pub async fn retire(&self, id: &str) -> StoreResult<bool> {
        let retired = self.backend.retire(id, self.now_ms()).await?;
        if retired {
            self.changed(id);
        }
        Ok(retired)
    }

    /// Withdraws a pending request whose waiting call stopped waiting, saying `why` (kept as
    /// the request's reason). Returns `false` when it was no longer pending — decided or
    /// expired meanwhile — and leaves it as it is: of an operator's decision and an
    /// abandonment racing, exactly one takes effect. An abandoned request is consumed, so
    /// the next identical call asks afresh.
    pub async fn abandon(&self, id: &str, why: &str) -> StoreResult<bool> {
        let abandoned = self.backend.abandon(id, why, self.now_ms()).await?;
        if abandoned {
            self.changed(id);
        }
        Ok(abandoned)
    }

    /// Marks pending requests past their expiry as expired in the table; returns how many.
    pub async fn expire_due(&self) -> StoreResult<usize> {
        self.backend.expire_due(self.now_ms()).await
    }

    /// Approves or denies a pending request.
    ///
    /// Errors: unknown id ([`StoreError::NotFound`]); a request already decided or expired,
    /// an approval of a `requires_confirmation` request without the tool name typed in
    /// `confirm`, or a pattern that is not a JSON object ([`StoreError::Conflict`]). Denying
    /// never needs confirmation and creates no grant.
    pub async fn decide(&self, id: &str, decision: Decision) -> StoreResult<ApprovalRequest> {
        let decided = self.backend.decide(id, &decision, self.now_ms()).await?;
        self.changed(id);
        Ok(decided)
    }

    /// The oldest standing grant that covers this call, if any; session grants are looked at
    /// first. A grant covers a call when it is a `session` grant for the same principal,
    /// session and tool, or an `always` grant for the same principal and tool whose
    /// `args_hash` equals the call's or whose pattern matches its arguments.
    pub async fn find_grant(
        &self,
        principal: &str,
        session: &str,
        tool: &str,
        args: &Value,
        args_hash: &str,
    ) -> StoreResult<Option<Grant>> {
        let candidates = self
            .backend
            .candidate_grants(principal, session, tool)
            .await?;
        Ok(candidates.into_iter().find(|g| covers(g, args, args_hash)))
    }

    /// All standing grants, oldest first.
    pub async fn list_grants(&self) -> StoreResult<Vec<Grant>> {
        self.backend.list_grants().await
    }

    /// Deletes a grant; returns whether it existed.
    pub async fn revoke_grant(&self, id: i64) -> StoreResult<bool> {
        self.backend.revoke_grant(id).await
    }
}

/// `apr_` + 12 lowercase hex characters from a random UUID.
fn new_approval_id() -> String {
    let bytes = uuid::Uuid::new_v4().into_bytes();
    format!("apr_{}", hex::encode(&bytes[..6]))
}
