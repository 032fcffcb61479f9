//! Extractors that answer bad input with the one error body. axum's own rejections are plain
//! text with statuses of their own; every JSON body, query string and path parameter of the
//! API goes through these instead, so a client sees `{"error": {code: "invalid_arguments",
//! message, …}}` whatever it got wrong.

use axum::body::{Body, to_bytes};
use axum::extract::rejection::{JsonRejection, PathRejection, QueryRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use serde::de::DeserializeOwned;
use toolgate_protocol::ErrorCode;

use crate::error::ApiError;

/// A JSON request body (`Content-Type: application/json`).
pub struct ApiJson<T>(pub T);

/// A query string.
pub struct ApiQuery<T>(pub T);

/// Path parameters.
pub struct ApiPath<T>(pub T);

fn invalid(message: String) -> ApiError {
    ApiError::new(ErrorCode::InvalidArguments, message)
}

impl From<JsonRejection> for ApiError {
    fn from(r: JsonRejection) -> Self {
        match r {
            JsonRejection::MissingJsonContentType(_) => not_json(),
            JsonRejection::BytesRejection(b) if b.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                invalid("the request body is too large".into())
                    .with_status(StatusCode::PAYLOAD_TOO_LARGE)
            }
            other => invalid(format!(
                "the request body is not valid: {}",
                other.body_text()
            )),
        }
    }
}

impl From<QueryRejection> for ApiError {
    fn from(r: QueryRejection) -> Self {
        invalid(format!("the query string is not valid: {}", r.body_text()))
    }
}

impl From<PathRejection> for ApiError {
    fn from(r: PathRejection) -> Self {
        invalid(format!("the path is not valid: {}", r.body_text()))
    }
}

fn not_json() -> ApiError {
    invalid("the request body must be JSON".into())
        .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
        .with_hint("send `Content-Type: application/json`")
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, ApiError> {
        let axum::Json(v) = axum::Json::<T>::from_request(req, state).await?;
        Ok(ApiJson(v))
    }
}

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Query(v) =
            axum::extract::Query::<T>::from_request_parts(parts, state).await?;
        Ok(ApiQuery(v))
    }
}

impl<S: Send + Sync, T: DeserializeOwned + Send> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let axum::extract::Path(v) =
            axum::extract::Path::<T>::from_request_parts(parts, state).await?;
        Ok(ApiPath(v))
    }
}

/// Reads a JSON body of at most `limit` bytes: 413 past it, 415 without a JSON content type,
/// 400 for anything that does not parse into `T` (with serde's line and column).
pub async fn json_body<T: DeserializeOwned>(
    content_type: Option<&header::HeaderValue>,
    body: Body,
    limit: usize,
) -> Result<T, ApiError> {
    let is_json = content_type
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|mime| {
            let mime = mime.trim().to_ascii_lowercase();
            mime == "application/json"
                || (mime.starts_with("application/") && mime.ends_with("+json"))
        });
    if !is_json {
        return Err(not_json());
    }
    let bytes = to_bytes(body, limit).await.map_err(|e| {
        let too_large = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>());
        if too_large {
            invalid(format!("the request body is larger than {limit} bytes"))
                .with_status(StatusCode::PAYLOAD_TOO_LARGE)
                .with_hint("the arguments of one call are limited by [limits] max_argument_bytes")
        } else {
            invalid(format!("the request body could not be read: {e}"))
        }
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| invalid(format!("the request body is not valid: {e}")))
}

/// The listing size: `limit` if given (at most `max`), else `default`.
pub(crate) fn bounded_limit(
    limit: Option<usize>,
    default: usize,
    max: usize,
) -> Result<usize, ApiError> {
    match limit {
        None => Ok(default),
        Some(n) if n <= max => Ok(n),
        Some(_) => Err(ApiError::new(
            ErrorCode::InvalidArguments,
            format!("`limit` is at most {max}"),
        )),
    }
}

/// Runs a blocking store operation (the audit log's queries) off the async threads.
pub(super) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, toolgate_store::StoreError> + Send + 'static,
) -> Result<T, crate::error::ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| crate::error::ApiError::internal(format!("the store task died: {e}")))?
        .map_err(crate::error::ApiError::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_over_the_maximum_are_refused() {
        assert_eq!(bounded_limit(None, 100, 1000).ok(), Some(100));
        assert_eq!(bounded_limit(Some(1000), 100, 1000).ok(), Some(1000));
        assert!(bounded_limit(Some(1001), 100, 1000).is_err());
    }
}
