//! Telemetry for a runtime: the SDK installed from `[telemetry]` (servers always, for
//! `/metrics` and the dashboard; one-off commands only when they export), and the gauges
//! read at collection time — MCP servers up, the audit queue.

use std::sync::{Arc, Weak};

use anyhow::Context;
use opentelemetry::KeyValue;
use toolgate_mcp_client::{McpHub, ServerState};
use toolgate_telemetry::metrics::observe;
use toolgate_telemetry::{Telemetry, names};

use crate::config::Config;

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

/// Registers the gauges of a server's runtime (approvals pending comes from the server's
/// approval feed, which reads the store anyway).
pub fn observe_runtime(hub: Option<&Arc<McpHub>>) {
    observe(
        "toolgate.audit.queue.depth",
        "{record}",
        "Audit records waiting for the writer",
        || vec![(Vec::new(), toolgate_audit::queue_depth())],
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
}
