//! What toolgate answers when a server talks first: progress and log notifications are
//! forwarded to `tracing` and to the hub's event channel; `tools/list_changed` wakes the
//! supervisor to re-list. Sampling, roots and elicitation are not offered (the client
//! declares no such capability), so servers do not ask for them.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient};
use toolgate_core::ProgressUpdate;

use crate::McpEvent;
use crate::link::ServerLink;

#[derive(Clone)]
pub(crate) struct McpClientHandler {
    link: Arc<ServerLink>,
}

impl McpClientHandler {
    pub(crate) fn new(link: Arc<ServerLink>) -> Self {
        McpClientHandler { link }
    }
}

/// toolgate's identity in `initialize` / `server/discover`.
pub(crate) fn client_config() -> ClientConfig {
    ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
    )
    .with_protocol_version(ProtocolVersion::V_2025_11_25)
}

impl ClientHandler for McpClientHandler {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let route = self.link.route_for(&params.progress_token);
        if let Some(route) = &route {
            route.sink.report(ProgressUpdate {
                progress: params.progress,
                total: params.total,
                message: params.message.clone(),
            });
        }
        let call_id = route.map(|r| r.call_id);
        tracing::debug!(
            server = %self.link.server,
            call_id = call_id.as_deref().unwrap_or("-"),
            progress = params.progress,
            total = params.total,
            message = params.message.as_deref().unwrap_or(""),
            "MCP progress"
        );
        self.link.emit(McpEvent::Progress {
            server: self.link.server.clone(),
            call_id,
            progress: params.progress,
            total: params.total,
            message: params.message,
        });
    }

    #[allow(deprecated)] // logging is deprecated by SEP-2577 but 2025-11-25 servers still send it
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        use rmcp::model::LoggingLevel as L;
        let server = &self.link.server;
        let logger = params.logger.as_deref().unwrap_or("");
        let data = &params.data;
        match params.level {
            L::Debug => tracing::debug!(server = %server, logger, %data, "MCP server log"),
            L::Info | L::Notice => {
                tracing::info!(server = %server, logger, %data, "MCP server log")
            }
            L::Warning => tracing::warn!(server = %server, logger, %data, "MCP server log"),
            _ => tracing::error!(server = %server, logger, %data, "MCP server log"),
        }
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("{:?}", params.level).to_lowercase());
        self.link.emit(McpEvent::Log {
            server: server.clone(),
            level,
            logger: params.logger,
            data: params.data,
        });
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = %self.link.server, "MCP server's tool list changed");
        self.link.refresh.notify_one();
    }

    fn get_info(&self) -> ClientConfig {
        client_config()
    }
}
