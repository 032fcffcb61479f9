//! A gateway on temp stores with a few scripted tools, and an agent over the fake server.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_agent::fake::{FakeServer, Reply};
use toolgate_agent::{
    Agent, AgentEvent, AgentOptions, ModelClient, ModelConfig, Observer, Provider, connect_with_key,
};
use toolgate_audit::Durability;
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_gateway::policy::RoleConfig;
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::{Risk, ToolOutput, ToolSpec};
use toolgate_registry::Catalog;

/// `echo` (needs `text`), `fail` (always fails), `big` (5,000 bytes), `slow` (waits for
/// cancellation), `bump` (a write: counts its runs in [`BUMPS`]).
struct TestTool(ToolSpec);

/// How many times `bump` acted, per test process.
pub static BUMPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[async_trait]
impl Tool for TestTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        match self.0.name.as_str() {
            "echo" => Ok(ToolOutput::json(json!({"echo": args["text"]}))),
            "fail" => Err(ToolError::failed("the disk is on fire")),
            "big" => Ok(ToolOutput::text("y".repeat(5_000))),
            "bump" => {
                let n = BUMPS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                Ok(ToolOutput::json(json!({"bumped": n})))
            }
            _ => {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(30)) => Ok(ToolOutput::text("late")),
                    () = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
                }
            }
        }
    }
}

fn tool(name: &str, description: &str, schema: Value) -> Arc<dyn Tool> {
    Arc::new(TestTool(
        ToolSpec::new(name, description, schema).with_risk(Risk::Read),
    ))
}

/// `bump`, a write that counts its runs in [`BUMPS`]; not in the catalog until a test adds it
/// (the golden request bodies list the catalog's tools).
pub fn bump_tool() -> Arc<dyn Tool> {
    Arc::new(TestTool(
        ToolSpec::new(
            "bump",
            "Counts its runs.",
            json!({"type": "object", "additionalProperties": false}),
        )
        .with_risk(Risk::Write),
    ))
}

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub gateway: Arc<Gateway>,
}

impl Harness {
    pub fn new() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        let catalog = Arc::new(Catalog::new());
        let obj = json!({"type": "object", "additionalProperties": false});
        catalog
            .register_many(vec![
                tool(
                    "echo",
                    "Echo the text back.",
                    json!({"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"], "additionalProperties": false}),
                ),
                tool("fail", "Always fails.", obj.clone()),
                tool("big", "Returns a large result.", obj.clone()),
                tool("slow", "Runs until cancelled.", obj),
            ])
            .unwrap();
        let mut cfg = GatewayConfig::default();
        cfg.limits.result_budget_bytes = 1_000;
        cfg.roles = BTreeMap::from([
            ("default".to_owned(), RoleConfig::default()),
            // Writes without asking.
            (
                "writer".to_owned(),
                RoleConfig {
                    write: toolgate_gateway::policy::DecisionName::Allow,
                    ..RoleConfig::default()
                },
            ),
            // Sees `echo` only: `fail`, `big` and `slow` are hidden from it.
            (
                "echoer".to_owned(),
                RoleConfig {
                    tools: vec!["echo".into()],
                    ..RoleConfig::default()
                },
            ),
        ]);
        let deps = GatewayDeps::open_dir(p, catalog, Durability::Durable).unwrap();
        Harness {
            gateway: Arc::new(Gateway::new(deps, &cfg).unwrap()),
            dir,
        }
    }

    /// The audit records, as JSON.
    pub async fn audit(&self) -> Vec<Value> {
        self.gateway.audit().flush().await.unwrap();
        let text = std::fs::read_to_string(self.dir.path().join("logs/tool-audit.jsonl")).unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

pub const PROVIDERS: [Provider; 3] = [
    Provider::OpenAiChat,
    Provider::OpenAiResponses,
    Provider::Anthropic,
];

pub fn model_config(provider: Provider, server: &FakeServer) -> ModelConfig {
    ModelConfig {
        provider,
        model: "fake-model".into(),
        base_url: Some(server.base_url()),
        max_tokens: 256,
        retry_base_ms: 5,
        retry_max_ms: 50,
        ..ModelConfig::default()
    }
}

pub const KEY: &str = "sk-test-0123456789abcdef";

pub fn client(provider: Provider, server: &FakeServer) -> Arc<dyn ModelClient> {
    connect_with_key(
        &model_config(provider, server),
        &server.egress(),
        Some(KEY.into()),
    )
    .unwrap()
}

pub async fn server(script: Vec<Reply>) -> FakeServer {
    FakeServer::start(script).await.unwrap()
}

pub fn agent(h: &Harness, client: Arc<dyn ModelClient>, stream: bool) -> Agent {
    Agent::new(
        client,
        Arc::clone(&h.gateway),
        AgentOptions {
            session_id: "s1".into(),
            principal: "agent:test".into(),
            stream,
            max_steps: 5,
            ..AgentOptions::default()
        },
    )
}

/// Records every event.
#[derive(Default)]
pub struct Recorder(pub Mutex<Vec<AgentEvent>>);

impl Observer for Recorder {
    fn event(&self, event: AgentEvent) {
        self.0.lock().unwrap().push(event);
    }
}
