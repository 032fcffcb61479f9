//! Human approval (R-APR-1..2). Runs only when the policy said `ask`. In order:
//! 1. a standing grant (this session, or always for this tool and argument pattern) lets the
//!    call through;
//! 2. otherwise the newest request for the identical call (principal, tool, canonical
//!    arguments) is used — approved and unconsumed: consume it and proceed; denied or
//!    expired: report it once (and consume it, so a later retry asks afresh); pending: wait;
//! 3. otherwise a new request is persisted, then a live channel is asked, or the call waits,
//!    or fails with `approval_required` naming the request — depending on [`WaitMode`].
//!
//! Requests live in the store, so they survive restarts and can be answered from any front end;
//! every front end decides through [`Decisions::decide`] (module `decide`), which records the
//! decision or its refusal in the audit.

mod channel;
mod decide;
mod desk;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use toolgate_protocol::{CallError, ErrorCode};
use toolgate_store::StoreError;
use toolgate_store::approvals::{ApprovalRequest, ApprovalStatus};

pub use channel::{Approver, ApproverAnswer, WaitMode};
pub use decide::{Ask, Decider, Decisions, Refusal, Via};
pub use desk::{ApprovalDesk, OnGiveUp, Question, Waited};

use crate::call::{ApprovalInfo, Call, CallEvent, Outcome};

/// How often a call waiting on request (not by configuration) checks the store.
const DEFAULT_POLL: Duration = Duration::from_millis(250);
use crate::layer::{Layer, Next};
use crate::policy::Decision;

pub struct ApproveLayer {
    desk: Arc<ApprovalDesk>,
    decisions: Arc<Decisions>,
    approver: Option<Arc<dyn Approver>>,
    mode: WaitMode,
}

impl ApproveLayer {
    pub fn new(desk: Arc<ApprovalDesk>, decisions: Arc<Decisions>, mode: WaitMode) -> Self {
        ApproveLayer {
            desk,
            decisions,
            approver: None,
            mode,
        }
    }

    pub fn with_approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    async fn settle(
        &self,
        call: &mut Call,
        mut request: ApprovalRequest,
    ) -> Result<ApprovalInfo, CallError> {
        if request.status == ApprovalStatus::Pending
            && let Some(approver) = &self.approver
            && let Some(answer) = approver.ask(&request).await
        {
            let ask = Ask {
                approve: answer.approve,
                scope: answer.scope,
                pattern: None,
                confirm: answer.confirm,
                reason: answer.reason,
            };
            // Whoever answers the terminal of the process that calls is its operator.
            let by = Decider::new(answer.approver, true, Via::Terminal);
            request = self
                .decisions
                .decide(&request.id, ask, &by)
                .await
                .map_err(decide_error)?;
        }
        let mode = match (call.request.wait_for_approval, self.mode) {
            (Some(false), _) => WaitMode::Return,
            (Some(true), WaitMode::Return) => WaitMode::Wait { poll: DEFAULT_POLL },
            (_, configured) => configured,
        };
        if let WaitMode::Wait { poll } = mode {
            let waiting = std::time::Instant::now();
            if request.status == ApprovalStatus::Pending {
                call.request.emit(CallEvent::AwaitingApproval {
                    approval_id: request.id.clone(),
                    tool: request.tool.clone(),
                    expires_at_ms: request.expires_at_ms,
                    requires_confirmation: request.requires_confirmation,
                });
            }
            request = match self
                .desk
                .wait(request, poll, &call.request.cancel, call.request.on_give_up)
                .await
                .map_err(store_error)?
            {
                Waited::Decided(request) => {
                    waited(call, waiting.elapsed(), request.status.as_str());
                    request
                }
                Waited::Cancelled(request) => {
                    waited(call, waiting.elapsed(), "cancelled");
                    let what = if request.status == ApprovalStatus::Abandoned {
                        "; the request is abandoned and can no longer be approved"
                    } else {
                        ""
                    };
                    return Err(CallError::new(
                        ErrorCode::Cancelled,
                        format!("cancelled while waiting for approval {}{what}", request.id),
                    ));
                }
            };
        }
        self.conclude(request).await
    }

    /// Turns a request's state into the call's fate.
    async fn conclude(&self, request: ApprovalRequest) -> Result<ApprovalInfo, CallError> {
        let id = request.id.clone();
        match request.status {
            ApprovalStatus::Approved => {
                if self.desk.store().consume(&id).await.map_err(store_error)? {
                    Ok(ApprovalInfo {
                        approval_id: id,
                        approver: request.decided_by.unwrap_or_default(),
                    })
                } else {
                    Err(CallError::new(
                        ErrorCode::ApprovalRequired,
                        format!("approval {id} was already used by an identical call"),
                    )
                    .with_hint("call again to request a new approval"))
                }
            }
            ApprovalStatus::Denied => {
                self.desk.store().retire(&id).await.map_err(store_error)?;
                let by = request
                    .decided_by
                    .unwrap_or_else(|| "an operator".to_owned());
                let why = request.reason.map(|r| format!(": {r}")).unwrap_or_default();
                Err(CallError::new(
                    ErrorCode::ApprovalDenied,
                    format!("{id} was denied by {by}{why}"),
                )
                .with_details(json!({"approval_id": id}))
                .with_hint("do not retry the same call; change the approach or ask the user"))
            }
            ApprovalStatus::Expired => {
                self.desk.store().retire(&id).await.map_err(store_error)?;
                Err(CallError::new(
                    ErrorCode::ApprovalExpired,
                    format!("{id} expired before anyone decided"),
                )
                .with_details(json!({"approval_id": id}))
                .with_hint("call again to create a new approval request"))
            }
            // Another identical call waiting on the same request gave up first.
            ApprovalStatus::Abandoned => Err(CallError::new(
                ErrorCode::ApprovalRequired,
                format!(
                    "approval {id} was abandoned by another identical call that stopped waiting"
                ),
            )
            .with_details(json!({"approval_id": id}))
            .with_hint("call again to create a new approval request")),
            ApprovalStatus::Pending => {
                let confirm = if request.requires_confirmation {
                    format!(" --confirm {}", request.tool)
                } else {
                    String::new()
                };
                Err(CallError::new(
                    ErrorCode::ApprovalRequired,
                    format!("`{}` needs approval: {id}", request.tool),
                )
                .with_hint(format!(
                    "an operator approves with `toolgate approvals approve {id}{confirm}`; then repeat the identical call"
                ))
                .with_details(json!({
                    "approval_id": id,
                    "expires_at_ms": request.expires_at_ms,
                    "requires_confirmation": request.requires_confirmation,
                })))
            }
        }
    }
}

/// Records how long a call waited for a human and how the request ended.
fn waited(call: &mut Call, wait: std::time::Duration, status: &'static str) {
    toolgate_telemetry::metrics().approval_wait.record(
        wait.as_secs_f64(),
        &[opentelemetry::KeyValue::new(
            toolgate_telemetry::names::APPROVAL_STATUS,
            status,
        )],
    );
    call.approval_wait = Some(wait);
}

#[async_trait]
impl Layer for ApproveLayer {
    fn name(&self) -> &'static str {
        "approve"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let Some(Decision::Ask { confirm }) = call.decision else {
            return next.run(call).await;
        };
        let args = call.args()?.clone();
        let spec = call.entry()?.spec().clone();
        let hash = ApprovalDesk::hash(&args);
        let r = &call.request;
        let store = self.desk.store();
        if let Some(grant) = store
            .find_grant(&r.principal, &r.session_id, &spec.name, &args, &hash)
            .await
            .map_err(store_error)?
        {
            call.approval = Some(ApprovalInfo {
                approval_id: grant.approval_id,
                approver: grant.created_by,
            });
            return next.run(call).await;
        }
        let existing = store
            .find_latest(&r.principal, &spec.name, &hash)
            .await
            .map_err(store_error)?;
        let request = match existing {
            Some(req) => req,
            None => {
                let question = Question {
                    principal: &r.principal,
                    session: &r.session_id,
                    role: &r.role,
                    tool: &spec.name,
                    risk: spec.risk,
                    arguments: &args,
                    requires_confirmation: confirm,
                    identity: r.identity.as_deref(),
                };
                self.desk
                    .open_hashed(&question, hash)
                    .await
                    .map_err(store_error)?
            }
        };
        let info = self.settle(call, request).await?;
        call.approval = Some(info);
        next.run(call).await
    }
}

fn store_error(e: StoreError) -> CallError {
    CallError::new(ErrorCode::Unavailable, format!("approval store: {e}"))
}

fn decide_error(e: Refusal) -> CallError {
    match e {
        Refusal::Store(e) => store_error(e),
        other => CallError::new(ErrorCode::ApprovalDenied, other.to_string()),
    }
}

#[cfg(test)]
mod tests;
