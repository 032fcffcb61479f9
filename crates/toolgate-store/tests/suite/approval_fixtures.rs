//! Shared fixtures of the approval tests: a hand-moved clock, requests and decisions.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use toolgate_store::StoreError;
use toolgate_store::approvals::{
    ApprovalRequest, ApprovalStatus, Decision, DecisionScope, NewApproval, canonical_hash,
};

pub(super) const T0: u64 = 1_700_000_000_000;

/// A clock the test moves by hand.
#[derive(Clone)]
pub(super) struct TestClock(Arc<AtomicU64>);

impl TestClock {
    pub(super) fn new() -> Self {
        TestClock(Arc::new(AtomicU64::new(T0)))
    }
    pub(super) fn set(&self, ms: u64) {
        self.0.store(ms, Ordering::SeqCst);
    }
    pub(super) fn clock(&self) -> Arc<dyn Fn() -> u64 + Send + Sync> {
        let now = self.0.clone();
        Arc::new(move || now.load(Ordering::SeqCst))
    }
}

pub(super) fn new_approval(tool: &str, args: Value) -> NewApproval {
    toolgate_testkit::approvals::new_approval(
        "agent-1",
        "sess-1",
        tool,
        &args,
        Duration::from_secs(60),
    )
}

pub(super) fn approve(scope: DecisionScope) -> Decision {
    Decision {
        approve: true,
        scope,
        pattern: None,
        decided_by: "alice".into(),
        reason: Some("looks fine".into()),
        confirm: None,
        via: None,
    }
}

pub(super) fn deny() -> Decision {
    Decision {
        approve: false,
        scope: DecisionScope::Once,
        pattern: None,
        decided_by: "bob".into(),
        reason: Some("no".into()),
        confirm: None,
        via: None,
    }
}

pub(super) fn expected_pending(id: &str, args: Value) -> ApprovalRequest {
    ApprovalRequest {
        issuer: None,
        subject: None,
        decided_via: None,
        id: id.into(),
        created_at_ms: T0,
        expires_at_ms: T0 + 60_000,
        status: ApprovalStatus::Pending,
        principal: "agent-1".into(),
        session: "sess-1".into(),
        role: "coder".into(),
        tool: "write_file".into(),
        risk: toolgate_protocol::Risk::Write,
        args_hash: canonical_hash(&args),
        arguments: args,
        requires_confirmation: false,
        decided_by: None,
        decided_at_ms: None,
        scope: None,
        pattern: None,
        reason: None,
        consumed: false,
    }
}

pub(super) fn conflict_message(result: Result<ApprovalRequest, StoreError>) -> String {
    match result {
        Err(StoreError::Conflict(message)) => message,
        other => panic!("expected a conflict, got {other:?}"),
    }
}
