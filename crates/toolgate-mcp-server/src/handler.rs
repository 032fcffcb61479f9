//! The MCP server over the gateway, the same for Streamable HTTP and stdio. It only
//! translates: `tools/list` is the caller's view of the catalog, `tools/call` is one
//! `Gateway::call`, everything else is delegated to the [`McpExtras`].

use super::span::{Arrival, ServerOp, Transport, request_id, tool_error};
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, ToolsCapability, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolgate_core::CallerLink;
use toolgate_gateway::Gateway;
use toolgate_protocol::Envelope;

use super::call::{ToolCall, run_tool_call};
use super::caller::PeerChannel;
use super::changes::{
    CHECK_EVERY, Served, fingerprint, listen_for_tool_changes, notify_tool_changes,
};
use super::extras::{McpExtras, NoExtras, Requester};
use super::listening::ListeningSessions;
use super::rounds::Rounds;
use super::stateless::{
    ProgressStream, PromptRounds, StatelessCall, run_stateless_call, run_stateless_prompt,
};
use super::tools::visible_tools;
use toolgate_gateway::Caller;

/// What an embedding adds to the MCP endpoint: resources/prompts/completions.
#[derive(Clone)]
pub struct McpOptions {
    pub extras: Arc<dyn McpExtras>,
    /// Sessions whose client hears from running tools (shared by every session's handler
    /// and the JSON answers of the server's fast path, `toolgate_server::mcp::fast`).
    pub listening: Arc<ListeningSessions>,
    /// Stateless calls waiting for their client's next round (SEP-2322).
    pub rounds: Arc<Rounds<Envelope>>,
    /// Stateless `prompts/get` waiting for their client's next round.
    pub prompt_rounds: Arc<PromptRounds>,
    /// Where sessions are kept so any replica can continue them (the cluster store); `None`:
    /// this process only.
    pub sessions:
        Option<Arc<dyn rmcp::transport::streamable_http_server::session::store::SessionStore>>,
}

impl Default for McpOptions {
    fn default() -> Self {
        McpOptions {
            extras: Arc::new(NoExtras),
            listening: Arc::new(ListeningSessions::default()),
            rounds: Arc::new(Rounds::default()),
            prompt_rounds: Arc::new(Rounds::default()),
            sessions: None,
        }
    }
}

impl std::fmt::Debug for McpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpOptions").finish_non_exhaustive()
    }
}

/// Who the requests of one connection act as.
#[derive(Debug, Clone)]
pub enum Identity {
    /// Streamable HTTP: the [`Caller`] the auth middleware put in each request, the session
    /// from `Mcp-Session-Id` (stateless requests share the session `mcp`).
    Http,
    /// stdio: the spawning user, one session for the life of the process.
    Fixed { caller: Caller, session: String },
}

/// Shutdown as the handler sees it: calls in flight are tracked so the transport is closed
/// only after they answered; calls waiting for a human are cancelled when shutdown begins
/// (their approval request stays in the store, so the retried call finds it after a restart).
#[derive(Debug, Clone, Default)]
pub struct Lifecycle {
    pub shutdown: CancellationToken,
    pub calls: TaskTracker,
}

/// The server handler; cheap to clone (one per HTTP session).
#[derive(Clone)]
pub struct McpHandler {
    gateway: Arc<Gateway>,
    identity: Identity,
    options: McpOptions,
    lifecycle: Lifecycle,
    /// What this session's last `tools/list` answered (for `tools/list_changed`).
    served: Served,
}

/// The session name of stateless (2026-07-28) HTTP requests.
pub const STATELESS_SESSION: &str = "mcp";

const INSTRUCTIONS: &str = "Tools of a toolgate gateway: every call passes its role's \
policy, human approval where required, and a tamper-evident audit. A call that needs approval \
fails with code approval_required naming the approval id (retryable): once an operator \
approves it, repeat the identical call. Send a progressToken to wait for the decision \
instead, with progress notifications while waiting.";

impl McpHandler {
    pub fn new(
        gateway: Arc<Gateway>,
        identity: Identity,
        options: McpOptions,
        lifecycle: Lifecycle,
    ) -> Self {
        McpHandler {
            gateway,
            identity,
            options,
            lifecycle,
            served: Served::default(),
        }
    }

    /// Who sends a request to the extras.
    fn requester(&self, context: &RequestContext<RoleServer>) -> Result<Requester, ErrorData> {
        let (caller, session) = self.caller(context)?;
        // A session's client answers on its peer; a stateless request's only through rounds.
        let client = match context.meta.protocol_version() {
            Some(_) => CallerLink::none(),
            None => CallerLink::new(Arc::new(PeerChannel::new(context.peer.clone()))),
        };
        Ok(Requester {
            caller,
            session: session.into(),
            peer: context.peer.clone(),
            client,
        })
    }

    /// The caller and session a request acts as.
    /// Runs `work`, the answer to `method`, as one observed request: a SERVER span under
    /// the request's trace context, `mcp.server.operation.duration`, and the JSON-RPC error
    /// code as `error.type` when it fails.
    async fn observed<T>(
        &self,
        method: &'static str,
        context: &RequestContext<RoleServer>,
        work: impl Future<Output = Result<T, ErrorData>>,
    ) -> Result<T, ErrorData> {
        let session = self.caller(context).map(|(_, s)| s).unwrap_or_default();
        let parent = request_trace(context);
        let op = ServerOp::start(self.arrival(method, None, context, &session, parent.as_ref()));
        let result = work.await;
        let code = result.as_ref().err().map(|e| e.code.0.to_string());
        op.end(code.as_deref());
        result
    }

    /// What telemetry records of a request as it arrives.
    fn arrival<'a>(
        &self,
        method: &'static str,
        tool: Option<(&'a str, bool)>,
        context: &RequestContext<RoleServer>,
        session: &'a str,
        parent: Option<&'a toolgate_core::TraceContext>,
    ) -> Arrival<'a> {
        let stateless = context.meta.protocol_version();
        let transport = match self.identity {
            Identity::Http => Transport::Tcp,
            Identity::Fixed { .. } => Transport::Pipe,
        };
        Arrival {
            method,
            tool: tool.map(|(name, _)| name),
            tool_known: tool.is_some_and(|(_, known)| known),
            request_id: Some(request_id(&context.id)),
            session: stateless.is_none().then_some(session),
            protocol: stateless.map(|v| v.to_string()).or_else(|| {
                context
                    .peer
                    .peer_info()
                    .map(|i| i.protocol_version.to_string())
            }),
            transport,
            parent,
        }
    }

    fn caller(&self, context: &RequestContext<RoleServer>) -> Result<(Caller, String), ErrorData> {
        match &self.identity {
            Identity::Fixed { caller, session } => Ok((caller.clone(), session.clone())),
            Identity::Http => {
                let parts = context
                    .extensions
                    .get::<http::request::Parts>()
                    .ok_or_else(|| no_caller("the request carries no HTTP parts"))?;
                http_caller(&parts.extensions, &parts.headers)
            }
        }
    }
}

/// The caller and session of an HTTP request: the [`Caller`] our auth layer put in its
/// extensions, the session its `Mcp-Session-Id` names (stateless requests share
/// [`STATELESS_SESSION`]).
pub fn http_caller(
    extensions: &http::Extensions,
    headers: &http::HeaderMap,
) -> Result<(Caller, String), ErrorData> {
    let caller = extensions
        .get::<Caller>()
        .cloned()
        .ok_or_else(|| no_caller("the request was not authenticated"))?;
    let session = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map_or_else(|| STATELESS_SESSION.to_owned(), str::to_owned);
    Ok((caller, session))
}

fn no_caller(why: &str) -> ErrorData {
    ErrorData::internal_error(format!("cannot tell who is calling: {why}"), None)
}

impl ServerHandler for McpHandler {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = self.options.extras.capabilities();
        let mut tools = ToolsCapability::default();
        tools.list_changed = Some(true);
        capabilities.tools = Some(tools);
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    /// From here on the session hears `notifications/tools/list_changed` when its role's
    /// tools change (see [`super::changes`]), and the prompt and resource list changes the
    /// extras serve ([`McpExtras::watch_session`]).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let who = match &self.identity {
            Identity::Fixed { caller, session } => Some((caller.clone(), session.clone())),
            Identity::Http => context
                .extensions
                .get::<http::request::Parts>()
                .and_then(|parts| http_caller(&parts.extensions, &parts.headers).ok()),
        };
        let hears = context.peer.peer_info().is_some_and(|info| {
            let caps = &info.capabilities;
            caps.sampling.is_some() || caps.elicitation.is_some() || caps.roots.is_some()
        });
        if let Some((_, session)) = &who {
            self.options.listening.record(session, hears);
        }
        let caller = who.map(|(caller, _)| caller);
        let Some(caller) = caller else {
            tracing::debug!("initialized without a known caller; no tools/list_changed");
            return;
        };
        let extras = Arc::clone(&self.options.extras);
        let (peer, stop) = (context.peer.clone(), self.lifecycle.shutdown.child_token());
        tokio::spawn(async move { extras.watch_session(peer, stop).await });
        tokio::spawn(notify_tool_changes(
            Arc::clone(&self.gateway),
            context.peer,
            caller.role.into_string(),
            self.served.clone(),
            CHECK_EVERY,
            self.lifecycle.shutdown.child_token(),
        ));
    }

    /// `subscriptions/listen` (2026-07-28): tool list changes, for the caller's role; prompt
    /// and resource notices as far as the extras serve them.
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let mut accepted = self.options.extras.accepted_notices(requested);
        accepted.tools_list_changed = requested.tools_list_changed.filter(|wanted| *wanted);
        Some(accepted)
    }

    /// Runs one accepted listen until the client cancels it (or goes away) or the server
    /// shuts down; shutting down ends it gracefully, with the final result.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let who = self.requester(context.request_context())?;
        let stop = self.lifecycle.shutdown.child_token();
        let tools = async {
            if context.accepted().tools_list_changed == Some(true) {
                listen_for_tool_changes(
                    &self.gateway,
                    &who.caller.role,
                    context.sink(),
                    CHECK_EVERY,
                    &stop,
                )
                .await;
            } else {
                stop.cancelled().await;
            }
        };
        let extras = self
            .options
            .extras
            .listen(&who, context.accepted(), context.sink(), &stop);
        let watch = async { tokio::join!(tools, extras) };
        tokio::pin!(watch);
        tokio::select! {
            () = context.cancelled() => {
                // Both watches end at `stop`; the extras let their subscriptions go.
                stop.cancel();
                watch.await;
            }
            _ = &mut watch => {}
        }
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let (caller, session) = self.caller(&context)?;
        let parent = request_trace(&context);
        let op =
            ServerOp::start(self.arrival("tools/list", None, &context, &session, parent.as_ref()));
        let tools = visible_tools(&self.gateway, &caller.role);
        op.end(None);
        self.served.set(fingerprint(&tools));
        let mut result = ListToolsResult::with_all_items(tools);
        // The list depends on the caller's role: no shared cache may serve it to another.
        result.cache_scope = Some(rmcp::model::CacheScope::Private);
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (caller, session) = self.caller(&context)?;
        let trace = call_trace(&context, &request);
        let op = ServerOp::start(self.arrival(
            "tools/call",
            Some((&request.name, self.gateway.catalog().has(&request.name))),
            &context,
            &session,
            trace.as_ref(),
        ));
        let trace = op.trace(trace);
        // A stateless (2026-07-28) request: no server request can reach its client, so what
        // its tool asks mid-call becomes an InputRequiredResult; its progress (and a wait for
        // approval) goes out on the request's own response stream.
        if context.meta.protocol_version().is_some() {
            let progress = context
                .meta
                .get_progress_token()
                .map(|token| ProgressStream {
                    peer: context.peer.clone(),
                    token,
                    shutdown: self.lifecycle.shutdown.clone(),
                });
            let call = StatelessCall {
                caller: &caller,
                session: session.into(),
                params: request,
                trace,
                capabilities: context.meta.client_capabilities().unwrap_or_default(),
                progress,
            };
            let rounds = &self.options.rounds;
            let response =
                run_stateless_call(&self.gateway, rounds, &self.lifecycle.calls, call).await;
            let code = match &response {
                Ok(CallToolResponse::Complete(result)) => tool_error(result).map(str::to_owned),
                Ok(_) => None,
                Err(e) => Some(e.code.0.to_string()),
            };
            op.end(code.as_deref());
            return response;
        }
        let call = ToolCall {
            caller: &caller,
            session: session.into(),
            params: request,
            trace,
        };
        let call = run_tool_call(&self.gateway, &self.lifecycle.shutdown, call, &context);
        let result = self.lifecycle.calls.track_future(call).await;
        op.end(tool_error(&result));
        Ok(result.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let who = self.requester(&context)?;
        self.observed(
            "resources/list",
            &context,
            self.options.extras.list_resources(&who),
        )
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let who = self.requester(&context)?;
        let work = self.options.extras.list_resource_templates(&who);
        self.observed("resources/templates/list", &context, work)
            .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let who = self.requester(&context)?;
        let work = self.options.extras.read_resource(&who, request);
        self.observed("resources/read", &context, work)
            .await
            .map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = self.requester(&context)?;
        let work = self.options.extras.subscribe(&who, request.uri);
        self.observed("resources/subscribe", &context, work).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = self.requester(&context)?;
        let work = self.options.extras.unsubscribe(&who, request.uri);
        self.observed("resources/unsubscribe", &context, work).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let who = self.requester(&context)?;
        self.observed(
            "prompts/list",
            &context,
            self.options.extras.list_prompts(&who),
        )
        .await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let who = self.requester(&context)?;
        if context.meta.protocol_version().is_none() {
            let work = self.options.extras.get_prompt(&who, request);
            return self
                .observed("prompts/get", &context, work)
                .await
                .map(Into::into);
        }
        let capabilities = context.meta.client_capabilities().unwrap_or_default();
        let extras = Arc::clone(&self.options.extras);
        let work = run_stateless_prompt(
            &self.options.prompt_rounds,
            extras,
            who,
            request,
            capabilities,
        );
        self.observed("prompts/get", &context, work).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let who = self.requester(&context)?;
        let work = self.options.extras.complete(&who, request);
        self.observed("completion/complete", &context, work).await
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let who = self.requester(&context)?;
        let work = self.options.extras.set_level(&who, request.level);
        self.observed("logging/setLevel", &context, work).await?;
        self.options.listening.record(&who.session, true);
        Ok(())
    }
}

/// The caller's trace context of any request: its `_meta`, else the headers of the POST
/// that carried it.
fn request_trace(context: &RequestContext<RoleServer>) -> Option<toolgate_core::TraceContext> {
    let headers = context
        .extensions
        .get::<http::request::Parts>()
        .map(|parts| &parts.headers);
    crate::trace::for_mcp(std::iter::once(&**context.meta), headers)
}

/// The caller's trace context of a `tools/call`: its `_meta` (which rmcp's parser may have
/// moved into the request context), else the headers of the POST that carried it.
fn call_trace(
    context: &RequestContext<RoleServer>,
    request: &CallToolRequestParams,
) -> Option<toolgate_core::TraceContext> {
    let headers = context
        .extensions
        .get::<http::request::Parts>()
        .map(|parts| &parts.headers);
    let metas = std::iter::once(&**context.meta).chain(request.meta.as_deref().map(|m| &**m));
    crate::trace::for_mcp(metas, headers)
}
