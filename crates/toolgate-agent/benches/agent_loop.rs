//! The agent loop's own cost per turn, against the scripted model server on loopback.
//!
//! Each task is two model turns: the first asks for two parallel `echo` calls, which run
//! through a real gateway (every layer, buffered audit); the second answers. Timed from the
//! loop's events: the first model call (request built, sent, answer streamed and assembled),
//! the tool phase (both calls through the gateway, results encoded), the answer turn, the
//! whole task. For every provider, streaming and not.
//!
//! `cargo bench -p toolgate-agent --bench agent_loop` (TOOLGATE_BENCH_TASKS=N, default 400).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    clippy::print_stdout
)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_agent::fake::{FakeServer, FakeTurn, Reply};
use toolgate_agent::{
    Agent, AgentEvent, AgentOptions, Message, ModelConfig, Observer, Provider, connect_with_key,
};
use toolgate_audit::Durability;
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_gateway::policy::RoleConfig;
use toolgate_gateway::{Gateway, GatewayConfig, GatewayDeps};
use toolgate_protocol::{Risk, ToolOutput, ToolSpec};
use toolgate_registry::Catalog;

struct Echo(ToolSpec);

#[async_trait]
impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(json!({"echo": args["text"]})))
    }
}

fn gateway(dir: &std::path::Path) -> Arc<Gateway> {
    let catalog = Arc::new(Catalog::new());
    catalog
        .register(Arc::new(Echo(
            ToolSpec::new(
                "echo",
                "Echo the text back.",
                json!({"type": "object", "properties": {"text": {"type": "string"}},
                       "required": ["text"], "additionalProperties": false}),
            )
            .with_risk(Risk::Read),
        )))
        .unwrap();
    let cfg = GatewayConfig {
        roles: BTreeMap::from([("default".to_owned(), RoleConfig::default())]),
        ..GatewayConfig::default()
    };
    let deps = GatewayDeps::open_dir(dir, catalog, Durability::Buffered).unwrap();
    Arc::new(Gateway::new(deps, &cfg).unwrap())
}

/// Instants of the events that delimit the phases.
#[derive(Default)]
struct Clock(Mutex<Vec<(&'static str, Instant)>>);

impl Observer for Clock {
    fn event(&self, event: AgentEvent) {
        let name = match event {
            AgentEvent::ModelTurn { .. } => "turn",
            AgentEvent::ToolFinished { .. } => "tool",
            _ => return,
        };
        self.0.lock().unwrap().push((name, Instant::now()));
    }
}

fn pct(sorted: &[u64], p: f64) -> f64 {
    let last = sorted.len().saturating_sub(1);
    let rank = ((p / 100.0) * last as f64).round() as usize;
    sorted.get(rank.min(last)).copied().unwrap_or(0) as f64 / 1e3
}

fn main() {
    let tasks: usize = std::env::var("TOOLGATE_BENCH_TASKS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "agent loop: {tasks} tasks per row, load average {}",
        load.split(' ').next().unwrap_or("?")
    );
    println!(
        "| provider | stream | tool turn: model call p50 / p99 µs | 2 tool calls p50 / p99 µs | answer turn p50 / p99 µs | task p50 / p99 µs |"
    );
    println!("|:--|:--|--:|--:|--:|--:|");
    for provider in [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
    ] {
        for stream in [true, false] {
            rt.block_on(row(provider, stream, tasks));
        }
    }
}

async fn row(provider: Provider, stream: bool, tasks: usize) {
    let dir = tempfile::tempdir().unwrap();
    let gw = gateway(dir.path());
    let server = FakeServer::cycling(vec![
        Reply::Turn(FakeTurn::calls(&[
            ("call_1", "echo", r#"{"text":"one"}"#),
            ("call_2", "echo", r#"{"text":"two"}"#),
        ])),
        Reply::Turn(FakeTurn::text("Both echoed, all is well.")),
    ])
    .await
    .unwrap();
    let cfg = ModelConfig {
        provider,
        model: "fake-model".into(),
        base_url: Some(server.base_url()),
        ..ModelConfig::default()
    };
    let client = connect_with_key(&cfg, &server.egress(), Some("k".into())).unwrap();
    let agent = Agent::new(
        client,
        gw,
        AgentOptions {
            session_id: "bench".into(),
            stream,
            ..AgentOptions::default()
        },
    );
    let warmup = tasks / 10 + 5;
    let (mut first, mut tools, mut answer, mut whole) = (vec![], vec![], vec![], vec![]);
    for i in 0..warmup + tasks {
        let clock = Clock::default();
        let mut history = vec![Message::user("Echo one and two.")];
        let start = Instant::now();
        agent
            .run(&mut history, &CancellationToken::new(), &clock)
            .await
            .unwrap();
        let end = Instant::now();
        if i < warmup {
            continue;
        }
        let marks = clock.0.lock().unwrap().clone();
        let turns: Vec<Instant> = marks
            .iter()
            .filter(|(n, _)| *n == "turn")
            .map(|m| m.1)
            .collect();
        let last_tool = marks
            .iter()
            .filter(|(n, _)| *n == "tool")
            .map(|m| m.1)
            .max()
            .unwrap();
        let ns = |a: Instant, b: Instant| b.duration_since(a).as_nanos() as u64;
        first.push(ns(start, turns[0]));
        tools.push(ns(turns[0], last_tool));
        answer.push(ns(last_tool, turns[1]));
        whole.push(ns(start, end));
    }
    let mut cells = Vec::new();
    for v in [&mut first, &mut tools, &mut answer, &mut whole] {
        v.sort_unstable();
        cells.push(format!("{:.0} / {:.0}", pct(v, 50.0), pct(v, 99.0)));
    }
    println!(
        "| {} | {} | {} |",
        provider.as_str(),
        if stream { "yes" } else { "no" },
        cells.join(" | ")
    );
}
