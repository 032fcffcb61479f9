//! Tool RAG in the model-facing path (R-RAG-2): [`RetrievalSelector`], the agent loop's tool
//! list when a role sees more than `[rag] threshold` tools, over toolgate-rag's
//! [`CatalogSearch`] (the live catalog searched for one role at a time).
//!
//! It lives here, where the agent loop and Tool RAG are assembled, so that neither crate
//! depends on the other: toolgate-agent defines [`ToolSelector`] and the conversation it
//! reads, toolgate-rag the search and the filter chain.
//!
//! What the selector offers at each step, over the threshold:
//! 1. the top K tools for the latest user message (through the role's [`FilterChain`], so a
//!    tool the role may not see never appears, however well it matches);
//! 2. the *loaded* tools: those found by the conversation's earlier `search_tools` calls and
//!    those the model has called, at most `max_loaded` (32 by default); past the cap, the
//!    tool found or called longest ago drops out first. They are read back from the history
//!    (so a resumed conversation keeps them), and re-checked against the filter chain every
//!    step (a tool that went down or out of the role is no longer offered);
//! 3. `search_tools` itself, when the role may call it.
//!
//! At or below the threshold it offers what the loop offers without Tool RAG (every visible
//! tool) and never `search_tools`. Either way it only shapes what the model sees: a call of
//! a tool not offered still goes to the gateway, which authorises it like any other.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;
use toolgate_agent::{Message, StepView, ToolSelector, visible_tools};
use toolgate_gateway::policy::RolePolicy;
use toolgate_protocol::ToolSpec;
use toolgate_rag::meta::MAX_K;
use toolgate_rag::{CatalogSearch, FilterChain, Found, Mode, SEARCH_TOOLS, is_meta_tool};
use toolgate_registry::Snapshot;

/// The most loaded tools a conversation keeps by default.
pub const DEFAULT_MAX_LOADED: usize = 32;

/// The agent loop's [`ToolSelector`] with Tool RAG (see the module docs).
pub struct RetrievalSelector {
    search: Arc<CatalogSearch>,
    threshold: usize,
    k: usize,
    max_loaded: usize,
    /// What earlier `search_tools` calls found when their result reached the history cut
    /// by result governance (searched again once, by call id).
    rerun: Mutex<HashMap<String, Vec<String>>>,
    /// The last count of a role's tools: (snapshot, role, count).
    counted: Mutex<Option<(Arc<Snapshot>, String, usize)>>,
}

impl RetrievalSelector {
    /// `threshold` and `k` as in `[rag]`.
    pub fn new(search: Arc<CatalogSearch>, threshold: usize, k: usize) -> Self {
        RetrievalSelector {
            search,
            threshold,
            k: k.max(1),
            max_loaded: DEFAULT_MAX_LOADED,
            rerun: Mutex::new(HashMap::new()),
            counted: Mutex::new(None),
        }
    }

    /// At most `n` loaded tools (found by `search_tools` or called) per conversation.
    #[must_use]
    pub fn with_max_loaded(mut self, n: usize) -> Self {
        self.max_loaded = n;
        self
    }

    /// Top K for `query`; if the configured retriever fails (an embeddings endpoint down),
    /// BM25 instead, so the model is never left without tools.
    async fn top(&self, role: &RolePolicy, query: &str, k: usize) -> Vec<Found> {
        match self.search.find(role, query, k).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e, "tool retrieval failed; falling back to BM25");
                self.search
                    .find_as(role, query, k, Mode::Bm25)
                    .await
                    .unwrap_or_default()
            }
        }
    }

    /// The names loaded by the conversation so far, least recently found or called first.
    async fn loaded(&self, history: &[Message], role: &RolePolicy) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        let touch = |order: &mut Vec<String>, name: &str| {
            order.retain(|n| n != name);
            order.push(name.to_owned());
        };
        let mut searches: HashMap<&str, &str> = HashMap::new();
        for message in history {
            match message {
                Message::Assistant(turn) => {
                    for call in &turn.tool_calls {
                        if call.name == SEARCH_TOOLS {
                            searches.insert(&call.id, &call.arguments);
                        } else {
                            touch(&mut order, &call.name);
                        }
                    }
                }
                Message::ToolResults { results } => {
                    for r in results
                        .iter()
                        .filter(|r| r.name == SEARCH_TOOLS && !r.is_error)
                    {
                        let names = match found_names(&r.content) {
                            Some(names) => names,
                            None => {
                                let args = searches.get(r.call_id.as_str()).copied();
                                self.search_again(&r.call_id, args.unwrap_or("{}"), role)
                                    .await
                            }
                        };
                        for name in &names {
                            touch(&mut order, name);
                        }
                    }
                }
                Message::User { .. } => {}
            }
        }
        order
    }

    async fn search_again(&self, call_id: &str, arguments: &str, role: &RolePolicy) -> Vec<String> {
        if let Some(names) = self
            .rerun
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(call_id)
        {
            return names.clone();
        }
        let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let query = args.get("query").and_then(Value::as_str).unwrap_or("");
        let k = args.get("k").and_then(Value::as_u64).map_or(self.k, |k| {
            usize::try_from(k.clamp(1, MAX_K)).unwrap_or(self.k)
        });
        let names: Vec<String> = self
            .top(role, query, k)
            .await
            .into_iter()
            .map(|f| f.spec.name)
            .collect();
        self.rerun
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(call_id.to_owned(), names.clone());
        names
    }
}

impl RetrievalSelector {
    /// The role's available task tools in `snap`, counted once per snapshot and role (over
    /// the threshold nothing else needs to walk the whole catalog).
    fn visible_count(&self, step: &StepView<'_>, snap: &Arc<Snapshot>) -> usize {
        let mut memo = self.counted.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, role, n)) = memo.as_ref()
            && Arc::ptr_eq(seen, snap)
            && role == step.role
        {
            return *n;
        }
        let n = snap
            .entries()
            .filter(|e| !is_meta_tool(&e.spec().name) && e.is_available())
            .filter(|e| step.gateway.visible_to(step.role, e))
            .count();
        *memo = Some((Arc::clone(snap), step.role.to_owned(), n));
        n
    }
}

/// The tool names in a `search_tools` result as the model read it (the gateway's envelope);
/// `None` when the result is not whole (cut by result governance) or not a search result.
fn found_names(content: &str) -> Option<Vec<String>> {
    let envelope: Value = serde_json::from_str(content).ok()?;
    let tools = envelope.get("data")?.get("tools")?.as_array()?;
    Some(
        tools
            .iter()
            .filter_map(|t| t.get("name")?.as_str().map(str::to_owned))
            .collect(),
    )
}

#[async_trait]
impl ToolSelector for RetrievalSelector {
    async fn select(&self, step: &StepView<'_>) -> Vec<ToolSpec> {
        let snap = step.gateway.catalog().snapshot();
        if self.visible_count(step, &snap) <= self.threshold {
            let mut all = visible_tools(step.gateway, step.role);
            all.retain(|t| t.name != SEARCH_TOOLS);
            return all;
        }
        let Some(role) = step.gateway.roles().get(step.role) else {
            return Vec::new();
        };
        let chain = FilterChain::new(role, &snap);
        let admitted = |name: &str| !is_meta_tool(name) && chain.admits(name);
        let mut offered: Vec<ToolSpec> = self
            .top(role, step.latest_user_text(), self.k)
            .await
            .into_iter()
            .map(|f| f.spec)
            .collect();
        let loaded: Vec<String> = self
            .loaded(step.history, role)
            .await
            .into_iter()
            .filter(|n| admitted(n))
            .collect();
        let keep = &loaded[loaded.len().saturating_sub(self.max_loaded)..];
        let mut names: HashSet<String> = offered.iter().map(|s| s.name.clone()).collect();
        for name in keep {
            if names.insert(name.clone())
                && let Some(e) = snap.get(name)
            {
                offered.push(e.spec().clone());
            }
        }
        if chain.admits(SEARCH_TOOLS)
            && let Some(e) = snap.get(SEARCH_TOOLS)
        {
            offered.push(e.spec().clone());
        }
        offered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_from_a_whole_result_only() {
        let whole =
            r#"{"ok":true,"call_id":"c","data":{"query":"q","tools":[{"name":"a"},{"name":"b"}]}}"#;
        assert_eq!(found_names(whole), Some(vec!["a".into(), "b".into()]));
        let cut = r#"{"ok":true,"call_id":"c","data":"{\n  \"query\": \"q\",\n  \"tools\": [","truncated":{"total_bytes":9000,"returned_bytes":100}}"#;
        assert_eq!(found_names(cut), None);
        assert_eq!(found_names("not json"), None);
    }
}
