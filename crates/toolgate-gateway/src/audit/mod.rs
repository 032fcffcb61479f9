//! Audit (R-EXE-5..7). Two layers share the log:
//! - [`AuditLayer`] is the outermost layer: it records the outcome of EVERY attempt —
//!   unknown tools, refusals, invalid arguments included — and, in durable mode, the record
//!   is fsynced before the result is returned.
//! - [`IntentLayer`] sits just before execution: for write and dangerous tools it records
//!   the attempt (after approval, before acting), fsynced before the tool runs, so a crash
//!   mid-action still leaves evidence that the action was started.
//!
//! Redaction happens inside the log, before anything is written.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use toolgate_protocol::Risk;
use toolgate_store::audit::{AuditLog, AuditRecord, RecordKind};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

fn base_record(call: &Call, kind: RecordKind) -> AuditRecord {
    let spec = call.entry.as_ref().map(|e| e.spec());
    let args = match &call.args {
        Some(a) => a.clone(),
        None => call.request.arguments.for_audit(),
    };
    AuditRecord {
        kind,
        ts: AuditRecord::now_ts(),
        call_id: call.request.call_id.clone(),
        session: call.request.session_id.clone(),
        principal: call.request.principal.clone(),
        role: call.request.role.clone(),
        tool: call.request.tool.clone(),
        source: spec.map(|s| s.source.clone()),
        risk: spec.map(|s| s.risk.as_str().to_owned()),
        arguments: args,
        outcome: "started".to_owned(),
        error: None,
        result: None,
        duration_us: None,
        approver: call.approval.as_ref().map(|a| a.approver.clone()),
        approval_id: call.approval.as_ref().map(|a| a.approval_id.clone()),
    }
}

pub struct AuditLayer {
    log: Arc<AuditLog>,
}

impl AuditLayer {
    pub fn new(log: Arc<AuditLog>) -> Self {
        AuditLayer { log }
    }
}

#[async_trait]
impl Layer for AuditLayer {
    fn name(&self) -> &'static str {
        "audit"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        let outcome = next.run(call).await;
        let mut rec = base_record(call, RecordKind::Outcome);
        rec.duration_us =
            Some(u64::try_from(call.started.elapsed().as_micros()).unwrap_or(u64::MAX));
        match &outcome {
            Ok(out) => {
                rec.outcome = "ok".to_owned();
                let mut result = json!({"data": out.data});
                if !out.content.is_empty() {
                    result["content"] = json!(out.content);
                }
                if let Some(g) = &call.governance {
                    result["truncated"] = json!(g);
                }
                rec.result = Some(result);
            }
            Err(e) => {
                rec.outcome = e.code.as_str().to_owned();
                rec.error = Some(e.message.clone());
                if let Some(d) = &e.details {
                    rec.result = Some(json!({"details": d}));
                }
            }
        }
        if let Err(e) = self.log.append(rec).await {
            // The call already happened; failing it now would invite a retry that acts
            // twice. Say so loudly instead.
            tracing::error!(call_id = %call.request.call_id, error = %e, "audit outcome record not written");
        }
        outcome
    }
}

pub struct IntentLayer {
    log: Arc<AuditLog>,
}

impl IntentLayer {
    pub fn new(log: Arc<AuditLog>) -> Self {
        IntentLayer { log }
    }
}

#[async_trait]
impl Layer for IntentLayer {
    fn name(&self) -> &'static str {
        "intent"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        if call.entry()?.spec().risk >= Risk::Write {
            let rec = base_record(call, RecordKind::Attempt);
            if let Err(e) = self.log.append(rec).await {
                // No evidence, no action.
                return Err(toolgate_protocol::CallError::new(
                    toolgate_protocol::ErrorCode::Unavailable,
                    format!("the audit log cannot record this attempt, so it was not run: {e}"),
                ));
            }
        }
        next.run(call).await
    }
}
