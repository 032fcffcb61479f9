//! The authenticated caller, put in each request's extensions by `authenticate`, and the
//! extractors handlers use to require one ([`Caller`]) or an operator ([`Operator`]).

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use toolgate_protocol::ErrorCode;

use crate::error::ApiError;

/// Who a request acts as ([`toolgate_gateway::Caller`]), as a handler takes it: from the
/// request's extensions, where `authenticate` put it. Reads as the gateway's caller.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller(pub toolgate_gateway::Caller);

impl Caller {
    /// A caller known by name only (no credential behind it).
    pub fn named(
        principal: impl Into<toolgate_protocol::Principal>,
        role: impl Into<toolgate_protocol::Role>,
        operator: bool,
    ) -> Self {
        Caller(toolgate_gateway::Caller::named(principal, role, operator))
    }
}

impl std::ops::Deref for Caller {
    type Target = toolgate_gateway::Caller;
    fn deref(&self) -> &toolgate_gateway::Caller {
        &self.0
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
            .get::<toolgate_gateway::Caller>()
            .cloned()
            .map(Caller)
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
    .with_hint(
        "use an operator token: an operator issues one with `toolgate token create --principal \
         NAME --role ROLE --operator` (or `operator = true` in [[server.tokens]])",
    )
}
