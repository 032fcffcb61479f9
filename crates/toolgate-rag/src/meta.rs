//! `search_tools {query, k}`: the two-stage mode of R-RAG-2. A model that sees only a few
//! tools calls it to find more; the result carries the found tools' definitions, which the
//! agent loop (or an MCP host) loads into the next turn.
//!
//! It answers only with tools the calling role may see, through the same [`FilterChain`](crate::FilterChain)
//! as `toolgate tools search`, and never returns itself (or `read_result`).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{ToolOutput, ToolSpec};

use crate::catalog::CatalogSearch;

/// The meta-tool's catalog name.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The most tools one search returns (a larger `k` is clamped to it, by `search_tools` and by
/// the retrieval selector re-running a search).
pub const MAX_K: u64 = 20;

/// The `search_tools` meta-tool.
pub struct SearchToolsTool {
    spec: ToolSpec,
    search: Arc<CatalogSearch>,
    default_k: usize,
}

impl SearchToolsTool {
    /// Searches `search`'s catalog for the calling role; `default_k` when the call gives no k.
    pub fn new(search: Arc<CatalogSearch>, default_k: usize) -> Self {
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
            default_k: default_k.max(1),
        }
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
        let Some(role) = self.search.roles().get(&ctx.role) else {
            return Err(ToolError::PolicyDenied(format!(
                "unknown role `{}`",
                ctx.role
            )));
        };
        let found = self
            .search
            .find(role, query, k)
            .await
            .map_err(|e| ToolError::failed(e.to_string()))?;
        let tools: Vec<Value> = found
            .iter()
            .map(|f| {
                let s = &f.spec;
                json!({
                    "name": s.name,
                    "description": s.description,
                    "input_schema": s.input_schema,
                    "risk": s.risk,
                    "score": f.score,
                })
            })
            .collect();
        Ok(ToolOutput::json(json!({ "query": query, "tools": tools })))
    }
}
