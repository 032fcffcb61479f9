//! The questions a running tool asks its caller's client — a federated server's
//! `sampling/createMessage`, `elicitation/create` or `roots/list` passed on to the client —
//! each audited as a record of its own: data moves both ways (the server's prompt or
//! question out, the client's completion, form or folders back in), so it leaves the same
//! evidence as a call. The record names the method as its tool, the calling tool under
//! `arguments.asked_by`, and has the call's id with `.ask{n}` appended; the log redacts it
//! like any other record.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_audit::{AuditLog, AuditOutcome, AuditRecord};
use toolgate_core::{CallerChannel, CallerError, CallerLink, CallerQuestion, CallerRequest};

use toolgate_protocol::ErrorCode;

/// A call's client, every question to it audited.
struct AuditedCaller {
    inner: Arc<dyn CallerChannel>,
    log: Arc<AuditLog>,
    /// The call's record, the template of each question's.
    call: AuditRecord,
    asked: AtomicU32,
}

/// The client behind `inner` with every question audited after `call` (the call's outcome
/// record, its fields before the outcome).
pub(super) fn audited(
    inner: Arc<dyn CallerChannel>,
    log: &Arc<AuditLog>,
    call: AuditRecord,
) -> CallerLink {
    CallerLink::new(Arc::new(AuditedCaller {
        inner,
        log: Arc::clone(log),
        call,
        asked: AtomicU32::new(0),
    }))
}

impl AuditedCaller {
    fn record(
        &self,
        question: &CallerQuestion,
        answer: &Result<Value, CallerError>,
        started: Instant,
    ) -> AuditRecord {
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let mut rec = self.call.clone();
        rec.ts = AuditRecord::now_ts();
        rec.call_id = format!("{}.ask{n}", self.call.call_id);
        rec.tool = question.request.method().to_owned();
        rec.arguments = json!({
            "asked_by": self.call.tool,
            "key": question.key,
            "params": question.params,
        });
        rec.duration_us = Some(u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX));
        match answer {
            Ok(value) => {
                rec.outcome = AuditOutcome::Ok;
                rec.result = Some(value.clone());
            }
            Err(e) => {
                rec.outcome = AuditOutcome::Failed(ErrorCode::ExecutionFailed);
                rec.error = Some(format!("the client answered with an error: {e}"));
            }
        }
        rec
    }
}

#[async_trait]
impl CallerChannel for AuditedCaller {
    fn answers(&self, request: CallerRequest) -> bool {
        self.inner.answers(request)
    }

    async fn log(&self, params: Value) {
        self.inner.log(params).await;
    }

    fn is_parked(&self) -> bool {
        self.inner.is_parked()
    }

    async fn ask(&self, question: CallerQuestion) -> Result<Value, CallerError> {
        let started = Instant::now();
        let answer = self.inner.ask(question.clone()).await;
        let rec = self.record(&question, &answer, started);
        if let Err(e) = self.log.append(rec).await {
            // The answer is already given; failing it now would not take it back.
            tracing::error!(call_id = %self.call.call_id, error = %e, "audit record of a question to the client not written");
        }
        answer
    }
}
