//! Argument decoding and the schema fragments the tools share.
//!
//! The gateway validates arguments against each tool's schema before `call`; decoding here
//! still never panics and turns any mismatch into [`ToolError::InvalidArguments`].

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolgate_core::ToolError;

/// Decodes `args` into the tool's argument struct.
pub(crate) fn decode<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, ToolError> {
    T::deserialize(args)
        .map_err(|e| ToolError::InvalidArguments(format!("invalid arguments for {tool}: {e}")))
}

/// The optional key a retried write carries (R-EXE-3). The gateway acts on it; tools
/// accept and ignore it.
pub(crate) fn idempotency_key_schema() -> Value {
    json!({
        "type": "string",
        "description": "Optional key that makes a retried call act only once; \
                        reuse it only when retrying the same call."
    })
}

/// Runs blocking file-system work off the async executor.
pub(crate) async fn run_blocking<T, F>(work: F) -> Result<T, ToolError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
{
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ToolError::failed(format!("file task did not finish: {e}")))?
}
