//! [`ModelClient`]: one trait for every model API, and [`ModelError`], what can go wrong
//! talking to one.

use async_trait::async_trait;
use toolgate_protocol::ExportFormat;

use crate::types::{ModelRequest, ModelResponse, StreamEvent};

/// Receives streaming deltas as they arrive.
pub type EventSink<'a> = &'a mut (dyn FnMut(StreamEvent) + Send);

/// A model behind some API. Implementations are stateless between calls: everything a call
/// needs is in the [`ModelRequest`] (chaining state travels in
/// [`NativeTurn`](crate::NativeTurn)).
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// The provider name (`openai-chat`, `openai-responses`, `anthropic`).
    fn provider(&self) -> &'static str;

    /// The model name sent with each request.
    fn model(&self) -> &str;

    /// The tool-definition format this API takes.
    fn tool_format(&self) -> ExportFormat;

    /// One non-streaming call.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;

    /// One streaming call: deltas go to `sink` as they arrive; the assembled response is
    /// returned at the end, the same as [`complete`](Self::complete) would have returned.
    async fn stream(
        &self,
        request: &ModelRequest,
        sink: EventSink<'_>,
    ) -> Result<ModelResponse, ModelError>;
}

/// Why a model call failed. Every message says what happened and, where possible, what to do.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Bad `[model]` settings or a missing key.
    #[error("{0}")]
    Config(String),
    /// The server answered with an error status that retrying does not fix.
    #[error("the model server answered {status}: {message}{hint}", hint = hint_for(*status))]
    Status { status: u16, message: String },
    /// 429 or 5xx, still failing after the retries.
    #[error("the model server answered {status} {attempts} times; giving up: {message}")]
    RetriesExhausted {
        status: u16,
        attempts: u32,
        message: String,
    },
    /// The destination is refused by `[egress]`, or the connection failed.
    #[error("cannot reach the model server: {0}")]
    Transport(String),
    /// The answer could not be understood.
    #[error("the model server sent something unexpected: {0}")]
    Protocol(String),
    /// The stream or call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

fn hint_for(status: u16) -> &'static str {
    match status {
        401 | 403 => " (check the API key in the variable named by [model] api_key_env)",
        404 => " (check [model] base_url and model)",
        400 | 422 => " (the server rejected the request)",
        _ => "",
    }
}

impl ModelError {
    /// Whether another attempt might succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            ModelError::RetriesExhausted { .. } | ModelError::Transport(_)
        )
    }
}
