//! What a tool may fail with. The gateway maps these onto the protocol vocabulary with
//! [`ToolError::into_call_error`]; nothing else decides codes for tool failures.

use serde_json::Value;
use toolgate_protocol::{CallError, ErrorCode};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// Arguments passed the schema but make no sense (`offset` past the end, …).
    #[error("{0}")]
    InvalidArguments(String),
    /// The call would leave the tool's policy (a path outside the workspace, …).
    #[error("{0}")]
    PolicyDenied(String),
    /// The tool ran and failed. `retryable` says whether trying again can help.
    #[error("{message}")]
    Failed {
        message: String,
        retryable: bool,
        details: Option<Value>,
    },
    /// A dependency is down (an MCP server, the network).
    #[error("{0}")]
    Unavailable(String),
    /// The result is too large to be received at all (an MCP message over its size limit).
    #[error("{0}")]
    ResultTooLarge(String),
    #[error("timed out")]
    Timeout,
    #[error("cancelled")]
    Cancelled,
}

impl ToolError {
    /// A non-retryable execution failure.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            retryable: false,
            details: None,
        }
    }

    /// A failure that may heal on retry (a busy resource, a flaky peer).
    pub fn transient(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
            retryable: true,
            details: None,
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            ToolError::InvalidArguments(_) => ErrorCode::InvalidArguments,
            ToolError::PolicyDenied(_) => ErrorCode::PolicyDenied,
            ToolError::Failed { .. } => ErrorCode::ExecutionFailed,
            ToolError::Unavailable(_) => ErrorCode::Unavailable,
            ToolError::ResultTooLarge(_) => ErrorCode::ResultTooLarge,
            ToolError::Timeout => ErrorCode::Timeout,
            ToolError::Cancelled => ErrorCode::Cancelled,
        }
    }

    /// The caller-facing error.
    pub fn into_call_error(self) -> CallError {
        let code = self.code();
        match self {
            ToolError::Failed {
                message,
                retryable,
                details,
            } => {
                let e = CallError::new(code, message).with_retryable(retryable);
                match details {
                    Some(d) => e.with_details(d),
                    None => e,
                }
            }
            other => CallError::new(code, other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_onto_the_closed_vocabulary() {
        assert_eq!(
            ToolError::PolicyDenied("outside".into())
                .into_call_error()
                .code,
            ErrorCode::PolicyDenied
        );
        let t = ToolError::transient("busy").into_call_error();
        assert_eq!((t.code, t.retryable), (ErrorCode::ExecutionFailed, true));
        assert!(!ToolError::failed("boom").into_call_error().retryable);
    }
}
