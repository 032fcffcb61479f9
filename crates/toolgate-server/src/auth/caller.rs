//! The authenticated caller, put in each request's extensions by `authenticate`, and the
//! extractors handlers use to require one ([`Caller`]) or an operator ([`Operator`]).

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use toolgate_gateway::Identity;
use toolgate_protocol::ErrorCode;

use crate::error::ApiError;

/// Who a request acts as.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub principal: String,
    pub role: String,
    /// May decide approvals and read the audit.
    pub operator: bool,
    /// Who vouched for the caller (issuer, subject, claims); `None` for the anonymous grant
    /// and local development.
    pub identity: Option<Arc<Identity>>,
}

impl Caller {
    /// A caller known by name only (no credential behind it).
    pub fn named(principal: impl Into<String>, role: impl Into<String>, operator: bool) -> Self {
        Caller {
            principal: principal.into(),
            role: role.into(),
            operator,
            identity: None,
        }
    }
}

/// A caller allowed to decide approvals and read the audit; anyone else is answered 403
/// `forbidden`.
#[derive(Debug, Clone, PartialEq)]
pub struct Operator(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, ApiError> {
        // Absent only on a public route, where no handler asks for a caller.
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| ApiError::unauthenticated("this endpoint requires a caller"))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Operator {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let caller = Caller::from_request_parts(parts, state).await?;
        if !caller.operator {
            return Err(not_operator(&caller.principal));
        }
        Ok(Operator(caller))
    }
}

/// The refusal of an operator route to `principal`, who holds no operator right.
pub fn not_operator(principal: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Forbidden,
        format!(
            "`{principal}` is not an operator: deciding approvals and reading the audit need an operator token"
        ),
    )
    .with_hint("give the token `operator = true` in [[server.tokens]]")
}
