//! The one error body of the HTTP surface, `{"error": {code, message, retryable, hint?,
//! details?}}` — the same object a failed call's envelope carries — and the one function that
//! maps a code to an HTTP status.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use toolgate_protocol::{CallError, ErrorCode};

/// An error answered by an HTTP endpoint (not a tool call's result: `POST /v1/calls` always
/// answers 200 with the call's envelope, ok or not).
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub error: CallError,
}

/// The HTTP status for a code, decided here and nowhere else.
pub fn status_for(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::UnknownTool => StatusCode::NOT_FOUND,
        ErrorCode::Forbidden | ErrorCode::PolicyDenied | ErrorCode::ApprovalDenied => {
            StatusCode::FORBIDDEN
        }
        ErrorCode::InvalidArguments => StatusCode::BAD_REQUEST,
        ErrorCode::ApprovalRequired => StatusCode::ACCEPTED,
        ErrorCode::ApprovalExpired => StatusCode::GONE,
        ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorCode::ExecutionFailed => StatusCode::INTERNAL_SERVER_ERROR,
        ErrorCode::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorCode::Cancelled => StatusCode::from_u16(499).unwrap_or(StatusCode::BAD_REQUEST),
        ErrorCode::ResultTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
        ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
    }
}

impl ApiError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            status: status_for(code),
            error: CallError::new(code, message),
        }
    }

    /// A request without valid credentials: 401, so clients know to authenticate.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::UNAUTHORIZED,
            error: CallError::new(ErrorCode::Forbidden, message),
        }
    }

    /// Something that is not there (an approval id, a page).
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError {
            status: StatusCode::NOT_FOUND,
            error: CallError::new(ErrorCode::InvalidArguments, message),
        }
    }

    /// A code answered with a status other than its usual one (413 for an oversized body,
    /// 409 for a decision on a request already decided, …).
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// The server itself failed (a store error, a task that died): 500 `execution_failed`,
    /// not retryable unless the cause says otherwise.
    pub fn internal(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::ExecutionFailed, message)
    }

    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.error = self.error.with_retryable(retryable);
        self
    }

    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.error = self.error.with_details(details);
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.error = self.error.with_hint(hint);
        self
    }
}

impl From<CallError> for ApiError {
    fn from(error: CallError) -> Self {
        ApiError {
            status: status_for(error.code),
            error,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.error }))).into_response()
    }
}

/// Store failures seen by a handler: an unknown id is 404, a refused change (already
/// decided, confirmation missing) is 409, anything else is the server's own failure (500).
impl From<toolgate_store::StoreError> for ApiError {
    fn from(e: toolgate_store::StoreError) -> Self {
        use toolgate_store::StoreError;
        match e {
            StoreError::NotFound(m) => ApiError::not_found(m),
            StoreError::Conflict(m) => {
                ApiError::new(ErrorCode::InvalidArguments, m).with_status(StatusCode::CONFLICT)
            }
            other => ApiError::internal(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_has_its_status() {
        let table: Vec<(ErrorCode, u16)> = ErrorCode::ALL
            .iter()
            .map(|&c| (c, status_for(c).as_u16()))
            .collect();
        assert_eq!(
            table,
            vec![
                (ErrorCode::UnknownTool, 404),
                (ErrorCode::Forbidden, 403),
                (ErrorCode::InvalidArguments, 400),
                (ErrorCode::PolicyDenied, 403),
                (ErrorCode::ApprovalRequired, 202),
                (ErrorCode::ApprovalDenied, 403),
                (ErrorCode::ApprovalExpired, 410),
                (ErrorCode::Unavailable, 503),
                (ErrorCode::ExecutionFailed, 500),
                (ErrorCode::Timeout, 504),
                (ErrorCode::Cancelled, 499),
                (ErrorCode::ResultTooLarge, 413),
                (ErrorCode::RateLimited, 429),
            ]
        );
    }

    #[test]
    fn store_errors_map_to_statuses() {
        use toolgate_store::StoreError;
        let cases = [
            (
                StoreError::NotFound("x".into()),
                404,
                ErrorCode::InvalidArguments,
            ),
            (
                StoreError::Conflict("x".into()),
                409,
                ErrorCode::InvalidArguments,
            ),
            (
                StoreError::Corrupt("x".into()),
                500,
                ErrorCode::ExecutionFailed,
            ),
        ];
        for (e, status, code) in cases {
            let api = ApiError::from(e);
            assert_eq!((api.status.as_u16(), api.error.code), (status, code));
        }
    }
}
