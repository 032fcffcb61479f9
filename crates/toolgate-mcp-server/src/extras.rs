//! The one extension point of the MCP endpoint besides tools: resources, prompts,
//! completions and logging levels. Tools always come from the gateway's catalog (and so go
//! through the pipeline); everything else an MCP server may offer is delegated to an
//! [`McpExtras`]: the federated servers' (toolgate-app's `FederatedExtras`, which applies
//! the caller's role and audits reads) or [`NoExtras`], which declares none of these
//! capabilities, so clients are answered `-32601 method not found` and never shown an
//! empty feature. Every method is told who asks ([`Requester`]).

// Logging is deprecated by the 2026-07-28 revision (SEP-2577) but still part of 2025-11-25.
#![allow(deprecated)]

use async_trait::async_trait;
use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, LoggingLevel,
    ReadResourceRequestParams, ReadResourceResult, ServerCapabilities,
};
use rmcp::service::SubscriptionSink;
use rmcp::{ErrorData, Peer, RoleServer};
use tokio_util::sync::CancellationToken;
use toolgate_core::CallerLink;
use toolgate_gateway::Caller;

/// Who sends a request to the extras: the authenticated caller, the session (the
/// stateless session for 2026-07-28 requests), the client's peer (for notifications such
/// as `notifications/resources/updated`) and the client as a federated server's requests
/// reach it while this request runs (a session's peer, or the rounds of a stateless
/// `prompts/get`; none otherwise).
#[derive(Clone)]
pub struct Requester {
    pub caller: Caller,
    pub session: toolgate_protocol::SessionId,
    pub peer: Peer<RoleServer>,
    pub client: CallerLink,
}

impl std::fmt::Debug for Requester {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Requester")
            .field("caller", &self.caller)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

/// Resources, prompts, completions and logging for the MCP endpoint. Every method has a
/// default that refuses with `-32601`; implement the ones [`McpExtras::capabilities`]
/// declares.
#[async_trait]
pub trait McpExtras: Send + Sync + 'static {
    /// Capabilities to declare besides `tools` (which the handler always declares).
    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities::default()
    }

    async fn list_resources(&self, who: &Requester) -> Result<ListResourcesResult, ErrorData> {
        Err(refused(who, "resources/list"))
    }

    async fn list_resource_templates(
        &self,
        who: &Requester,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(refused(who, "resources/templates/list"))
    }

    async fn read_resource(
        &self,
        who: &Requester,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult, ErrorData> {
        let _ = request;
        Err(refused(who, "resources/read"))
    }

    /// `resources/subscribe` (2025-11-25 sessions).
    async fn subscribe(&self, who: &Requester, uri: String) -> Result<(), ErrorData> {
        let _ = uri;
        Err(refused(who, "resources/subscribe"))
    }

    async fn unsubscribe(&self, who: &Requester, uri: String) -> Result<(), ErrorData> {
        let _ = uri;
        Err(refused(who, "resources/unsubscribe"))
    }

    async fn list_prompts(&self, who: &Requester) -> Result<ListPromptsResult, ErrorData> {
        Err(refused(who, "prompts/list"))
    }

    async fn get_prompt(
        &self,
        who: &Requester,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, ErrorData> {
        let _ = request;
        Err(refused(who, "prompts/get"))
    }

    async fn complete(
        &self,
        who: &Requester,
        request: CompleteRequestParams,
    ) -> Result<CompleteResult, ErrorData> {
        let _ = request;
        Err(refused(who, "completion/complete"))
    }

    async fn set_level(&self, who: &Requester, level: LoggingLevel) -> Result<(), ErrorData> {
        let _ = level;
        Err(refused(who, "logging/setLevel"))
    }

    /// Which of the prompt and resource notices of a `subscriptions/listen` (2026-07-28)
    /// the extras serve: none by default.
    fn accepted_notices(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let _ = requested;
        SubscriptionFilter::new()
    }

    /// Serves the `accepted` prompt and resource notices of one listen through `sink` until
    /// `stop` fires.
    async fn listen(
        &self,
        who: &Requester,
        accepted: &SubscriptionFilter,
        sink: &SubscriptionSink,
        stop: &CancellationToken,
    ) {
        let _ = (who, accepted, sink);
        stop.cancelled().await;
    }

    /// Tells one 2025-11-25 session (from its `notifications/initialized` on) when the prompt
    /// or resource lists the extras serve change, until `stop` fires or the session is gone:
    /// the session-era counterpart of [`McpExtras::listen`]. None by default.
    async fn watch_session(&self, peer: Peer<RoleServer>, stop: CancellationToken) {
        let _ = (peer, stop);
    }
}

/// The production default: tools only.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExtras;

impl McpExtras for NoExtras {}

/// `not_offered`, for a default method (which ignores who asked).
fn refused(_who: &Requester, method: &str) -> ErrorData {
    not_offered(method)
}

/// The exact JSON-RPC "method not found" error for a method this server does not offer.
pub fn not_offered(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
        None,
    )
}
