//! `search_tools {query, k}`: the two-stage mode of R-RAG-2. A model that sees only a few
//! tools calls it to find more; the result carries the found tools' definitions, which the
//! agent loop (or an MCP host) loads into the next turn.
//!
//! It answers only with tools the calling role may see, through the same [`FilterChain`]
//! as `toolgate tools search`, and never returns itself.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_gateway::policy::Roles;
use toolgate_protocol::{ToolOutput, ToolSpec};
use toolgate_registry::{Catalog, Snapshot};

use crate::filter::FilterChain;
use crate::index::Mode;
use crate::service::ToolSearch;

/// The meta-tool's catalog name.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The most tools one search returns.
const MAX_K: u64 = 20;

/// The `search_tools` meta-tool.
pub struct SearchToolsTool {
    spec: ToolSpec,
    search: Arc<ToolSearch>,
    catalog: Arc<Catalog>,
    roles: Arc<Roles>,
    mode: Mode,
    default_k: usize,
    /// The snapshot the index was last refreshed from (refresh only when it changed).
    seen: Mutex<Option<Arc<Snapshot>>>,
}

impl SearchToolsTool {
    pub fn new(
        search: Arc<ToolSearch>,
        catalog: Arc<Catalog>,
        roles: Arc<Roles>,
        mode: Mode,
        default_k: usize,
    ) -> Self {
        let spec = ToolSpec::new(
            SEARCH_TOOLS,
            "Find tools for a task when the tool you need is not in your list. Describe the \
             task in plain words (\"convert a PDF to text\", \"open a GitHub issue\"); returns \
             the best matching tools with their descriptions and input schemas, which you can \
             call next. Do not use it for tools you already have.",
            json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "minLength": 1, "maxLength": 1000,
                              "description": "What you want to do, in plain words."},
                    "k": {"type": "integer", "minimum": 1, "maximum": MAX_K,
                          "description": "How many tools to return (default 5)."}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        )
        .with_tags(["meta", "rag"]);
        SearchToolsTool {
            spec,
            search,
            catalog,
            roles,
            mode,
            default_k: default_k.max(1),
            seen: Mutex::new(None),
        }
    }

    async fn refresh(&self, snap: &Arc<Snapshot>) -> Result<(), ToolError> {
        let stale = {
            let seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
            !seen.as_ref().is_some_and(|s| Arc::ptr_eq(s, snap))
        };
        if stale {
            let specs: Vec<ToolSpec> = snap
                .entries()
                .map(|e| e.spec().clone())
                .filter(|s| s.name != SEARCH_TOOLS)
                .collect();
            self.search
                .refresh(&specs)
                .await
                .map_err(|e| ToolError::failed(e.to_string()))?;
            *self.seen.lock().unwrap_or_else(|p| p.into_inner()) = Some(Arc::clone(snap));
        }
        Ok(())
    }
}

#[async_trait]
impl Tool for SearchToolsTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let query = args.get("query").and_then(Value::as_str).unwrap_or("");
        let k = args
            .get("k")
            .and_then(Value::as_u64)
            .map_or(self.default_k, |k| k.clamp(1, MAX_K) as usize);
        let Some(role) = self.roles.get(&ctx.role) else {
            return Err(ToolError::PolicyDenied(format!(
                "unknown role `{}`",
                ctx.role
            )));
        };
        let snap = self.catalog.snapshot();
        self.refresh(&snap).await?;
        let chain = FilterChain::new(role, &snap);
        let admit = |n: &str| n != SEARCH_TOOLS && chain.admits(n);
        let hits = self
            .search
            .search(query, k, self.mode, &admit)
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let tools: Vec<Value> = hits
            .iter()
            .filter_map(|h| {
                let e = snap.get(&h.name)?;
                let s = e.spec();
                Some(json!({
                    "name": s.name,
                    "description": s.description,
                    "input_schema": s.input_schema,
                    "risk": s.risk,
                    "score": h.score,
                }))
            })
            .collect();
        Ok(ToolOutput::json(json!({ "query": query, "tools": tools })))
    }
}
