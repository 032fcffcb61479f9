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
