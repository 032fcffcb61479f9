//! Tool RAG wiring (`[rag]`): when the catalog holds more than `[rag] threshold` tools,
//! `search_tools` joins it — called through the gateway like any tool (role-checked, audited)
//! — and the agent loop gets the retrieval selector. Which role actually gets retrieval is
//! decided per role, per step, by the selector and by `tools export`: a role seeing at most
//! the threshold keeps every tool and never sees `search_tools`.

use std::sync::Arc;

use anyhow::Context;
use toolgate_agent::ToolSelector;
use toolgate_core::DynTool;
use toolgate_gateway::Gateway;
use toolgate_rag::{CatalogSearch, RetrievalSelector, SEARCH_TOOLS, SearchToolsTool, is_meta_tool};
use toolgate_registry::Catalog;

use crate::commands::tools_search::tool_search;
use crate::settings::Settings;

/// Retrieval over one gateway's catalog.
pub struct Rag {
    pub search: Arc<CatalogSearch>,
    pub threshold: usize,
    pub k: usize,
}

impl Rag {
    /// The agent loop's selector.
    pub fn selector(&self) -> Arc<dyn ToolSelector> {
        Arc::new(RetrievalSelector::new(
            Arc::clone(&self.search),
            self.threshold,
            self.k,
        ))
    }

    /// Whether `role` sees more tools than the threshold (then it gets retrieval).
    pub fn applies_to(&self, role: &str) -> bool {
        self.search.visible_count(role) > self.threshold
    }
}

/// Task tools in the catalog (meta tools not counted), whatever their role or availability.
fn catalog_size(catalog: &Catalog) -> usize {
    catalog
        .all()
        .iter()
        .filter(|e| !is_meta_tool(&e.spec().name))
        .count()
}

/// When the catalog exceeds `[rag] threshold`: registers `search_tools` (once) and returns
/// the retrieval over it; otherwise `None` and the catalog is left as it is.
pub fn enable(settings: &Settings, gateway: &Gateway) -> anyhow::Result<Option<Rag>> {
    let cfg = &settings.file.rag;
    if catalog_size(gateway.catalog()) <= cfg.threshold {
        return Ok(None);
    }
    let mode = cfg.mode().map_err(anyhow::Error::msg)?;
    let search = Arc::new(CatalogSearch::new(
        Arc::new(tool_search(settings)?),
        Arc::clone(gateway.catalog()),
        Arc::new(gateway.roles().clone()),
        mode,
    ));
    if !gateway.catalog().has(SEARCH_TOOLS) {
        let tool: DynTool = Arc::new(SearchToolsTool::new(Arc::clone(&search), cfg.k));
        gateway
            .catalog()
            .register_many(vec![tool])
            .context("registering search_tools")?;
    }
    Ok(Some(Rag {
        search,
        threshold: cfg.threshold,
        k: cfg.k,
    }))
}

/// For a long-running gateway (`serve`): checks now (before anything is served), then after
/// every change of an MCP server's tools until the catalog exceeds the threshold and
/// `search_tools` is registered. Errors (an unloadable embedding model) are logged, and
/// retrieval stays off. `None` when there is nothing left to watch.
pub fn watch(
    settings: &Settings,
    gateway: &Arc<Gateway>,
    hub: Option<&toolgate_mcp::McpHub>,
) -> Option<tokio::task::JoinHandle<()>> {
    // Subscribed before the first check, so a listing in between is not missed.
    let mut events = hub.map(toolgate_mcp::McpHub::events);
    if settled(settings, gateway) {
        return None;
    }
    let mut events = events.take()?;
    let (settings, gateway) = (settings.clone(), Arc::clone(gateway));
    Some(tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(toolgate_mcp::McpEvent::ToolsChanged { .. })
                | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    if settled(&settings, &gateway) {
                        return;
                    }
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }))
}

/// [`enable`] for `serve`: `true` once there is nothing more to do (registered, or failed).
fn settled(settings: &Settings, gateway: &Gateway) -> bool {
    match enable(settings, gateway) {
        Ok(Some(_)) => {
            tracing::info!(
                threshold = settings.file.rag.threshold,
                "the catalog exceeds [rag] threshold: search_tools registered"
            );
            true
        }
        Ok(None) => false,
        Err(e) => {
            tracing::error!(error = %format!("{e:#}"), "Tool RAG is off");
            true
        }
    }
}
