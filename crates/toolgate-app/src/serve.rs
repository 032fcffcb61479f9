//! [`Runtime::serve`]: the running server, owned by the runtime. It builds the server's
//! state (tokens, operators, approval channels, the MCP endpoint's options, the servers'
//! status), serves until the shutdown signal, and then stops everything in one order:
//!
//! ```text
//! accept        the listener closes, requests in progress finish (the grace)
//! calls         calls still in flight are cancelled and audited as such
//! metrics       the separate /metrics listener, if any
//! hub           MCP servers stop (stdio children end)
//! audit         flushed: every record written is on disk
//! store         the change feed's listener stops
//! telemetry     the last spans and metrics are exported
//! ```
//!
//! The CLI's `serve` only turns flags into a [`Listeners`] and a signal.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolgate_server::{AppState, Inner, ServerConfig};

use crate::runtime::Runtime;

/// Where the server listens: the main listener, and `/metrics` apart when
/// `[telemetry] metrics_listen` asks for it.
#[derive(Debug)]
pub struct Listeners {
    pub main: TcpListener,
    pub metrics: Option<TcpListener>,
}

impl Listeners {
    /// Binds `config.listen` and, if set, `metrics_listen`, with errors that say what to do.
    pub async fn bind(
        config: &ServerConfig,
        metrics_listen: Option<std::net::SocketAddr>,
    ) -> anyhow::Result<Listeners> {
        let main = TcpListener::bind(&config.listen).await.with_context(|| {
            format!(
                "cannot listen on {} (choose another with --listen ADDR:PORT)",
                config.listen
            )
        })?;
        let metrics = match metrics_listen {
            Some(addr) => {
                if !addr.ip().is_loopback() {
                    tracing::warn!(
                        "[telemetry] metrics_listen {addr} serves /metrics without a token beyond loopback: keep it on a private network"
                    );
                }
                Some(TcpListener::bind(addr).await.with_context(|| {
                    format!("cannot listen on {addr} for /metrics ([telemetry] metrics_listen)")
                })?)
            }
            None => None,
        };
        Ok(Listeners { main, metrics })
    }
}

impl Runtime {
    /// Serves HTTP (MCP, API, console, hooks) with `config` on `listeners` until `shutdown`
    /// resolves, then shuts the whole runtime down in the order of this module's map. The
    /// runtime is consumed: nothing of it outlives the server.
    pub async fn serve(
        self,
        config: ServerConfig,
        listeners: Listeners,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        let state = match self.server_state(config, &listeners.main).await {
            Ok(state) => state,
            Err(e) => {
                self.shutdown().await?;
                return Err(e);
            }
        };
        let stop_metrics = CancellationToken::new();
        let metrics = listeners.metrics.map(|listener| {
            tokio::spawn(toolgate_server::api::metrics::serve_separately(
                listener,
                self.config().file.server.allowed_hosts.clone(),
                stop_metrics.clone(),
            ))
        });
        let served = toolgate_server::serve(listeners.main, state, shutdown).await;
        stop_metrics.cancel();
        if let Some(task) = metrics {
            let _ = task.await;
        }
        self.shutdown().await?;
        served.context("serving")?;
        Ok(())
    }

    /// The server's state over this runtime: its gateway, stores, approval channels, MCP
    /// options and servers' status.
    async fn server_state(
        &self,
        config: ServerConfig,
        listener: &TcpListener,
    ) -> anyhow::Result<AppState> {
        let local_addr = listener.local_addr()?;
        if !local_addr.ip().is_loopback() && config.tokens.is_empty() && config.anonymous.is_none()
        {
            tracing::warn!(
                "listening beyond loopback with no [[server.tokens]] and no [server.anonymous]: every request except health, readiness and discovery documents will be refused (401)"
            );
        }
        let settings = self.config();
        let book = toolgate_server::auth::TokenBook::open(self.stores().tokens())
            .await
            .context("cannot read the issued tokens")?;
        let operators = Arc::new(toolgate_server::hooks::ServerOperators::new(
            &config,
            Some(Arc::clone(&book)),
            settings.file.approvals.operators.clone(),
        ));
        let public_url = config.public_url.clone();
        let channels = self
            .approval_channels(operators.clone(), public_url.clone())
            .context("cannot start the approval channels ([[approvals.channels]])")?;
        let mut state = AppState::new(Inner {
            gateway: Arc::clone(self.gateway()),
            approvals: Arc::clone(self.gateway().desk().store()),
            audit_jsonl: settings.audit_path(),
            audit_db: settings.db_path(),
            config,
            local_addr,
            started: Instant::now(),
            shutdown: CancellationToken::new(),
        })
        .with_max_argument_bytes(settings.file.limits.max_argument_bytes)
        .with_mcp_options(self.mcp_options())
        .with_tokens(book)
        .with_definition_check(Arc::new(definition_findings));
        if let Some(hub) = channels {
            state = state.with_channels(hub);
        }
        let conversations = self.conversations();
        if !settings.file.bots.is_empty() {
            let talk = conversations.as_ref().map_err(|why| {
                anyhow::anyhow!("[[bots]] talk to the agent, which cannot run: {why}")
            })?;
            let bots = toolgate_chatbots::Bots::new(
                &settings.file.bots,
                toolgate_chatbots::BotsDeps {
                    conversations: talk.clone(),
                    posts: self.stores().chat_posts(),
                    directory: operators.clone(),
                    egress: settings.file.egress.clone(),
                    public_url,
                    clock: toolgate_store::system_clock(),
                },
            )
            .context("cannot start the chat bots ([[bots]])")?;
            state = state.with_bots(bots);
        }
        state = state.with_conversations(conversations);
        if let Some(hub) = self.hub() {
            // Operators see the servers' state in `/v1/ready` (the console's Health page).
            let hub = Arc::clone(hub);
            state = state.with_mcp_status(Arc::new(move || {
                hub.status()
                    .iter()
                    .filter_map(|s| serde_json::to_value(s).ok())
                    .collect()
            }));
        }
        Ok(state)
    }

    /// MCP on stdin/stdout for a host that spawned us, as `caller`, until the host closes
    /// stdin; then the runtime shuts down. Nothing but protocol goes to stdout.
    pub async fn serve_stdio(self, caller: toolgate_gateway::Caller) -> anyhow::Result<()> {
        let served = toolgate_server::mcp::serve_stdio(
            Arc::clone(self.gateway()),
            caller,
            self.mcp_options(),
        )
        .await;
        if let Err(e) = self.shutdown().await {
            tracing::error!(error = %format!("{e:#}"), "shutting down");
        }
        served.context("serving MCP on stdin/stdout")
    }
}

impl Runtime {
    /// The agent's conversations over `[model]` and `[conversations]`, or why there are none
    /// (the API answers 503 with it): no model, no key, or switched off.
    fn conversations(&self) -> Result<toolgate_conversations::Conversations, String> {
        let settings = self.config();
        let talk = &settings.file.conversations;
        if !talk.enabled {
            return Err("conversations are switched off ([conversations] enabled = false)".into());
        }
        let model = &settings.file.model;
        if model.model.is_empty() {
            return Err("no model is configured: set [model] (provider, model, and its API key variable) to talk to the agent".into());
        }
        let client = toolgate_agent::connect(model, &settings.file.egress)
            .map_err(|e| format!("[model]: {e}"))?;
        tracing::info!(model = %model.model, "conversations: the agent answers on /v1/conversations and /v1/chat/completions");
        Ok(toolgate_conversations::Conversations::new(
            toolgate_conversations::ConversationDeps {
                store: self.stores().store().conversations(),
                gateway: Arc::clone(self.gateway()),
                model: toolgate_conversations::ModelSetup {
                    client,
                    system: model.system.clone(),
                    max_steps: model.max_steps,
                    max_tokens: Some(model.max_tokens),
                    parallel_tool_calls: model.parallel_tool_calls,
                    selector: self.rag().map(crate::rag::Rag::selector),
                },
                config: talk.clone(),
            },
        ))
    }
}

/// The linter's findings about one definition (the rules that need no other tool; the
/// confusable pairs are `toolgate tools lint`'s, over the whole catalog), as the API shows
/// them on `GET /v1/tools/{name}` and the console on a tool's page.
fn definition_findings(spec: &toolgate_protocol::ToolSpec) -> Vec<serde_json::Value> {
    toolgate_lint::lint_catalog(
        std::slice::from_ref(spec),
        &toolgate_lint::LintOptions::default(),
    )
    .into_iter()
    .filter_map(|finding| serde_json::to_value(finding).ok())
    .collect()
}
