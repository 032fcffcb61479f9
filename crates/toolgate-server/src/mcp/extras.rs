//! The one extension point of the MCP endpoint besides tools: resources, prompts,
//! completions and logging levels. Tools always come from the gateway's catalog (and so go
//! through the pipeline); everything else an MCP server may offer is delegated to an
//! [`McpExtras`]. The production server uses [`NoExtras`], which declares none of these
//! capabilities, so clients are answered `-32601 method not found` and never shown an
//! empty feature.

// Logging is deprecated by the 2026-07-28 revision (SEP-2577) but still part of 2025-11-25.
#![allow(deprecated)]

use async_trait::async_trait;
use rmcp::ErrorData;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, LoggingLevel,
    ReadResourceRequestParams, ReadResourceResult, ServerCapabilities,
};

/// Resources, prompts, completions and logging for the MCP endpoint. Every method has a
/// default that refuses with `-32601`; implement the ones [`McpExtras::capabilities`]
/// declares.
#[async_trait]
pub trait McpExtras: Send + Sync + 'static {
    /// Capabilities to declare besides `tools` (which the handler always declares).
    fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities::default()
    }

    async fn list_resources(&self) -> Result<ListResourcesResult, ErrorData> {
        Err(not_offered("resources/list"))
    }

    async fn list_resource_templates(&self) -> Result<ListResourceTemplatesResult, ErrorData> {
        Err(not_offered("resources/templates/list"))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
    ) -> Result<ReadResourceResult, ErrorData> {
        let _ = request;
        Err(not_offered("resources/read"))
    }

    /// `resources/subscribe` (2025-11-25 sessions).
    async fn subscribe(&self, uri: String) -> Result<(), ErrorData> {
        let _ = uri;
        Err(not_offered("resources/subscribe"))
    }

    async fn unsubscribe(&self, uri: String) -> Result<(), ErrorData> {
        let _ = uri;
        Err(not_offered("resources/unsubscribe"))
    }

    async fn list_prompts(&self) -> Result<ListPromptsResult, ErrorData> {
        Err(not_offered("prompts/list"))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
    ) -> Result<GetPromptResult, ErrorData> {
        let _ = request;
        Err(not_offered("prompts/get"))
    }

    async fn complete(&self, request: CompleteRequestParams) -> Result<CompleteResult, ErrorData> {
        let _ = request;
        Err(not_offered("completion/complete"))
    }

    async fn set_level(&self, level: LoggingLevel) -> Result<(), ErrorData> {
        let _ = level;
        Err(not_offered("logging/setLevel"))
    }
}

/// The production default: tools only.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoExtras;

impl McpExtras for NoExtras {}

/// The exact JSON-RPC "method not found" error for a method this server does not offer.
pub fn not_offered(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: {method}"),
        None,
    )
}
