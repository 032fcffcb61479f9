//! What toolgate answers when a server talks first: progress and log notifications are
//! forwarded to `tracing`, the calling tool's progress sink and the hub's event channel
//! (and a log message to the calling client, when one call runs); list changes wake the
//! supervisor to re-list; resource updates go to the hub's events.
//!
//! The server's requests to its client follow the server's `client_requests`: with
//! `forward` (an operator's opt-in) sampling, elicitation and roots go to the client of the one call
//! running on the server when that client declared the capability (see [`crate::active`]);
//! otherwise an elicitation goes to the hub's [`Elicitor`] (the approval channel) and sampling
//! or roots are refused. With `approval` (the default) only elicitation is offered, to the
//! approval channel; with `refuse` nothing. Every such request is logged with its server and
//! outcome.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, InputRequest,
    ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;
use toolgate_core::ProgressUpdate;

use toolgate_core::{CallerChannel, CallerLink, CallerQuestion, CallerRequest};

use crate::McpEvent;
use crate::config::ClientRequests;
use crate::elicit::{ElicitationAnswer, ElicitationRequest, Elicitor};
use crate::link::ServerLink;

#[derive(Clone)]
pub(crate) struct McpClientHandler {
    link: Arc<ServerLink>,
    elicitor: Option<Arc<dyn Elicitor>>,
    requests: ClientRequests,
}

impl McpClientHandler {
    pub(crate) fn new(link: Arc<ServerLink>, requests: ClientRequests) -> Self {
        McpClientHandler {
            link,
            elicitor: None,
            requests,
        }
    }

    /// Why `request` is not passed on at all, under the server's `client_requests`.
    fn forwarding(&self, request: CallerRequest) -> Result<(), String> {
        if self.requests == ClientRequests::Forward {
            return Ok(());
        }
        Err(format!(
            "toolgate does not pass {} of MCP server `{}` on (client_requests = {:?})",
            request.method(),
            self.link.server,
            self.requests
        ))
    }

    /// `caller`'s channel for `request`, or why it has none.
    fn channel_of(
        &self,
        caller: &CallerLink,
        request: CallerRequest,
    ) -> Result<Arc<dyn CallerChannel>, String> {
        caller.answering(request).cloned().ok_or_else(|| {
            format!(
                "the client calling MCP server `{}` does not answer {}",
                self.link.server,
                request.method()
            )
        })
    }

    /// The calling client that answers `request` (and its call), or why the request is
    /// refused.
    fn forward_to(&self, request: CallerRequest) -> Result<(u64, Arc<dyn CallerChannel>), String> {
        self.forwarding(request)?;
        let server = &self.link.server;
        match self.link.active.route() {
            Ok((call, caller)) => self.channel_of(&caller, request).map(|c| (call, c)),
            Err(0) => Err(format!(
                "no call is running on MCP server `{server}`, so no client can answer its {}",
                request.method()
            )),
            Err(n) => Err(format!(
                "{n} calls are running on MCP server `{server}`; which client its {} is for cannot be told, so it is refused",
                request.method()
            )),
        }
    }

    /// Sends `params` to the calling client as `request` and reads its answer.
    async fn ask<P: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        request: CallerRequest,
        params: P,
    ) -> Result<R, McpError> {
        let server = &self.link.server;
        let (call, channel) = self
            .forward_to(request)
            .map_err(|why| refused(server, request, why))?;
        let _asking = self.link.active.asking(call);
        self.ask_on(&channel, request, None, params).await
    }

    /// Sends `params` to `channel` as `request` (named `key` when the server named it) and
    /// reads its answer.
    async fn ask_on<P: serde::Serialize, R: serde::de::DeserializeOwned>(
        &self,
        channel: &Arc<dyn CallerChannel>,
        request: CallerRequest,
        key: Option<&str>,
        params: P,
    ) -> Result<R, McpError> {
        let server = &self.link.server;
        let params = serde_json::to_value(params)
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let mut question = CallerQuestion::new(request, params);
        question.key = key.map(str::to_owned);
        let answer = channel.ask(question).await;
        tracing::info!(%server, method = request.method(), ok = answer.is_ok(), "passed on to the calling client");
        let value =
            answer.map_err(|e| McpError::new(rmcp::model::ErrorCode(e.code), e.message, e.data))?;
        serde_json::from_value(value).map_err(|e| {
            McpError::internal_error(
                format!("the calling client's answer is malformed: {e}"),
                None,
            )
        })
    }

    /// What a stateless (2026-07-28) request of the call of `caller` declares in its
    /// `_meta`: under `forward`, exactly what that call's client answers — elicitation also
    /// when the approval channel would answer it instead — so the server never relies on a
    /// capability the client behind toolgate lacks (SEP-2575); otherwise what toolgate's
    /// own identity declares.
    pub(crate) fn capabilities_for(&self, caller: &CallerLink) -> ClientCapabilities {
        let mut declared = self.get_info().capabilities;
        if self.requests != ClientRequests::Forward {
            return declared;
        }
        let answers = |request| caller.answering(request).is_some();
        if !answers(CallerRequest::Sampling) {
            declared.sampling = None;
        }
        if !answers(CallerRequest::Roots) {
            declared.roots = None;
        }
        if !answers(CallerRequest::Elicitation) && self.elicitor.is_none() {
            declared.elicitation = None;
        }
        declared
    }

    pub(crate) fn with_elicitor(mut self, elicitor: Option<Arc<dyn Elicitor>>) -> Self {
        self.elicitor = elicitor;
        self
    }
}

/// toolgate's identity in `initialize` / `server/discover`; form elicitation is declared
/// when something answers it, sampling and roots when they are passed on to callers.
pub(crate) fn client_config(elicitation: bool, forward: bool) -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    if forward {
        capabilities.sampling = Some(Default::default());
        capabilities.roots = Some(Default::default());
    }
    if elicitation || forward {
        let mut elicit = ElicitationCapability::new();
        elicit.form = Some(FormElicitationCapability::default());
        capabilities.elicitation = Some(elicit);
    }
    ClientConfig::new(
        capabilities,
        Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

impl ClientHandler for McpClientHandler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let route = self.link.route_for(&params.progress_token);
        if let Some(route) = &route {
            route.sink.report(ProgressUpdate {
                progress: params.progress,
                total: params.total,
                message: params.message.clone(),
            });
        }
        let call_id = route.map(|r| r.call_id);
        tracing::debug!(
            server = %self.link.server,
            call_id = call_id.as_deref().unwrap_or("-"),
            progress = params.progress,
            total = params.total,
            message = params.message.as_deref().unwrap_or(""),
            "MCP progress"
        );
        self.link.emit(McpEvent::Progress {
            server: self.link.server.clone(),
            call_id,
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    #[allow(deprecated)] // logging is deprecated by SEP-2577 but 2025-11-25 servers still send it
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        use rmcp::model::LoggingLevel as L;
        let server = &self.link.server;
        let logger = params.logger.as_deref().unwrap_or("");
        let data = &params.data;
        match params.level {
            L::Debug => tracing::debug!(server = %server, logger, %data, "MCP server log"),
            L::Info | L::Notice => {
                tracing::info!(server = %server, logger, %data, "MCP server log")
            }
            L::Warning => tracing::warn!(server = %server, logger, %data, "MCP server log"),
            _ => tracing::error!(server = %server, logger, %data, "MCP server log"),
        }
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("{:?}", params.level).to_lowercase());
        if let Some(caller) = self.link.active.log_target()
            && let Ok(forwarded) = serde_json::to_value(&params)
        {
            caller.log(forwarded).await;
        }
        self.link.emit(McpEvent::Log {
            server: server.clone(),
            level,
            logger: params.logger,
            data: params.data,
        });
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.link.server, "MCP server's tool list changed");
        self.link.refresh.notify_one();
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.link.server, "MCP server's prompt list changed");
        self.link.refresh.notify_one();
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.link.server, "MCP server's resource list changed");
        self.link.refresh.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.link.server, uri = %params.uri, "MCP resource updated");
        self.link.emit(McpEvent::ResourceUpdated {
            server: self.link.server.clone(),
            uri: params.uri,
        });
    }

    fn get_info(&self) -> ClientConfig {
        let forward = self.requests == ClientRequests::Forward;
        let approval = self.requests != ClientRequests::Refuse && self.elicitor.is_some();
        client_config(approval, forward)
    }

    #[allow(deprecated)] // sampling is deprecated by SEP-2577 but 2025-11-25 servers use it
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, McpError> {
        self.ask(CallerRequest::Sampling, params).await
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, McpError> {
        self.ask(CallerRequest::Roots, serde_json::json!({})).await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        if self.forward_to(CallerRequest::Elicitation).is_ok() {
            return self.ask(CallerRequest::Elicitation, request).await;
        }
        self.elicit_locally(request).await
    }
}

impl McpClientHandler {
    /// An elicitation nobody's client answers: the approval channel, or a decline.
    async fn elicit_locally(&self, request: ElicitRequestParams) -> Result<ElicitResult, McpError> {
        let server = self.link.server.clone();
        if self.requests == ClientRequests::Refuse {
            tracing::info!(%server, "MCP elicitation declined (client_requests = refuse)");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        let (
            Some(elicitor),
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            },
        ) = (&self.elicitor, request)
        else {
            tracing::info!(%server, "MCP elicitation declined (URL mode, or no channel)");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        tracing::info!(%server, %message, "MCP server asks for input; routed to the approval channel");
        let answer = elicitor
            .elicit(ElicitationRequest {
                server,
                message,
                schema,
            })
            .await;
        Ok(match answer {
            ElicitationAnswer::Accept(form) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(form))
            }
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}

/// A request refused before it reaches any client, logged with its reason.
fn refused(server: &str, request: CallerRequest, why: String) -> McpError {
    tracing::info!(%server, method = request.method(), "refused: {why}");
    McpError::new(rmcp::model::ErrorCode::INVALID_REQUEST, why, None)
}

impl McpClientHandler {
    /// Answers one request of a 2026-07-28 `input_required` result for the call of
    /// `caller` (SEP-2322: the call itself carries the requests, so nothing is guessed):
    /// passed to that client under `forward`, otherwise what a mid-call request gets —
    /// elicitation to the approval channel, sampling and roots refused.
    #[allow(deprecated)] // sampling and roots are deprecated by SEP-2577 but still asked
    pub(crate) async fn answer_input(
        &self,
        caller: &CallerLink,
        key: &str,
        request: InputRequest,
    ) -> Result<Value, McpError> {
        let server = self.link.server.as_str();
        let Some(kind) = input_kind(&request) else {
            return Err(McpError::new(
                rmcp::model::ErrorCode::INVALID_REQUEST,
                format!("MCP server `{server}` asked for input of a kind toolgate does not know"),
                None,
            ));
        };
        let channel = self
            .forwarding(kind)
            .and_then(|()| self.channel_of(caller, kind));
        match (channel, request) {
            (Ok(channel), InputRequest::CreateMessage(r)) => {
                self.ask_on::<_, Value>(&channel, kind, Some(key), r.params)
                    .await
            }
            (Ok(channel), InputRequest::Elicitation(r)) => {
                self.ask_on::<_, Value>(&channel, kind, Some(key), r.params)
                    .await
            }
            (Ok(channel), InputRequest::ListRoots(_)) => {
                self.ask_on::<_, Value>(&channel, kind, Some(key), serde_json::json!({}))
                    .await
            }
            (Err(_), InputRequest::Elicitation(r)) => {
                let answer = self.elicit_locally(r.params).await?;
                serde_json::to_value(answer)
                    .map_err(|e| McpError::internal_error(e.to_string(), None))
            }
            (Err(why), _) => Err(refused(server, kind, why)),
            (Ok(_), _) => Err(refused(server, kind, "an unknown kind of input".to_owned())),
        }
    }
}

/// What the next request of a multi-round trip carries back (SEP-2322).
pub(crate) struct Retry {
    pub(crate) input_responses: Option<rmcp::model::InputResponses>,
    pub(crate) request_state: Option<String>,
}

impl McpClientHandler {
    /// Round `round` of an `input_required` answer for the client behind `caller`: its
    /// requests answered ([`Self::answer_all`]), or — when it carries only `requestState`,
    /// the server still working — a growing pause first, so the retry does not spin.
    pub(crate) async fn next_round(
        &self,
        caller: &CallerLink,
        asked: rmcp::model::InputRequiredResult,
        round: u32,
    ) -> Result<Retry, McpError> {
        let answers = self
            .answer_all(caller, asked.input_requests.unwrap_or_default())
            .await?;
        if answers.is_empty() {
            tokio::time::sleep(STATE_ONLY_PAUSE * round.min(10)).await;
        }
        Ok(Retry {
            input_responses: (!answers.is_empty()).then_some(answers),
            request_state: asked.request_state,
        })
    }

    /// The answers to one round's input requests, all asked at once for `caller`, each
    /// under the key the server gave it; the first request that cannot be answered fails
    /// the round, its message saying which.
    pub(crate) async fn answer_all(
        &self,
        caller: &CallerLink,
        requests: rmcp::model::InputRequests,
    ) -> Result<rmcp::model::InputResponses, McpError> {
        let server = &self.link.server;
        let answers = requests.into_iter().map(|(key, request)| async move {
            let method = input_kind(&request).map_or("input", |k| k.method());
            self.answer_input(caller, &key, request)
                .await
                .map(|value| (key, value))
                .map_err(|e| {
                    McpError::new(
                        e.code,
                        format!(
                            "MCP server `{server}` asked for input ({method}) that was not given: {}",
                            e.message
                        ),
                        e.data,
                    )
                })
        });
        futures_util::future::try_join_all(answers)
            .await
            .map(|pairs| pairs.into_iter().collect())
    }
}

/// Most `input_required` rounds one request may take (rmcp's default cap).
pub(crate) const MAX_INPUT_ROUNDS: u32 = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS as u32;
/// The pause before re-sending a round that carried only `requestState`, times the round.
const STATE_ONLY_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// What a 2026-07-28 input request asks of a client; `None` for a kind rmcp added later.
pub(crate) fn input_kind(request: &InputRequest) -> Option<CallerRequest> {
    match request {
        InputRequest::CreateMessage(_) => Some(CallerRequest::Sampling),
        InputRequest::Elicitation(_) => Some(CallerRequest::Elicitation),
        InputRequest::ListRoots(_) => Some(CallerRequest::Roots),
        _ => None,
    }
}
