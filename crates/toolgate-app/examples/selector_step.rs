//! What Tool RAG adds to each agent-loop step at 10,000 tools: `RetrievalSelector::select`
//! (count the role's tools, top K for the user's message through the filter chain, read the
//! loaded tools back from a 41-message history with 10 `search_tools` results and 10 other
//! calls, 60 tools in all, capped at 32), BM25 only.
//!
//! `cargo run --release -p toolgate-app --example selector_step`
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_agent::{AssistantTurn, Message, StepView, ToolCall, ToolResult, ToolSelector};
use toolgate_app::rag::RetrievalSelector;
use toolgate_audit::Durability;
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_gateway::policy::{RoleConfig, Roles};
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::{ToolOutput, ToolSpec};
use toolgate_rag::{CatalogSearch, Fusion, Mode, ToolSearch};
use toolgate_registry::Catalog;

const TOOLS: usize = 10_000;
const WORDS: [&str; 24] = [
    "invoice",
    "weather",
    "calendar",
    "issue",
    "repository",
    "ticket",
    "customer",
    "order",
    "payment",
    "shipment",
    "email",
    "message",
    "channel",
    "file",
    "folder",
    "image",
    "video",
    "report",
    "metric",
    "alert",
    "user",
    "group",
    "project",
    "task",
];
const VERBS: [&str; 8] = [
    "create", "list", "get", "update", "delete", "search", "archive", "export",
];

struct Fake(ToolSpec);

#[async_trait]
impl Tool for Fake {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(json!(null)))
    }
}

fn name(i: usize) -> String {
    let (a, b, v) = (WORDS[i % 24], WORDS[(i / 24) % 24], VERBS[(i / 576) % 8]);
    format!("{v}_{a}_{b}_{i}")
}

fn tool(i: usize) -> Arc<dyn Tool> {
    let (a, b, v) = (WORDS[i % 24], WORDS[(i / 24) % 24], VERBS[(i / 576) % 8]);
    let schema = json!({"type": "object", "properties": {
        "id": {"type": "string", "description": format!("The {a} id.")},
        "filter": {"type": "string", "description": format!("Only {b} matching this.")}}});
    Arc::new(Fake(ToolSpec::new(
        name(i),
        format!("{v} a {a} of a {b} (variant {i}); returns the {a} record."),
        schema,
    )))
}

fn history() -> Vec<Message> {
    let mut h = vec![Message::user("create an invoice for the customer's order")];
    for (n, word) in WORDS.iter().enumerate().take(10) {
        let id = format!("call_{n}");
        h.push(Message::Assistant(AssistantTurn {
            tool_calls: vec![ToolCall {
                id: id.clone(),
                name: "search_tools".into(),
                arguments: json!({"query": word, "k": 5}).to_string(),
            }],
            ..AssistantTurn::default()
        }));
        let tools: Vec<Value> = (0..5)
            .map(|j| json!({"name": name(1000 * n + j)}))
            .collect();
        h.push(Message::ToolResults {
            results: vec![ToolResult {
                call_id: id.clone(),
                name: "search_tools".into(),
                content: json!({"ok": true, "call_id": id, "data": {"tools": tools}}).to_string(),
                is_error: false,
            }],
        });
        h.push(Message::Assistant(AssistantTurn {
            tool_calls: vec![ToolCall {
                id: format!("use_{n}"),
                name: name(1000 * n + 500),
                arguments: "{}".into(),
            }],
            ..AssistantTurn::default()
        }));
        h.push(Message::ToolResults {
            results: vec![ToolResult {
                call_id: format!("use_{n}"),
                name: "x".into(),
                content: "{}".into(),
                is_error: false,
            }],
        });
    }
    h
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let catalog = Arc::new(Catalog::new());
    catalog
        .register_many((0..TOOLS).map(tool).collect())
        .unwrap();
    let cfg = GatewayConfig {
        roles: BTreeMap::from([("default".to_owned(), RoleConfig::default())]),
        ..GatewayConfig::default()
    };
    let search = Arc::new(CatalogSearch::new(
        Arc::new(ToolSearch::new(None, None, Fusion::default())),
        Arc::clone(&catalog),
        Arc::new(Roles::compile(&cfg.roles).unwrap()),
        Mode::Bm25,
    ));
    let gateway = Gateway::new(
        GatewayDeps::open_dir(p, catalog, Durability::Buffered).unwrap(),
        &cfg,
    )
    .unwrap();
    let selector = RetrievalSelector::new(search, 30, 5);
    let history = history();
    let view = StepView {
        gateway: &gateway,
        role: "default",
        history: &history,
        step: 2,
    };
    let t = Instant::now();
    let first = selector.select(&view).await;
    println!(
        "first step (builds the BM25 index of {TOOLS} tools): {:.1} ms",
        ms(t.elapsed())
    );
    let mut times: Vec<Duration> = (0..200).map(|_| Duration::ZERO).collect();
    for slot in &mut times {
        let t = Instant::now();
        let offered = selector.select(&view).await;
        *slot = t.elapsed();
        assert_eq!(offered.len(), first.len());
    }
    times.sort();
    println!(
        "later steps: {} tools offered, p50 {:.3} ms, p99 {:.3} ms ({} steps)",
        first.len(),
        ms(times[times.len() / 2]),
        ms(times[times.len() * 99 / 100]),
        times.len()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
