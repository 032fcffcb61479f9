//! Telemetry (issue 17): the outermost layer. Every call, whatever ends it, is counted and
//! timed (`toolgate.calls`, `toolgate.call.duration`), and with tracing on becomes a span
//! `execute_tool {gen_ai.tool.name}` under the caller's trace context (GenAI semantic
//! conventions v0.1.0): `gen_ai.*` and `error.type` (the closed code), toolgate's role,
//! principal, risk, policy decision and rule, approval and its wait, offloaded result; each
//! layer the call entered is an event at the time it entered. The span's context replaces
//! the caller's on the call, so a federated MCP server's span hangs under this one.
//!
//! A tool the catalog does not have is counted as `_unknown` ([`names::UNKNOWN_TOOL`]), so
//! made-up names cannot grow the series without bound; spans carry names cut to 128 bytes.
//!
//! Arguments and results are on the span only when `[telemetry] record_arguments` is on,
//! and then only as the redactor leaves them — the same redaction as the audit log.

use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind};
use serde_json::Value;
use toolgate_store::redact::Redactor;
use toolgate_telemetry::{metrics, names, spans};

use crate::call::{Call, Outcome};
use crate::layer::{Layer, Next};
use crate::policy::Decision;

/// Longest recorded argument or result text; longer ones are cut (on a char boundary).
const MAX_RECORDED: usize = 8 * 1024;

pub struct TelemetryLayer {
    redactor: Arc<Redactor>,
}

impl TelemetryLayer {
    pub fn new(redactor: Arc<Redactor>) -> Self {
        TelemetryLayer { redactor }
    }
}

#[async_trait]
impl Layer for TelemetryLayer {
    fn name(&self) -> &'static str {
        "telemetry"
    }

    async fn handle(&self, call: &mut Call, next: Next<'_>) -> Outcome {
        // With tracing off nothing is built: no name, no attributes.
        let mut span = spans::tracer()
            .and_then(|_| {
                let named = names::bounded(&call.request.tool);
                spans::start(
                    format!("{} {named}", names::EXECUTE_TOOL),
                    SpanKind::Internal,
                    call.request.trace.as_ref(),
                    vec![
                        KeyValue::new(names::GEN_AI_OPERATION_NAME, names::EXECUTE_TOOL),
                        KeyValue::new(names::GEN_AI_TOOL_NAME, named.to_owned()),
                    ],
                )
            })
            .filter(|s| s.is_recording());
        if let Some(s) = &span {
            call.request.trace = spans::pass_on(Some(s), call.request.trace.take());
            call.stages = Some(Vec::with_capacity(12));
        }
        let outcome = next.run(call).await;
        let elapsed = call.started.elapsed();
        let code = match &outcome {
            Ok(_) => "ok",
            Err(e) => e.code.as_str(),
        };
        if let Some(m) = metrics::recording() {
            // Only catalog names label a series; anything a caller made up is one series.
            let label = match &call.entry {
                Some(_) => call.request.tool.clone(),
                None => names::UNKNOWN_TOOL.to_owned(),
            };
            let tool = KeyValue::new(names::GEN_AI_TOOL_NAME, label);
            let result = KeyValue::new(names::OUTCOME, code);
            m.calls.add(
                1,
                &[
                    tool.clone(),
                    result.clone(),
                    KeyValue::new(names::ROLE, call.request.role.to_string()),
                ],
            );
            m.call_duration
                .record(elapsed.as_secs_f64(), &[tool, result]);
        }
        if let Some(s) = span.as_mut() {
            self.describe(s, call, &outcome);
            s.end();
        }
        outcome
    }
}

impl TelemetryLayer {
    fn describe(&self, span: &mut spans::Span, call: &mut Call, outcome: &Outcome) {
        let r = &call.request;
        let mut attrs = vec![
            KeyValue::new(names::GEN_AI_TOOL_CALL_ID, r.call_id.clone()),
            KeyValue::new(names::ROLE, r.role.to_string()),
            KeyValue::new(names::PRINCIPAL, r.principal.to_string()),
        ];
        if let Some(entry) = &call.entry {
            let spec = entry.spec();
            let kind = if spec.source.starts_with("mcp") {
                "extension"
            } else {
                "function"
            };
            attrs.push(KeyValue::new(names::GEN_AI_TOOL_TYPE, kind));
            attrs.push(KeyValue::new(names::RISK, spec.risk.as_str()));
            attrs.push(KeyValue::new(names::SOURCE, spec.source.clone()));
        }
        if let Some(d) = call.decision {
            let d = match d {
                Decision::Allow => "allow",
                Decision::Ask { .. } => "ask",
                Decision::Deny => "deny",
            };
            attrs.push(KeyValue::new(names::POLICY_DECISION, d));
        }
        if let Some(rule) = &call.policy_rule {
            attrs.push(KeyValue::new(names::POLICY_RULE, rule.clone()));
        }
        if let Some(a) = &call.approval {
            attrs.push(KeyValue::new(names::APPROVAL_ID, a.approval_id.clone()));
        }
        if let Some(wait) = call.approval_wait {
            attrs.push(KeyValue::new(
                names::APPROVAL_WAIT_MS,
                i64::try_from(wait.as_millis()).unwrap_or(i64::MAX),
            ));
        }
        if let Some(g) = &call.governance {
            attrs.push(KeyValue::new(
                names::RESULT_OFFLOADED,
                g.result_id.is_some(),
            ));
            if let Some(id) = &g.result_id {
                attrs.push(KeyValue::new(names::RESULT_ID, id.clone()));
            }
        }
        if toolgate_telemetry::install::record_arguments() {
            let args = match &call.args {
                Some(v) => v.clone(),
                None => call.request.arguments.for_audit(),
            };
            attrs.push(KeyValue::new(
                names::GEN_AI_TOOL_CALL_ARGUMENTS,
                self.recorded(&args),
            ));
            if let Ok(out) = outcome {
                attrs.push(KeyValue::new(
                    names::GEN_AI_TOOL_CALL_RESULT,
                    self.recorded(&out.data),
                ));
            }
        }
        span.set_attributes(attrs);
        // Each layer the call entered, at the time it entered.
        let start = SystemTime::now() - call.started.elapsed();
        for (stage, at) in call.stages.take().unwrap_or_default() {
            let offset = at.saturating_duration_since(call.started);
            span.add_event_with_timestamp(stage, start + offset, Vec::new());
        }
        if let Err(e) = outcome {
            spans::fail(span, e.code.as_str());
        }
    }

    /// `value` as the redactor leaves it, as JSON text of at most [`MAX_RECORDED`] bytes.
    fn recorded(&self, value: &Value) -> String {
        let mut text = self.redactor.redact_value(value).to_string();
        if text.len() > MAX_RECORDED {
            let mut cut = MAX_RECORDED;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        text
    }
}
