//! What toolgate answers when a server talks first: progress and log notifications are
//! forwarded to `tracing`, the calling tool's progress sink and the hub's event channel;
//! `tools/list_changed` wakes the supervisor to re-list; form elicitation goes to the hub's
//! [`Elicitor`] (offered only when there is one). Sampling and roots are not offered.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::ErrorData as McpError;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability, Implementation, ProgressNotificationParam,
    ProtocolVersion,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;
use toolgate_core::ProgressUpdate;

use crate::McpEvent;
use crate::elicit::{ElicitationAnswer, ElicitationRequest, Elicitor};
use crate::link::ServerLink;

#[derive(Clone)]
pub(crate) struct McpClientHandler {
    link: Arc<ServerLink>,
    elicitor: Option<Arc<dyn Elicitor>>,
}

impl McpClientHandler {
    pub(crate) fn new(link: Arc<ServerLink>) -> Self {
        McpClientHandler {
            link,
            elicitor: None,
        }
    }

    pub(crate) fn with_elicitor(mut self, elicitor: Option<Arc<dyn Elicitor>>) -> Self {
        self.elicitor = elicitor;
        self
    }
}

/// toolgate's identity in `initialize` / `server/discover`; form elicitation is declared
/// when something answers it.
pub(crate) fn client_config(elicitation: bool) -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    if elicitation {
        let mut elicit = ElicitationCapability::new();
        elicit.form = Some(FormElicitationCapability::default());
        capabilities.elicitation = Some(elicit);
    }
    ClientConfig::new(
        capabilities,
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
        client_config(self.elicitor.is_some())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, McpError> {
        let server = self.link.server.clone();
        let (
            Some(elicitor),
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            },
        ) = (&self.elicitor, request)
        else {
            tracing::info!(%server, "MCP elicitation declined (URL mode, or no channel)");
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        tracing::info!(%server, %message, "MCP server asks for input; routed to the approval channel");
        let answer = elicitor
            .elicit(ElicitationRequest {
                server,
                message,
                schema,
            })
            .await;
        Ok(match answer {
            ElicitationAnswer::Accept(form) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(form))
            }
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }
}
