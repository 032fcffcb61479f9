//! The agent loop (R-AGT): a provider-neutral [`ModelClient`] with three hand-written
//! providers, and the loop that sends every tool call a model makes through the gateway.
//!
//! # Layout
//! - [`types`]: the conversation ([`Message`], [`AssistantTurn`], [`ToolCall`],
//!   [`ToolResult`]), [`ModelRequest`] / [`ModelResponse`], [`StopReason`], [`StreamEvent`].
//! - [`client`](mod@client): the [`ModelClient`] trait and [`ModelError`].
//! - [`providers`]: OpenAI Chat Completions, OpenAI Responses, Anthropic Messages.
//! - [`config`]: the `[model]` table ([`ModelConfig`]) and [`connect`].
//! - [`agent`]: the loop ([`Agent`], [`AgentOptions`], [`AgentEvent`], [`Observer`]).
//! - [`select`]: [`ToolSelector`], the tools offered at each step ([`AllVisible`] by default;
//!   Tool RAG's retrieval selector lives in toolgate-app, beside this crate and toolgate-rag).
//! - [`session`]: [`HistoryStore`], conversations saved per session id.
//! - `fake` (feature `fake`): a scripted model server speaking all three wire formats.
//! - [`telemetry`]: the run's and each model request's spans and metrics.
//! - `http`, [`sse`]: the shared POST with retries (429 retry-after, 5xx backoff) and the
//!   server-sent-events parser.
//!
//! ```
//! use toolgate_agent::{Message, ModelRequest, ToolChoice};
//! let request = ModelRequest {
//!     system: Some("Be brief.".into()),
//!     messages: vec![Message::user("What is in README.md?")],
//!     tool_choice: ToolChoice::Auto,
//!     ..ModelRequest::default()
//! };
//! assert_eq!(request.messages.len(), 1);
//! ```

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)
)]

pub mod agent;
pub mod client;
pub mod config;
#[cfg(feature = "fake")]
pub mod fake;
mod http;
pub mod providers;
pub mod select;
pub mod session;
pub mod sse;
pub mod telemetry;
pub mod types;

pub use agent::{
    Agent, AgentError, AgentEvent, AgentOptions, Checkpoint, Observer, RunOutcome, Silent,
};
pub use client::{EventSink, ModelClient, ModelError};
pub use config::{ModelConfig, ModelConfigError, ModelPrice, Provider, connect, connect_with_key};
pub use select::{AllVisible, StepView, ToolSelector, visible_tools};
pub use session::{HistoryBackend, HistoryStore, SavedSession, SessionError};
pub use types::{
    AssistantTurn, Message, ModelRequest, ModelResponse, NativeTurn, StopReason, StreamEvent,
    ToolCall, ToolChoice, ToolResult, Usage,
};
