//! The agent loop as telemetry sees it (GenAI semantic conventions v0.1.0): a run is an
//! `invoke_agent toolgate` span; each model request under it a CLIENT span
//! `chat {gen_ai.request.model}` with the provider, the token usage and the finish reason,
//! whose context goes out in the request's `traceparent` header; `gen_ai.client.operation.
//! duration` and `gen_ai.client.token.usage` for every request, traced or not. The tool
//! calls of a run are gateway calls under the run's span.

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind};
use toolgate_core::TraceContext;
use toolgate_telemetry::{metrics, names, spans};

use crate::client::ModelError;
use crate::types::{ModelResponse, StopReason};

/// `gen_ai.provider.name` of a provider as toolgate names it.
pub fn provider_name(provider: &str) -> &str {
    match provider {
        "openai-chat" | "openai-responses" => "openai",
        other => other,
    }
}

/// The span of one [`crate::Agent::run`].
pub(crate) fn run_span(provider: &str, model: &str) -> Option<spans::Span> {
    spans::start(
        "invoke_agent toolgate",
        SpanKind::Internal,
        None,
        vec![
            KeyValue::new(names::GEN_AI_OPERATION_NAME, "invoke_agent"),
            KeyValue::new("gen_ai.agent.name", "toolgate"),
            KeyValue::new(
                names::GEN_AI_PROVIDER_NAME,
                provider_name(provider).to_owned(),
            ),
            KeyValue::new(names::GEN_AI_REQUEST_MODEL, model.to_owned()),
        ],
    )
}

/// One model request in flight.
pub(crate) struct ModelOp {
    span: Option<spans::Span>,
    started: Instant,
    attributes: Vec<KeyValue>,
}

impl ModelOp {
    pub(crate) fn start(provider: &str, model: &str, parent: Option<&TraceContext>) -> ModelOp {
        let attributes = vec![
            KeyValue::new(names::GEN_AI_OPERATION_NAME, "chat"),
            KeyValue::new(
                names::GEN_AI_PROVIDER_NAME,
                provider_name(provider).to_owned(),
            ),
            KeyValue::new(names::GEN_AI_REQUEST_MODEL, model.to_owned()),
        ];
        let span = spans::start(
            format!("chat {model}"),
            SpanKind::Client,
            parent,
            attributes.clone(),
        );
        ModelOp {
            span,
            started: Instant::now(),
            attributes,
        }
    }

    /// The context the request carries: this span's, else the run's.
    pub(crate) fn trace(&self, run: Option<TraceContext>) -> Option<TraceContext> {
        spans::pass_on(self.span.as_ref(), run)
    }

    pub(crate) fn end(mut self, outcome: &Result<ModelResponse, ModelError>) {
        let m = metrics();
        let mut attributes = self.attributes;
        match outcome {
            Ok(response) => {
                for (kind, n) in [
                    ("input", response.usage.input_tokens),
                    ("output", response.usage.output_tokens),
                ] {
                    let mut a = attributes.clone();
                    a.push(KeyValue::new(names::GEN_AI_TOKEN_TYPE, kind));
                    m.model_tokens.record(n, &a);
                }
                if let Some(span) = self.span.as_mut() {
                    let to_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                    span.set_attributes([
                        KeyValue::new(
                            names::GEN_AI_USAGE_INPUT_TOKENS,
                            to_i64(response.usage.input_tokens),
                        ),
                        KeyValue::new(
                            names::GEN_AI_USAGE_OUTPUT_TOKENS,
                            to_i64(response.usage.output_tokens),
                        ),
                        KeyValue::new(
                            names::GEN_AI_RESPONSE_FINISH_REASONS,
                            opentelemetry::Value::Array(
                                vec![opentelemetry::StringValue::from(finish_reason(
                                    &response.stop,
                                ))]
                                .into(),
                            ),
                        ),
                    ]);
                }
            }
            Err(e) => {
                let kind = error_type(e);
                attributes.push(KeyValue::new(names::ERROR_TYPE, kind.clone()));
                if let Some(span) = self.span.as_mut() {
                    spans::fail(span, &kind);
                }
            }
        }
        m.model_duration
            .record(self.started.elapsed().as_secs_f64(), &attributes);
        if let Some(mut span) = self.span.take() {
            span.end();
        }
    }
}

fn finish_reason(stop: &StopReason) -> String {
    match stop {
        StopReason::EndTurn => "stop".to_owned(),
        StopReason::ToolUse => "tool_call".to_owned(),
        StopReason::MaxTokens => "length".to_owned(),
        StopReason::StopSequence => "stop".to_owned(),
        StopReason::Refusal => "refusal".to_owned(),
        StopReason::ContentFilter => "content_filter".to_owned(),
        StopReason::Other(o) => o.clone(),
    }
}

/// `error.type`: the HTTP status when the server answered one, else the kind of failure.
fn error_type(e: &ModelError) -> String {
    match e {
        ModelError::Status { status, .. } | ModelError::RetriesExhausted { status, .. } => {
            status.to_string()
        }
        ModelError::Config(_) => "config".to_owned(),
        ModelError::Transport(_) => "transport".to_owned(),
        ModelError::Protocol(_) => "protocol".to_owned(),
        ModelError::Cancelled => "cancelled".to_owned(),
    }
}
