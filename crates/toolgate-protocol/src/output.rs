//! What a tool returns: structured data plus, for MCP tools, typed content blocks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A typed content block (MCP content types), kept as-is through the gateway (R-MCP-5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text { text: String },
    Image { data: String, mime_type: String },
    Audio { data: String, mime_type: String },
    Resource { resource: Value },
}

/// A successful result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolOutput {
    /// Structured result; a string for plain text.
    pub data: Value,
    /// Non-JSON content (images, audio, resources).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentBlock>,
    /// An MCP tool's result exactly as its server sent it — content blocks with their
    /// `annotations` and `_meta`, resource links, `structuredContent`, the result's own
    /// `_meta` — for MCP front ends to pass on unchanged (R-MCP-5). `data` and `content`
    /// are derived from it for every other front end. Result governance drops it when it
    /// cuts the result, and the front end then says so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_result: Option<Value>,
}

impl ToolOutput {
    pub fn json(data: Value) -> Self {
        ToolOutput {
            data,
            content: Vec::new(),
            mcp_result: None,
        }
    }

    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput::json(Value::String(text.into()))
    }
}
