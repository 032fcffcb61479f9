//! The result envelope every front end prints (R-EXE-2):
//! `{"ok":true,"call_id":…,"data":…}` or `{"ok":false,"call_id":…,"error":{code,message,retryable,hint}}`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{CallError, ContentBlock, ToolOutput};

/// What result governance did to an oversized result (R-EXE-4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Governance {
    /// Bytes of the full result.
    pub total_bytes: u64,
    /// Bytes returned inline.
    pub returned_bytes: u64,
    /// Id to page through the full result with `read_result`; absent when only truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope {
    pub ok: bool,
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<Governance>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<CallError>,
    /// The upstream MCP result of a federated tool, passed on unchanged by MCP front ends
    /// ([`ToolOutput::mcp_result`]); not part of the `/v1` envelope.
    #[serde(skip)]
    pub mcp_result: Option<Value>,
}

impl Envelope {
    pub fn success(
        call_id: impl Into<String>,
        output: ToolOutput,
        truncated: Option<Governance>,
    ) -> Self {
        Envelope {
            ok: true,
            call_id: call_id.into(),
            data: Some(output.data),
            content: output.content,
            // A cut result is no longer the upstream's.
            mcp_result: output.mcp_result.filter(|_| truncated.is_none()),
            truncated,
            error: None,
        }
    }

    pub fn failure(call_id: impl Into<String>, error: CallError) -> Self {
        Envelope {
            ok: false,
            call_id: call_id.into(),
            data: None,
            content: Vec::new(),
            truncated: None,
            error: Some(error),
            mcp_result: None,
        }
    }
}
