//! `read_result`: pages through a result that governance offloaded.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{Annotations, Risk, ToolOutput, ToolSpec};
use toolgate_store::StoreError;
use toolgate_store::results::ResultStore;

pub const READ_RESULT: &str = "read_result";

pub struct ReadResultTool {
    spec: ToolSpec,
    store: Arc<ResultStore>,
    max_page: u64,
}

impl ReadResultTool {
    /// `max_page` caps a page so that a page itself never needs offloading.
    pub fn new(store: Arc<ResultStore>, max_page: u64) -> Self {
        let spec = ToolSpec::new(
            READ_RESULT,
            "Read part of a large tool result that was truncated. Use the result_id from a \
             truncated result; page with offset (bytes) and limit. Do not use for files: use \
             read_file.",
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": "result_id of a truncated result"},
                    "offset": {"type": "integer", "minimum": 0, "description": "byte offset, default 0"},
                    "limit": {"type": "integer", "minimum": 1, "description": "bytes to return"}
                },
                "required": ["id"],
                "additionalProperties": false
            }),
        )
        .with_risk(Risk::Read)
        .with_annotations(Annotations {
            read_only_hint: Some(true),
            idempotent_hint: Some(true),
            ..Annotations::default()
        });
        ReadResultTool {
            spec,
            store,
            max_page,
        }
    }
}

#[async_trait]
impl Tool for ReadResultTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let id = args["id"]
            .as_str()
            .ok_or_else(|| ToolError::InvalidArguments("`id` must be a string".into()))?;
        let offset = args["offset"].as_u64().unwrap_or(0);
        let limit = args["limit"]
            .as_u64()
            .unwrap_or(self.max_page)
            .min(self.max_page);
        let page = self
            .store
            .read(id, offset, limit)
            .await
            .map_err(|e| match e {
                // Says whether the id is malformed or the result may have been evicted.
                StoreError::NotFound(why) => ToolError::InvalidArguments(why),
                other => ToolError::failed(other.to_string()),
            })?;
        serde_json::to_value(&page)
            .map(ToolOutput::json)
            .map_err(|e| ToolError::failed(e.to_string()))
    }
}
