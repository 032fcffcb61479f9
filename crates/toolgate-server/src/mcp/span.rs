//! The server side of an MCP request as telemetry sees it (GenAI semantic conventions
//! v0.1.0, MCP): a SERVER span `{mcp.method.name} {target}` under the caller's context, and
//! `mcp.server.operation.duration` — for `tools/call` from every transport (rmcp's
//! sessions, stateless requests, the JSON answers of `fast`, stdio) and for `tools/list`.
//!
//! `mcp.session.id` is recorded for requests in a session, as the conventions recommend;
//! a stateless (2026-07-28) request has none. A `tools/call` whose result is an error
//! (`isError`) is `error.type = tool_error`, as the conventions say.

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind};
use toolgate_core::TraceContext;
use toolgate_telemetry::{metrics, names, spans};

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
    pub request_id: Option<String>,
    /// `None` for stateless requests.
    pub session: Option<&'a str>,
    pub protocol: Option<String>,
    pub transport: Transport,
    /// The caller's context.
    pub parent: Option<&'a TraceContext>,
}

/// One request being answered.
pub struct ServerOp {
    span: Option<spans::Span>,
    started: Instant,
    attributes: Vec<KeyValue>,
}

impl ServerOp {
    pub fn start(a: Arrival<'_>) -> ServerOp {
        let mut attributes = vec![
            KeyValue::new(names::MCP_METHOD_NAME, a.method),
            KeyValue::new(names::NETWORK_TRANSPORT, a.transport.as_str()),
        ];
        if let Some(tool) = a.tool {
            attributes.push(KeyValue::new(names::GEN_AI_TOOL_NAME, tool.to_owned()));
            attributes.push(KeyValue::new(
                names::GEN_AI_OPERATION_NAME,
                names::EXECUTE_TOOL,
            ));
        }
        if let Some(v) = &a.protocol {
            attributes.push(KeyValue::new(names::MCP_PROTOCOL_VERSION, v.clone()));
        }
        let span = spans::tracer().and_then(|_| {
            let name = match a.tool {
                Some(tool) => format!("{} {tool}", a.method),
                None => a.method.to_owned(),
            };
            let mut span_attributes = attributes.clone();
            if let Some(id) = a.request_id {
                span_attributes.push(KeyValue::new(names::JSONRPC_REQUEST_ID, id));
            }
            if let Some(session) = a.session {
                span_attributes.push(KeyValue::new(names::MCP_SESSION_ID, session.to_owned()));
            }
            spans::start(name, SpanKind::Server, a.parent, span_attributes)
        });
        ServerOp {
            span,
            started: Instant::now(),
            attributes,
        }
    }

    /// The context the gateway call continues under: this span's, else the caller's.
    pub fn trace(&self, caller: Option<TraceContext>) -> Option<TraceContext> {
        spans::pass_on(self.span.as_ref(), caller)
    }

    /// Ends the operation; `error` is its `error.type` when it failed.
    pub fn end(mut self, error: Option<&str>) {
        if let Some(e) = error {
            self.attributes
                .push(KeyValue::new(names::ERROR_TYPE, e.to_owned()));
        }
        metrics()
            .mcp_server_duration
            .record(self.started.elapsed().as_secs_f64(), &self.attributes);
        if let Some(mut span) = self.span.take() {
            if let Some(e) = error {
                spans::fail(&mut span, e);
            }
            span.end();
        }
    }
}

/// The `error.type` of a `tools/call` result.
pub fn tool_error(result: &rmcp::model::CallToolResult) -> Option<&'static str> {
    result.is_error.unwrap_or(false).then_some("tool_error")
}

/// A JSON-RPC request id as text.
pub fn request_id(id: &rmcp::model::RequestId) -> String {
    match id {
        rmcp::model::NumberOrString::Number(n) => n.to_string(),
        rmcp::model::NumberOrString::String(s) => s.to_string(),
    }
}
