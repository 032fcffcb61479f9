//! The three APIs. Each provider maps [`ModelRequest`] onto its documented wire format and
//! reads answers as untyped JSON, so an unknown item type or field never fails a response.
//! What differs between them is their `Wire`; the client around it — one POST, traced,
//! through the retrying `Http`, answered whole or streamed — is written once, here.

mod anthropic;
mod openai_chat;
mod openai_responses;

use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use reqwest::header::HeaderMap;
use serde_json::Value;
use toolgate_protocol::ExportFormat;

use crate::client::{EventSink, ModelClient, ModelError};
use crate::http::Http;
use crate::types::{ModelRequest, ModelResponse};

pub use anthropic::AnthropicClient;
pub use openai_chat::OpenAiChatClient;
pub use openai_responses::OpenAiResponsesClient;

/// One model API's wire format: where a request goes, what it carries and how its answer —
/// whole or as a stream of events — is read. Every [`Wire`] is a [`ModelClient`].
#[async_trait]
trait Wire: Send + Sync + std::fmt::Debug {
    /// The provider's name in the configuration and the telemetry.
    const PROVIDER: &'static str;
    /// How the API wants tool definitions.
    const FORMAT: ExportFormat;
    /// The endpoint, below the base URL.
    const PATH: &'static str;
    /// What an answer is called in errors ("the completion").
    const ANSWER: &'static str;

    fn http(&self) -> &Http;
    fn model(&self) -> &str;
    /// The headers (the API key) of every request.
    fn headers(&self) -> Result<HeaderMap, ModelError>;
    /// The request body, streamed or not.
    fn body(&self, request: &ModelRequest, stream: bool) -> Value;
    /// A whole answer.
    fn parse(answer: &Value) -> Result<ModelResponse, ModelError>;
    /// A streamed answer: each event to `sink` as it arrives, the assembled answer at the end.
    async fn read_stream(
        &self,
        resp: reqwest::Response,
        sink: EventSink<'_>,
    ) -> Result<ModelResponse, ModelError>;
}

#[async_trait]
impl<W: Wire> ModelClient for W {
    fn provider(&self) -> &'static str {
        W::PROVIDER
    }

    fn model(&self) -> &str {
        Wire::model(self)
    }

    fn tool_format(&self) -> ExportFormat {
        W::FORMAT
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let headers = crate::http::traced(self.headers()?, request);
        let body = self.body(request, false);
        let answer = self
            .http()
            .post_json(W::PATH, &headers, &body, W::ANSWER)
            .await?;
        W::parse(&answer)
    }

    async fn stream(
        &self,
        request: &ModelRequest,
        sink: EventSink<'_>,
    ) -> Result<ModelResponse, ModelError> {
        let headers = crate::http::traced(self.headers()?, request);
        let resp = self
            .http()
            .post(W::PATH, &headers, &self.body(request, true))
            .await?;
        self.read_stream(resp, sink).await
    }
}

/// `v[key]` as a string, or "".
fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `v[key]` as a count, or 0.
fn u64_of(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// An id for a tool call whose server sent none (some compatible servers): unique in the
/// process, so results still match their calls.
fn fallback_call_id(index: usize) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!("call_tg{}_{index}", NEXT.fetch_add(1, Ordering::Relaxed))
}
