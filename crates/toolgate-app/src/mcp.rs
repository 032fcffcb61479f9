//! The MCP hub as toolgate runs it: which servers a command starts, the options every hub
//! gets (egress policy, the stdio sandbox, elicitation through the approval desk, saved
//! OAuth tokens), and the quarantine watcher of long-running gateways.

use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use toolgate_gateway::Gateway;
use toolgate_mcp_client::{HubOptions, McpHub, RetryPolicy};
use toolgate_registry::Catalog;

use crate::assemble::steering_paths;
use crate::config::Config;
use crate::elicit::ApprovalElicitor;
use crate::sandbox::ServerSandbox;
use crate::stores::Stores;

/// Which configured MCP servers a command starts.
#[derive(Debug, Clone, Copy)]
pub enum McpServers<'a> {
    /// Every enabled server.
    All,
    /// Only the server whose tools are named `mcp__{server}__…`, or — for any other name
    /// — the server that keeps its own names (`prefix = "never"`), if there is one.
    ForTool(&'a str),
    /// The server with this name.
    Named(&'a str),
    /// None: a runtime without MCP servers (`mcp status` probes them on a scratch catalog).
    None,
}

impl McpServers<'_> {
    fn admits(self, server: &toolgate_mcp_client::ServerConfig) -> bool {
        match self {
            McpServers::All => true,
            McpServers::None => false,
            McpServers::ForTool(tool)
                if server.prefix == toolgate_mcp_client::NamePrefix::Never =>
            {
                !tool.starts_with("mcp__")
            }
            McpServers::ForTool(tool) => tool
                .strip_prefix("mcp__")
                .and_then(|rest| rest.strip_prefix(server.name.as_str()))
                .is_some_and(|rest| rest.starts_with("__")),
            McpServers::Named(name) => name == server.name,
        }
    }
}

/// The hub options every command uses: default backoff, the `[egress]` policy for HTTP
/// servers, the shell tool's sandbox for stdio servers with a `sandbox` table, elicitation
/// routed to `gateway`'s approval desk and audit log ([`crate::elicit`]), and — when a
/// server has an `auth` table — the store holding the tokens `toolgate mcp login` saved.
pub fn hub_options(
    config: &Config,
    stores: &Stores,
    gateway: &Gateway,
) -> anyhow::Result<HubOptions> {
    let sandbox = ServerSandbox {
        workspace: config.workspace.clone(),
        data_dir: config.data_dir.clone(),
        protected: steering_paths(config),
        egress: config.file.egress.clone(),
        audit: crate::egress::AuditedEgress::new(Arc::clone(gateway.audit())),
        proxies: std::sync::Mutex::new(std::collections::HashMap::new()),
    };
    let elicitor = ApprovalElicitor::new(
        Arc::clone(gateway.desk()),
        Arc::clone(gateway.audit()),
        Duration::from_millis(config.file.approvals.poll_millis.max(10)),
    );
    let options = HubOptions::new(RetryPolicy::default(), config.file.egress.clone())
        .with_stdio_sandbox(Arc::new(sandbox))
        .with_elicitor(Arc::new(elicitor));
    if config.file.mcp.servers.iter().any(|s| s.auth.is_some()) {
        return Ok(options.with_credentials(stores.credentials()?));
    }
    Ok(options)
}

/// Starts the selected `[[mcp.servers]]` on `catalog` (their tools are pinned there) and
/// returns without waiting; `None` when none is selected. Call [`McpHub::shutdown`] before
/// exiting so that stdio children are stopped.
pub fn spawn_mcp(
    config: &Config,
    stores: &Stores,
    gateway: &Gateway,
    which: McpServers<'_>,
) -> anyhow::Result<Option<McpHub>> {
    let servers: Vec<_> = config
        .file
        .mcp
        .servers
        .iter()
        .filter(|s| which.admits(s))
        .cloned()
        .collect();
    if servers.is_empty() {
        return Ok(None);
    }
    let hub = McpHub::spawn(
        servers,
        Arc::clone(gateway.catalog()),
        hub_options(config, stores, gateway)?,
    )
    .context("the [[mcp.servers]] settings")?;
    Ok(Some(hub))
}

/// [`spawn_mcp`], then waits until every started server is ready or has failed its first
/// attempt (at most its `startup_timeout`); quarantines lifted by an approval made since
/// the pins were last read are applied.
pub async fn start_mcp(
    config: &Config,
    stores: &Stores,
    gateway: &Gateway,
    which: McpServers<'_>,
) -> anyhow::Result<Option<McpHub>> {
    let hub = spawn_mcp(config, stores, gateway, which)?;
    if let Some(hub) = &hub {
        hub.settled().await;
        gateway.catalog().recheck_quarantined().await;
    }
    Ok(hub)
}

/// How often a long-running gateway re-reads the pins of quarantined tools, so that a
/// `toolgate tools approve-change` made in another process takes effect without a restart.
const QUARANTINE_RECHECK: Duration = Duration::from_secs(5);

/// For `serve`: after every re-listing of an MCP server's tools, and every few seconds,
/// releases quarantined tools whose changed definition has since been approved.
pub fn watch_quarantine(hub: &McpHub, catalog: Arc<Catalog>) -> tokio::task::JoinHandle<()> {
    let mut events = hub.events();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(QUARANTINE_RECHECK);
        loop {
            tokio::select! {
                event = events.recv() => match event {
                    Ok(toolgate_mcp_client::McpEvent::ToolsChanged { .. })
                    | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Ok(_) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
                _ = tick.tick() => {}
            }
            for name in catalog.recheck_quarantined().await {
                tracing::info!(tool = %name, "changed definition approved; the tool is callable again");
            }
        }
    })
}
