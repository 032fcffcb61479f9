//! What an operator (and `McpHub::status`) sees of each server, and the events a server
//! emits while it runs (progress, logging, state and tool-list changes).

use std::time::SystemTime;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// How the server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    Stdio,
    StreamableHttp,
}

/// Where a server is in its life.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ServerState {
    /// `enabled = false`: never started.
    Disabled,
    /// Starting or restarting; its tools are unavailable meanwhile.
    Connecting,
    /// Serving its tools.
    Ready,
    /// The last attempt failed; the next one starts at `retry_at`.
    Failed {
        error: String,
        #[serde(serialize_with = "rfc3339")]
        retry_at: SystemTime,
    },
    /// Shut down.
    Stopped,
}

fn rfc3339<S: Serializer>(t: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&humantime::format_rfc3339_millis(*t).to_string())
}

/// One server's status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ServerStatus {
    pub name: String,
    /// The catalog source of its tools: `mcp:{name}`.
    pub source: String,
    pub transport: TransportKind,
    #[serde(flatten)]
    pub state: ServerState,
    /// Negotiated protocol version of the current (or last) connection.
    pub protocol_version: Option<String>,
    /// Tools federated into the catalog (after include/exclude).
    pub tools: usize,
    /// Connections established after the first one (reconnects and restarts).
    pub restarts: u32,
    /// Why the server's list changes are not heard but polled (a 2026-07-28 server whose
    /// `subscriptions/listen` failed, ended or is not acknowledged yet); its lists are then
    /// re-read every 60 s. `None` while changes are heard, or the server offers none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub polling: Option<String>,
}

/// Something a server reported or went through. Subscribe with `McpHub::events`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum McpEvent {
    /// `notifications/progress` for a call in flight.
    Progress {
        server: String,
        /// The toolgate call it belongs to, when it is still running.
        call_id: Option<String>,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
    /// `notifications/message` from the server.
    Log {
        server: String,
        level: String,
        logger: Option<String>,
        data: Value,
    },
    /// The server's state changed.
    State { server: String, state: ServerState },
    /// The server's tools were (re)listed and the catalog refreshed.
    ToolsChanged { server: String, tools: Vec<String> },
    /// The server's prompts, resources or resource templates were (re)listed.
    OffersChanged { server: String },
    /// `notifications/resources/updated`: a subscribed resource changed. `uri` is the
    /// server's own URI.
    ResourceUpdated { server: String, uri: String },
}
