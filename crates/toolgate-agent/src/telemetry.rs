//! The agent loop as telemetry sees it (GenAI semantic conventions v0.1.0): a run is an
//! `invoke_agent toolgate` span; each model request under it a CLIENT span
//! `chat {gen_ai.request.model}` with the provider, the token usage and the finish reason,
//! whose context goes out in the request's `traceparent` header; `gen_ai.client.operation.
//! duration` and `gen_ai.client.token.usage` for every request, traced or not. The tool
//! calls of a run are gateway calls under the run's span.

use std::borrow::Cow;

use opentelemetry::trace::SpanKind;
use opentelemetry::{KeyValue, StringValue};
use toolgate_core::TraceContext;
use toolgate_telemetry::operation::Operation;
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
pub(crate) struct ModelOp(Operation);

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
        ModelOp(Operation::start(
            || Cow::Owned(format!("chat {model}")),
            SpanKind::Client,
            parent,
            attributes,
            |m| &m.model_duration,
        ))
    }

    /// The context the request carries: this span's, else the run's.
    pub(crate) fn trace(&self, run: Option<TraceContext>) -> Option<TraceContext> {
        self.0.trace(run)
    }

    pub(crate) fn end(mut self, outcome: &Result<ModelResponse, ModelError>) {
        let response = match outcome {
            Ok(response) => response,
            Err(e) => return self.0.end(Some(&error_type(e))),
        };
        let usage = response.usage;
        for (kind, n) in [
            ("input", usage.input_tokens),
            ("output", usage.output_tokens),
        ] {
            let mut a = self.0.attributes().to_vec();
            a.push(KeyValue::new(names::GEN_AI_TOKEN_TYPE, kind));
            metrics().model_tokens.record(n, &a);
        }
        let to_i64 = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        let reasons = vec![StringValue::from(finish_reason(&response.stop))];
        self.0.span_attributes(vec![
            KeyValue::new(names::GEN_AI_USAGE_INPUT_TOKENS, to_i64(usage.input_tokens)),
            KeyValue::new(
                names::GEN_AI_USAGE_OUTPUT_TOKENS,
                to_i64(usage.output_tokens),
            ),
            KeyValue::new(
                names::GEN_AI_RESPONSE_FINISH_REASONS,
                opentelemetry::Value::Array(reasons.into()),
            ),
        ]);
        self.0.end(None);
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
