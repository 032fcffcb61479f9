//! [`Runtime`]: the running system, opened once per command and shut down in order. Every
//! front end (`call`, `run`/`chat`, `serve`, `serve --stdio`, `tools …`, `mcp tools`) is a
//! use of one runtime, so the sequence "open the gateway → start MCP → Tool RAG → watchers
//! … → stop the hub → wait for calls → flush the audit" is written here and nowhere else.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::task::JoinHandle;
use toolgate_gateway::Gateway;
use toolgate_gateway::approve::Approver;
use toolgate_mcp_client::McpHub;

use crate::assemble::open_gateway;
use crate::config::Config;
use crate::mcp::{McpServers, spawn_mcp, start_mcp, watch_quarantine};
use crate::rag::{self, Rag};
use crate::stores::Stores;

/// How long [`Runtime::shutdown`] waits for calls still running before it flushes the audit
/// log anyway.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How long [`Runtime::shutdown`] gives the exporters to send the last spans and metrics.
const TELEMETRY_FLUSH: Duration = Duration::from_secs(5);

/// How long the runtime lives, which decides how MCP servers and Tool RAG start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// One command (`call`, `run`, `tools list`): the selected MCP servers are started and
    /// awaited (each until ready or its first attempt failed) before the command goes on;
    /// `search_tools` joins the catalog now when `rag` is set and the catalog exceeds
    /// `[rag] threshold`.
    Command { rag: bool },
    /// A server (`serve`, `serve --stdio`): MCP servers come up in the background — one
    /// that is slow or down never delays serving — quarantined tools are released when
    /// their change is approved, and `search_tools` joins the catalog as soon as it exceeds
    /// the threshold.
    Service,
}

/// What a command asks of the runtime.
#[derive(Clone)]
pub struct RuntimeOptions<'a> {
    /// A channel that can ask a human while a call waits (the terminal prompt).
    pub approver: Option<Arc<dyn Approver>>,
    /// Which configured MCP servers start.
    pub servers: McpServers<'a>,
    pub lifetime: Lifetime,
}

impl std::fmt::Debug for RuntimeOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeOptions")
            .field("approver", &self.approver.is_some())
            .field("servers", &self.servers)
            .field("lifetime", &self.lifetime)
            .finish()
    }
}

impl RuntimeOptions<'_> {
    /// A one-off command over every MCP server, without Tool RAG.
    pub fn command() -> Self {
        RuntimeOptions {
            approver: None,
            servers: McpServers::All,
            lifetime: Lifetime::Command { rag: false },
        }
    }

    /// A server over every MCP server.
    pub fn service() -> Self {
        RuntimeOptions {
            lifetime: Lifetime::Service,
            ..Self::command()
        }
    }
}

impl<'a> RuntimeOptions<'a> {
    pub fn with_approver(mut self, approver: Option<Arc<dyn Approver>>) -> Self {
        self.approver = approver;
        self
    }

    pub fn with_servers(mut self, servers: McpServers<'a>) -> RuntimeOptions<'a> {
        self.servers = servers;
        self
    }

    /// For [`Lifetime::Command`]: whether `search_tools` may join the catalog.
    pub fn with_rag(mut self, rag: bool) -> Self {
        if let Lifetime::Command { rag: r } = &mut self.lifetime {
            *r = rag;
        }
        self
    }
}

/// The store, catalog, gateway, MCP hub, Tool RAG and watchers of one configuration.
pub struct Runtime {
    config: Config,
    /// The store, opened once; its change feed (PostgreSQL) stops last, after the calls and
    /// the audit.
    stores: Stores,
    gateway: Arc<Gateway>,
    hub: Option<Arc<McpHub>>,
    rag: Option<Rag>,
    watchers: Vec<JoinHandle<()>>,
    /// The OpenTelemetry SDK, when installed (servers, or a command that exports).
    telemetry: Option<&'static toolgate_telemetry::Telemetry>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("workspace", &self.config.workspace)
            .field("mcp", &self.hub.is_some())
            .field("rag", &self.rag.is_some())
            .field("watchers", &self.watchers.len())
            .finish_non_exhaustive()
    }
}

impl Runtime {
    /// Opens the stores, registers the tools, assembles the gateway and starts what
    /// `options` asks for. On an error after MCP servers were started they are stopped
    /// again: no child outlives a failed open.
    pub async fn open(config: &Config, options: RuntimeOptions<'_>) -> anyhow::Result<Runtime> {
        let telemetry = crate::telemetry::install(config, options.lifetime == Lifetime::Service)?;
        let stores = Stores::open(config).await?;
        let gateway = Arc::new(open_gateway(config, &stores, options.approver).await?);
        let hub = match options.lifetime {
            Lifetime::Command { .. } => {
                start_mcp(config, &stores, &gateway, options.servers).await?
            }
            Lifetime::Service => spawn_mcp(config, &stores, &gateway, options.servers)?,
        }
        .map(Arc::new);
        let mut runtime = Runtime {
            config: config.clone(),
            stores,
            gateway,
            hub,
            rag: None,
            watchers: Vec::new(),
            telemetry,
        };
        match options.lifetime {
            Lifetime::Command { rag: false } => {}
            Lifetime::Command { rag: true } => {
                // Loading the model and the vector cache blocks: off the async workers.
                let (config, gateway) = (runtime.config.clone(), Arc::clone(&runtime.gateway));
                let enabled = tokio::task::spawn_blocking(move || rag::enable(&config, &gateway))
                    .await
                    .map_err(|e| anyhow::anyhow!("Tool RAG's start failed: {e}"))
                    .and_then(|r| r);
                match enabled {
                    Ok(rag) => runtime.rag = rag,
                    Err(e) => {
                        runtime.shutdown().await?;
                        return Err(e);
                    }
                }
            }
            Lifetime::Service => {
                if let Some(hub) = &runtime.hub {
                    let catalog = Arc::clone(runtime.gateway.catalog());
                    runtime.watchers.push(watch_quarantine(hub, catalog));
                }
                let watch =
                    rag::watch(&runtime.config, &runtime.gateway, runtime.hub.as_deref()).await;
                runtime.watchers.extend(watch);
                if runtime.telemetry.is_some() {
                    crate::telemetry::observe_runtime(runtime.hub.as_ref());
                }
            }
        }
        Ok(runtime)
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn gateway(&self) -> &Arc<Gateway> {
        &self.gateway
    }

    /// What toolgate's own MCP endpoint serves besides tools: the federated servers'
    /// prompts, resources, completion and logging when any server is configured.
    pub fn mcp_options(&self) -> toolgate_server::mcp::McpOptions {
        let mut options = toolgate_server::mcp::McpOptions::default();
        if let Some(sessions) = self.stores.sessions() {
            options.sessions = Some(Arc::new(
                toolgate_server::mcp::sessions::SharedSessions::new(sessions),
            ));
        }
        if let Some(hub) = self.hub.as_ref().filter(|h| h.federates()) {
            options.extras =
                crate::federated::FederatedExtras::new(Arc::clone(hub), Arc::clone(&self.gateway));
        }
        options
    }

    /// The stores this runtime opened (the bearer tokens, the chat posts, …).
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// The approval channels of `[[approvals.channels]]` (none configured: `None`), their
    /// secrets read from the environment; `operators` says who holds the operator right.
    pub fn approval_channels(
        &self,
        operators: Arc<dyn toolgate_channels::OperatorCheck>,
        public_url: Option<String>,
    ) -> anyhow::Result<Option<Arc<toolgate_channels::ApprovalChannels>>> {
        let channels = &self.config.file.approvals.channels;
        if channels.is_empty() {
            return Ok(None);
        }
        let hub = toolgate_channels::ApprovalChannels::new(
            channels,
            toolgate_channels::ChannelsDeps {
                approvals: Arc::clone(self.gateway.desk().store()),
                posts: self.stores.chat_posts(),
                decisions: Arc::clone(self.gateway.decisions()),
                egress: self.config.file.egress.clone(),
                operators,
                public_url,
                clock: toolgate_store::system_clock(),
            },
        )?;
        Ok(Some(hub))
    }

    /// The OpenTelemetry SDK, when this runtime installed it.
    pub fn telemetry(&self) -> Option<&'static toolgate_telemetry::Telemetry> {
        self.telemetry
    }

    /// The MCP hub, when any configured server was selected.
    pub fn hub(&self) -> Option<&Arc<McpHub>> {
        self.hub.as_ref()
    }

    /// Connects to every configured MCP server on a scratch catalog (nothing is pinned, no
    /// tool joins this runtime's catalog) with this runtime's approval desk and audit log —
    /// elicitations asked during the probe reach the operator like any other — and returns
    /// their statuses after the first attempt, the servers stopped again.
    pub async fn probe_mcp(&self) -> anyhow::Result<Vec<toolgate_mcp_client::ServerStatus>> {
        let servers = self.config.file.mcp.servers.clone();
        if servers.is_empty() {
            return Ok(Vec::new());
        }
        let hub = McpHub::start(
            servers,
            Arc::new(toolgate_registry::Catalog::new()),
            crate::mcp::hub_options(&self.config, &self.stores, &self.gateway)?,
        )
        .await
        .context("the [[mcp.servers]] settings")?;
        let status = hub.status();
        hub.shutdown().await;
        Ok(status)
    }

    /// Tool RAG, when [`Lifetime::Command`] asked for it and the catalog exceeds the
    /// threshold.
    pub fn rag(&self) -> Option<&Rag> {
        self.rag.as_ref()
    }

    /// Stops everything in one order: the watchers; the calls still in flight (waited for up
    /// to [`SHUTDOWN_GRACE`]); the MCP hub (stdio children end; a federated call still
    /// running then fails and is audited); the audit log, flushed so that every record
    /// written is on disk; the store's change feed; and last the telemetry exporters.
    pub async fn shutdown(self) -> anyhow::Result<()> {
        for watcher in self.watchers {
            watcher.abort();
        }
        let in_flight = self.gateway.in_flight();
        if tokio::time::timeout(SHUTDOWN_GRACE, in_flight.idle())
            .await
            .is_err()
        {
            tracing::warn!(
                running = in_flight.count(),
                "calls still running after {SHUTDOWN_GRACE:?}; stopping the MCP servers under them"
            );
        }
        if let Some(hub) = &self.hub {
            hub.shutdown().await;
        }
        let flushed = self
            .gateway
            .audit()
            .flush()
            .await
            .context("flushing the audit log");
        self.stores.stop();
        if let Some(telemetry) = self.telemetry {
            // The exporters post with a blocking client: off the async threads.
            let _ = tokio::task::spawn_blocking(move || {
                telemetry.shutdown(TELEMETRY_FLUSH);
            })
            .await;
        }
        flushed
    }
}
