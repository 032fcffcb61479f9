//! The client side of a request toolgate sends a federated MCP server, as telemetry sees it
//! (GenAI semantic conventions v0.1.0, MCP): a CLIENT span `{mcp.method.name} {target}`
//! under the gateway's `execute_tool` span, whose context the request carries in
//! `params._meta` (SEP-414) so the server's span joins the trace; and
//! `mcp.client.operation.duration`.

use std::time::Instant;

use opentelemetry::KeyValue;
use opentelemetry::trace::{Span as _, SpanKind};
use toolgate_core::TraceContext;
use toolgate_telemetry::{metrics, names, spans};

/// How a server is reached: `network.transport`, and `server.address` / `server.port`
/// for HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Wire {
    transport: &'static str,
    address: Option<String>,
    port: Option<u16>,
}

impl Wire {
    /// From the server's URL (`None`: stdio).
    pub(crate) fn of(url: Option<&str>) -> Wire {
        let Some(url) = url.and_then(|u| url::Url::parse(u).ok()) else {
            return Wire {
                transport: "pipe",
                address: None,
                port: None,
            };
        };
        Wire {
            transport: "tcp",
            address: url.host_str().map(str::to_owned),
            port: url.port_or_known_default(),
        }
    }
}

/// One request in flight.
pub(crate) struct ClientOp {
    span: Option<spans::Span>,
    started: Instant,
    attributes: Vec<KeyValue>,
}

impl ClientOp {
    /// Starts `method` (naming `tool` for `tools/call`) to `server` under `parent`.
    pub(crate) fn start(
        server: &str,
        wire: &Wire,
        method: &'static str,
        tool: Option<&str>,
        protocol: Option<String>,
        parent: Option<&TraceContext>,
    ) -> ClientOp {
        let mut attributes = vec![
            KeyValue::new(names::MCP_METHOD_NAME, method),
            KeyValue::new(names::NETWORK_TRANSPORT, wire.transport),
            KeyValue::new(names::MCP_SERVER, server.to_owned()),
        ];
        if let Some(tool) = tool {
            attributes.push(KeyValue::new(names::GEN_AI_TOOL_NAME, tool.to_owned()));
            attributes.push(KeyValue::new(
                names::GEN_AI_OPERATION_NAME,
                names::EXECUTE_TOOL,
            ));
        }
        if let Some(v) = protocol {
            attributes.push(KeyValue::new(names::MCP_PROTOCOL_VERSION, v));
        }
        if let Some(a) = &wire.address {
            attributes.push(KeyValue::new(names::SERVER_ADDRESS, a.clone()));
        }
        if let Some(p) = wire.port {
            attributes.push(KeyValue::new(names::SERVER_PORT, i64::from(p)));
        }
        let span = spans::tracer().and_then(|_| {
            let name = match tool {
                Some(tool) => format!("{method} {tool}"),
                None => method.to_owned(),
            };
            spans::start(name, SpanKind::Client, parent, attributes.clone())
        });
        ClientOp {
            span,
            started: Instant::now(),
            attributes,
        }
    }

    /// The context the request carries: this span's, else the caller's.
    pub(crate) fn trace(&self, caller: Option<TraceContext>) -> Option<TraceContext> {
        spans::pass_on(self.span.as_ref(), caller)
    }

    /// Records the request's JSON-RPC id once it has one.
    pub(crate) fn request_id(&mut self, id: String) {
        if let Some(span) = self.span.as_mut() {
            span.set_attribute(KeyValue::new(names::JSONRPC_REQUEST_ID, id));
        }
    }

    /// Ends the operation; `error` is its `error.type` when it failed.
    pub(crate) fn end(mut self, error: Option<&str>) {
        if let Some(e) = error {
            self.attributes
                .push(KeyValue::new(names::ERROR_TYPE, e.to_owned()));
        }
        metrics()
            .mcp_client_duration
            .record(self.started.elapsed().as_secs_f64(), &self.attributes);
        if let Some(mut span) = self.span.take() {
            if let Some(e) = error {
                spans::fail(&mut span, e);
            }
            span.end();
        }
    }
}
