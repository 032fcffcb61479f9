//! Argument decoding shared by the tools. The gateway validates arguments against each
//! tool's schema first; decoding here still never panics and turns any mismatch into
//! [`ToolError::InvalidArguments`].

use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_core::ToolError;

/// Decodes `args` into the tool's argument struct.
pub(crate) fn decode<T: DeserializeOwned>(tool: &str, args: &Value) -> Result<T, ToolError> {
    T::deserialize(args)
        .map_err(|e| ToolError::InvalidArguments(format!("invalid arguments for {tool}: {e}")))
}
