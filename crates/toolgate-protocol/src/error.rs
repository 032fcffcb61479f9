//! The one closed vocabulary of call failures (R-EXE-2). Every front end — CLI, HTTP, MCP,
//! agent loop — reports exactly these codes; mapping to transport errors happens at the edge.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why a call did not produce a result. Closed: adding a variant is a protocol change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    UnknownTool,
    Forbidden,
    InvalidArguments,
    PolicyDenied,
    ApprovalRequired,
    ApprovalDenied,
    ApprovalExpired,
    Unavailable,
    ExecutionFailed,
    Timeout,
    Cancelled,
    ResultTooLarge,
    /// Over a quota (calls per interval, calls in flight); `details.retry_after_ms` says when
    /// to try again.
    RateLimited,
}

impl ErrorCode {
    /// Every code, in documentation order.
    pub const ALL: [ErrorCode; 13] = [
        ErrorCode::UnknownTool,
        ErrorCode::Forbidden,
        ErrorCode::InvalidArguments,
        ErrorCode::PolicyDenied,
        ErrorCode::ApprovalRequired,
        ErrorCode::ApprovalDenied,
        ErrorCode::ApprovalExpired,
        ErrorCode::Unavailable,
        ErrorCode::ExecutionFailed,
        ErrorCode::Timeout,
        ErrorCode::Cancelled,
        ErrorCode::ResultTooLarge,
        ErrorCode::RateLimited,
    ];

    /// The snake_case wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::PolicyDenied => "policy_denied",
            ErrorCode::ApprovalRequired => "approval_required",
            ErrorCode::ApprovalDenied => "approval_denied",
            ErrorCode::ApprovalExpired => "approval_expired",
            ErrorCode::Unavailable => "unavailable",
            ErrorCode::ExecutionFailed => "execution_failed",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Cancelled => "cancelled",
            ErrorCode::ResultTooLarge => "result_too_large",
            ErrorCode::RateLimited => "rate_limited",
        }
    }

    /// Whether the same call may succeed if simply tried again (possibly after a human acts).
    /// Callers use it to stop retry loops on failures that cannot heal.
    pub fn default_retryable(self) -> bool {
        matches!(
            self,
            ErrorCode::ApprovalRequired
                | ErrorCode::ApprovalExpired
                | ErrorCode::Unavailable
                | ErrorCode::Timeout
                | ErrorCode::RateLimited
        )
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ErrorCode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ErrorCode::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| format!("unknown error code `{s}`"))
    }
}

/// A failed call as the caller (often a model) sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CallError {
    pub code: ErrorCode,
    /// What went wrong, specific enough for a model to correct the call.
    pub message: String,
    pub retryable: bool,
    /// What to do next ("approve with `toolgate approvals approve apr_…`").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// Machine-readable detail: schema violations, the approval id, limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
}

impl CallError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CallError {
            code,
            message: message.into(),
            retryable: code.default_retryable(),
            hint: None,
            details: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_match_serde_and_parse_back() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap_or_default();
            assert_eq!(json, serde_json::Value::String(code.as_str().to_owned()));
            assert_eq!(code.as_str().parse::<ErrorCode>(), Ok(code));
        }
    }

    #[test]
    fn error_serialises_without_empty_fields() {
        let e = CallError::new(ErrorCode::Timeout, "took 30s");
        let json = serde_json::to_value(&e).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"code": "timeout", "message": "took 30s", "retryable": true})
        );
    }
}
