//! Telemetry for a runtime: the SDK installed from `[telemetry]` (servers always, for
//! `/metrics` and the dashboard; one-off commands only when they export), and the gauges
//! read at collection time — MCP servers up, approvals pending, the audit queue.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use anyhow::Context;
use opentelemetry::KeyValue;
use tokio::task::JoinHandle;
use toolgate_gateway::Gateway;
use toolgate_mcp::{McpHub, ServerState};
use toolgate_store::approvals::ApprovalStatus;
use toolgate_telemetry::metrics::observe;
use toolgate_telemetry::{Telemetry, names};

use crate::config::Config;

/// How often the count of pending approvals is re-read for `toolgate.approvals.pending`.
const PENDING_EVERY: Duration = Duration::from_secs(1);

/// Installs the SDK when `server` or the configuration exports; `None` otherwise (nothing
/// is recorded anywhere, at no cost).
pub fn install(config: &Config, server: bool) -> anyhow::Result<Option<&'static Telemetry>> {
    let cfg = &config.file.telemetry;
    if !server && !cfg.exports(|name| std::env::var(name).ok()) {
        return Ok(None);
    }
    Telemetry::install(cfg)
        .context("[telemetry] cannot be set up")
        .map(Some)
}

/// Registers the gauges of a server's runtime and starts the task that keeps the pending
/// approvals count fresh.
pub fn observe_runtime(gateway: &Arc<Gateway>, hub: Option<&Arc<McpHub>>) -> JoinHandle<()> {
    observe(
        "toolgate.audit.queue.depth",
        "{record}",
        "Audit records waiting for the writer",
        || vec![(Vec::new(), toolgate_store::audit::queue_depth())],
    );
    if let Some(hub) = hub {
        let hub: Weak<McpHub> = Arc::downgrade(hub);
        observe(
            "toolgate.mcp.server.up",
            "1",
            "1 while a federated MCP server is ready, else 0, by server and state",
            move || {
                let Some(hub) = hub.upgrade() else {
                    return Vec::new();
                };
                hub.status()
                    .into_iter()
                    .map(|s| {
                        let (state, up) = match s.state {
                            ServerState::Ready => ("ready", 1),
                            ServerState::Connecting => ("connecting", 0),
                            ServerState::Failed { .. } => ("failed", 0),
                            ServerState::Disabled => ("disabled", 0),
                            ServerState::Stopped => ("stopped", 0),
                        };
                        let attrs = vec![
                            KeyValue::new(names::MCP_SERVER, s.name),
                            KeyValue::new("toolgate.mcp.server.state", state),
                        ];
                        (attrs, up)
                    })
                    .collect()
            },
        );
    }
    let pending = Arc::new(AtomicI64::new(0));
    let read = Arc::clone(&pending);
    observe(
        "toolgate.approvals.pending",
        "{request}",
        "Approval requests waiting for a human",
        move || vec![(Vec::new(), read.load(Ordering::Relaxed))],
    );
    let store = Arc::clone(gateway.desk().store());
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(PENDING_EVERY);
        loop {
            tick.tick().await;
            if let Ok(list) = store.list(Some(ApprovalStatus::Pending), 100_000).await {
                pending.store(
                    i64::try_from(list.len()).unwrap_or(i64::MAX),
                    Ordering::Relaxed,
                );
            }
        }
    })
}
