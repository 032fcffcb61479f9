//! The client side of a request toolgate sends a federated MCP server, as telemetry sees it
//! (GenAI semantic conventions v0.1.0, MCP): a CLIENT span `{mcp.method.name} {target}`
//! under the gateway's `execute_tool` span, whose context the request carries in
//! `params._meta` (SEP-414) so the server's span joins the trace; and
//! `mcp.client.operation.duration`.

use std::borrow::Cow;

use opentelemetry::KeyValue;
use opentelemetry::trace::SpanKind;
use toolgate_core::TraceContext;
use toolgate_telemetry::names;
use toolgate_telemetry::operation::Operation;

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
pub(crate) struct ClientOp(Operation);

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
        let name = || match tool {
            Some(tool) => Cow::Owned(format!("{method} {tool}")),
            None => Cow::Borrowed(method),
        };
        ClientOp(Operation::start(
            name,
            SpanKind::Client,
            parent,
            attributes,
            |m| &m.mcp_client_duration,
        ))
    }

    /// The context the request carries: this span's, else the caller's.
    pub(crate) fn trace(&self, caller: Option<TraceContext>) -> Option<TraceContext> {
        self.0.trace(caller)
    }

    /// Records the request's JSON-RPC id once it has one.
    pub(crate) fn request_id(&mut self, id: String) {
        self.0
            .span_attribute(KeyValue::new(names::JSONRPC_REQUEST_ID, id));
    }

    /// Ends the operation; `error` is its `error.type` when it failed.
    pub(crate) fn end(self, error: Option<&str>) {
        self.0.end(error);
    }
}
