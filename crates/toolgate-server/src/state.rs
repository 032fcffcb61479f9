//! What every handler shares: the gateway (the one way to run a call), the stores it reads
//! directly (approvals to decide, the audit to query and verify), the server settings, and
//! the server's own machinery — the approval feed behind the event stream and the webhook,
//! and the signal that cancels calls still running at the end of the grace.
//!
//! # Shutdown, in order
//! 1. `shutdown` fires: new calls are refused, event streams end, the listener closes.
//! 2. In-flight calls finish on their own (up to `shutdown_grace_secs`).
//! 3. `calls_stop` fires for whatever is still running: those calls end `cancelled` (and are
//!    audited as such). Calls in flight are counted in one place, the gateway's
//!    [`InFlight`](toolgate_gateway::inflight::InFlight), whatever front end started them.
//! 4. The owner of the running server (`toolgate_app::Runtime::serve`) then stops the MCP
//!    hub, flushes the audit log and closes the store.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_gateway::{CallRequest, Gateway, LimitsConfig};
use toolgate_protocol::{CallError, Envelope, ErrorCode};
use toolgate_store::ApprovalStore;

use crate::api::feed::ApprovalFeed;
use crate::auth::TokenBook;
use crate::auth::jwt::JwtAuthority;
use crate::config::ServerConfig;

/// The federated MCP servers' status, one JSON object per server in config order (the
/// objects `toolgate mcp status --json` prints: name, transport, state, error, tools, …).
/// Set by whoever runs the MCP client; this crate does not depend on it.
pub type McpStatus = Arc<dyn Fn() -> Vec<Value> + Send + Sync>;

/// What a tool definition will make a model guess (the linter's findings for one definition,
/// as JSON objects: rule, severity, message, fix). Set by whoever assembles the server; this
/// crate does not depend on the linter.
pub type DefinitionCheck = Arc<dyn Fn(&toolgate_protocol::ToolSpec) -> Vec<Value> + Send + Sync>;

/// Cheap to clone; handlers take it by value.
#[derive(Clone)]
pub struct AppState {
    inner: Arc<Inner>,
    machinery: Arc<Machinery>,
    max_argument_bytes: usize,
    mcp_status: Option<McpStatus>,
    definition_check: Option<DefinitionCheck>,
    /// What `/mcp` offers besides the catalog's tools (the federated servers' prompts,
    /// resources, …); tools only by default.
    mcp_options: crate::mcp::McpOptions,
    /// The tokens issued through the store (`toolgate token create`, the console); without
    /// it only `[[server.tokens]]` admit callers.
    tokens: Option<Arc<TokenBook>>,
    /// Access tokens of `[server.oauth]`'s authorization servers; `None` when none is
    /// configured (or the configuration could not be used: then no such token is admitted).
    jwt: Option<Arc<JwtAuthority>>,
    /// The approval channels (`[[approvals.channels]]`): started with the server, and the
    /// target of `/hooks/*`.
    channels: Option<Arc<toolgate_channels::ApprovalChannels>>,
    /// The agent's conversations (`/v1/conversations`, `/v1/chat/completions`); `None` when
    /// no model is configured or `[conversations] enabled = false`, with the reason.
    conversations: Result<toolgate_conversations::Conversations, String>,
    /// The chat bots talking to the agent (`[[bots]]`): started with the server, and the
    /// target of `/hooks/bots/*`.
    bots: Option<Arc<toolgate_chatbots::Bots>>,
}

pub struct Inner {
    pub gateway: Arc<Gateway>,
    pub approvals: Arc<ApprovalStore>,
    /// The audit log file and the SQLite database holding its index.
    pub audit_jsonl: PathBuf,
    pub audit_db: PathBuf,
    pub config: ServerConfig,
    /// The address actually bound (port 0 resolved).
    pub local_addr: std::net::SocketAddr,
    pub started: Instant,
    /// Fires when shutdown begins: long-lived streams end, new calls are refused.
    pub shutdown: CancellationToken,
}

/// Built by the server, not by its callers.
struct Machinery {
    feed: ApprovalFeed,
    calls_stop: CancellationToken,
}

/// Room for the envelope around the arguments in a `POST /v1/calls` body.
const BODY_SLACK_BYTES: usize = 64 * 1024;

impl AppState {
    pub fn new(inner: Inner) -> Self {
        let jwt = match JwtAuthority::new(
            &inner.config.oauth,
            resource_url(&inner),
            &inner.config.egress,
        ) {
            Ok(jwt) => jwt.map(Arc::new),
            Err(e) => {
                tracing::error!(error = %e, "[server.oauth] is unusable; access tokens of its authorization servers are refused");
                None
            }
        };
        AppState {
            inner: Arc::new(inner),
            machinery: Arc::new(Machinery {
                feed: ApprovalFeed::new(),
                calls_stop: CancellationToken::new(),
            }),
            max_argument_bytes: LimitsConfig::default().max_argument_bytes,
            mcp_status: None,
            definition_check: None,
            mcp_options: crate::mcp::McpOptions::default(),
            tokens: None,
            jwt,
            channels: None,
            bots: None,
            conversations: Err("no model is configured: set [model] (provider, model, and its API key variable) to talk to the agent".into()),
        }
    }

    /// Serves the agent's conversations.
    pub fn with_conversations(
        mut self,
        conversations: Result<toolgate_conversations::Conversations, String>,
    ) -> Self {
        self.conversations = conversations;
        self
    }

    /// Serves the chat bots of `[[bots]]`.
    pub fn with_bots(mut self, bots: Arc<toolgate_chatbots::Bots>) -> Self {
        self.bots = Some(bots);
        self
    }

    /// The chat bots, when any is configured.
    pub fn bots(&self) -> Option<&Arc<toolgate_chatbots::Bots>> {
        self.bots.as_ref()
    }

    /// The agent's conversations, or why there are none.
    pub fn conversations(&self) -> Result<&toolgate_conversations::Conversations, &str> {
        self.conversations.as_ref().map_err(String::as_str)
    }

    /// The validator of `[server.oauth]` access tokens, when authorization servers are
    /// configured.
    pub fn jwt(&self) -> Option<&Arc<JwtAuthority>> {
        self.jwt.as_ref()
    }

    /// This server's canonical resource URL: the audience access tokens must name, and the
    /// `resource` of its protected-resource metadata.
    pub fn resource_url(&self) -> String {
        resource_url(&self.inner)
    }

    /// Admits the tokens `book` holds besides `[[server.tokens]]`; the server keeps it
    /// current while it runs.
    pub fn with_tokens(mut self, book: Arc<TokenBook>) -> Self {
        self.tokens = Some(book);
        self
    }

    /// The issued tokens, when the server admits them.
    pub fn tokens(&self) -> Option<&Arc<TokenBook>> {
        self.tokens.as_ref()
    }

    /// Announces approvals in the hub's chats and takes their decisions (`/hooks/*`).
    pub fn with_channels(mut self, hub: Arc<toolgate_channels::ApprovalChannels>) -> Self {
        self.channels = Some(hub);
        self
    }

    /// The approval channels, when any is configured.
    pub fn channels(&self) -> Option<&Arc<toolgate_channels::ApprovalChannels>> {
        self.channels.as_ref()
    }

    /// Serves `/mcp` with `options` (see [`crate::mcp::McpOptions`]).
    pub fn with_mcp_options(mut self, options: crate::mcp::McpOptions) -> Self {
        self.mcp_options = options;
        self
    }

    /// What `/mcp` is served with.
    pub fn mcp_options(&self) -> &crate::mcp::McpOptions {
        &self.mcp_options
    }

    /// Where `/v1/ready` reads the federated MCP servers' status from (shown to operators).
    /// Without it the server federates none.
    pub fn with_mcp_status(mut self, status: McpStatus) -> Self {
        self.mcp_status = Some(status);
        self
    }

    /// How `GET /v1/tools/{name}` (and the console's tool page) checks a definition.
    pub fn with_definition_check(mut self, check: DefinitionCheck) -> Self {
        self.definition_check = Some(check);
        self
    }

    /// The findings about `spec`'s definition; empty without a check.
    pub fn definition_findings(&self, spec: &toolgate_protocol::ToolSpec) -> Vec<Value> {
        self.definition_check
            .as_ref()
            .map(|f| f(spec))
            .unwrap_or_default()
    }

    /// The federated MCP servers' status; empty when none is federated.
    pub fn mcp_servers(&self) -> Vec<Value> {
        self.mcp_status.as_ref().map(|f| f()).unwrap_or_default()
    }

    /// The gateway's `[limits] max_argument_bytes`, which sizes the largest call body
    /// accepted (the gateway's default when not given).
    pub fn with_max_argument_bytes(mut self, bytes: usize) -> Self {
        self.max_argument_bytes = bytes;
        self
    }

    /// The largest request body `POST /v1/calls` reads.
    pub fn call_body_limit(&self) -> usize {
        self.max_argument_bytes.saturating_add(BODY_SLACK_BYTES)
    }

    /// New and changed approval requests, polled from the store by one background task.
    pub fn feed(&self) -> &ApprovalFeed {
        &self.machinery.feed
    }

    /// Runs one call through the gateway on a task of its own, so that it finishes (and is
    /// audited) even if the front end that asked goes away:
    /// - dropping the returned future (client disconnected) fires `request.cancel`;
    /// - the hard stop at the end of the shutdown grace fires it too;
    /// - graceful shutdown waits for it (it is in the gateway's calls in flight).
    ///
    /// Never panics: a task that died is reported as `execution_failed`.
    pub async fn run_call(&self, request: CallRequest) -> Envelope {
        let cancel = request.cancel.clone();
        let guard = cancel.clone().drop_guard();
        let stop = self.machinery.calls_stop.clone();
        let gateway = Arc::clone(&self.gateway);
        let call_id = request.call_id.clone();
        let task = tokio::spawn(async move {
            let call = gateway.call(request);
            tokio::pin!(call);
            tokio::select! {
                envelope = &mut call => envelope,
                () = stop.cancelled() => {
                    cancel.cancel();
                    call.await
                }
            }
        });
        let envelope = match task.await {
            Ok(envelope) => envelope,
            Err(e) => Envelope::failure(
                call_id,
                CallError::new(
                    ErrorCode::ExecutionFailed,
                    format!("the call's task ended abnormally: {e}"),
                ),
            ),
        };
        guard.disarm();
        envelope
    }

    /// Whether shutdown has begun (new calls are refused).
    pub fn is_shutting_down(&self) -> bool {
        self.shutdown.is_cancelled()
    }

    /// Step 3 of shutdown: cancels the calls still running and waits (up to `within`) for
    /// the gateway's calls in flight to end and be audited. Returns whether they all ended.
    pub async fn stop_calls(&self, within: std::time::Duration) -> bool {
        self.machinery.calls_stop.cancel();
        tokio::time::timeout(within, self.gateway.in_flight().idle())
            .await
            .is_ok()
    }
}

/// `[server.oauth] resource`, else `<public URL>/mcp`.
fn resource_url(inner: &Inner) -> String {
    if let Some(r) = &inner.config.oauth.resource {
        return r.clone();
    }
    let base = match &inner.config.public_url {
        Some(u) => u.trim_end_matches('/').to_owned(),
        None => format!("http://{}", inner.local_addr),
    };
    format!("{base}/mcp")
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
}
