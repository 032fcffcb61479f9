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
}

impl ToolOutput {
    pub fn json(data: Value) -> Self {
        ToolOutput {
            data,
            content: Vec::new(),
        }
    }

    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput::json(Value::String(text.into()))
    }
}
