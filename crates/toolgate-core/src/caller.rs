//! The client behind a call, as a running tool may reach it: log messages, and the requests
//! the client declared it answers — sampling (an LLM completion), elicitation (a question to
//! its user), roots (its workspace folders). An MCP front end fills it in for calls that
//! arrive on a session that can carry such requests; every other call has none, and a tool
//! that needs one falls back to its own policy (a federated server's request goes to the
//! approval channel or is refused).
//!
//! Messages are JSON in MCP's wire shape (`params` of `notifications/message`,
//! `sampling/createMessage`, `elicitation/create`, `roots/list`), so no protocol crate is
//! needed here.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

/// A request a tool may send to its caller's client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallerRequest {
    /// `sampling/createMessage`.
    Sampling,
    /// `elicitation/create`.
    Elicitation,
    /// `roots/list`.
    Roots,
}

impl CallerRequest {
    /// The JSON-RPC method.
    pub fn method(self) -> &'static str {
        match self {
            CallerRequest::Sampling => "sampling/createMessage",
            CallerRequest::Elicitation => "elicitation/create",
            CallerRequest::Roots => "roots/list",
        }
    }
}

/// One request to the caller's client: what is asked, its `params` in MCP's wire shape, and
/// the name the asker gave it, if any. A 2026-07-28 server names each of its input requests
/// (the keys of `inputRequests`); a front end that turns questions into its own
/// `InputRequiredResult` keeps that name, so the client answers what the upstream asked
/// under the upstream's name.
#[derive(Debug, Clone, PartialEq)]
pub struct CallerQuestion {
    pub request: CallerRequest,
    pub params: Value,
    pub key: Option<String>,
}

impl CallerQuestion {
    /// An unnamed question (a 2025-11-25 server's mid-call request).
    pub fn new(request: CallerRequest, params: Value) -> Self {
        CallerQuestion {
            request,
            params,
            key: None,
        }
    }

    /// The question under `key`.
    pub fn named(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }
}

/// The client's JSON-RPC error for a request (or why it could not be asked).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} ({code})")]
pub struct CallerError {
    pub code: i32,
    pub message: String,
    pub data: Option<Value>,
}

/// The channel to one call's client.
#[async_trait]
pub trait CallerChannel: Send + Sync {
    /// Whether the client declared it answers `request`.
    fn answers(&self, request: CallerRequest) -> bool;

    /// Sends `notifications/message` with `params` (best effort: a closed client is fine).
    async fn log(&self, params: Value);

    /// Sends the question; the client's result, or its error.
    async fn ask(&self, question: CallerQuestion) -> Result<Value, CallerError>;

    /// Whether the call is parked until its client's next request (a stateless client
    /// between rounds): it asks nothing more until then.
    fn is_parked(&self) -> bool {
        false
    }
}

/// A call's client, if it can be reached; cheap to clone.
#[derive(Clone, Default)]
pub struct CallerLink(Option<Arc<dyn CallerChannel>>);

impl CallerLink {
    pub fn new(channel: Arc<dyn CallerChannel>) -> Self {
        CallerLink(Some(channel))
    }

    /// No client to reach.
    pub fn none() -> Self {
        CallerLink(None)
    }

    /// The channel, whatever it answers (for a layer that wraps it).
    pub fn channel(&self) -> Option<&Arc<dyn CallerChannel>> {
        self.0.as_ref()
    }

    /// The channel, when the client answers `request`.
    pub fn answering(&self, request: CallerRequest) -> Option<&Arc<dyn CallerChannel>> {
        self.0.as_ref().filter(|c| c.answers(request))
    }

    /// Whether the call waits for its client's next request (see
    /// [`CallerChannel::is_parked`]).
    pub fn is_parked(&self) -> bool {
        self.0.as_ref().is_some_and(|c| c.is_parked())
    }

    /// Sends a log message if there is a client.
    pub async fn log(&self, params: Value) {
        if let Some(channel) = &self.0 {
            channel.log(params).await;
        }
    }
}

impl std::fmt::Debug for CallerLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "CallerLink(client)"
        } else {
            "CallerLink(none)"
        })
    }
}
