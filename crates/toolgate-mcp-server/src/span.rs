//! The server side of an MCP request as telemetry sees it (GenAI semantic conventions
//! v0.1.0, MCP): a SERVER span `{mcp.method.name} {target}` under the caller's context, and
//! `mcp.server.operation.duration` — for `tools/call` from every transport (rmcp's
//! sessions, stateless requests, the JSON answers of `fast`, stdio) and for every other
//! request the handler answers (`tools/list`, resources, prompts, completion, logging).
//!
//! `mcp.session.id` is recorded for requests in a session, as the conventions recommend;
//! a stateless (2026-07-28) request has none. A `tools/call` whose result is an error
//! (`isError`) is `error.type = tool_error`, as the conventions say.

use std::borrow::Cow;

use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;
use toolgate_core::TraceContext;
use toolgate_telemetry::names;
use toolgate_telemetry::operation::Operation;

/// How the request arrived (`network.transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Streamable HTTP.
    Tcp,
    /// stdio.
    Pipe,
}

impl Transport {
    fn as_str(self) -> &'static str {
        match self {
            Transport::Tcp => "tcp",
            Transport::Pipe => "pipe",
        }
    }
}

/// What is known of a request when it arrives.
#[derive(Debug, Clone)]
pub struct Arrival<'a> {
    pub method: &'static str,
    /// The tool of a `tools/call`.
    pub tool: Option<&'a str>,
    /// Whether the catalog has that tool (else metrics count it as `_unknown`).
    pub tool_known: bool,
    pub request_id: Option<String>,
    /// `None` for stateless requests.
    pub session: Option<&'a str>,
    pub protocol: Option<String>,
    pub transport: Transport,
    /// The caller's context.
    pub parent: Option<&'a TraceContext>,
}

/// One request being answered.
pub struct ServerOp(Operation);

impl ServerOp {
    pub fn start(a: Arrival<'_>) -> ServerOp {
        let mut attributes = vec![
            KeyValue::new(names::MCP_METHOD_NAME, a.method),
            KeyValue::new(names::NETWORK_TRANSPORT, a.transport.as_str()),
        ];
        if let Some(tool) = a.tool {
            let label = if a.tool_known {
                tool
            } else {
                names::UNKNOWN_TOOL
            };
            attributes.push(KeyValue::new(names::GEN_AI_TOOL_NAME, label.to_owned()));
            attributes.push(KeyValue::new(
                names::GEN_AI_OPERATION_NAME,
                names::EXECUTE_TOOL,
            ));
        }
        if let Some(v) = &a.protocol {
            // A version is a metric label: only the ones rmcp knows, never a caller's string.
            let known = rmcp::model::ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|k| k.as_str() == v);
            let v = if known { v.clone() } else { "other".to_owned() };
            attributes.push(KeyValue::new(names::MCP_PROTOCOL_VERSION, v));
        }
        let name = || match a.tool {
            Some(tool) => Cow::Owned(format!("{} {}", a.method, names::bounded(tool))),
            None => Cow::Borrowed(a.method),
        };
        let mut op = Operation::start(name, SpanKind::Server, a.parent, attributes, |m| {
            &m.mcp_server_duration
        });
        let mut ids = Vec::new();
        if let Some(id) = a.request_id {
            ids.push(KeyValue::new(names::JSONRPC_REQUEST_ID, id));
        }
        if let Some(session) = a.session {
            ids.push(KeyValue::new(names::MCP_SESSION_ID, session.to_owned()));
        }
        op.span_attributes(ids);
        ServerOp(op)
    }

    /// The context the gateway call continues under: this span's, else the caller's.
    pub fn trace(&self, caller: Option<TraceContext>) -> Option<TraceContext> {
        self.0.trace(caller)
    }

    /// Ends the operation; `error` is its `error.type` when it failed.
    pub fn end(self, error: Option<&str>) {
        self.0.end(error);
    }
}

/// The `error.type` of a `tools/call` result.
pub fn tool_error(result: &rmcp::model::CallToolResult) -> Option<&'static str> {
    result.is_error.unwrap_or(false).then_some("tool_error")
}

/// A JSON-RPC request id as text.
pub fn request_id(id: &rmcp::model::RequestId) -> String {
    id.to_string()
}
