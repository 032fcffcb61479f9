//! Tool RAG wiring (`[rag]`): when the catalog holds more than `[rag] threshold` tools,
//! `search_tools` joins it — called through the gateway like any tool (role-checked, audited)
//! — and the agent loop gets the retrieval selector ([`selector`]). Which role actually gets
//! retrieval is decided per role, per step, by the selector and by `tools export`: a role
//! seeing at most the threshold keeps every tool and never sees `search_tools`. Where the
//! vectors come from (`model_dir`, an endpoint, or the model `toolgate rag model pull` put in
//! the cache) is [`source`]'s decision.

pub mod selector;
pub mod source;

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use toolgate_agent::ToolSelector;
use toolgate_core::DynTool;
use toolgate_gateway::Gateway;
use toolgate_rag::{
    CatalogSearch, Embedder, LocalEmbedder, RagConfig, RemoteEmbedder, RemoteReranker,
    SEARCH_TOOLS, SearchToolsTool, ToolSearch, VectorCache, is_meta_tool,
};
use toolgate_registry::Catalog;

use crate::config::Config;
pub use selector::{DEFAULT_MAX_LOADED, RetrievalSelector};
pub use source::{EmbeddingSource, UPGRADE_COMMAND, describe, embedding_source};

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
pub fn enable(config: &Config, gateway: &Gateway) -> anyhow::Result<Option<Rag>> {
    let cfg = &config.file.rag;
    if catalog_size(gateway.catalog()) <= cfg.threshold {
        return Ok(None);
    }
    let mode = cfg.mode()?;
    let search = Arc::new(CatalogSearch::new(
        Arc::new(tool_search(config)?),
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
/// retrieval stays off. `None` when there is nothing left to watch. Each check (loading the
/// model, opening the vector cache) runs on the blocking pool.
pub async fn watch(
    config: &Config,
    gateway: &Arc<Gateway>,
    hub: Option<&toolgate_mcp_client::McpHub>,
) -> Option<tokio::task::JoinHandle<()>> {
    // Subscribed before the first check, so a listing in between is not missed.
    let mut events = hub.map(toolgate_mcp_client::McpHub::events);
    let (config, gateway) = (Arc::new(config.clone()), Arc::clone(gateway));
    if settled_off_workers(&config, &gateway).await {
        return None;
    }
    let mut events = events.take()?;
    Some(tokio::spawn(async move {
        loop {
            match events.recv().await {
                Ok(toolgate_mcp_client::McpEvent::ToolsChanged { .. })
                | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    if settled_off_workers(&config, &gateway).await {
                        return;
                    }
                }
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }))
}

/// [`settled`] on the blocking pool.
async fn settled_off_workers(config: &Arc<Config>, gateway: &Arc<Gateway>) -> bool {
    let (config, gateway) = (Arc::clone(config), Arc::clone(gateway));
    tokio::task::spawn_blocking(move || settled(&config, &gateway))
        .await
        .unwrap_or_else(|e| {
            tracing::error!(error = %e, "Tool RAG's check failed; Tool RAG is off");
            true
        })
}

/// [`enable`] for `serve`: `true` once there is nothing more to do (registered, or failed).
fn settled(config: &Config, gateway: &Gateway) -> bool {
    match enable(config, gateway) {
        Ok(Some(_)) => {
            tracing::info!(
                threshold = config.file.rag.threshold,
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

/// The embedder `[rag]` configures, if any (R-RAG-3: local model, endpoint, or none), or the
/// default model a `toolgate rag model pull` left in the cache ([`source`]).
pub fn embedder(config: &Config, cfg: &RagConfig) -> anyhow::Result<Option<Embedder>> {
    Ok(match embedding_source(config, cfg) {
        EmbeddingSource::ModelDir(dir) => {
            let model = LocalEmbedder::load(&dir).context("[rag] model_dir")?;
            Some(Embedder::Local(std::sync::Arc::new(model)))
        }
        EmbeddingSource::Pulled(dir) => {
            let model = LocalEmbedder::load(&dir).with_context(|| {
                format!(
                    "the pulled model in {} (run `{UPGRADE_COMMAND}` again to repair it)",
                    dir.display()
                )
            })?;
            Some(Embedder::Local(std::sync::Arc::new(model)))
        }
        EmbeddingSource::Endpoint { .. } => {
            let Some(ep) = &cfg.endpoint else {
                return Ok(None);
            };
            let key = api_key(ep.api_key_env.as_ref(), "[rag.endpoint]")?;
            let remote = RemoteEmbedder::new(&ep.url, &ep.model, key, &config.file.egress)
                .context("[rag.endpoint]")?;
            Some(Embedder::Remote(remote))
        }
        EmbeddingSource::None => None,
    })
}

/// The value of the environment variable `var` names (`section` for the error).
fn api_key(var: Option<&String>, section: &str) -> anyhow::Result<Option<String>> {
    var.map(|var| {
        std::env::var(var).with_context(|| {
            format!("{section} api_key_env: the environment variable `{var}` is not set")
        })
    })
    .transpose()
}

/// A [`ToolSearch`] for `[rag]`, with its vector cache in the data directory and the
/// `[rag.reranker]` second stage when configured.
pub fn tool_search(config: &Config) -> anyhow::Result<ToolSearch> {
    let cfg = &config.file.rag;
    let fusion = cfg.fusion()?;
    let embedder = embedder(config, cfg)?;
    let cache = match &embedder {
        Some(_) => Some(open_cache(&config.data_dir)?),
        None => None,
    };
    let mut search = ToolSearch::new(embedder, cache, fusion);
    if let Some((reranker, depth)) = reranker(config)? {
        search = search.with_reranker(reranker, depth);
    }
    Ok(search)
}

/// The `[rag.reranker]` client and its depth, if configured.
pub fn reranker(config: &Config) -> anyhow::Result<Option<(RemoteReranker, usize)>> {
    let Some(r) = &config.file.rag.reranker else {
        return Ok(None);
    };
    let key = api_key(r.api_key_env.as_ref(), "[rag.reranker]")?;
    let reranker = RemoteReranker::new(&r.url, &r.model, key, &config.file.egress)
        .context("[rag.reranker]")?;
    Ok(Some((reranker, r.depth)))
}

fn open_cache(data_dir: &Path) -> anyhow::Result<VectorCache> {
    let path = data_dir.join("rag-vectors.db");
    VectorCache::open(&path).with_context(|| format!("the vector cache {}", path.display()))
}
