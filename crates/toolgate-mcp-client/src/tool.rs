//! [`McpTool`]: one tool of one MCP server, as a toolgate [`Tool`].
//!
//! Its spec is built once from the server's definition: the catalog name is
//! `mcp__{server}__{tool}` (R-REG-4; the raw name with `prefix = "never"`) while the raw name is kept for `tools/call`; the risk
//! follows the trust rule: an operator label (`risk = { tool = "…" }`) wins; a trusted
//! server's hints map `readOnlyHint` to read and `destructiveHint` to dangerous, otherwise
//! write; an untrusted server's tools are write (dangerous if it says destructive: a hint
//! may make a tool stricter, never laxer) and marked open-world. A call goes to whatever
//! connection the server has now; with none it is refused with `unavailable` at once,
//! never queued.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientNotification, ClientRequest, ErrorCode as RpcCode, RequestId, RequestMetaObject,
    ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};

use crate::config::Naming;
use crate::connect::error_chain;
use crate::content::tool_output;
use crate::inbound::{MAX_INPUT_ROUNDS, McpClientHandler};
use crate::link::{Connected, ServerLink};
use crate::span::ClientOp;
use crate::transport::Limit;

/// A tool federated from an MCP server.
pub struct McpTool {
    spec: ToolSpec,
    raw_name: String,
    link: Arc<ServerLink>,
    /// Answers the requests of an `input_required` result (2026-07-28 MRTR).
    inputs: McpClientHandler,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("raw_name", &self.raw_name)
            .finish()
    }
}

/// How much the server's own hints count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trust<'a> {
    pub(crate) trusted: bool,
    pub(crate) overrides: &'a BTreeMap<String, Risk>,
}

/// The risk of `tool` (raw MCP name) with hints `hints`:
/// 1. an operator label in `risk = { tool = "…" }` wins;
/// 2. a trusted server's hints: `readOnlyHint` → read, `destructiveHint` → dangerous,
///    otherwise write;
/// 3. an untrusted server's tools are write, raised to dangerous when the server itself
///    says destructive (a hint may make a tool stricter, never laxer).
pub(crate) fn risk_for(tool: &str, hints: &Annotations, trust: Trust<'_>) -> Risk {
    if let Some(label) = trust.overrides.get(tool) {
        return *label;
    }
    let destructive = hints.destructive_hint == Some(true) && hints.read_only_hint != Some(true);
    match (
        trust.trusted,
        hints.read_only_hint == Some(true),
        destructive,
    ) {
        (true, true, _) => Risk::Read,
        (_, _, true) => Risk::Dangerous,
        _ => Risk::Write,
    }
}

impl McpTool {
    /// Builds the tool from the server's definition (`tools/list` entry).
    pub(crate) fn new(
        naming: &Naming,
        source: &str,
        def: &rmcp::model::Tool,
        trust: Trust<'_>,
        link: Arc<ServerLink>,
        inputs: McpClientHandler,
    ) -> Self {
        let server = naming.server.as_str();
        let raw_name = def.name.to_string();
        let mut hints = def
            .annotations
            .as_ref()
            .map_or_else(Annotations::default, |a| Annotations {
                title: a.title.clone(),
                read_only_hint: a.read_only_hint,
                destructive_hint: a.destructive_hint,
                idempotent_hint: a.idempotent_hint,
                open_world_hint: a.open_world_hint,
            });
        if hints.title.is_none() {
            hints.title.clone_from(&def.title);
        }
        let risk = risk_for(&raw_name, &hints, trust);
        if !trust.trusted {
            // An untrusted server's tool may reach anything: say so to policy and models.
            hints.open_world_hint = Some(true);
        }
        let description = def
            .description
            .as_deref()
            .map(str::to_owned)
            .or_else(|| def.title.clone())
            .unwrap_or_else(|| format!("Tool `{raw_name}` of MCP server `{server}`."));
        let mut input_schema = Value::Object((*def.input_schema).clone());
        if input_schema.get("type").is_none() {
            input_schema["type"] = json!("object");
        }
        let mut spec = ToolSpec::new(naming.tool(&raw_name), description, input_schema)
            .with_risk(risk)
            .with_annotations(hints)
            .with_source(source)
            .with_tags(["mcp"]);
        if let Some(out) = &def.output_schema {
            spec = spec.with_output_schema(Value::Object((**out).clone()));
        }
        McpTool {
            spec,
            raw_name,
            link,
            inputs,
        }
    }

    /// The tool's name on its server (what `tools/call` is sent with).
    pub fn raw_name(&self) -> &str {
        &self.raw_name
    }

    fn unavailable(&self, why: impl std::fmt::Display) -> ToolError {
        ToolError::Unavailable(format!(
            "MCP server `{}` is unavailable: {why}",
            self.link.server
        ))
    }

    fn service_error(&self, e: ServiceError, lost: &CancellationToken) -> ToolError {
        match e {
            ServiceError::McpError(data) => {
                let message = format!("MCP server `{}`: {}", self.link.server, data.message);
                match crate::transport::limit_of(&data) {
                    Some(Limit::TooLarge) => return ToolError::ResultTooLarge(message),
                    Some(Limit::Undecodable) => return ToolError::failed(message),
                    None => {}
                }
                if data.code == RpcCode::INVALID_PARAMS {
                    return ToolError::InvalidArguments(message);
                }
                if is_task_refusal(data.code, &data.message) {
                    return self.task_only();
                }
                ToolError::Failed {
                    message,
                    retryable: data.code == RpcCode::INTERNAL_ERROR,
                    details: Some(json!({"jsonrpc_code": data.code.0, "data": data.data})),
                }
            }
            ServiceError::TransportSend(_) | ServiceError::TransportClosed => {
                // rmcp ends the transport on any of these, a 403 included: reconnect.
                lost.cancel();
                let chain = error_chain(&e);
                if let Some(challenge) = insufficient_scope(&chain) {
                    return ToolError::Failed {
                        message: format!(
                            "MCP server `{0}` refused the call: the token lacks a scope ({challenge}); \
                             sign in again with it: `toolgate mcp login {0} --scope SCOPE` \
                             (or add it to the server's auth `scopes`)",
                            self.link.server
                        ),
                        retryable: false,
                        details: None,
                    };
                }
                self.unavailable(format!(
                    "the connection failed during the call ({chain}); it is being re-established"
                ))
            }
            ServiceError::Timeout { .. } => ToolError::Timeout,
            ServiceError::Cancelled { reason } => ToolError::failed(format!(
                "MCP server `{}` cancelled the call: {}",
                self.link.server,
                reason.unwrap_or_else(|| "no reason given".into())
            )),
            other => ToolError::failed(format!(
                "MCP server `{}`: {}",
                self.link.server,
                error_chain(&other)
            )),
        }
    }
}

/// The `WWW-Authenticate` challenge of a 403 `insufficient_scope` in an error chain (rmcp
/// reports it as a transport failure: "insufficient scope: <challenge>").
fn insufficient_scope(chain: &str) -> Option<&str> {
    let at = chain.find("insufficient scope: ")?;
    Some(chain[at + "insufficient scope: ".len()..].trim())
}

/// A server's refusal of a plain `tools/call` for a tool declared `taskSupport: required`
/// (the 2025-11-25 tasks of SEP-1686, which toolgate's client does not run): -32601 naming
/// task augmentation — as a JSON-RPC error, or (the TypeScript SDK's `McpServer`) as an
/// `isError` result whose text is "MCP error -32601: … requires task augmentation …".
fn is_task_refusal(code: RpcCode, message: &str) -> bool {
    code == RpcCode::METHOD_NOT_FOUND && message.contains("task augmentation")
}

impl McpTool {
    /// Records that this tool runs only as a task and says so to the caller.
    fn task_only(&self) -> ToolError {
        self.link.needs_tasks(&self.raw_name);
        ToolError::Unavailable(task_only_reason(&self.link.server))
    }

    /// `error`, unless it is the server refusing a plain call of a task-only tool.
    fn unless_task_only(&self, error: ToolError) -> ToolError {
        match &error {
            ToolError::Failed { message, .. }
                if message.starts_with("MCP error -32601:")
                    && is_task_refusal(RpcCode::METHOD_NOT_FOUND, message) =>
            {
                self.task_only()
            }
            _ => error,
        }
    }
}

/// Why a task-only tool is unavailable, as the catalog and the caller see it.
pub(crate) fn task_only_reason(server: &str) -> String {
    format!(
        "MCP server `{server}` runs this tool only as an MCP task (taskSupport: required), \
         which toolgate does not run yet; the tool is unavailable until then"
    )
}

/// Tells the server to stop working on `id` (`notifications/cancelled`); best effort.
async fn cancel(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let note = ClientNotification::CancelledNotification(CancelledNotification::new(
        CancelledNotificationParam::new(Some(id), Some(reason.to_owned())),
    ));
    let _ = tokio::time::timeout(
        std::time::Duration::from_secs(1),
        peer.send_notification(note),
    )
    .await;
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let Connected { peer, lost } = self.link.connection().map_err(ToolError::Unavailable)?;
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                return Err(ToolError::InvalidArguments(format!(
                    "arguments must be a JSON object, got {other}"
                )));
            }
        };
        let mut params =
            CallToolRequestParams::new(self.raw_name.clone()).with_arguments(arguments);
        // While it runs, the server's logs and requests to its client may reach ours.
        let _active = self.link.active.enter(ctx.caller.clone());
        // One deadline for the call, whatever number of input rounds it takes.
        let deadline = tokio::time::Instant::now() + self.link.call_timeout;
        let mut rounds = 0;
        loop {
            let request = ClientRequest::CallToolRequest(CallToolRequest::new(params.clone()));
            let response = self.send(&peer, &lost, request, &ctx, deadline).await?;
            let asked = match response {
                ServerResult::InputRequiredResult(asked) => asked,
                other => return self.finish(other),
            };
            rounds += 1;
            if rounds > MAX_INPUT_ROUNDS {
                return Err(ToolError::failed(format!(
                    "MCP server `{}` still asked for input after {MAX_INPUT_ROUNDS} rounds; the call is given up",
                    self.link.server
                )));
            }
            let retry = tokio::select! {
                biased;
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                r = tokio::time::timeout_at(deadline, self.inputs.next_round(&ctx.caller, asked, rounds)) => {
                    r.map_err(|_| ToolError::Timeout)?
                        .map_err(|e| ToolError::failed(e.message.to_string()))?
                }
            };
            params.input_responses = retry.input_responses;
            params.request_state = retry.request_state;
        }
    }
}

/// The `error.type` of a request that failed before the server answered.
fn error_type(e: &ToolError) -> &'static str {
    match e {
        ToolError::Timeout => "timeout",
        ToolError::Cancelled => "cancelled",
        ToolError::Unavailable(_) => "unavailable",
        ToolError::ResultTooLarge(_) => "result_too_large",
        ToolError::InvalidArguments(_) => "invalid_arguments",
        ToolError::PolicyDenied(_) => "policy_denied",
        ToolError::Failed { .. } => "execution_failed",
    }
}

/// Whether `peer` speaks 2026-07-28, where each request declares the client's
/// capabilities itself.
fn is_stateless(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| {
        info.protocol_version.as_str() >= rmcp::model::ProtocolVersion::V_2026_07_28.as_str()
    })
}

impl McpTool {
    /// Sends one `tools/call` round and waits for its result until `deadline`, telling the
    /// server when the caller cancels or the time is up: one client operation (a CLIENT
    /// span under the caller's, whose context the request carries; its duration).
    async fn send(
        &self,
        peer: &Peer<RoleClient>,
        lost: &CancellationToken,
        request: ClientRequest,
        ctx: &ToolContext,
        deadline: tokio::time::Instant,
    ) -> Result<ServerResult, ToolError> {
        let tool = match &request {
            ClientRequest::CallToolRequest(r) => Some(r.params.name.to_string()),
            _ => None,
        };
        let mut op = ClientOp::start(
            &self.link.server,
            &self.link.wire,
            "tools/call",
            tool.as_deref(),
            peer.peer_info().map(|i| i.protocol_version.to_string()),
            ctx.trace.as_ref(),
        );
        let trace = op.trace(ctx.trace.clone());
        let result = self
            .exchange(
                peer,
                lost,
                request,
                ctx,
                deadline,
                (trace.as_ref(), &mut op),
            )
            .await;
        op.end(match &result {
            Ok(ServerResult::CallToolResult(r)) if r.is_error == Some(true) => Some("tool_error"),
            Ok(_) => None,
            Err(e) => Some(error_type(e)),
        });
        result
    }

    async fn exchange(
        &self,
        peer: &Peer<RoleClient>,
        lost: &CancellationToken,
        request: ClientRequest,
        ctx: &ToolContext,
        deadline: tokio::time::Instant,
        (trace, op): (Option<&toolgate_core::TraceContext>, &mut ClientOp),
    ) -> Result<ServerResult, ToolError> {
        let mut options = PeerRequestOptions::no_options();
        let mut meta = RequestMetaObject::default();
        if is_stateless(peer) {
            meta.set_client_capabilities(self.inputs.capabilities_for(&ctx.caller));
        }
        // The upstream joins the trace (SEP-414), under this request's span when tracing.
        if let Some(trace) = trace {
            trace.write_meta(&mut meta);
        }
        if !meta.is_empty() {
            options.meta = Some(meta);
        }
        let handle = peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.service_error(e, lost))?;
        let id = handle.id.clone();
        op.request_id(id.to_string());
        self.link.track(
            handle.progress_token.clone(),
            ctx.call_id.clone(),
            ctx.progress.clone(),
        );
        let response = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => {
                cancel(peer, id, "cancelled by the caller").await;
                return Err(ToolError::Cancelled);
            }
            r = tokio::time::timeout_at(deadline, handle.await_response()) => r,
        };
        match response {
            Err(_elapsed) => {
                cancel(peer, id, "timed out").await;
                Err(ToolError::Timeout)
            }
            Ok(result) => result.map_err(|e| self.service_error(e, lost)),
        }
    }

    /// The tool's output from the server's final answer.
    fn finish(&self, result: ServerResult) -> Result<ToolOutput, ToolError> {
        match result {
            ServerResult::CallToolResult(result) => {
                // Through text, not `to_value`: rmcp holds an annotation's priority as f32,
                // whose shortest text (0.7) `to_value` would widen to 0.699999988079071.
                let json = serde_json::to_string(&result)
                    .and_then(|text| serde_json::from_str(&text))
                    .map_err(|e| ToolError::failed(format!("unreadable MCP result: {e}")))?;
                tool_output(json).map_err(|e| self.unless_task_only(e))
            }
            ServerResult::EmptyResult(_) => Ok(ToolOutput::json(Value::Null)),
            ServerResult::CreateTaskResult(_) => Err(ToolError::failed(format!(
                "MCP server `{}` turned the call into a task; toolgate does not poll tasks yet",
                self.link.server
            ))),
            other => Err(ToolError::failed(format!(
                "MCP server `{}` answered tools/call with an unexpected result: {}",
                self.link.server,
                serde_json::to_string(&other).unwrap_or_default()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hints(read_only: Option<bool>, destructive: Option<bool>) -> Annotations {
        Annotations {
            read_only_hint: read_only,
            destructive_hint: destructive,
            ..Annotations::default()
        }
    }

    #[test]
    fn risk_follows_trust_hints_and_labels() {
        let none = BTreeMap::new();
        let labels = BTreeMap::from([("purge".to_owned(), Risk::Read)]);
        let trusted = Trust {
            trusted: true,
            overrides: &none,
        };
        let untrusted = Trust {
            trusted: false,
            overrides: &none,
        };
        let cases = [
            ("t", hints(Some(true), None), trusted, Risk::Read),
            (
                "t",
                hints(Some(false), Some(true)),
                trusted,
                Risk::Dangerous,
            ),
            ("t", hints(None, None), trusted, Risk::Write),
            ("t", hints(Some(true), None), untrusted, Risk::Write),
            ("t", hints(None, Some(true)), untrusted, Risk::Dangerous),
            ("t", hints(None, None), untrusted, Risk::Write),
            (
                "purge",
                hints(None, Some(true)),
                Trust {
                    trusted: false,
                    overrides: &labels,
                },
                Risk::Read,
            ),
        ];
        for (tool, h, trust, expected) in cases {
            assert_eq!(
                risk_for(tool, &h, trust),
                expected,
                "{tool} {h:?} {trust:?}"
            );
        }
    }
}
