mod selector;

use async_trait::async_trait;
use serde_json::{Value, json};
use toolgate_core::{Tool, ToolContext, ToolError};
use toolgate_protocol::{ToolOutput, ToolSpec};

/// A catalog tool that is only its definition; a call answers `{"done": NAME}`.
pub struct SpecTool(pub ToolSpec);

#[async_trait]
impl Tool for SpecTool {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: Value, _: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::json(json!({"done": self.0.name})))
    }
}
