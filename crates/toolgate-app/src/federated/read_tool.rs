//! A federated prompt or resource act as the gateway runs it: a [`Tool`] made for one request,
//! whose entry the pipeline's lookup takes instead of a catalog tool ([`Target`]), so every
//! layer — telemetry, audit, role allowlist, quotas, schema, `[[policy.rules]]` (with
//! `target` = `prompt` or `resource`), approval, the concurrency limit and timeout — governs
//! it as it governs a tool call.
//!
//! The tool's output carries the upstream's result whole in
//! [`ToolOutput::mcp_result`] (passed back to the client unchanged) and only its sizes in
//! [`ToolOutput::data`], which is what the audit records: a read moves data, the log says
//! how much, never what.
//!
//! [`Target`]: toolgate_gateway::Target

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::ErrorData;
use rmcp::model::{JsonObject, ResourceContents};
use serde_json::{Map, Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_mcp_client::McpHub;
use toolgate_mcp_client::federation::{ListedPrompt, Target};
use toolgate_protocol::{Risk, ToolOutput, ToolSpec};

/// What the tool does when the pipeline lets it run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Act {
    /// `prompts/get`: the arguments are the prompt's.
    GetPrompt,
    /// `resources/read`: the arguments are `{"uri": …}`.
    ReadResource,
    /// `resources/subscribe`: authorised and audited here; the subscription itself is the
    /// caller's bookkeeping (`{"uri": …, "subscribe": true}`).
    Subscribe,
}

/// The upstream error a read failed with, kept in the call error's details so the MCP
/// answer carries the upstream's own code and data.
const UPSTREAM_ERROR: &str = "mcp_error";

pub(super) struct FederatedRead {
    spec: ToolSpec,
    hub: Arc<McpHub>,
    target: Target,
    act: Act,
}

impl FederatedRead {
    /// The tool for getting `prompt`: its arguments' schema is the prompt's declared
    /// arguments (strings; the required ones required).
    pub(super) fn prompt(hub: Arc<McpHub>, prompt: &ListedPrompt) -> Self {
        let p = &prompt.prompt;
        let description = p
            .description
            .clone()
            .or_else(|| p.title.clone())
            .unwrap_or_default();
        FederatedRead {
            spec: ToolSpec::new(
                prompt.target.key.clone(),
                description,
                prompt_arguments_schema(prompt),
            )
            .with_source(format!("mcp:{}", prompt.target.server))
            .with_risk(Risk::Read),
            hub,
            target: prompt.target.clone(),
            act: Act::GetPrompt,
        }
    }

    /// The tool for reading (or subscribing to) the resource behind `target`.
    pub(super) fn resource(hub: Arc<McpHub>, target: &Target, act: Act) -> Self {
        let schema = json!({
            "type": "object",
            "properties": {"uri": {"type": "string"}, "subscribe": {"type": "boolean"}},
            "required": ["uri"],
        });
        FederatedRead {
            spec: ToolSpec::new(
                target.key.clone(),
                format!("resource {}", target.raw),
                schema,
            )
            .with_source(format!("mcp:{}", target.server))
            .with_risk(Risk::Read),
            hub,
            target: target.clone(),
            act,
        }
    }
}

/// A prompt's declared arguments as an object schema (names, descriptions, titles, which
/// are required) — the form the pin book hashes, too.
pub(super) fn prompt_arguments_schema(prompt: &ListedPrompt) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for arg in prompt.prompt.arguments.iter().flatten() {
        let mut property = Map::new();
        property.insert("type".to_owned(), json!("string"));
        if let Some(d) = &arg.description {
            property.insert("description".to_owned(), json!(d));
        }
        if let Some(t) = &arg.title {
            property.insert("title".to_owned(), json!(t));
        }
        properties.insert(arg.name.clone(), Value::Object(property));
        if arg.required == Some(true) {
            required.push(json!(arg.name));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

/// The size of one content item, for the audit.
fn content_bytes(contents: &ResourceContents) -> usize {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text.len(),
        ResourceContents::BlobResourceContents { blob, .. } => blob.len(),
        _ => 0,
    }
}

/// An upstream error as the tool's failure, the upstream's error kept whole.
fn upstream(e: ErrorData) -> ToolError {
    ToolError::Failed {
        message: e.message.to_string(),
        retryable: false,
        details: Some(json!({ UPSTREAM_ERROR: e })),
    }
}

/// The upstream's error carried by a failed read, if that is why it failed.
pub(super) fn upstream_error(details: Option<&Value>) -> Option<ErrorData> {
    let e = details?.get(UPSTREAM_ERROR)?;
    serde_json::from_value(e.clone()).ok()
}

fn output(summary: Value, result: &impl serde::Serialize) -> Result<ToolOutput, ToolError> {
    let whole = serde_json::to_value(result)
        .map_err(|e| ToolError::failed(format!("the upstream's result does not encode: {e}")))?;
    let mut out = ToolOutput::json(summary);
    out.mcp_result = Some(whole);
    Ok(out)
}

#[async_trait]
impl Tool for FederatedRead {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        match self.act {
            Act::GetPrompt => {
                let arguments: Option<JsonObject> = match args {
                    Value::Object(m) if !m.is_empty() => Some(m),
                    _ => None,
                };
                let result = tokio::select! {
                    r = self.hub.get_prompt(&self.target, arguments, &ctx.caller) => r.map_err(upstream)?,
                    () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                };
                output(json!({"messages": result.messages.len()}), &result)
            }
            Act::ReadResource => {
                let result = tokio::select! {
                    r = self.hub.read_resource(&self.target) => r.map_err(upstream)?,
                    () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
                };
                let bytes: usize = result.contents.iter().map(content_bytes).sum();
                output(
                    json!({"contents": result.contents.len(), "bytes": bytes}),
                    &result,
                )
            }
            Act::Subscribe => Ok(ToolOutput::json(json!({"subscribed": true}))),
        }
    }
}
