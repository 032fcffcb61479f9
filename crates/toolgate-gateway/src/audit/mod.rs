//! Audit (R-EXE-5..7). Two layers share the log:
//! - [`AuditLayer`] is the outermost layer: it records the outcome of EVERY attempt —
//!   unknown tools, refusals, invalid arguments included — and, in durable mode, the record
//!   is fsynced before the result is returned.
//! - [`IntentLayer`] sits just before execution: for write and dangerous tools it records
//!   the attempt (after approval, before acting), fsynced before the tool runs, so a crash
//!   mid-action still leaves evidence that the action was started.
//!
//!   It also hands the tool a caller whose every question to the client is audited
//!   (the private `asks` module).
//!
//! Redaction happens inside the log, before anything is written. The records of acts that are
//! not calls (a sandbox's connection, an elicitation) are built in [`records`]; a decision's
//! in [`crate::approve::Decisions`].

mod asks;
pub mod records;

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Map, Value, json};
use toolgate_audit::{AuditLog, AuditOutcome, AuditRecord, RecordKind};
use toolgate_protocol::Risk;

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};

/// The record's common fields, with `args` as the arguments.
fn base_record(call: &Call, kind: RecordKind, args: Value) -> AuditRecord {
    let spec = call.entry.as_ref().map(|e| e.spec());
    AuditRecord {
        kind,
        ts: AuditRecord::now_ts(),
        call_id: call.request.call_id.clone(),
        session: call.request.session_id.clone(),
        principal: call.request.principal.clone(),
        role: call.request.role.clone(),
        tool: call.request.tool.clone(),
        source: spec.map(|s| s.source.clone()),
        risk: spec.map(|s| s.risk),
        arguments: args,
        outcome: AuditOutcome::Started,
        error: None,
        result: None,
        duration_us: None,
        approver: call.approval.as_ref().map(|a| a.approver.clone()),
        approval_id: call.approval.as_ref().map(|a| a.approval_id.clone()),
        issuer: call.request.identity.as_ref().map(|i| i.issuer.clone()),
        subject: call.request.identity.as_ref().map(|i| i.subject.clone()),
        policy_rule: call.policy_rule.clone(),
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
        // The call is over: its arguments move into the record instead of being copied.
        let args = match call.args.take() {
            Some(args) => args,
            None => call.request.arguments.for_audit(),
        };
        let mut rec = base_record(call, RecordKind::Outcome, args);
        rec.duration_us =
            Some(u64::try_from(call.started.elapsed().as_micros()).unwrap_or(u64::MAX));
        match &outcome {
            Ok(out) => {
                rec.outcome = AuditOutcome::Ok;
                // A plain clone: `json!` would re-serialise the data through `to_value`.
                let mut result = Map::new();
                result.insert("data".to_owned(), out.data.clone());
                if !out.content.is_empty() {
                    result.insert("content".to_owned(), json!(out.content));
                }
                if let Some(g) = &call.governance {
                    result.insert("truncated".to_owned(), json!(g));
                }
                if !call.dropped_nulls.is_empty() {
                    result.insert("dropped_null".to_owned(), json!(call.dropped_nulls));
                }
                rec.result = Some(Value::Object(result));
            }
            Err(e) => {
                rec.outcome = AuditOutcome::Failed(e.code);
                rec.error = Some(e.message.clone());
                let mut result = Map::new();
                if let Some(d) = &e.details {
                    result.insert("details".to_owned(), d.clone());
                }
                if !call.dropped_nulls.is_empty() {
                    result.insert("dropped_null".to_owned(), json!(call.dropped_nulls));
                }
                if !result.is_empty() {
                    rec.result = Some(Value::Object(result));
                }
            }
        }
        if let Err(e) = self.log.append(rec).await {
            let acted = call
                .entry
                .as_ref()
                .is_some_and(|e| e.spec().risk >= Risk::Write);
            if outcome.is_err() || acted {
                // A write already happened (its attempt record is written): failing it now
                // would invite a retry that acts twice. Say so loudly instead.
                tracing::error!(call_id = %call.request.call_id, error = %e, "audit outcome record not written");
            } else {
                // A read acted on nothing: without its record, its data is not released.
                tracing::error!(call_id = %call.request.call_id, error = %e, "audit outcome record not written; result withheld");
                return Err(toolgate_protocol::CallError::new(
                    toolgate_protocol::ErrorCode::Unavailable,
                    format!(
                        "the audit log cannot record this call, so its result is withheld: {e}"
                    ),
                ));
            }
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
        // Most calls have no client to ask: they build no record and keep their link.
        if let Some(channel) = call.request.caller.channel() {
            let questions = base_record(call, RecordKind::Outcome, Value::Null);
            call.request.caller = asks::audited(Arc::clone(channel), &self.log, questions);
        }
        if call.entry()?.spec().risk >= Risk::Write {
            let args = match &call.args {
                Some(args) => args.clone(),
                None => call.request.arguments.for_audit(),
            };
            let rec = base_record(call, RecordKind::Attempt, args);
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

#[cfg(test)]
mod tests;
